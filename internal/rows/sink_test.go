package rows

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The Collector admits exactly the rows the Printer prints, and its records
// carry the same identities.
func TestCollectorAgreesWithPrinter(t *testing.T) {
	b := Budget{Limit: 40, Ceiling: 50}
	var out bytes.Buffer
	p := NewPrinter(&out, b)
	c := NewCollector(b)
	for i := 1; i <= 30; i++ {
		r := Row{Path: "dir/a \"b\".go", Line: i, Text: []byte(strings.Repeat("word ", i%4))}
		pok, _ := p.Put(r)
		cok, _ := c.Put(r)
		if pok != cok {
			t.Fatalf("row %d: printer %v, collector %v", i, pok, cok)
		}
	}
	p.Flush()
	if p.Report() != c.Report() || !c.Report().Omitted {
		t.Fatalf("reports differ or nothing omitted: %+v %+v", p.Report(), c.Report())
	}
	var printed bytes.Buffer
	for _, r := range c.Records {
		q, _ := json.Marshal(r.Path)
		printed.WriteString(string(q) + ":" + RefOf(r.Line, []byte(r.Text)).String() + " " + r.Text + "\n")
		if r.Hash != Hash([]byte(r.Text)) {
			t.Errorf("record %d hash %s", r.Line, r.Hash)
		}
	}
	if printed.String() != out.String() {
		t.Errorf("collector rows print as\n%s\nprinter wrote\n%s", printed.String(), out.String())
	}
}

func TestClamp(t *testing.T) {
	long := strings.Repeat("é", 2500) // 2 bytes each
	for _, c := range []struct {
		text  string
		max   int
		shown string
		chars int
	}{
		{"", 3, "", 0},
		{"abc", 3, "abc", 0},
		{"abcd", 3, "abc", 4},
		{"ééé", 3, "ééé", 0}, // 6 bytes, 3 characters: not cut
		{"éééé", 3, "ééé", 4},
		{"日本語テキスト", 2, "日本", 7},
		{long, 2000, strings.Repeat("é", 2000), 2500},
	} {
		shown, chars := Clamp([]byte(c.text), c.max)
		if string(shown) != c.shown || chars != c.chars {
			t.Errorf("Clamp(%.12q, %d) = %.12q, %d; want %.12q, %d", c.text, c.max, shown, chars, c.shown, c.chars)
		}
	}
	r := ClampedRecord(7, []byte(long))
	if r.Hash != Hash([]byte(long)) || !r.Clamped || r.SourceChars != 2500 || len([]rune(r.Text)) != MaxLineChars {
		t.Errorf("%+v", r)
	}
	if r := ClampedRecord(1, []byte("alpha")); r != (Record{Line: 1, Hash: "8ed3", Text: "alpha"}) {
		t.Errorf("%+v", r)
	}
}

func TestAppendRecordKeepsItsHash(t *testing.T) {
	long := strings.Repeat("ab", 3000)
	r := ClampedRecord(3, []byte(long))
	r.Path = "a b.txt"
	want := `"a b.txt":3:` + Hash([]byte(long)) + " " + long[:MaxLineChars] + "\n"
	if got := string(AppendRecord(nil, r)); got != want {
		t.Errorf("got %.40q..., want %.40q...", got, want)
	}
	short := Record{Line: 1, Hash: "8ed3", Text: "alpha"}
	if got, want := string(AppendRecord(nil, short)), string(AppendPrinted(nil, Row{Line: 1, Text: []byte("alpha")})); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
