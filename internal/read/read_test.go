package read

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/workspace"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// fixedNow and fixedMtime make observations and file times repeatable.
var (
	fixedNow   = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	fixedMtime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
)

// ws makes a workspace directory root inside base/srv, with files (name →
// content) written with a fixed modification time.
func ws(t *testing.T, files map[string]string) (*workspace.Root, string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "srv", "root")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		writeFile(t, filepath.Join(dir, name), data)
	}
	root, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return root, dir
}

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fixedMtime, fixedMtime); err != nil {
		t.Fatal(err)
	}
}

func in(path string, offset, limit int) Input {
	i := Input{Path: path}
	if offset > 0 {
		i.Offset = &offset
	}
	if limit > 0 {
		i.Limit = &limit
	}
	return i
}

func read(t *testing.T, root *workspace.Root, input Input, opts Options) (*Result, error) {
	t.Helper()
	if opts.Now == nil {
		opts.Now = func() time.Time { return fixedNow }
	}
	res, err := Read(context.Background(), root, input, opts)
	if res == nil {
		t.Fatal("nil result")
	}
	// The error and the status agree.
	switch res.Status {
	case StatusError:
		if errs.Code(err) != res.Error.Code || res.Notes[0].Code != kebab(res.Error.Code) || res.Error.Message != res.Notes[0].Message {
			t.Fatalf("error result %+v does not match error %v", res.Error, err)
		}
	case StatusUnsupported:
		if errs.Code(err) != res.Code || errs.ExitCode(err) != ExitUnsupported {
			t.Fatalf("unsupported %s with error %v", res.Code, err)
		}
	default:
		if err != nil {
			t.Fatalf("status %s with error %v", res.Status, err)
		}
	}
	return res, err
}

// volatile are the fields that differ between runs: inode numbers and
// change times, and what is derived from them.
var volatile = []struct {
	re  *regexp.Regexp
	sub string
}{
	{regexp.MustCompile(`"identity":"\d+:\d+"`), `"identity":"DEV:INO"`},
	{regexp.MustCompile(`"version":"\d+\.\d+\.\d+"`), `"version":"SIZE.MTIME.CTIME"`},
	{regexp.MustCompile(`"statId":"stat:[0-9a-f]+"`), `"statId":"stat:X"`},
	{regexp.MustCompile(`"id":"obs:[0-9a-f]+"`), `"id":"obs:X"`},
	{regexp.MustCompile(`"size":\d+(,"mtimeMs":\d+,"identity":"DEV:INO","mimeType":"inode/directory")`), `"size":4096$1`},
}

// golden compares res in every format with testdata/golden/NAME.txtar.
func golden(t *testing.T, name string, res *Result) {
	t.Helper()
	j := JSON(res)
	for _, v := range volatile {
		j = v.re.ReplaceAll(j, []byte(v.sub))
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, j, "", "  "); err != nil {
		t.Fatal(err)
	}
	ar := &txtar.Archive{Files: []txtar.File{
		{Name: "json", Data: indented.Bytes()},
		{Name: "rows", Data: Format(res, FormatRows)},
		{Name: "numbered", Data: Format(res, FormatNumbered)},
		{Name: "plain", Data: Format(res, FormatPlain)},
	}}
	got := txtar.Format(ar)
	file := filepath.Join("testdata", "golden", name+".txtar")
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n%s", name, got)
	}
}

// checkRows checks the view's rows against hread on the same file: the
// verified rows of a file read as is must be hread's rows, byte for byte,
// except for clamped lines, whose text is a prefix.
func checkRows(t *testing.T, dir string, res *Result) {
	t.Helper()
	if res.Status != StatusOK || len(res.View.Lines) == 0 || res.Conversion != nil {
		return
	}
	v := res.View
	var out bytes.Buffer
	p := rows.NewPrinter(&out, rows.DefaultBudget)
	if err := Stream(context.Background(), filepath.Join(dir, res.File.ResolvedPath), Range{Start: v.StartLine, End: v.EndLine}, p, StreamOptions{}); err != nil && !errs.Is(err, errs.Incomplete) {
		t.Fatalf("hread: %v", err)
	}
	p.Flush()
	want := strings.SplitAfter(out.String(), "\n")
	for i, l := range v.Lines {
		if i >= len(want)-1 {
			return // hread's token limit
		}
		got := rows.Ref{Line: l.Number, Hash: l.Hash}.String() + " " + l.Text + "\n"
		if l.Clamped {
			if !strings.HasPrefix(want[i], strings.TrimSuffix(got, "\n")) {
				t.Errorf("clamped row %q is not a prefix of hread's %.80q", got, want[i])
			}
			continue
		}
		if got != want[i] {
			t.Errorf("row %q, hread %q", got, want[i])
		}
	}
}

