package grep

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/rows"
)

// rgLine is one line as ripgrep with --encoding=none reports it: the
// file's bytes up to and including an LF, at its byte offset.
type rgLine struct {
	off  int
	text []byte
}

// rgLines splits content as ripgrep does: lines end at LF only.
func rgLines(content []byte) []rgLine {
	var out []rgLine
	for off := 0; off < len(content); {
		i := bytes.IndexByte(content[off:], '\n') + 1
		if i == 0 {
			i = len(content) - off
		}
		out = append(out, rgLine{off, content[off : off+i]})
		off += i
	}
	return out
}

// matchEvent is ripgrep's JSON event for a match on l in file f.
func matchEvent(f string, l rgLine, subs []span) string {
	var sm []string
	for _, s := range subs {
		sm = append(sm, fmt.Sprintf(`{"match":{"text":""},"start":%d,"end":%d}`, s.Start, s.End))
	}
	return fmt.Sprintf(`{"type":"match","data":{"path":{"text":%q},"lines":{"bytes":%q},"absolute_offset":%d,"submatches":[%s]}}`+"\n",
		f, base64.StdEncoding.EncodeToString(l.text), l.off, strings.Join(sm, ","))
}

// testBudget lets the long rows of these tests through.
var testBudget = rows.Budget{Limit: 1 << 20, Ceiling: 1 << 20}

// runEvents feeds events to a stream over the files in dir with the given
// context, as Search would, and returns the printed rows.
func runEvents(t testing.TB, dir, events string, before, after int) (string, error) {
	var out bytes.Buffer
	p := rows.NewPrinter(&out, testBudget)
	open := func(path string) (*os.File, error) { return os.Open(filepath.Join(dir, path)) }
	st := newStream(open, p, testBudget.MaxRowBytes(), before, after)
	err := st.run(bufio.NewReader(strings.NewReader(events)))
	st.close()
	p.Flush()
	if st.full {
		err = errs.IncompleteTokens(rows.TokenLimit)
	}
	return out.String(), err
}

// scannerRows is the reference: the verified rows of content per
// rows.Scanner, printed as hgrep prints them for the file "f".
func scannerRows(t testing.TB, content []byte) []string {
	sc := rows.NewScanner(bytes.NewReader(content))
	var out []string
	for sc.Scan(len(content)) {
		out = append(out, string(rows.AppendPrinted(nil, rows.Row{Path: "f", Line: sc.Line(), Text: sc.Text()})))
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reference scanner: %v", err)
	}
	return out
}

func writeFile(t testing.TB, content []byte) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// sourceRows reports every ripgrep line of content as an inverted match
// (no submatches: every row of it) and returns the rows printed.
func sourceRows(t testing.TB, content []byte) (string, error) {
	var ev strings.Builder
	for _, l := range rgLines(content) {
		ev.WriteString(matchEvent("f", l, nil))
	}
	return runEvents(t, writeFile(t, content), ev.String(), 0, 0)
}

func TestSourceMatchesScanner(t *testing.T) {
	for _, content := range []string{
		"", "a", "a\n", "\n", "\n\n", "a\rb\r\nc\n\n", "a\r", "\r", "\r\r", "\r\n\r",
		"x\ry\rfoo\rz\nfoo2\r\r\nw\rfoo3", "\uFEFFfirst\nsecond", "\uFEFF\r\n", "tab\tend  \r\n",
		"nul\x00byte\n", "caf\u00e9 \u5024\r\nok",
	} {
		got, err := sourceRows(t, []byte(content))
		want := strings.Join(scannerRows(t, []byte(content)), "")
		if err != nil || got != want {
			t.Errorf("%q: source rows %q, %v; want %q", content, got, err, want)
		}
	}
}

// A line longer than the read buffer, with CRs at the buffer's edges.
func TestSourceLongLines(t *testing.T) {
	var b bytes.Buffer
	for i := range 5 {
		b.WriteString(strings.Repeat("x", bufSize-1-i))
		b.WriteString("\r\n\r")
	}
	b.WriteString("tail\n")
	got, err := sourceRows(t, b.Bytes())
	want := strings.Join(scannerRows(t, b.Bytes()), "")
	if err != nil || got != want {
		t.Errorf("source rows differ from the scanner (%d vs %d bytes, err %v)", len(got), len(want), err)
	}
}

