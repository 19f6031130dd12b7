package cmd

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/rowkit/rowkit/internal/cli"
)

// The commands are embeddable: what a shell needs to run them as private
// commands, checked in-process through cli.Call.

// row is a verified row computed here from its definition (SHA-256, first
// two bytes in hex), independently of package rows.
func row(n int, text string) string {
	sum := sha256.Sum256([]byte(text))
	return fmt.Sprintf("%d:%s %s\n", n, hex.EncodeToString(sum[:2]), text)
}

func rowsOf(content string) string {
	var b strings.Builder
	for i, l := range strings.Split(strings.TrimSuffix(content, "\n"), "\n") {
		b.WriteString(row(i+1, l))
	}
	return b.String()
}

func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// call runs argv in dir in-process.
func call(dir string, bound int, stdin string, argv ...string) cli.Output {
	env := cli.Env{Dir: dir, LookupEnv: os.LookupEnv, Stdin: strings.NewReader(stdin), OutputBytes: bound}
	return cli.Call(context.Background(), env, All, argv...)
}

// Two sets of commands run at once in one process, each in its own working
// directory, and each sees only its own: files are read, searched,
// outlined and edited relative to its Dir, and reported as given. Run it
// with -race too.
func TestCommandsRunConcurrentlyInTheirOwnDirs(t *testing.T) {
	dirs := map[string]string{"A": t.TempDir(), "B": t.TempDir()}
	for name, dir := range dirs {
		writeFiles(t, dir, map[string]string{
			"f.txt":     "alpha\nonly in " + name + "\n",
			"sub/g.txt": "sub of " + name + "\n",
			"p.go":      "package p\n\nfunc In" + name + "() {}\n",
			"e.txt":     "edit me\n",
			"s.hp":      "in e.txt\ntype 1:" + row(1, "edit me")[2:6] + " \"script of " + name + "\"\n",
		})
	}
	var wg sync.WaitGroup
	errc := make(chan string, 1000)
	check := func(name string, out cli.Output, code int, stdout, stderr string) {
		if out.Code != code || string(out.Stdout) != stdout || stderr != "*" && string(out.Stderr) != stderr {
			errc <- fmt.Sprintf("%s: exit %d, stdout %q, stderr %q; want %d, %q, %q", name, out.Code, out.Stdout, out.Stderr, code, stdout, stderr)
		}
	}
	for name, dir := range dirs {
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				check(name+" hread", call(dir, 0, "", "hread", "f.txt"), 0, rowsOf("alpha\nonly in "+name+"\n"), "")
				check(name+" hread sub", call(dir, 0, "", "rowkit", "hread", "sub/g.txt"), 0, row(1, "sub of "+name), "")
				check(name+" hread missing", call(dir, 0, "", "hread", "missing.txt"), 1, "", "hread: not_found: missing.txt: no such file\n")
				check(name+" hgrep", call(dir, 0, "", "hgrep", "--sort=path", "sub of|only in"), 0, `"f.txt":`+row(2, "only in "+name)+`"sub/g.txt":`+row(1, "sub of "+name), "")
				check(name+" hgrep sub", call(dir, 0, "", "hgrep", "sub of", "sub"), 0, `"sub/g.txt":`+row(1, "sub of "+name), "")
				ins := call(dir, 0, "", "inspect_file", "p.go")
				if ins.Code != 0 || !bytes.Contains(ins.Stdout, []byte(`"path":"p.go"`)) || !bytes.Contains(ins.Stdout, []byte(`"name":"In`+name+`"`)) {
					errc <- fmt.Sprintf("%s inspect_file: %d %s %s", name, ins.Code, ins.Stdout, ins.Stderr)
				}
				check(name+" read", call(dir, 0, "", "rowkit", "read", "f.txt"), 0, rowsOf("alpha\nonly in "+name+"\n"), "")
				dry := call(dir, 0, "in e.txt\ntype 1:"+row(1, "edit me")[2:6]+" \"edited in "+name+"\"\n", "hpatch", "--dry-run")
				if dry.Code != 0 || !bytes.Contains(dry.Stdout, []byte("+edited in "+name+"\n")) {
					errc <- fmt.Sprintf("%s hpatch --dry-run: %d %s %s", name, dry.Code, dry.Stdout, dry.Stderr)
				}
				dry = call(dir, 0, "", "rowkit", "patch", "--dry-run", "-f", "s.hp")
				if dry.Code != 0 || !bytes.Contains(dry.Stdout, []byte("+script of "+name+"\n")) {
					errc <- fmt.Sprintf("%s rowkit patch --dry-run -f s.hp: %d %s %s", name, dry.Code, dry.Stdout, dry.Stderr)
				}
				check(name+" hpatch -f missing", call(dir, 0, "", "hpatch", "-f", "missing.hp"), 2, "", "hpatch: usage: cannot read the script missing.hp: no such file or directory\n")
			}()
		}
	}
	wg.Wait()
	// One real edit in each, at once.
	for name, dir := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			script := filepath.Join(t.TempDir(), "s.hp")
			os.WriteFile(script, []byte("in e.txt\ntype 1:"+row(1, "edit me")[2:6]+" \"edited in "+name+"\"\n"), 0o644)
			out := call(dir, 0, "", "hpatch", "-f", script)
			if out.Code != 0 || !bytes.HasPrefix(out.Stdout, []byte("applied: 1 modified\n")) {
				errc <- fmt.Sprintf("%s hpatch: %d %s %s", name, out.Code, out.Stdout, out.Stderr)
			}
		}()
	}
	wg.Wait()
	close(errc)
	for e := range errc {
		t.Error(e)
	}
	for name, dir := range dirs {
		if b, _ := os.ReadFile(filepath.Join(dir, "e.txt")); string(b) != "edited in "+name+"\n" {
			t.Errorf("%s/e.txt = %q", name, b)
		}
	}
}

