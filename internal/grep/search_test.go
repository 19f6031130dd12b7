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
	"testing"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/rows"
)

// search runs hgrep's engine with argv in dir against the real rg.
func search(t *testing.T, dir string, argv ...string) (string, error) {
	t.Helper()
	plan, err := Parse(argv)
	if err != nil {
		t.Fatalf("Parse(%q): %v", argv, err)
	}
	var out bytes.Buffer
	err = Search(context.Background(), plan, dir, &out)
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
	})
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"needle", "crlf.txt"}, "\"crlf.txt\":2:" + h("needle one") + " needle one\n"},
		{[]string{"needle", "lonecr.txt"}, "\"lonecr.txt\":3:" + h("needle two") + " needle two\n"},
		// With context, every row of ripgrep's matched line prints: "z",
		// right after the match, is context too.
		{[]string{"-A1", "needle", "lonecr.txt"}, "\"lonecr.txt\":1:" + h("x") + " x\n\"lonecr.txt\":2:" + h("y") + " y\n\"lonecr.txt\":3:" + h("needle two") + " needle two\n\"lonecr.txt\":4:" + h("z") + " z\n\"lonecr.txt\":5:f395 after\n"},
		{[]string{"-A0", "needle", "lonecr.txt"}, "\"lonecr.txt\":3:" + h("needle two") + " needle two\n"},
		{[]string{"after", "lonecr.txt"}, "\"lonecr.txt\":5:f395 after\n"},
		{[]string{"needle", "bom.txt"}, "\"bom.txt\":1:" + rows.Hash([]byte("\uFEFFneedle bom")) + " \uFEFFneedle bom\n"},
		// Overlapping context prints each row once, in order.
		{[]string{"-C1", "needle", "ctx.txt"}, "\"ctx.txt\":1:8ed3 alpha\n\"ctx.txt\":2:0988 needle\n\"ctx.txt\":3:f44e beta\n" +
			"\"ctx.txt\":4:0988 needle\n\"ctx.txt\":5:be9d gamma\n\"ctx.txt\":8:" + rows.Hash([]byte("far")) + " far\n\"ctx.txt\":9:0988 needle\n"},
		// The same file named twice: each row once.
		{[]string{"-j1", "needle", "crlf.txt", "crlf.txt"}, "\"crlf.txt\":2:" + h("needle one") + " needle one\n"},
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
		{[]string{"-j1", "--sort=path", "needle", "a.txt", "missing.txt"}, CodeRg, "missing.txt: No such file or directory", "\"a.txt\":1:0988 needle\n"},
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
		{"nope.txt: No such file or directory (os error 2)\n", CodeRg, "nope.txt: No such file or directory (os error 2)"},
		{"No files were searched, which means ripgrep probably applied a filter you didn't expect.\nRunning with --debug will show why files are being skipped.\n",
			CodeRg, "No files were searched, which means ripgrep probably applied a filter you didn't expect."},
		{"error: Invalid value for '--after-context <NUM>': invalid digit found in string\n\nUSAGE:\n    \n    rg [OPTIONS] PATTERN [PATH ...]\n    rg [OPTIONS] --help\n\nFor more information try --help\n",
			CodeRg, "Invalid value for '--after-context <NUM>': invalid digit found in string"},
		{"a: denied\nb: denied\nc: denied\nd: denied\n", CodeRg, "a: denied; b: denied; c: denied (and more)"},
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
	f.Add([]byte(`{"type":"match","data":{"path":{"text":"f"},"lines":{"text":"last"},"line_number":4,"submatches":[{"start":9,"end":2}]}}` + "\n"))
	f.Add([]byte(`{"type":"match","data":{"path":{"bytes":"Zg=="},"lines":{"bytes":"YmV0YQo="},"line_number":2}}` + "\n"))
	f.Add([]byte(`{"type":"context","data":{"path":{"text":"f"},"lines":{"text":"x\n"},"line_number":99999999999}}` + "\n"))
	dir := files(f, map[string]string{"f": content})
	var valid []string
	for _, r := range scannerRows(f, []byte(content)) {
		valid = append(valid, `"f":`+r)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		st := &stream{dir: dir, out: &out, seen: map[rowKey]bool{}}
		st.run(bufio.NewReader(bytes.NewReader(data)))
		st.close()
		st.flush()
		for _, line := range strings.SplitAfter(out.String(), "\n") {
			if line != "" && !slices.Contains(valid, line) {
				t.Fatalf("printed %q, which is not a row of the file", line)
			}
		}
	})
}