// reference computes what hgrep must print for matches given as byte
// spans of content (one list per ripgrep line, nil for the whole line)
// with before and after context: the rows the spans touch and the context
// rows beside them, each once, in order.
func reference(t testing.TB, content []byte, matches map[int][]span, before, after int) string {
	x, err := rows.NewIndex(content)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]bool{}
	for _, l := range rgLines(content) {
		subs, ok := matches[l.off]
		if !ok {
			continue
		}
		ranges := [][2]int{{l.off, l.off + len(l.text) - 1}}
		if subs != nil {
			ranges = nil
			for _, s := range subs {
				a, b := l.off+int(s.Start), l.off+int(s.End)-1
				if s.End <= s.Start {
					b = a
				}
				a, b = min(a, l.off+len(l.text)-1), min(b, l.off+len(l.text)-1)
				ranges = append(ranges, [2]int{a, b})
			}
		}
		for n := 1; n <= x.Count(); n++ {
			for _, r := range ranges {
				if x.Start(n) <= r[1] && r[0] < x.End(n) {
					for c := max(1, n-before); c <= min(x.Count(), n+after); c++ {
						want[c] = true
					}
				}
			}
		}
	}
	var lines []int
	for n := range want {
		lines = append(lines, n)
	}
	slices.Sort(lines)
	var out []byte
	for _, n := range lines {
		out = rows.AppendPrinted(out, rows.Row{Path: "f", Line: n, Text: x.Text(n)})
	}
	return string(out)
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
		{nil, "1:ca97 a\n2:0988 needle\n3:3e23 b\n"},   // an inverted match
		{[]span{{11, 11}}, "3:3e23 b\n"},               // at the end of the line
		{[]span{{50, 60}}, "3:3e23 b\n"},               // past the end: the last row
	} {
		l := rgLines(content)
		ev := matchEvent("f", l[0], tc.subs) + matchEvent("f", l[1], nil)
		got, err := runEvents(t, writeFile(t, content), ev, 0, 0)
		want := ""
		for _, r := range strings.SplitAfter(tc.want, "\n") {
			if r != "" {
				want += `"f":` + r
			}
		}
		want += `"f":4:2e7d c` + "\n" // the next line follows the three rows of the first
		if err != nil || got != want {
			t.Errorf("subs %v: got %q, %v; want %q", tc.subs, got, err, want)
		}
	}
}

// Context counts verified rows, whatever ripgrep counts as a line.
func TestSourceContext(t *testing.T) {
	content := []byte("r1\rr2\rneedle\rr4\rr5\nr6\nneedle r7\r\nr8\rr9\n")
	l := rgLines(content)
	for _, c := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {2, 3}, {9, 9}} {
		// "needle" in ripgrep line 1 (row 3) and line 3 (row 7).
		ev := matchEvent("f", l[0], []span{{6, 12}}) + matchEvent("f", l[2], []span{{0, 6}})
		got, err := runEvents(t, writeFile(t, content), ev, c[0], c[1])
		want := reference(t, content, map[int][]span{l[0].off: {{6, 12}}, l[2].off: {{0, 6}}}, c[0], c[1])
		if err != nil || got != want {
			t.Errorf("-B%d -A%d: got %q, %v; want %q", c[0], c[1], got, err, want)
		}
	}
}

