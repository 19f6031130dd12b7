package patch

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/rows"
)

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestApplyDesignExample(t *testing.T) {
	root := workspaceWith(t, map[string]string{"notes.txt": "alpha\nbeta\ngamma\nbeta\n"})
	os.Chmod(filepath.Join(root.Dir(), "notes.txt"), 0o640)
	res, err := Apply(context.Background(), root, "in notes.txt\ntype \"beta\" 2 \"BETA\"\nadd 1:8ed3 \"first\\n\"\nadd EOF <<PATCH\ndelta\nPATCH\n", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, root.Dir(), "notes.txt"); got != "first\nalpha\nBETA\ngamma\nBETA\ndelta\n" {
		t.Fatalf("got %q", got)
	}
	if fi, _ := os.Stat(filepath.Join(root.Dir(), "notes.txt")); fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v", fi.Mode())
	}
	if res.Status != StatusApplied || len(res.Files) != 1 || res.Files[0] != (FileAction{Action: "modified", Path: "notes.txt"}) {
		t.Fatalf("%+v", res)
	}
	// Each edit's edges are verified rows of the new file.
	var got []string
	for _, e := range res.Edits {
		var ls []string
		for _, r := range e.Rows {
			ls = append(ls, fmt.Sprint(r.Line))
			if r.Hash != rows.Hash([]byte(r.Text)) {
				t.Fatalf("bad row %+v", r)
			}
		}
		got = append(got, fmt.Sprintf("%d:%s", e.Command, strings.Join(ls, ",")))
	}
	if g := strings.Join(got, " "); g != "2:2,3,4 2:4,5,6 3:1,2 4:5,6" {
		t.Fatalf("edges %s", g)
	}
	// Nothing to do: every edit a no-op.
	res, err = Apply(context.Background(), root, "in notes.txt\ntype 1:"+rows.Hash([]byte("first"))+" \"first\"\n", Options{})
	if err != nil || res.Status != StatusUnchanged {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestApplyRejects(t *testing.T) {
	root := workspaceWith(t, map[string]string{"a.txt": "alpha\n"})
	res, err := Apply(context.Background(), root, "in a.txt\ntype 3:8ed3 \"x\"\nfrob\n", Options{})
	if errs.Code(err) != CodeRejected || errs.ExitCode(err) != ExitRejected || res.Status != StatusRejected {
		t.Fatalf("%+v %v", res, err)
	}
	// A syntax error stops the script before resolution: only it reports.
	if len(res.Failures) != 1 || res.Failures[0].Command != 3 {
		t.Fatalf("%+v", res.Failures)
	}
	if readFile(t, root.Dir(), "a.txt") != "alpha\n" {
		t.Fatal("written")
	}
}

// The defects a differential run found, each of which used to write: rm
// dropped an edit and deleted the file (exit 0), and an invalid UTF-8 body
// was written into the file byte for byte.
func TestApplyRejectsWithoutWriting(t *testing.T) {
	for _, c := range []struct{ script, reason string }{
		{"in a.txt\ntype 1:8ed3 \"X\"\nrm\n", ReasonConflict},
		{"in a.txt\nadd EOF <<PATCH\nb\xffd\nPATCH\n", ReasonSyntax},
		{"new n.txt\nadd 1:8ed3 \"x\"\n", ReasonInitialization},
	} {
		root := workspaceWith(t, map[string]string{"a.txt": "alpha\n"})
		res, err := Apply(context.Background(), root, c.script, Options{})
		if errs.Code(err) != CodeRejected || len(res.Failures) != 1 || res.Failures[0].Reason != c.reason {
			t.Errorf("%q: %+v %v", c.script, res, err)
		}
		if readFile(t, root.Dir(), "a.txt") != "alpha\n" {
			t.Errorf("%q: a.txt changed", c.script)
		}
		if _, err := os.Lstat(filepath.Join(root.Dir(), "n.txt")); err == nil {
			t.Errorf("%q: n.txt created", c.script)
		}
	}
}

func TestApplyLanguageSyntax(t *testing.T) {
	good := "package p\n\nfunc f() int {\n\treturn 1\n}\n"
	root := workspaceWith(t, map[string]string{"p.go": good, "broken.go": "package p\nfunc {\n", "d.json": "{\"a\": 1}\n"})
	res, err := Apply(context.Background(), root, "in p.go\ntype 4:"+rows.Hash([]byte("\treturn 1"))+" \"\\treturn (1\"\n", Options{})
	if err == nil || len(res.Failures) != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	f := res.Failures[0]
	if f.Reason != ReasonLanguageSyntax || f.Command != 2 || f.Path != "p.go" || len(f.Proposed) == 0 || !strings.Contains(f.Message, "line 4") {
		t.Fatalf("%+v", f)
	}
	if readFile(t, root.Dir(), "p.go") != good {
		t.Fatal("written")
	}
	// JSON, strictly.
	res, err = Apply(context.Background(), root, "in d.json\ntype \"1\" \"1,\"\n", Options{})
	if err == nil || res.Failures[0].Reason != ReasonLanguageSyntax {
		t.Fatalf("%+v", res)
	}
	// Python through tree-sitter.
	root2 := workspaceWith(t, map[string]string{"m.py": "def f():\n    return 1\n"})
	res, err = Apply(context.Background(), root2, "in m.py\ntype \"return 1\" \"return (1\"\n", Options{})
	if err == nil || res.Failures[0].Reason != ReasonLanguageSyntax || res.Failures[0].Command != 2 {
		t.Fatalf("python: %+v", res)
	}
	// A file already broken is not held to it.
	if _, err := Apply(context.Background(), root, "in broken.go\nadd EOF \"// more\\n\"\n", Options{}); err != nil {
		t.Fatal(err)
	}
	// The checker is a parameter: a custom one is used.
	_, err = Apply(context.Background(), root, "in a.txt\n", Options{Check: func(context.Context, string, []byte) (int, string, bool) { return 1, "no", true }})
	if errs.Code(err) != CodeRejected {
		// a.txt does not exist here: file-path, not the checker.
		t.Log(err)
	}
}

// A concurrent writer changes the file between the baseline and the commit:
// the script is rejected row-stale with the fresh rows, and the other
// writer's content stays.
func TestApplyConcurrentWriter(t *testing.T) {
	root := workspaceWith(t, map[string]string{"a.txt": "alpha\nbeta\ngamma\n"})
	p := filepath.Join(root.Dir(), "a.txt")
	sneak := func(context.Context, string, []byte) (int, string, bool) {
		os.WriteFile(p, []byte("alpha\nBETA!\ngamma\n"), 0o644)
		return 0, "", false
	}
	res, err := Apply(context.Background(), root, "in a.txt\ntype 2:f44e \"b\"\n", Options{Check: sneak})
	if errs.Code(err) != CodeRejected || res.Failures[0].Reason != ReasonRowStale {
		t.Fatalf("%+v %v", res, err)
	}
	if got := readFile(t, root.Dir(), "a.txt"); got != "alpha\nBETA!\ngamma\n" {
		t.Fatalf("overwritten: %q", got)
	}
	rs := res.Failures[0].Rows
	if len(rs) != 3 || rs[1].Text != "BETA!" {
		t.Fatalf("fresh rows %+v", rs)
	}
}

func TestApplyFilesAndDiff(t *testing.T) {
	root := workspaceWith(t, map[string]string{"a.txt": "one\ntwo\n", "b.txt": "bee\n", "c.txt": "sea\n"})
	script := "in a.txt\ntype 2:" + rows.Hash([]byte("two")) + " \"TWO\"\nin b.txt\nmv sub/b2.txt\ntype \"bee\" \"BEE\"\nin c.txt\nrm\nnew n.txt\ntype \"new\\n\"\n"
	res, err := Apply(context.Background(), root, script, Options{DryRun: true})
	if err != nil || res.Status != StatusDryRun {
		t.Fatal(err)
	}
	wantDiff := "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n" +
		"diff --git a/b.txt b/sub/b2.txt\nrename from b.txt\nrename to sub/b2.txt\n--- a/b.txt\n+++ b/sub/b2.txt\n@@ -1 +1 @@\n-bee\n+BEE\n" +
		"diff --git a/c.txt b/c.txt\ndeleted file mode 100644\n--- a/c.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-sea\n" +
		"diff --git a/n.txt b/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+new\n"
	if res.Diff != wantDiff {
		t.Fatalf("diff:\n%s\nwant:\n%s", res.Diff, wantDiff)
	}
	if readFile(t, root.Dir(), "a.txt") != "one\ntwo\n" {
		t.Fatal("dry run wrote")
	}
	res, err = Apply(context.Background(), root, script, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var acts string
	for _, f := range res.Files {
		acts += fmt.Sprintf("[%s %s %s]", f.Action, f.Path, f.From)
	}
	if acts != "[modified a.txt ][moved sub/b2.txt b.txt][deleted c.txt ][created n.txt ]" {
		t.Fatalf("%s", acts)
	}
	if readFile(t, root.Dir(), "sub/b2.txt") != "BEE\n" || readFile(t, root.Dir(), "n.txt") != "new\n" {
		t.Fatal("content")
	}
	for _, gone := range []string{"b.txt", "c.txt"} {
		if _, err := os.Stat(filepath.Join(root.Dir(), gone)); err == nil {
			t.Fatalf("%s still there", gone)
		}
	}
}

// The dry-run diff, applied by git to the old files, gives exactly the new
// files: random files (LF, CRLF, no final newline) and random scripts.
func TestDiffAppliesWithGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal("git is required (scripts/test installs it)")
	}
	rng := rand.New(rand.NewPCG(8, 8))
	for round := range 60 {
		words := []string{"alpha", "beta", "gamma", "delta", "x", "", "  y z"}
		term := []string{"\n", "\r\n"}[rng.IntN(2)]
		n := 1 + rng.IntN(30)
		var lines []string
		for i := range n {
			lines = append(lines, fmt.Sprintf("%s %d", words[rng.IntN(len(words))], i))
		}
		src := strings.Join(lines, term)
		if rng.IntN(3) > 0 {
			src += term
		}
		root := workspaceWith(t, map[string]string{"f.txt": src})
		x, _ := rows.NewIndex([]byte(src))
		var script strings.Builder
		script.WriteString("in f.txt\n")
		used := map[int]bool{}
		for range 1 + rng.IntN(4) {
			l := 1 + rng.IntN(x.Count())
			if used[l] || used[l-1] || used[l+1] {
				continue
			}
			used[l] = true
			r := x.Ref(l)
			switch rng.IntN(4) {
			case 0:
				fmt.Fprintf(&script, "type %s \"\"\n", r)
			case 1:
				fmt.Fprintf(&script, "type %s \"changed %d\"\n", r, l)
			case 2:
				fmt.Fprintf(&script, "add %s \"added %d\"\n", r, l)
			default:
				fmt.Fprintf(&script, "type %s \"two\\nlines %d\"\n", r, l)
			}
		}
		if rng.IntN(4) == 0 {
			script.WriteString("add EOF \"tail\"\n")
		}
		if rng.IntN(4) == 0 {
			script.WriteString("type EOF \"\"\n")
		}
		res, err := Apply(context.Background(), root, script.String(), Options{DryRun: true})
		if err != nil {
			t.Fatalf("round %d: %v %+v\n%s", round, err, res, script.String())
		}
		if res.Diff == "" {
			continue
		}
		dir := root.Dir()
		if out, err := exec.Command(git, "-C", dir, "init", "-q").CombinedOutput(); err != nil {
			t.Fatalf("%v %s", err, out)
		}
		os.WriteFile(filepath.Join(dir, "d.patch"), []byte(res.Diff), 0o644)
		cmd := exec.Command(git, "-C", dir, "apply", "--whitespace=nowarn", "d.patch")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("round %d: git apply: %v %s\n%s\n%q", round, err, out, res.Diff, src)
		}
		got := readFile(t, dir, "f.txt")
		// The same script, applied for real elsewhere.
		root2 := workspaceWith(t, map[string]string{"f.txt": src})
		if _, err := Apply(context.Background(), root2, script.String(), Options{}); err != nil {
			t.Fatal(err)
		}
		if want := readFile(t, root2.Dir(), "f.txt"); got != want {
			t.Fatalf("round %d: git apply gives %q, hpatch %q\n%s", round, got, want, res.Diff)
		}
	}
}

