package rows

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"unicode/utf8"
)

func TestGroupingLayout(t *testing.T) {
	type r struct {
		path string
		line int
	}
	for _, tc := range []struct {
		context bool
		rows    []r
		want    string
	}{
		{false, []r{{"a.go", 1}, {"a.go", 5}, {"b/c.go", 2}}, "a.go\n1:R\n5:R\nb/c.go\n2:R\n"},
		{true, []r{{"a.go", 1}, {"a.go", 2}, {"a.go", 5}, {"b.go", 6}, {"b.go", 7}}, "a.go\n1:R\n2:R\n--\n5:R\nb.go\n6:R\n7:R\n"},
		// A file again after another is headed again.
		{false, []r{{"a", 1}, {"b", 1}, {"a", 2}}, "a\n1:R\nb\n1:R\na\n2:R\n"},
		// Paths a reader could take for something else are JSON strings.
		{false, []r{{"12:abcd x.go", 1}, {"--", 1}, {" lead", 1}, {"trail ", 1}, {"/abs", 1}, {`"q"`, 1}, {"a\nb", 1}, {"\u00a0nb", 1}, {"2024/x.go", 1}},
			`"12:abcd x.go"` + "\n1:R\n" + `"--"` + "\n1:R\n" + `" lead"` + "\n1:R\n" + `"trail "` + "\n1:R\n" + `"/abs"` + "\n1:R\n" +
				`"\"q\""` + "\n1:R\n" + `"a\nb"` + "\n1:R\n" + "\"\u00a0nb\"\n1:R\n" + "2024/x.go\n1:R\n"},
	} {
		g := Grouping{Context: tc.context}
		var b []byte
		for _, x := range tc.rows {
			b = g.Append(b, x.path, x.line)
			b = append(b, strconv.Itoa(x.line)+":R\n"...)
		}
		if string(b) != tc.want {
			t.Errorf("%v: got\n%q\nwant\n%q", tc.rows, b, tc.want)
		}
	}
}

// A grouped collector admits what the grouped text of its records costs:
// the sum of its chunks' counts is the count of the whole text (no
// o200k_base pre-token spans a heading or separator and the row before),
// checked on real corpora, several files to a result, with context
// separators.
func TestGroupedCountsWholeOutput(t *testing.T) {
	files := corpusFiles(t, filepath.Join(runtime.GOROOT(), "src"), []string{".go"}, 3<<19)
	files = append(files, corpusFiles(t, pythonStdlib(t), []string{".py"}, 3<<19)...)
	checked := 0
	for i := 0; i+3 <= len(files); i += 3 {
		g := Grouping{Context: true}
		var whole []byte
		sum := 0
		for _, path := range files[i : i+3] {
			data, err := os.ReadFile(path)
			if err != nil || !utf8.Valid(data) {
				continue
			}
			sc := NewScanner(bytes.NewReader(data))
			for sc.Scan(MaxRowBytes) {
				if sc.Line()%7 == 3 { // gaps, for separators
					continue
				}
				chunk := AppendRow(g.Append(nil, path, sc.Line()), sc.Line(), sc.Text())
				sum += CountTokens(string(chunk))
				whole = append(whole, chunk...)
			}
		}
		if n := CountTokens(string(whole)); n != sum {
			t.Fatalf("%v: whole grouped output %d tokens, sum of chunks %d", files[i:i+3], n, sum)
		}
		checked++
	}
	if checked < 20 {
		t.Fatalf("only %d results checked", checked)
	}
	t.Logf("%d grouped results of three files checked", checked)
}

// The grouped collector keeps the records whose grouped text fits, and
// that text is what it admitted.
func TestGroupedCollector(t *testing.T) {
	b := Budget{Limit: 40, Ceiling: 45}
	c := NewGroupedCollector(b, false)
	var shown []byte
	g := Grouping{}
	for i, p := range []string{"a.go", "a.go", "b.go", "b.go", "c.go", "c.go", "c.go"} {
		ok, _ := c.Put(Row{Path: p, Line: i + 1, Text: []byte("x := 1")})
		if !ok {
			break
		}
		shown = AppendRow(g.Append(shown, p, i+1), i+1, []byte("x := 1"))
	}
	var text []byte
	g = Grouping{}
	for _, r := range c.Records {
		text = g.AppendRecord(text, r)
	}
	if !bytes.Equal(text, shown) || len(c.Records) == 0 || len(c.Records) == 7 {
		t.Fatalf("records' text %q, admitted %q", text, shown)
	}
	if n := CountTokens(string(text)); n > b.Ceiling {
		t.Fatalf("%d tokens admitted under a ceiling of %d", n, b.Ceiling)
	}
}
