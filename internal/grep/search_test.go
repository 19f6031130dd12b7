package grep

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/workspace"
)

// search runs hgrep's engine with argv in dir against the real rg.
func search(t *testing.T, dir string, argv ...string) (string, error) {
	t.Helper()
	plan, err := parse(argv)
	if err != nil {
		t.Fatalf("Parse(%q): %v", argv, err)
	}
	var out bytes.Buffer
	p := rows.NewPrinter(&out, rows.DefaultBudget)
	res, err := Search(context.Background(), plan, Config{Dir: dir, LookupEnv: os.LookupEnv}, p)
	if ferr := p.Flush(); ferr != nil {
		t.Fatal(ferr)
	}
	if err == nil {
		err = res.Err()
	}
	return out.String(), err
}

func h(text string) string { return rows.Hash([]byte(text)) }

func files(t testing.TB, fs map[string]string) string {
	dir := t.TempDir()
	for name, content := range fs {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestSearch(t *testing.T) {
	dir := files(t, map[string]string{
		"crlf.txt":   "alpha\r\nneedle one\r\nbeta\r\n",
		"lonecr.txt": "x\ry\rneedle two\rz\nafter\n",
		"bom.txt":    "\uFEFFneedle bom\nbeta\n",
		"ctx.txt":    "alpha\nneedle\nbeta\nneedle\ngamma\n\n\nfar\nneedle\n",
		"bomnul.txt": "\uFEFFx\x00y\nneedle\n",
		"sub/x":      "",
	})
	if err := os.Link(filepath.Join(dir, "crlf.txt"), filepath.Join(dir, "hard.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("crlf.txt", filepath.Join(dir, "soft.txt")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"needle", "crlf.txt"}, "\"crlf.txt\":2:" + h("needle one") + " needle one\n"},
		{[]string{"needle", "lonecr.txt"}, "\"lonecr.txt\":3:" + h("needle two") + " needle two\n"},
		// Context is counted in verified rows: "z", right after the match
		// in the same ripgrep line, is the one row of -A1.
		{[]string{"-A1", "needle", "lonecr.txt"}, "\"lonecr.txt\":3:" + h("needle two") + " needle two\n\"lonecr.txt\":4:" + h("z") + " z\n"},
		{[]string{"-B1", "-A2", "needle", "lonecr.txt"}, "\"lonecr.txt\":2:" + h("y") + " y\n\"lonecr.txt\":3:" + h("needle two") + " needle two\n\"lonecr.txt\":4:" + h("z") + " z\n\"lonecr.txt\":5:f395 after\n"},
		{[]string{"-A0", "needle", "lonecr.txt"}, "\"lonecr.txt\":3:" + h("needle two") + " needle two\n"},
		{[]string{"after", "lonecr.txt"}, "\"lonecr.txt\":5:f395 after\n"},
		{[]string{"needle", "bom.txt"}, "\"bom.txt\":1:" + rows.Hash([]byte("\uFEFFneedle bom")) + " \uFEFFneedle bom\n"},
		// Overlapping context prints each row once, in order.
		{[]string{"-C1", "needle", "ctx.txt"}, "\"ctx.txt\":1:8ed3 alpha\n\"ctx.txt\":2:0988 needle\n\"ctx.txt\":3:f44e beta\n" +
			"\"ctx.txt\":4:0988 needle\n\"ctx.txt\":5:be9d gamma\n\"ctx.txt\":8:" + rows.Hash([]byte("far")) + " far\n\"ctx.txt\":9:0988 needle\n"},
		// The same file named twice, in any spelling or through a link: each
		// row once.
		{[]string{"-j1", "needle", "crlf.txt", "crlf.txt"}, "\"crlf.txt\":2:" + h("needle one") + " needle one\n"},
		{[]string{"-j1", "needle", "crlf.txt", "./crlf.txt", "sub/../crlf.txt", "hard.txt", "soft.txt"}, "\"crlf.txt\":2:" + h("needle one") + " needle one\n"},
		// A BOM and a NUL: the file's own rows (ripgrep would transcode).
		{[]string{"needle", "bomnul.txt"}, "\"bomnul.txt\":2:0988 needle\n"},
		{[]string{"-B1", "needle", "bomnul.txt"}, "\"bomnul.txt\":1:" + h("\uFEFFx\x00y") + " \uFEFFx\x00y\n\"bomnul.txt\":2:0988 needle\n"},
		{[]string{"nothing-matches-this", "."}, ""},
	} {
		got, err := search(t, dir, tc.argv...)
		if err != nil || got != tc.want {
			t.Errorf("hgrep %q = %q, %v; want %q", tc.argv, got, err, tc.want)
		}
	}
}

func TestSearchFailures(t *testing.T) {
	dir := files(t, map[string]string{"a.txt": "needle\n", "latin.txt": "caf\xe9 needle\n"})
	for _, tc := range []struct {
		argv     []string
		code     string
		msg      string
		wantRows string
	}{
		{[]string{"(needle", "a.txt"}, CodeInvalidPattern, "regex parse error: unclosed group in (needle", ""},
		{[]string{"-j1", "--sort=path", "needle", "a.txt", "missing.txt"}, errs.NotFound, "missing.txt: No such file or directory", "\"a.txt\":1:0988 needle\n"},
		{[]string{"needle", "latin.txt"}, CodeNotUTF8, `"latin.txt": row 1 is not valid UTF-8`, ""},
		{[]string{"--type=nosuch", "needle"}, CodeRg, "unrecognized file type: nosuch", ""},
	} {
		got, err := search(t, dir, tc.argv...)
		if errs.Code(err) != tc.code || !strings.Contains(err.Error(), tc.msg) || strings.Contains(err.Error(), "\n") || got != tc.wantRows {
			t.Errorf("hgrep %q = %q, %v; want rows %q and a one-line %s error containing %q", tc.argv, got, err, tc.wantRows, tc.code, tc.msg)
		}
	}
}

// rgChildren lists the rg processes whose parent is this test process,
// zombies included: a process not reaped still shows up.
func rgChildren(t *testing.T) []string {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	me := strconv.Itoa(os.Getpid())
	for _, e := range ents {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || !strings.Contains(s[:i], "(rg") {
			continue
		}
		if f := strings.Fields(s[i+1:]); len(f) > 1 && f[1] == me {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestSearchStopsAtTokenLimit searches a file with a million matches: the
// result is a prefix of the rows, within the token ceiling, and rg is gone
// (killed and reaped) when Search returns.
func TestSearchStopsAtTokenLimit(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "big.txt"))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := range 1_000_000 {
		fmt.Fprintf(w, "needle %d\n", i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	got, err := search(t, dir, "needle", "big.txt")
	if errs.Code(err) != errs.Incomplete {
		t.Fatalf("err %v, want %s", err, errs.Incomplete)
	}
	var want []byte
	for i := 0; len(want) < len(got); i++ {
		want = append(want, `"big.txt":`...)
		want = rows.AppendRow(want, i+1, fmt.Appendf(nil, "needle %d", i))
	}
	if string(want) != got {
		t.Fatalf("output is not a prefix of the file's rows")
	}
	if n := rows.CountTokens(got); n <= rows.TokenLimit-200 || n > rows.TokenCeiling {
		t.Errorf("output has %d tokens, want just over %d and at most %d", n, rows.TokenLimit-200, rows.TokenCeiling)
	}
	if left := rgChildren(t); len(left) > 0 {
		t.Errorf("rg processes left behind: %v", left)
	}
}

func TestRgError(t *testing.T) {
	for _, tc := range []struct {
		stderr string
		code   string
		msg    string
	}{
		// Real ripgrep 13 diagnostics.
		{"regex parse error:\n    (foo\n    ^\nerror: unclosed group\n", CodeInvalidPattern, "regex parse error: unclosed group in (foo"},
		{"PCRE2: error compiling pattern at offset 3: subpattern name expected\n", CodeInvalidPattern, "PCRE2: error compiling pattern at offset 3: subpattern name expected"},
		{"Compiled regex exceeds size limit of 104857600 bytes.\n", CodeInvalidPattern, "Compiled regex exceeds size limit of 104857600 bytes."},
		{"nope.txt: No such file or directory (os error 2)\n", errs.NotFound, "nope.txt: No such file or directory (os error 2)"},
		{"No files were searched, which means ripgrep probably applied a filter you didn't expect.\nRunning with --debug will show why files are being skipped.\n",
			CodeRg, "No files were searched, which means ripgrep probably applied a filter you didn't expect."},
		{"error: Invalid value for '--after-context <NUM>': invalid digit found in string\n\nUSAGE:\n    \n    rg [OPTIONS] PATTERN [PATH ...]\n    rg [OPTIONS] --help\n\nFor more information try --help\n",
			CodeRg, "Invalid value for '--after-context <NUM>': invalid digit found in string"},
		{"a: denied\nb: denied\nc: denied\nd: denied\n", CodeRg, "a: denied; b: denied; c: denied (and more)"},
		{"a: Permission denied (os error 13)\n", errs.PermissionDenied, "a: Permission denied (os error 13)"},
		{"a: Permission denied (os error 13)\nb: No such file or directory (os error 2)\n", CodeRg, "a: Permission denied (os error 13); b: No such file or directory (os error 2)"},
		// ripgrep names files as they are: control characters and bytes that
		// are not UTF-8 never reach the terminal raw.
		{"miss\x1b[2Jing\x01\xff.txt: No such file or directory (os error 2)\n", errs.NotFound, `miss\x1b[2Jing\x01\xff.txt: No such file or directory (os error 2)`},
		{"regex parse error:\n    (\x1b[2J\n    ^\nerror: unclosed group\n", CodeInvalidPattern, `regex parse error: unclosed group in (\x1b[2J`},
		{"", CodeRg, "ripgrep failed without a message (exit status 2)"},
	} {
		err := rgError([]byte(tc.stderr))
		var ce *errs.Error
		if errs.Code(err) != tc.code || !asError(err, &ce) || ce.Msg != tc.msg {
			t.Errorf("rgError(%q) = %v; want %s: %s", tc.stderr, err, tc.code, tc.msg)
		}
	}
}

func asError(err error, target **errs.Error) bool {
	e, ok := err.(*errs.Error)
	*target = e
	return ok
}

// FuzzEvents feeds arbitrary bytes to the event stream reader as if rg had
// written them: it never panics, and every row it prints is a verified row
// of the file (a wrong identity is never printed, whatever rg says).
func FuzzEvents(f *testing.F) {
	const content = "alpha\rneedle one\r\nbeta\n\uFEFFx\nlast"
	f.Add([]byte(`{"type":"begin","data":{"path":{"text":"f"}}}
{"type":"match","data":{"path":{"text":"f"},"lines":{"text":"alpha\rneedle one\r\n"},"line_number":1,"absolute_offset":0,"submatches":[{"match":{"text":"needle"},"start":6,"end":12}]}}
{"type":"context","data":{"path":{"text":"f"},"lines":{"text":"beta\n"},"line_number":2,"absolute_offset":18,"submatches":[]}}
{"type":"end","data":{"path":{"text":"f"},"binary_offset":null,"stats":{}}}
{"data":{"elapsed_total":{"human":"0.001s","nanos":1,"secs":0}},"type":"summary"}
`))
	f.Add([]byte(`{"type":"match","data":{"path":{"text":"f"},"lines":{"text":"last"},"line_number":4,"absolute_offset":30,"submatches":[{"start":9,"end":2}]}}` + "\n"))
	f.Add([]byte(`{"type":"match","data":{"path":{"bytes":"Zg=="},"lines":{"bytes":"YmV0YQo="},"line_number":2,"absolute_offset":18}}` + "\n"))
	f.Add([]byte(`{"type":"match","data":{"path":{"text":"f"},"lines":{"text":"x\n"},"absolute_offset":99999999999}}` + "\n"))
	dir := files(f, map[string]string{"f": content})
	valid := scannerRows(f, []byte(content))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, ctx := range [][2]int{{0, 0}, {1, 2}} {
			out, _ := runEvents(t, dir, string(data), ctx[0], ctx[1])
			for _, line := range strings.SplitAfter(out, "\n") {
				if line != "" && !slices.Contains(valid, line) {
					t.Fatalf("printed %q, which is not a row of the file", line)
				}
			}
		}
	})
}

// A file name that is not UTF-8 is skipped with a message naming it
// escaped; the rest of the search goes on and the result says so.
func TestSearchSkipsNonUTF8Names(t *testing.T) {
	dir := files(t, map[string]string{"bad\xff\x1b[2J.txt": "needle\n", "good.txt": "needle\n", "z.txt": "needle\n"})
	plan, err := parse([]string{"--sort=path", "needle"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Collect(context.Background(), plan, Config{Dir: dir, LookupEnv: os.LookupEnv})
	if err != nil || res.Complete || len(res.Rows) != 2 || res.Incomplete == nil || res.Incomplete.Code != CodeNotUTF8 ||
		len(res.Skipped) != 1 || !strings.HasPrefix(res.Skipped[0], `"bad\xff\x1b[2J.txt"`) || strings.ContainsAny(res.Incomplete.Message, "\x1b\xff") {
		t.Errorf("got %+v, %v", res, err)
	}
	if e := res.Err(); errs.Code(e) != CodeNotUTF8 || errs.ExitCode(e) != 1 {
		t.Errorf("Err() = %v", e)
	}
}

// Named paths that would block ripgrep are refused before it starts.
func TestCheckPath(t *testing.T) {
	dir := files(t, map[string]string{"f.txt": "x\n", "d/g.txt": "x\n"})
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("fifo", filepath.Join(dir, "tofifo")); err != nil {
		t.Fatal(err)
	}
	root, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		req    string
		isPath bool
		code   string
	}{
		{"f.txt", true, ""},
		{"d", true, ""},
		{"missing", true, ""}, // ripgrep reports it
		{"d", false, ""},      // ripgrep reports a directory given as a file
		{"fifo", true, CodeNotRegular},
		{"tofifo", true, CodeNotRegular},
		{"fifo", false, CodeNotRegular},
		{"/dev/null", true, CodeNotRegular},
		{"/proc/self/status", true, CodeNotRegular},
		{"/proc/self", true, CodeNotRegular},
		{"/sys/kernel", true, CodeNotRegular},
	} {
		_, err := checkPath(nil, dir, tc.req, tc.isPath)
		if errs.Code(err) != tc.code || err != nil && !strings.Contains(err.Error(), quote(tc.req)) {
			t.Errorf("%q (path %v): %v, want %q", tc.req, tc.isPath, err, tc.code)
		}
		if strings.HasPrefix(tc.req, "/") {
			continue
		}
		// The same under a root, which hands ripgrep the clean request.
		arg, err := checkPath(root, "/nonexistent", "./"+tc.req, tc.isPath)
		if errs.Code(err) != tc.code || err == nil && arg != tc.req {
			t.Errorf("root %q: %q, %v; want %q", tc.req, arg, err, tc.code)
		}
	}
}

// Cancelling the context stops ripgrep's whole group before Search
// returns.
func TestSearchCancelled(t *testing.T) {
	bin := t.TempDir()
	pidFile := filepath.Join(bin, "pid")
	script := "#!/bin/sh\necho $$ > '" + pidFile + "'\nsleep 60 &\nwait\n"
	if err := os.WriteFile(filepath.Join(bin, "rg"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	plan, err := parse([]string{"needle"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pid := make(chan string, 1)
	go func() {
		for {
			// The shell creates the file before it writes the pid.
			if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
				pid <- strings.TrimSpace(string(b))
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	start := time.Now()
	_, err = Search(ctx, plan, Config{Dir: t.TempDir(), LookupEnv: os.LookupEnv}, rows.NewCollector(rows.DefaultBudget))
	if errs.Code(err) != errs.Cancelled || time.Since(start) > 10*time.Second {
		t.Fatalf("err %v after %v, want cancelled", err, time.Since(start))
	}
	select {
	case p := <-pid:
		if _, err := os.Stat("/proc/" + p); err == nil {
			t.Errorf("the fake rg %s is still there", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the fake rg never wrote its pid")
	}
}
