package review

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/jsonstr"
	"github.com/rowkit/rowkit/internal/workspace"
)

// gitSpy puts a git first on PATH that logs each call to the returned file
// and then runs the real git; while the file slow exists it first sleeps
// in a child whose pid it records in pidFile.
func gitSpy(t *testing.T) (log, slow, pidFile string) {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	log, slow, pidFile = filepath.Join(bin, "log"), filepath.Join(bin, "slow"), filepath.Join(bin, "pid")
	script := "#!/bin/sh\necho \"$*\" >> '" + log + "'\n" +
		"if [ -e '" + slow + "' ]; then sleep 300 & echo $! > '" + pidFile + "'; wait; fi\n" +
		"exec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	return log, slow, pidFile
}

func gitRan(log string) bool {
	b, _ := os.ReadFile(log)
	return len(b) > 0
}

func openRoot(t *testing.T, dir string) *workspace.Root {
	t.Helper()
	root, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// With a root, the repository path is resolved inside it and the work
// tree it leads to must lie inside it, .git file targets included; every
// refusal comes before any git call or validation.
func TestInspectConfinedToRoot(t *testing.T) {
	base := t.TempDir()
	rootDir := filepath.Join(base, "root")
	os.Mkdir(rootDir, 0o755)
	inside := filepath.Join(rootDir, "repo")
	os.Mkdir(inside, 0o755)
	gitT(t, inside, "init", "-q", "-b", "main")
	write(t, filepath.Join(inside, "a.txt"), "a\n")
	gitT(t, inside, "add", "-A")
	gitT(t, inside, "commit", "-q", "-m", "base")
	os.Mkdir(filepath.Join(inside, "sub"), 0o755)
	// An empty .git directory inside the work tree, which git passes by
	// as it does above the root: repo holds emptydot.
	os.MkdirAll(filepath.Join(inside, "emptydot", ".git"), 0o755)

	outside := newRepo(t, map[string]string{"o.txt": "o\n"})
	os.Symlink(outside, filepath.Join(rootDir, "link-out"))
	os.Symlink(inside, filepath.Join(rootDir, "link-in"))
	// A linked work tree inside the root whose repository lies outside.
	gitT(t, outside, "worktree", "add", "-q", "-b", "wt", filepath.Join(rootDir, "wt"))
	// A .git file naming a git directory outside.
	os.Mkdir(filepath.Join(rootDir, "gitfile"), 0o755)
	write(t, filepath.Join(rootDir, "gitfile", ".git"), "gitdir: "+filepath.Join(outside, ".git")+"\n")
	// A .git symlink leading outside.
	os.Mkdir(filepath.Join(rootDir, "gitlink"), 0o755)
	os.Symlink(filepath.Join(outside, ".git"), filepath.Join(rootDir, "gitlink", ".git"))
	// A sibling whose name extends the root's.
	evil := filepath.Join(base, "root-evil")
	os.Mkdir(evil, 0o755)
	gitT(t, evil, "init", "-q")
	os.Mkdir(filepath.Join(rootDir, "plain"), 0o755)
	// An empty .git directory above the root, which git passes by: no
	// repository holds plain.
	os.Mkdir(filepath.Join(base, ".git"), 0o755)

	log, _, _ := gitSpy(t)
	root := openRoot(t, rootDir)
	marker := filepath.Join(base, "validated")
	touch := []Planned{{ID: "touch", Argv: []string{"touch", marker}, Timeout: time.Minute}}
	for _, c := range []struct{ repo, code string }{
		{"..", errs.Outside},
		{"../root-evil", errs.Outside},
		{outside, errs.Outside},
		{"link-out", errs.Outside},
		{"wt", errs.Outside},
		{"gitfile", errs.Outside},
		{"gitlink", errs.Outside},
		{"plain", CodeNotARepo},
		{"nope", CodeRepoNotFound},
		{"repo/a.txt", CodeRepoNotFound},
	} {
		e := inspectErr(t, Options{Repo: c.repo, Root: root, Validations: touch})
		if e.Code != c.code || errs.ExitCode(e) != ExitInspection {
			t.Errorf("%s: got %v, want %s", c.repo, e, c.code)
		}
		if gitRan(log) {
			t.Fatalf("%s: git ran before the refusal", c.repo)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%s: a validation ran", c.repo)
		}
	}
	// The root inside a repository: its top level lies above the root.
	sub := openRoot(t, filepath.Join(inside, "sub"))
	if e := inspectErr(t, Options{Repo: ".", Root: sub}); e.Code != errs.Outside || !strings.Contains(e.Msg, "top level "+inside) {
		t.Errorf("top level above the root: got %v", e)
	}
	if gitRan(log) {
		t.Fatal("git ran before the refusal")
	}

	for _, p := range []string{"repo", "repo/sub", "repo/emptydot", "link-in", "./repo/../repo"} {
		r := inspect(t, Options{Repo: p, Root: root, Validations: touch})
		if r.Repository.Path != inside || !r.OK {
			t.Errorf("%s: repository %s ok %v", p, r.Repository.Path, r.OK)
		}
	}

	// The repository's own config moves the work tree out: git's answer is
	// checked before anything else runs.
	os.Remove(marker)
	os.Remove(log)
	gitT(t, inside, "config", "core.worktree", outside)
	e := inspectErr(t, Options{Repo: "repo", Root: root, Validations: touch})
	if e.Code != errs.Outside {
		t.Errorf("core.worktree outside: got %v", e)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a validation ran")
	}
	b, _ := os.ReadFile(log)
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.Contains(l, " diff ") || strings.Contains(l, " ls-files ") {
			t.Errorf("git listed a work tree outside the root: %s", l)
		}
	}
}