// cancelAfter is a context that reports cancellation from the k-th call of
// Err on, so a script is stopped at a known point without a clock.
type cancelAfter struct {
	context.Context
	k, calls int
}

func (c *cancelAfter) Err() error {
	if c.calls++; c.calls >= c.k {
		return context.Canceled
	}
	return nil
}

// A done ctx stops the engine between the targets of a long script, in the
// syntax check and in the diff: cancelled, nothing written. A run that
// never cancels counts the checks; then each stop point is tried.
func TestApplyStopsOnCancel(t *testing.T) {
	var file, script strings.Builder
	script.WriteString("in a.json\n")
	file.WriteString("[\n")
	for i := range 1000 {
		line := fmt.Sprintf("%d,", i)
		file.WriteString(line + "\n")
		fmt.Fprintf(&script, "type %s \"%d,\"\n", ref(i+2, line), -i)
	}
	file.WriteString("0]\n")
	files := map[string]string{"a.json": file.String()}
	count := &cancelAfter{Context: context.Background(), k: 1 << 30}
	if _, err := Apply(count, workspaceWith(t, files), script.String(), Options{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	n := count.calls
	if n < 1000 {
		t.Fatalf("%d checks for 1000 targets", n)
	}
	for _, k := range []int{1, 2, n / 2, n - 1, n} {
		root := workspaceWith(t, files)
		res, err := Apply(&cancelAfter{Context: context.Background(), k: k}, root, script.String(), Options{})
		if errs.Code(err) != errs.Cancelled || res != nil {
			t.Fatalf("cancelled at check %d of %d: %+v %v", k, n, res, err)
		}
		if readFile(t, root.Dir(), "a.json") != file.String() {
			t.Fatal("written")
		}
	}
}

// A relocated edit says its target had moved and by how much, in the
// result and in the report, so that the caller knows its other rows of the
// file are stale by as much (issue 24, item 15); an edit of current rows
// says nothing more.
func TestRelocatedEditSaysTheShift(t *testing.T) {
	base := "l1\nl2\nl3\nl4\nl5\nl6\n"
	root := workspaceWith(t, map[string]string{"f.txt": "new1\nnew2\n" + base, "g.txt": base})
	r := func(n int) string { return ref(n, "l"+itoa(n)) }
	res, err := Apply(context.Background(), root, "in f.txt\ntype "+r(2)+".."+r(4)+" \"X\"\nin g.txt\ntype "+r(5)+" \"Y\"\n", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Edits) != 2 || res.Edits[0].Moved != 2 || res.Edits[1].Moved != 0 {
		t.Fatalf("%+v", res.Edits)
	}
	text := Report(res, rows.DefaultBudget)
	if !strings.Contains(text, "command 2 type \"f.txt\" (target moved +2 lines; rows read before are stale):\n") || !strings.Contains(text, "command 4 type \"g.txt\":\n") {
		t.Fatalf("%s", text)
	}
	if readFile(t, root.Dir(), "f.txt") != "new1\nnew2\nl1\nX\nl5\nl6\n" {
		t.Fatal(readFile(t, root.Dir(), "f.txt"))
	}
	// Moved up by one: the sign and the singular.
	root = workspaceWith(t, map[string]string{"f.txt": "l2\nl3\nl4\nl5\n"})
	res, err = Apply(context.Background(), root, "in f.txt\ntype "+r(3)+".."+r(4)+" \"X\"\n", Options{})
	if err != nil || len(res.Edits) != 1 || res.Edits[0].Moved != -1 ||
		!strings.Contains(Report(res, rows.DefaultBudget), "command 2 type (target moved -1 line; rows read before are stale):\n") {
		t.Fatalf("%+v %v", res, err)
	}
}

// rm of a file the script creates cancels the creation, content and all,
// as HPATCH/2 (design §9: rm deletes the selected file) and the reference
// engine do; rm of an existing file after its edits is still an
// edit-conflict (issue 24, item 16).
func TestRmCancelsCreation(t *testing.T) {
	root := workspaceWith(t, map[string]string{"a.txt": "a\n"})
	res, err := Apply(context.Background(), root, "new g.txt\ntype \"v\\n\"\nrm\n", Options{})
	if err != nil || res.Status != StatusUnchanged || len(res.Failures) != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	res, err = Apply(context.Background(), root, "new g.txt\ntype \"v\\n\"\nmv h.txt\nrm\nin a.txt\ntype "+ref(1, "a")+" \"b\"\n", Options{})
	if err != nil || res.Status != StatusApplied || len(res.Files) != 1 || res.Files[0].Path != "a.txt" {
		t.Fatalf("%+v %v", res, err)
	}
	for _, n := range []string{"g.txt", "h.txt"} {
		if _, err := os.Lstat(filepath.Join(root.Dir(), n)); err == nil {
			t.Fatalf("%s was created", n)
		}
	}
	res, _ = Apply(context.Background(), root, "in a.txt\ntype "+ref(1, "b")+" \"c\"\nrm\n", Options{})
	if len(res.Failures) != 1 || res.Failures[0].Reason != ReasonConflict || res.Failures[0].Command != 3 {
		t.Fatalf("%+v", res)
	}
}

// A language failure that an mv causes (the file's content, as it was,
// does not parse in the language of its new name) or that an empty new Go
// file causes (no package clause) names that command, not "command 0";
// one an edit causes names the edit (issue 24, item 16).
func TestLanguageFailureNamesItsCommand(t *testing.T) {
	root := workspaceWith(t, map[string]string{"a.txt": "hello world\n", "b.txt": "package b\n"})
	for _, c := range []struct {
		script, op string
		n          int
		path       string
	}{
		{"in a.txt\nmv a.go\n", "mv", 2, "a.go"},
		{"in a.txt\ntype \"hello\" \"bye\"\nmv a.go\n", "mv", 3, "a.go"},
		{"new x.go\n", "new", 1, "x.go"},
		{"new x.go\ntype \"package\"\n", "type", 2, "x.go"},
		{"in b.txt\nmv b.go\ntype \"package b\" \"package b c\"\n", "type", 3, "b.go"},
	} {
		res, err := Apply(context.Background(), root, c.script, Options{})
		if err == nil || len(res.Failures) != 1 {
			t.Fatalf("%q: %+v %v", c.script, res, err)
		}
		f := res.Failures[0]
		if f.Reason != ReasonLanguageSyntax || f.Op != c.op || f.Command != c.n || f.Path != c.path {
			t.Errorf("%q: %s", c.script, f.Line())
		}
	}
}

// A one-line edit of a large file allocates about the file once (its
// baseline, read into a buffer of its size, and 4 bytes a line of index),
// not the baseline, the new content beside it and 16 bytes a line: the new
// content is a view of the baseline, streamed from the file at commit
// (issue 24, item 19: 263-325 MiB for a 63 MB file). The allocations of a
// run are counted (runtime.MemStats.TotalAlloc), which does not depend on
// when the collector runs; bench/hpatch-mem.sh measures peak RSS.
func TestApplyAllocatesTheFileOnce(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 16<<20; i++ {
		fmt.Fprintf(&b, "line %d of a large file, with some text to make it longer\n", i)
	}
	big := b.String()
	root := workspaceWith(t, map[string]string{"big.txt": big})
	mid := strings.Count(big, "\n") / 2
	line := fmt.Sprintf("line %d of a large file, with some text to make it longer", mid-1)
	script := "in big.txt\ntype " + ref(mid, line) + " \"edited\"\nadd EOF \"tail\\n\"\n"
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := Apply(context.Background(), root, script, Options{})
	runtime.ReadMemStats(&after)
	if err != nil || res.Status != StatusApplied {
		t.Fatalf("%+v %v", res, err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	if limit := uint64(len(big)) * 13 / 10; alloc > limit {
		t.Errorf("a one-line edit of a %d-byte file allocated %d bytes (%.2fx), more than %d", len(big), alloc, float64(alloc)/float64(len(big)), limit)
	}
	t.Logf("%d-byte file: %d bytes allocated (%.2fx)", len(big), alloc, float64(alloc)/float64(len(big)))
	want := strings.Replace(big, line+"\n", "edited\n", 1) + "tail\n"
	if got := readFile(t, root.Dir(), "big.txt"); got != want {
		t.Fatal("the content")
	}
}

// A file moved into the place of another the script deletes, whichever of
// the two the script selects first: one write over the old content, which
// the commit still proves unchanged.
func TestMoveIntoFreedPlace(t *testing.T) {
	for _, script := range []string{
		"in q.txt\nrm\nin p.txt\ntype \"p\" \"P\"\nmv q.txt\n",
		"in p.txt\nin q.txt\nrm\nin p.txt\ntype \"p\" \"P\"\nmv q.txt\n",
	} {
		root := workspaceWith(t, map[string]string{"p.txt": "p\n", "q.txt": "q\n"})
		if res, err := Apply(context.Background(), root, script, Options{}); err != nil {
			t.Fatalf("%q: %+v %v", script, res, err)
		}
		if got := readFile(t, root.Dir(), "q.txt"); got != "P\n" {
			t.Fatalf("%q: q.txt %q", script, got)
		}
		if _, err := os.Lstat(filepath.Join(root.Dir(), "p.txt")); err == nil {
			t.Fatalf("%q: p.txt is still there", script)
		}
	}
}

// A language-syntax rejection places the parser's message against the
// text the edit wrote (Go's parser reports an unclosed block where the
// next function starts, lines after the edit), and shows the file's
// current rows around the edit: a retry needs no read.
func TestApplyLanguageSyntaxMapped(t *testing.T) {
	src := "package p\n\nfunc f() int {\n\treturn 1\n}\n\nfunc g() int {\n\treturn 2\n}\n"
	var long strings.Builder
	long.WriteString("package p\n\nvar x = []int{\n")
	for i := 0; i < 60; i++ {
		long.WriteString("\t1,\n")
	}
	long.WriteString("}\n")
	root := workspaceWith(t, map[string]string{"p.go": src, "long.go": long.String()})
	res, err := Apply(context.Background(), root, "in p.go\ntype 4:"+rows.Hash([]byte("\treturn 1"))+" \"\\tif true {\"\n", Options{})
	if err == nil || len(res.Failures) != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	f := res.Failures[0]
	if want := "the new content does not parse: the parser stopped at line 7, 3 line(s) after the text command 2 wrote in place of row 4 (new line 4): "; !strings.HasPrefix(f.Message, want) {
		t.Errorf("message %q, want it to start %q", f.Message, want)
	}
	var got []string
	for _, r := range f.Rows {
		got = append(got, fmt.Sprintf("%d:%s %s", r.Line, r.Hash, r.Text))
	}
	want := []string{"2:e3b0 ", "3:153e func f() int {", "4:760e \treturn 1", "5:d10b }", "6:e3b0 "}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows %q, want the current rows 2-6 %q", got, want)
	}
	// The rows are the file's: a retry with them applies.
	if _, err := Apply(context.Background(), root, "in p.go\ntype 4:760e \"\\treturn 3\"\n", Options{}); err != nil {
		t.Fatal(err)
	}

	// A long replaced span: both of its ends, within maxContextRows.
	h := rows.Hash([]byte("\t1,"))
	res, err = Apply(context.Background(), root, "in long.go\ntype 4:"+h+"..63:"+h+" \"\\t(\"\n", Options{})
	if err == nil || len(res.Failures) != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	f = res.Failures[0]
	first, last := f.Rows[0], f.Rows[len(f.Rows)-1]
	if len(f.Rows) > maxContextRows || first.Line != 2 || last.Line != 64 || !strings.Contains(f.Message, "in place of rows 4-63 (new line 4)") {
		t.Errorf("%d rows from %d to %d; %s", len(f.Rows), first.Line, last.Line, f.Message)
	}
}