// bigFiles is a workspace whose outputs pass any small bound: a text file
// of many rows, a Go file of many functions.
func bigFiles(t testing.TB) (dir, text string) {
	dir = t.TempDir()
	var b, g strings.Builder
	for i := 1; i <= 600; i++ {
		fmt.Fprintf(&b, "line %d of the big file, needle here\n", i)
	}
	g.WriteString("package p\n")
	for i := range 400 {
		fmt.Fprintf(&g, "\nfunc Function%03d() {}\n", i)
	}
	writeFiles(t, dir, map[string]string{"big.txt": b.String(), "p.go": g.String()})
	return dir, b.String()
}

// checkBound checks an output bounded to bound bytes: stdout and stderr
// together within it, stdout a whole-row prefix of full, stderr the one
// line that names the bound, and not one more row of full would have fit.
func checkBound(t *testing.T, what string, out cli.Output, full []byte, bound int, diag string) {
	t.Helper()
	total := len(out.Stdout) + len(out.Stderr)
	next, _, _ := bytes.Cut(full[len(out.Stdout):], []byte("\n"))
	switch {
	case total > bound:
		t.Errorf("%s: %d bytes, over the %d-byte bound", what, total, bound)
	case len(out.Stdout) == 0 || !bytes.HasPrefix(full, out.Stdout) || !bytes.HasSuffix(out.Stdout, []byte("\n")):
		t.Errorf("%s: stdout is not a prefix of whole rows of the full output:\n%s", what, out.Stdout)
	case string(out.Stderr) != diag:
		t.Errorf("%s: stderr %q, want %q", what, out.Stderr, diag)
	case total+len(next)+1 <= bound:
		t.Errorf("%s: %d bytes, and the next row (%d bytes) would have fit in %d", what, total, len(next)+1, bound)
	}
}

var keptRefRE = regexp.MustCompile(`@out/[0-9a-z]{10}`)