// ripgrep turns a NUL into a line break when it reads (rather than maps)
// a file named on its command line: its line numbers then run ahead of the
// file's, but its offsets stay exact, and so do the rows.
func TestSourceNULConverted(t *testing.T) {
	content := []byte("x\x00needle\nfoo\n")
	ev := `{"type":"match","data":{"path":{"text":"f"},"lines":{"text":"needle\n"},"line_number":2,"absolute_offset":2,"submatches":[{"match":{"text":"needle"},"start":0,"end":6}]}}` + "\n" +
		`{"type":"match","data":{"path":{"text":"f"},"lines":{"text":"x\n"},"line_number":1,"absolute_offset":0,"submatches":[]}}` + "\n"
	got, err := runEvents(t, writeFile(t, content), ev, 0, 1)
	want := `"f":1:` + rows.Hash([]byte("x\x00needle")) + " x\x00needle\n\"f\":2:" + rows.Hash([]byte("foo")) + " foo\n"
	if err != nil || got != want {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
	// In ripgrep's order: both parts of row 1 match, then "foo".
	ev = `{"type":"match","data":{"path":{"text":"f"},"lines":{"text":"x\n"},"absolute_offset":0,"submatches":[{"start":0,"end":1}]}}` + "\n" +
		`{"type":"match","data":{"path":{"text":"f"},"lines":{"text":"needle\n"},"absolute_offset":2,"submatches":[{"start":0,"end":6}]}}` + "\n" +
		`{"type":"match","data":{"path":{"text":"f"},"lines":{"text":"foo\n"},"absolute_offset":9,"submatches":[{"start":0,"end":3}]}}` + "\n"
	if got, err := runEvents(t, writeFile(t, content), ev, 0, 0); err != nil || got != want {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
}

func TestSourceErrors(t *testing.T) {
	for _, tc := range []struct {
		content string
		off     int
		rgText  string
		code    string
	}{
		{"caf\xe9\n", 0, "caf\xe9\n", CodeNotUTF8},
		{"\xff\xfef\x00o\x00\n\x00", 0, "\xff\xfef\x00o\x00\n", CodeNotUTF8}, // UTF-16
		{"a\nb\n", 2, "c\n", CodeChanged},
		{"a\nb\n", 4, "c\n", CodeChanged},
		{"a\nb\n", 2, "b\nc", CodeChanged},
	} {
		ev := matchEvent("f", rgLine{tc.off, []byte(tc.rgText)}, nil)
		_, err := runEvents(t, writeFile(t, []byte(tc.content)), ev, 0, 0)
		if errs.Code(err) != tc.code || !strings.Contains(err.Error(), `"f"`) {
			t.Errorf("%q at %d: err %v, want code %s naming the file", tc.content, tc.off, err, tc.code)
		}
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "f"), 0o755); err != nil {
		t.Fatal(err)
	}
	open := func(path string) (*os.File, error) {
		f, err := os.Open(filepath.Join(dir, path))
		if err == nil {
			f.Close()
			return nil, errTestOpen
		}
		return nil, err
	}
	st := newStream(open, rows.NewCollector(rows.DefaultBudget), 100, 0, 0)
	ev := matchEvent("f", rgLine{0, []byte("x\n")}, nil)
	if err := st.run(bufio.NewReader(strings.NewReader(ev))); errs.Code(err) != CodeRead {
		t.Errorf("an unopenable file: err %v, want %s", err, CodeRead)
	}
}

var errTestOpen = fmt.Errorf("test: cannot open")

// FuzzSourceRows checks that the rows hgrep makes of ripgrep's LF-ended
// lines are exactly the verified rows of the file, whatever mix of LF,
// CRLF and lone CR it has, and that the rows a match touches, with
// context, are the reference's.
func FuzzSourceRows(f *testing.F) {
	for _, s := range []string{"a\rb\r\nc\n\n", "\r\r\n", "\uFEFFx\ry", "x\n\r", "caf\xe9\r\n", "x\x00y\nz\r\r"} {
		f.Add([]byte(s), uint8(1), uint8(0), uint8(3))
	}
	f.Fuzz(func(t *testing.T, content []byte, at, before, after uint8) {
		got, err := sourceRows(t, content)
		if !utf8.Valid(content) {
			if err != nil && errs.Code(err) != CodeNotUTF8 {
				t.Fatalf("invalid UTF-8: err %v, want %s", err, CodeNotUTF8)
			}
			if !utf8.ValidString(got) {
				t.Fatalf("printed an invalid row in %q", got)
			}
			return
		}
		want := strings.Join(scannerRows(t, content), "")
		if err != nil || got != want {
			t.Fatalf("%q: source rows %q, %v; want %q", content, got, err, want)
		}
		// One match of one byte at offset at, with context.
		if len(content) == 0 {
			return
		}
		pos := int(at) % len(content)
		for _, l := range rgLines(content) {
			if pos < l.off || pos >= l.off+len(l.text) {
				continue
			}
			sub := []span{{int64(pos - l.off), int64(pos - l.off + 1)}}
			b, a := int(before%5), int(after%5)
			got, err := runEvents(t, writeFile(t, content), matchEvent("f", l, sub), b, a)
			want := reference(t, content, map[int][]span{l.off: sub}, b, a)
			if err != nil || got != want {
				t.Fatalf("%q match at %d -B%d -A%d: %q, %v; want %q", content, pos, b, a, got, err, want)
			}
		}
	})
}
