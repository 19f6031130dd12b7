package grep

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/rows"
)

// rgLines splits content as ripgrep does: lines end at LF only, and a UTF-8
// byte order mark is not part of the first line's text.
func rgLines(content []byte) [][]byte {
	var out [][]byte
	for len(content) > 0 {
		i := bytes.IndexByte(content, '\n') + 1
		if i == 0 {
			i = len(content)
		}
		out = append(out, content[:i])
		content = content[i:]
	}
	if len(out) > 0 {
		out[0] = bytes.TrimPrefix(out[0], bom)
	}
	return out
}

// scannerRows is the reference: the verified rows of content per rows.Scanner.
func scannerRows(t testing.TB, content []byte) []string {
	sc := rows.NewScanner(bytes.NewReader(content))
	var out []string
	for sc.Scan(len(content)) {
		out = append(out, string(rows.AppendRow(nil, sc.Line(), sc.Text())))
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reference scanner: %v", err)
	}
	return out
}

func writeTemp(t *testing.T, content []byte) string {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// sourceRows reports every ripgrep line of content as context and returns
// the rows the source makes of them.
func sourceRows(t *testing.T, content []byte) ([]string, error) {
	src, err := openSource("/", writeTemp(t, content))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var out []string
	for n, l := range rgLines(content) {
		segs, err := src.rowsOf(n+1, l, nil)
		if err != nil {
			return out, err
		}
		for _, sg := range segs {
			out = append(out, string(rows.AppendRow(nil, sg.line, src.cur[sg.start:sg.end])))
		}
	}
	return out, nil
}

func TestSourceMatchesScanner(t *testing.T) {
	for _, content := range []string{
		"", "a", "a\n", "\n", "\n\n", "a\rb\r\nc\n\n", "a\r", "\r", "\r\r", "\r\n\r",
		"x\ry\rfoo\rz\nfoo2\r\r\nw\rfoo3", "\uFEFFfirst\nsecond", "\uFEFF\r\n", "tab\tend  \r\n",
		"nul\x00byte\n", "caf\u00e9 \u5024\r\nok",
	} {
		got, err := sourceRows(t, []byte(content))
		want := scannerRows(t, []byte(content))
		if err != nil || strings.Join(got, "") != strings.Join(want, "") {
			t.Errorf("%q: source rows %q, %v; want %q", content, got, err, want)
		}
	}
}

// A line longer than the read buffer, with CRs at the buffer's edges.
func TestSourceLongLines(t *testing.T) {
	var b bytes.Buffer
	for i := range 5 {
		b.WriteString(strings.Repeat("x", 64<<10-1-i))
		b.WriteString("\r\n\r")
	}
	b.WriteString("tail\n")
	got, err := sourceRows(t, b.Bytes())
	want := scannerRows(t, b.Bytes())
	if err != nil || strings.Join(got, "") != strings.Join(want, "") {
		t.Errorf("source rows differ from the scanner (%d vs %d rows, err %v)", len(got), len(want), err)
	}
}

func TestSourcePicksMatchedRows(t *testing.T) {
	content := []byte("a\rneedle\rb\r\nc\n")
	for _, tc := range []struct {
		subs []span
		want string
	}{
		{[]span{{2, 8}}, "2:0988 needle\n"},
		{[]span{{0, 1}, {9, 10}}, "1:ca97 a\n3:3e23 b\n"},
		{[]span{{1, 2}}, "1:ca97 a\n"},                 // the CR itself belongs to the row it ends
		{[]span{{8, 8}}, "2:0988 needle\n"},            // an empty match at a CR
		{[]span{{4, 10}}, "2:0988 needle\n3:3e23 b\n"}, // a match across a CR
		{nil, "1:ca97 a\n2:0988 needle\n3:3e23 b\n"},   // context or an inverted match
		{[]span{{11, 11}}, "3:3e23 b\n"},               // at the end of the line
		{[]span{{50, 60}}, "3:3e23 b\n"},               // past the end: the last row
	} {
		src, err := openSource("/", writeTemp(t, content))
		if err != nil {
			t.Fatal(err)
		}
		segs, err := src.rowsOf(1, content[:12], tc.subs)
		var got []byte
		for _, sg := range segs {
			got = rows.AppendRow(got, sg.line, src.cur[sg.start:sg.end])
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("subs %v: got %q, %v; want %q", tc.subs, got, err, tc.want)
		}
		// The next line follows the three rows of the first.
		segs, err = src.rowsOf(2, []byte("c\n"), nil)
		if err != nil || len(segs) != 1 || segs[0].line != 4 {
			t.Errorf("line after the lone CRs: %v, %v; want row 4", segs, err)
		}
		src.Close()
	}
}

func TestSourceErrors(t *testing.T) {
	for _, tc := range []struct {
		content string
		n       int
		rgText  string
		code    string
	}{
		{"caf\xe9\n", 1, "caf\xe9\n", CodeNotUTF8},
		{"\xff\xfef\x00o\x00\n\x00", 1, "fo\n", CodeNotUTF8}, // UTF-16: ripgrep transcodes
		{"a\nb\n", 2, "c\n", CodeChanged},
		{"a\nb\n", 3, "c\n", CodeChanged},
	} {
		src, err := openSource("/", writeTemp(t, []byte(tc.content)))
		if err != nil {
			t.Fatal(err)
		}
		_, err = src.rowsOf(tc.n, []byte(tc.rgText), nil)
		if errs.Code(err) != tc.code || !strings.Contains(err.Error(), src.path) {
			t.Errorf("%q line %d: err %v, want code %s naming the file", tc.content, tc.n, err, tc.code)
		}
		src.Close()
	}
	if _, err := openSource("/", t.TempDir()); errs.Code(err) != CodeNotRegular {
		t.Errorf("a directory: err %v, want %s", err, CodeNotRegular)
	}
	if _, err := openSource("/", filepath.Join(t.TempDir(), "missing")); errs.Code(err) != CodeRead {
		t.Errorf("a missing file: err %v, want %s", err, CodeRead)
	}
}

// FuzzSourceRows checks that the rows hgrep makes of ripgrep's LF-numbered
// lines are exactly the verified rows of the file, whatever mix of LF, CRLF
// and lone CR it has.
func FuzzSourceRows(f *testing.F) {
	for _, s := range []string{"a\rb\r\nc\n\n", "\r\r\n", "\uFEFFx\ry", "x\n\r", "caf\xe9\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, content []byte) {
		got, err := sourceRows(t, content)
		if !utf8.Valid(content) {
			if err != nil && errs.Code(err) != CodeNotUTF8 {
				t.Fatalf("invalid UTF-8: err %v, want %s", err, CodeNotUTF8)
			}
			for _, r := range got {
				if !utf8.ValidString(r) {
					t.Fatalf("printed an invalid row %q", r)
				}
			}
			return
		}
		want := scannerRows(t, content)
		if err != nil || strings.Join(got, "") != strings.Join(want, "") {
			t.Fatalf("%q: source rows %q, %v; want %q", content, got, err, want)
		}
	})
}