// Env.OutputBytes bounds a verified-row command's whole output, stdout and
// stderr together: whole rows while they fit with the line that says
// which bound stopped them.
func TestOutputBytes(t *testing.T) {
	dir, text := bigFiles(t)
	for _, bound := range []int{9600, 2000} {
		limit := fmt.Sprintf("%s-byte output limit reached", map[int]string{9600: "9,600", 2000: "2,000"}[bound])

		// hread's diagnostic ends with the command that reads on.
		out := call(dir, bound, "", "hread", "big.txt")
		if out.Code != 1 {
			t.Errorf("hread: exit %d", out.Code)
		}
		next := bytes.Count(out.Stdout, []byte("\n")) + 1
		checkBound(t, "hread", out, []byte(rowsOf(text)), bound, fmt.Sprintf("hread: output incomplete: %s; continue with: hread big.txt %d:\n", limit, next))
		out = call(dir, bound, "", "rowkit", "hread", "big.txt", "5:600")
		next = bytes.Count(out.Stdout, []byte("\n")) + 5
		checkBound(t, "rowkit hread", out, []byte(rowsOf(text))[len(rowsOf(strings.Join(strings.SplitAfter(text, "\n")[:4], ""))):], bound, fmt.Sprintf("rowkit hread: output incomplete: %s; continue with: rowkit hread big.txt %d:600\n", limit, next))

		full := call(dir, 0, "", "hgrep", "needle", "big.txt")
		out = call(dir, bound, "", "hgrep", "needle", "big.txt")
		if full.Code != 0 || out.Code != 1 {
			t.Errorf("hgrep: exit %d unbounded, %d bounded", full.Code, out.Code)
		}
		// hgrep's rows past the bound are kept: its diagnostic names the
		// command that reads them on, and they are the rest of the search.
		ref := keptRefRE.Find(out.Stderr)
		checkBound(t, "hgrep", out, full.Stdout, bound, fmt.Sprintf("hgrep: output incomplete: %s; continue with: hread %s %d:\n", limit, ref, bytes.Count(out.Stdout, []byte("\n"))+1))
		if kept := call(dir, 0, "", "hread", string(ref)); kept.Code != 0 || !bytes.Equal(kept.Stdout, full.Stdout) {
			t.Errorf("hread %s: exit %d, %d bytes of the search's %d: %s", ref, kept.Code, len(kept.Stdout), len(full.Stdout), kept.Stderr)
		}

		full = call(dir, 0, "", "rowkit", "read", "big.txt")
		out = call(dir, bound, "", "rowkit", "read", "big.txt")
		rowsPart, notes, _ := bytes.Cut(out.Stdout, []byte("\n\n"))
		if out.Code != 0 || len(out.Stdout)+len(out.Stderr) > bound || !bytes.HasPrefix(full.Stdout, append(rowsPart, '\n')) ||
			!bytes.Contains(notes, []byte("(stopped by ")) || len(rowsPart) < bound/2 {
			t.Errorf("read: exit %d, %d bytes:\n%s", out.Code, len(out.Stdout)+len(out.Stderr), out.Stdout)
		}
		n := bytes.Count(rowsPart, []byte("\n")) + 1
		if !bytes.Contains(notes, fmt.Appendf(nil, "to continue, read offset %d", n+1)) {
			t.Errorf("read: the continuation does not follow line %d:\n%s", n, notes)
		}

		out = call(dir, bound, "", "inspect_file", "p.go")
		if out.Code != 0 || len(out.Stdout) > bound || !bytes.Contains(out.Stdout, []byte(`"truncated":true,"truncation":{"reason":"output_bytes"`)) {
			t.Errorf("inspect_file: exit %d, %d bytes: %.200s", out.Code, len(out.Stdout), out.Stdout)
		}

		// hpatch: the report of many edits, the diff of a dry run, and the
		// failures of a rejected script.
		var script, stale strings.Builder
		lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		for i := 0; i < 300; i++ {
			r := row(2*i+1, lines[2*i])
			fmt.Fprintf(&script, "in big.txt\ntype %s \"changed %d\"\n", strings.Fields(r)[0], i)
			fmt.Fprintf(&stale, "in big.txt\ntype %d:0000 \"x\"\n", 2*i+1)
		}
		ws := t.TempDir()
		writeFiles(t, ws, map[string]string{"big.txt": text})
		out = call(ws, bound, script.String(), "hpatch", "--dry-run")
		if out.Code != 0 || len(out.Stdout) > bound || !bytes.HasSuffix(out.Stdout, []byte(" more diff lines left out: output incomplete: "+limit+"\n")) {
			t.Errorf("hpatch --dry-run: exit %d, %d bytes: %s", out.Code, len(out.Stdout), out.Stdout)
		}
		out = call(ws, bound, stale.String(), "hpatch")
		if out.Code != 1 || len(out.Stdout)+len(out.Stderr) > bound || !bytes.HasSuffix(out.Stderr, []byte(" more failures left out: output incomplete: "+limit+"\n")) {
			t.Errorf("hpatch rejected: exit %d, %d bytes: %s", out.Code, len(out.Stderr), out.Stderr)
		}
		out = call(ws, bound, script.String(), "hpatch")
		if out.Code != 0 || len(out.Stdout) > bound || !bytes.HasSuffix(out.Stdout, []byte(" more edits left out: output incomplete: "+limit+"\n")) {
			t.Errorf("hpatch: exit %d, %d bytes: %s", out.Code, len(out.Stdout), out.Stdout)
		}
	}
	// A bound the token rule reaches first: the token limit is named.
	var huge strings.Builder
	for i := range 6000 {
		fmt.Fprintf(&huge, "row %d holds a few words\n", i)
	}
	writeFiles(t, dir, map[string]string{"huge.txt": huge.String()})
	out := call(dir, 1<<20, "", "hread", "huge.txt")
	want := fmt.Sprintf("hread: output incomplete: 15,000-token limit reached; continue with: hread huge.txt %d:\n", bytes.Count(out.Stdout, []byte("\n"))+1)
	if out.Code != 1 || string(out.Stderr) != want {
		t.Errorf("hread under a 1 MiB bound: exit %d, %q, want %q", out.Code, out.Stderr, want)
	}
}

// A bound too small for any row (or for the diagnostic) still leaves the
// result incomplete, never a silent empty success.
func TestOutputBytesTooSmall(t *testing.T) {
	dir, _ := bigFiles(t)
	for _, bound := range []int{1, 10, 60} {
		for _, argv := range [][]string{{"hread", "big.txt"}, {"hgrep", "needle", "big.txt"}} {
			out := call(dir, bound, "", argv...)
			if out.Code != 1 || len(out.Stdout) != 0 || len(out.Stderr) > bound {
				t.Errorf("%d %q: exit %d, %q, %q", bound, argv, out.Code, out.Stdout, out.Stderr)
			}
		}
	}
}

// A diagnostic longer than the room an output bound leaves is cut to it.
func TestOutputBytesClampsTheDiagnostic(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("x", 200)
	out := call(dir, 100, "", "hread", long)
	if out.Code != 1 || len(out.Stderr) > 100 || !bytes.HasPrefix(out.Stderr, []byte("hread: not_found: xxx")) || !bytes.HasSuffix(out.Stderr, []byte("...\n")) {
		t.Errorf("exit %d, %q", out.Code, out.Stderr)
	}
}