// Cancelling the context stops a running git call's whole group at once
// and reports the inspection as cancelled.
func TestInspectCancelStopsGit(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	_, slow, pidFile := gitSpy(t)
	os.WriteFile(slow, nil, 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err := Inspect(ctx, Options{Repo: dir, LookupEnv: os.LookupEnv})
	if !errs.Is(err, errs.Cancelled) || errs.ExitCode(err) != ExitTimeout {
		t.Errorf("got %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	pid := readPid(t, pidFile)
	for i := 0; i < 200 && alive(pid); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatal("git's child outlived the cancellation")
	}
}

// The total output budget bounds all captured streams together; what it
// cut is reported like any other truncation.
func TestInspectTotalOutputBudget(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	loud := func(id string) Planned {
		return Planned{ID: id, Argv: []string{"sh", "-c", "seq 1 3000; seq 1 3000 >&2"}, Timeout: time.Minute}
	}
	r := inspect(t, Options{Repo: dir, MaxOutputBytes: ServerMaxOutputBytes, MaxTotalOutputBytes: 6000,
		Validations: []Planned{loud("a"), loud("b"), loud("c"), {ID: "quiet", Argv: []string{"true"}, Timeout: time.Minute}}})
	total := 0
	var fields []string
	for _, v := range r.Validations {
		for _, s := range []Stream{v.Stdout, v.Stderr} {
			total += len(s.Text)
			if len(s.Text) > ServerMaxOutputBytes {
				t.Errorf("%s: a stream of %d bytes", v.ID, len(s.Text))
			}
		}
	}
	for _, f := range r.Truncation.Fields {
		fields = append(fields, f.Field)
	}
	if total > 6000 || total < 3000 {
		t.Errorf("%d bytes kept in all", total)
	}
	equal(t, "truncated", fields, []string{"validations[0].stdout", "validations[0].stderr", "validations[1].stdout", "validations[1].stderr", "validations[2].stdout", "validations[2].stderr"})
	if r.Validations[3].Status != StatusPassed || r.Validations[2].Stdout.BytesTotal != r.Validations[0].Stdout.BytesTotal {
		t.Errorf("validations %+v", r.Validations)
	}
}

// The total is shared once all validations ran: a validation that runs
// last keeps as much as the first, and together they use the total, as
// the JSON report writes them.
func TestTotalOutputShared(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	var vs []Planned
	for i := range 6 {
		vs = append(vs, Planned{ID: fmt.Sprint(i), Argv: []string{"seq", "1", "11000"}, Timeout: time.Minute})
	}
	const total = 60000
	r := inspect(t, Options{Repo: dir, MaxOutputBytes: DefaultMaxOutputBytes, MaxTotalOutputBytes: total, Validations: vs})
	kept := 0
	for i, v := range r.Validations {
		n := len(jsonstr.Append(nil, v.Stdout.Text)) - 2
		kept += n
		if d := n - (len(jsonstr.Append(nil, r.Validations[0].Stdout.Text)) - 2); d < -8 || d > 8 {
			t.Errorf("validation %d kept %d bytes, the first %d", i, n, len(r.Validations[0].Stdout.Text))
		}
		if v.Stdout.BytesDropped == 0 || r.Truncation.Fields[i].Field != fmt.Sprintf("validations[%d].stdout", i) || r.Truncation.Fields[i].BytesRemoved != v.Stdout.BytesDropped {
			t.Errorf("validation %d: dropped %d, truncation %+v", i, v.Stdout.BytesDropped, r.Truncation.Fields)
		}
	}
	if kept > total || kept < total-6*32 {
		t.Errorf("kept %d bytes of a total of %d", kept, total)
	}
}

// At detail summary a validation that passed shows no output and takes
// no share of the total: the failing one after it keeps the whole total.
func TestSummaryLeavesOutPassingOutput(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	vs := []Planned{
		{ID: "pass", Argv: []string{"sh", "-c", "seq 1 3000; seq 1 3000 >&2"}, Timeout: time.Minute},
		{ID: "fail", Argv: []string{"sh", "-c", "seq 1 3000; exit 1"}, Timeout: time.Minute},
	}
	for _, detail := range []string{DetailSummary, DetailFull} {
		r := inspect(t, Options{Repo: dir, Detail: detail, MaxOutputBytes: ServerMaxOutputBytes, MaxTotalOutputBytes: 6000, Validations: vs})
		pass, fail := r.Validations[0], r.Validations[1]
		if detail == DetailFull {
			if pass.Stdout.Text == "" || fail.Stdout.Text == "" || len(fail.Stdout.Text) > 3000 {
				t.Errorf("full: pass %d, fail %d bytes", len(pass.Stdout.Text), len(fail.Stdout.Text))
			}
			continue
		}
		if pass.Stdout.Text != "" || pass.Stderr.Text != "" || pass.Stdout.BytesDropped != 0 || pass.Stdout.BytesTotal != 13893 || pass.Stderr.BytesTotal != 13893 {
			t.Errorf("summary: the passing validation shows %+v %+v", pass.Stdout, pass.Stderr)
		}
		if len(fail.Stdout.Text) < ServerMaxOutputBytes-64 {
			t.Errorf("summary: the failing validation kept %d bytes", len(fail.Stdout.Text))
		}
		for _, f := range r.Truncation.Fields {
			if strings.HasPrefix(f.Field, "validations[0]") {
				t.Errorf("summary: %s listed as truncated", f.Field)
			}
		}
	}
}

// git reads its git directory's entries through links and follows the
// alternates a repository names: a .git directory inside the root whose
// refs and objects lead out would show another repository's files (their
// names, object ids and line counts). Such a repository is refused, like a
// .git file naming a git directory outside, before git runs.
func TestInspectGitDirEntriesLeadingOut(t *testing.T) {
	outside := newRepo(t, map[string]string{"secret.txt": "secret\n"})
	rootDir := t.TempDir()
	mk := func(name string) string {
		gd := filepath.Join(rootDir, name, ".git")
		// HEAD, objects and refs: a git directory as git takes one.
		if err := os.MkdirAll(filepath.Join(gd, "objects", "info"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.Mkdir(filepath.Join(gd, "refs"), 0o755)
		write(t, filepath.Join(gd, "HEAD"), "ref: refs/heads/main\n")
		return gd
	}
	// Every entry a link out.
	gd := mk("linked")
	os.Remove(filepath.Join(gd, "objects", "info"))
	os.Remove(filepath.Join(gd, "objects"))
	os.Remove(filepath.Join(gd, "refs"))
	for _, n := range []string{"objects", "refs"} {
		if err := os.Symlink(filepath.Join(outside, ".git", n), filepath.Join(gd, n)); err != nil {
			t.Fatal(err)
		}
	}
	// A branch linked out, the objects borrowed through alternates.
	gd = mk("alternates")
	os.MkdirAll(filepath.Join(gd, "refs", "heads"), 0o755)
	if err := os.Symlink(filepath.Join(outside, ".git", "refs", "heads", "main"), filepath.Join(gd, "refs", "heads", "main")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(gd, "objects", "info", "alternates"), filepath.Join(outside, ".git", "objects")+"\n")
	// Relative alternates climbing out.
	gd = mk("relalt")
	os.MkdirAll(filepath.Join(gd, "refs", "heads"), 0o755)
	rel, _ := filepath.Rel(filepath.Join(gd, "objects"), filepath.Join(outside, ".git", "objects"))
	write(t, filepath.Join(gd, "objects", "info", "alternates"), rel+"\n")

	// Quoted, and second-hand through an alternate inside the root.
	gd = mk("quoted")
	write(t, filepath.Join(gd, "objects", "info", "alternates"), `"`+filepath.Join(outside, ".git", "objects")+`"`+"\n")
	gd = mk("chain")
	hop := filepath.Join(rootDir, "hop")
	os.MkdirAll(filepath.Join(hop, "info"), 0o755)
	write(t, filepath.Join(hop, "info", "alternates"), filepath.Join(outside, ".git", "objects")+"\n")
	write(t, filepath.Join(gd, "objects", "info", "alternates"), hop+"\n")

	log, _, _ := gitSpy(t)
	root := openRoot(t, rootDir)
	for _, repo := range []string{"quoted", "chain", "linked", "alternates", "relalt"} {
		r, err := Inspect(context.Background(), Options{Repo: repo, Root: root, Detail: DetailFull, LookupEnv: os.LookupEnv})
		if e, ok := errs.As(err); !ok || e.Code != errs.Outside {
			t.Errorf("%s: got %v (report %+v), want %s", repo, err, r, errs.Outside)
		}
		if gitRan(log) {
			t.Fatalf("%s: git ran before the refusal", repo)
		}
	}
	// Links and alternates that stay inside are fine.
	inside := newRepo(t, map[string]string{"a.txt": "a\n"})
	dst := filepath.Join(rootDir, "ok")
	if err := os.Rename(inside, dst); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("heads", filepath.Join(dst, ".git", "refs", "alias")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dst, ".git", "objects", "info", "alternates"), filepath.Join(dst, ".git", "objects")+"\n")
	if r := inspect(t, Options{Repo: "ok", Root: root}); !r.OK {
		t.Errorf("links inside the root: %+v", r)
	}
}

// git takes a directory that itself looks like a git directory (HEAD,
// objects, refs) for a bare repository before it looks further up, and
// its config may then name the work tree above as core.worktree: the
// request is judged by that directory too.
func TestInspectBareLookalikeLeadingOut(t *testing.T) {
	outside := newRepo(t, map[string]string{"secret.txt": "secret\n"})
	rootDir := t.TempDir()
	repo := filepath.Join(rootDir, "repo")
	gitT(t, rootDir, "init", "-q", "-b", "main", "repo")
	x := filepath.Join(repo, "x")
	if err := os.Mkdir(x, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(x, "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(x, "config"), "[core]\n\tbare = false\n\tworktree = "+repo+"\n")
	for _, n := range []string{"objects", "refs"} {
		if err := os.Symlink(filepath.Join(outside, ".git", n), filepath.Join(x, n)); err != nil {
			t.Fatal(err)
		}
	}
	log, _, _ := gitSpy(t)
	r, err := Inspect(context.Background(), Options{Repo: "repo/x", Root: openRoot(t, rootDir), Detail: DetailFull, LookupEnv: os.LookupEnv})
	if e, ok := errs.As(err); !ok || e.Code != errs.Outside {
		t.Errorf("got %v (report %+v), want %s", err, r, errs.Outside)
	}
	if gitRan(log) {
		t.Error("git ran before the refusal")
	}
}

// The repository controls its git directory: a FIFO where git keeps the
// commondir file is refused before git runs, never read (which blocked the
// inspection for good).
func TestInspectConfinedFIFOInGitDir(t *testing.T) {
	rootDir := t.TempDir()
	repo := filepath.Join(rootDir, "repo")
	os.Mkdir(repo, 0o755)
	gitT(t, repo, "init", "-q", "-b", "main")
	if err := syscall.Mkfifo(filepath.Join(repo, ".git", "commondir"), 0o644); err != nil {
		t.Fatal(err)
	}
	log, _, _ := gitSpy(t)
	root := openRoot(t, rootDir)
	done := make(chan *errs.Error, 1)
	go func() { done <- inspectErr(t, Options{Repo: "repo", Root: root}) }()
	select {
	case e := <-done:
		if e.Code != CodeNotARepo || !strings.Contains(e.Msg, "commondir: is a FIFO") {
			t.Errorf("got %v, want %s naming the FIFO", e, CodeNotARepo)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the inspection blocked on a FIFO in the git directory")
	}
	if gitRan(log) {
		t.Fatal("git ran before the refusal")
	}
}
