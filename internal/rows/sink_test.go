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