func checkContentID(t *testing.T, dir string, res *Result) {
	t.Helper()
	if res.Observation == nil || res.Observation.ContentID == nil {
		return
	}
	data, err := os.ReadFile(filepath.Join(dir, res.File.ResolvedPath))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if want := "sha256:" + hex.EncodeToString(sum[:]); *res.Observation.ContentID != want {
		t.Errorf("contentId %s, sha256 of the file %s", *res.Observation.ContentID, want)
	}
}

func TestTextGolden(t *testing.T) {
	long := strings.Repeat("é", 2500) + "x"
	root, dir := ws(t, map[string]string{
		"small.txt":  "alpha\nbeta\ngamma\n",
		"crlf.txt":   "a\r\nb\rc\n\r\n    return 1\r",
		"bom.txt":    "\ufeffalpha\nbeta\n",
		"empty.txt":  "",
		"long.txt":   "before\n" + long + "\nafter\n",
		"svg.svg":    "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n",
		"notend.txt": "needle",
	})
	cases := []struct {
		name  string
		input Input
		check func(t *testing.T, r *Result)
	}{
		{"small", in("small.txt", 0, 0), func(t *testing.T, r *Result) {
			if !r.Observation.WholeFileVisible || *r.Totals.Lines != 3 || r.View.Partial {
				t.Error("a small file is seen whole")
			}
		}},
		{"crlf", in("crlf.txt", 0, 0), func(t *testing.T, r *Result) {
			if *r.Totals.Lines != 5 || r.View.Lines[3].Text != "" || r.View.Lines[4].Hash != "53c1" {
				t.Errorf("CRLF and lone CR: %+v", r.View.Lines)
			}
		}},
		{"bom", in("bom.txt", 0, 0), func(t *testing.T, r *Result) {
			if !strings.HasPrefix(r.View.Lines[0].Text, "\ufeff") || r.View.Lines[0].Hash != rows.Hash([]byte("\ufeffalpha")) {
				t.Error("the BOM stays in line 1")
			}
		}},
		{"empty", in("empty.txt", 0, 0), nil},
		{"empty-offset", in("empty.txt", 3, 0), nil},
		{"clamped-line", in("long.txt", 0, 0), func(t *testing.T, r *Result) {
			l := r.View.Lines[1]
			if !l.Clamped || *l.SourceChars != 2501 || len([]rune(l.Text)) != 2000 || l.Hash != rows.Hash([]byte(long)) {
				t.Errorf("clamped line: clamped %v chars %v text %d runes hash %s", l.Clamped, l.SourceChars, len([]rune(l.Text)), l.Hash)
			}
			if r.Observation.WholeFileVisible || !r.View.Partial || *r.Truncation.Primary != "line-length" {
				t.Error("a clamped view is not the whole file")
			}
		}},
		{"offset-past-eof", in("small.txt", 9, 0), func(t *testing.T, r *Result) {
			if r.View.EndLine != 8 || r.Notes[0].Retry.Offset != 3 {
				t.Errorf("past EOF: %+v", r.View)
			}
		}},
		{"limit-clamped", in("small.txt", 2, 5000), nil},
		{"svg", in("svg.svg", 0, 0), nil},
		{"no-final-eol", in("notend.txt", 0, 0), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, _ := read(t, root, c.input, Options{})
			checkRows(t, dir, res)
			checkContentID(t, dir, res)
			if c.check != nil {
				c.check(t, res)
			}
			golden(t, c.name, res)
		})
	}
}

// follow reads input and then every continuation until there is none,
// returning the lines seen; it fails on a loop.
func follow(t *testing.T, root *workspace.Root, input Input, opts Options) ([]Line, []*Result) {
	t.Helper()
	var lines []Line
	var all []*Result
	for step := 0; ; step++ {
		if step > 1000 {
			t.Fatal("continuation loops")
		}
		res, err := read(t, root, input, opts)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, res)
		lines = append(lines, res.View.Lines...)
		if !res.Continuation.Available {
			return lines, all
		}
		next := res.Continuation.Next
		if next.Offset <= input.offset() {
			t.Fatalf("continuation goes back: %d after %d", next.Offset, input.offset())
		}
		if res.Notes[0].Code != "continue" || *res.Notes[0].Retry != *next {
			t.Fatalf("the continue note is not first or not the next input: %+v", res.Notes[0])
		}
		input = in(next.Path, next.Offset, next.Limit)
	}
}

func (i Input) offset() int {
	if i.Offset == nil {
		return 1
	}
	return *i.Offset
}

func TestContinuationToTheEnd(t *testing.T) {
	var b strings.Builder
	for i := range 57 {
		b.WriteString(strings.Repeat("word ", i%9) + "line\n")
	}
	root, dir := ws(t, map[string]string{"many.txt": b.String()})
	ref, err := rows.NewIndex([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []Options{
		{Limits: Limits{MaxLines: 10}},
		{Limits: Limits{MaxViewBytes: 100}},
		{Budget: Tokens(rows.Budget{Limit: 30, Ceiling: 40})},
	} {
		lines, results := follow(t, root, in("many.txt", 0, 0), opts)
		if len(lines) != ref.Count() {
			t.Fatalf("%+v: %d lines seen, file has %d", opts.Limits, len(lines), ref.Count())
		}
		for i, l := range lines {
			if l.Number != i+1 || l.Text != string(ref.Text(i+1)) || l.Hash != ref.Ref(i+1).Hash {
				t.Fatalf("line %d: %+v", i+1, l)
			}
		}
		for _, r := range results {
			checkRows(t, dir, r)
			if r.View.Bytes > max(100, opts.Limits.MaxViewBytes) && opts.Limits.MaxViewBytes != 0 {
				t.Errorf("view of %d bytes over the limit", r.View.Bytes)
			}
		}
		if len(results) < 3 {
			t.Errorf("%d views: the limit did not bound them", len(results))
		}
	}
	res, _ := read(t, root, in("many.txt", 0, 10), Options{})
	golden(t, "truncated-lines", res)
	res, _ = read(t, root, in("many.txt", 0, 0), Options{Limits: Limits{MaxViewBytes: 100}})
	golden(t, "truncated-bytes", res)
	res, _ = read(t, root, in("many.txt", 50, 0), Options{Budget: Tokens(rows.Budget{Limit: 30, Ceiling: 40})})
	golden(t, "truncated-budget", res)
}

// A line longer than the whole view is shown clamped, and the continuation
// moves past it: following it reaches the end.
func TestSingleLineOverViewBytes(t *testing.T) {
	big := strings.Repeat("abcdefghi\u00e9", 30) // 330 bytes, 300 characters
	root, _ := ws(t, map[string]string{"big.txt": big + "\nnext\n" + big + "\n", "huge.txt": strings.Repeat("x", 200_000) + "\nafter\n"})
	opts := Options{Limits: Limits{MaxViewBytes: 100, MaxCharsPerLine: 100000}}
	lines, results := follow(t, root, in("big.txt", 0, 0), opts)
	if len(lines) != 3 || lines[1].Text != "next" || !lines[0].Clamped || len(lines[0].Text) > 100 {
		t.Fatalf("lines %+v", lines)
	}
	if results[0].Notes[1].Code != "first-line-exceeds-byte-limit" || results[0].Notes[1].Retry.Offset != 2 {
		t.Errorf("notes %+v", results[0].Notes)
	}
	golden(t, "first-line-over-view", results[0])
	golden(t, "last-line-over-view", results[len(results)-1])
	// With the defaults a 200,000-byte line is clamped to 2000 characters.
	res, _ := read(t, root, in("huge.txt", 0, 0), Options{})
	if l := res.View.Lines[0]; !l.Clamped || len(l.Text) != 2000 || *l.SourceChars != 200000 || len(res.View.Lines) != 2 {
		t.Errorf("huge line: %d bytes shown, %d lines", len(l.Text), len(res.View.Lines))
	}
	if res.View.Lines[0].Hash != rows.Hash([]byte(strings.Repeat("x", 200_000))) {
		t.Error("the clamped line's hash is not the whole line's")
	}
}

func TestInvalidUTF8AfterSample(t *testing.T) {
	root, _ := ws(t, map[string]string{"late.txt": strings.Repeat("ok line\n", 2000) + "bad \xff byte\n"})
	res, _ := read(t, root, in("late.txt", 0, 0), Options{})
	if res.Status != StatusUnsupported || res.Code != UnsupportedUnknownEncoding || *res.Notes[0].Data.Offset != 16004 {
		t.Fatalf("%s %s %+v", res.Status, res.Code, res.Notes)
	}
	golden(t, "invalid-utf8-late", res)
}

// A note names paths from the request and the file system; a control
// character in one must not reach a terminal raw from the rows format.
func TestNoteEscapesControls(t *testing.T) {
	root, _ := ws(t, map[string]string{"x": "x\n"})
	res, _ := Read(context.Background(), root, Input{Path: "a\nb\x1b[31m\x7fc"}, Options{})
	out := string(Format(res, FormatRows))
	if strings.ContainsFunc(out, func(r rune) bool { return r != '\n' && unicode.IsControl(r) }) {
		t.Fatalf("raw control character in %q", out)
	}
	if !strings.Contains(out, `a b\x1b[31m\x7fc: no such file`) {
		t.Fatalf("note %q does not name the path with its controls escaped", out)
	}
}
