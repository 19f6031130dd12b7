package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/rows"
)

// outlineCase is a table test of one projection: the source and the
// expected outline, one entry per string "KIND NAME[ RECV|LEVEL] A-B" where
// A and B are the first and last line.
type outlineCase struct {
	name     string
	file     string // decides the format
	src      string
	want     []string
	complete bool
}

func runOutlineCases(t *testing.T, cases []outlineCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := OutlineSource(ctx, c.file, []byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			got := brief(d.Outline)
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("outline of %s:\n got  %q\n want %q", c.file, got, c.want)
			}
			if d.ParseComplete != c.complete {
				t.Errorf("parse_complete = %v, want %v", d.ParseComplete, c.complete)
			}
			checkData(t, d, []byte(c.src))
		})
	}
}

// brief renders entries in the compact form of outlineCase.want.
func brief(es []Entry) []string {
	var out []string
	for _, e := range es {
		if e.Kind == KindJSON {
			s := fmt.Sprintf("json %q %s", *e.Pointer, e.ValueType)
			out = append(out, fmt.Sprintf("%s %d-%d", s, e.Span.Start.Line, e.Span.End.Line))
			continue
		}
		s := e.Kind + " " + *e.Name
		if e.Kind == KindMethod {
			s += " " + *e.Receiver
		}
		if e.Kind == KindHeading {
			s += fmt.Sprintf(" %d", e.Level)
		}
		out = append(out, fmt.Sprintf("%s %d-%d", s, e.Span.Start.Line, e.Span.End.Line))
	}
	return out
}

// sourceLines splits src into logical lines independently of the engine.
func sourceLines(src []byte) [][]byte {
	var lines [][]byte
	for len(src) > 0 {
		i := bytes.IndexAny(src, "\r\n")
		if i < 0 {
			lines = append(lines, src)
			break
		}
		lines = append(lines, src[:i])
		if src[i] == '\r' && i+1 < len(src) && src[i+1] == '\n' {
			i++
		}
		src = src[i+1:]
	}
	return lines
}

// checkData checks what must hold of every outline: the line count, spans
// that are real rows of the file in order, and an encoding that is valid
// JSON within the output bound with no text but names and pointers.
func checkData(t *testing.T, d Data, src []byte) {
	t.Helper()
	lines := sourceLines(src)
	if d.LineCount == nil || *d.LineCount != len(lines) {
		t.Errorf("line_count = %v, want %d", d.LineCount, len(lines))
	}
	for i, e := range d.Outline {
		if e.Line != e.Span.Start.String() || e.LineEnd != e.Span.End.String() {
			t.Errorf("entry %d: rows %s..%s but span %v", i, e.Line, e.LineEnd, e.Span)
		}
		for _, r := range []rows.Ref{e.Span.Start, e.Span.End} {
			if r.Line < 1 || r.Line > len(lines) {
				t.Fatalf("entry %d: line %d out of range 1..%d", i, r.Line, len(lines))
			}
			if want := rows.RefOf(r.Line, lines[r.Line-1]); r != want {
				t.Errorf("entry %d: row %v, want %v", i, r, want)
			}
		}
		if e.Span.End.Line < e.Span.Start.Line {
			t.Errorf("entry %d: span %v..%v ends before it starts", i, e.Line, e.LineEnd)
		}
		if e.Kind != KindJSON && e.Kind != KindImport && e.Kind != KindFrontmatter {
			// A name is taken from the entry's own lines (import paths and
			// YAML keys are decoded, so they may be spelled differently).
			text := bytes.Join(lines[e.Span.Start.Line-1:e.Span.End.Line], []byte("\n"))
			if !bytes.Contains(text, []byte(*e.Name)) {
				t.Errorf("entry %d: name %q is not in its span %v", i, *e.Name, e.Span)
			}
		}
	}
	res, out, err := newResultJSON(d)
	if err != nil {
		t.Fatal(err)
	}
	checkEnvelope(t, out, res)
}

// checkEnvelope checks an encoded success document.
func checkEnvelope(t *testing.T, out []byte, res *Result) {
	t.Helper()
	if len(out) > MaxOutputBytes {
		t.Fatalf("output is %d bytes, over %d", len(out), MaxOutputBytes)
	}
	// One LF-terminated document, each outline entry on a line of its
	// own: the first line opens the outline, the last closes it.
	lines := bytes.SplitAfter(out, []byte("\n"))
	if !bytes.HasSuffix(out, []byte("\n")) || lines[len(lines)-1] != nil && len(lines[len(lines)-1]) != 0 {
		t.Fatalf("output does not end in LF")
	}
	lines = lines[:len(lines)-1]
	if n := len(res.Data.Outline); n == 0 && len(lines) != 1 || n > 0 && len(lines) != n+2 {
		t.Fatalf("%d lines for %d entries:\n%s", len(lines), n, out)
	}
	if len(lines) > 1 {
		if !bytes.HasSuffix(lines[0], []byte(`"outline":[`+"\n")) || !bytes.HasPrefix(lines[len(lines)-1], []byte("]},")) {
			t.Fatalf("the outline's brackets are not on the first and last lines:\n%s", out)
		}
		for i, l := range lines[1 : len(lines)-1] {
			l = bytes.TrimSuffix(bytes.TrimSuffix(l, []byte("\n")), []byte(","))
			var e map[string]any
			if err := json.Unmarshal(l, &e); err != nil {
				t.Fatalf("line %d is not one entry: %v: %s", i+2, err, l)
			}
		}
	}
	var doc struct {
		OK   bool `json:"ok"`
		Data struct {
			Outline []map[string]any `json:"outline"`
		} `json:"data"`
		Truncated  bool `json:"truncated"`
		Truncation *struct {
			Reason       string `json:"reason"`
			AfterEntries int    `json:"after_entries"`
		} `json:"truncation"`
	}
	if err := json.Unmarshal(out, &doc); err != nil || !json.Valid(out) {
		t.Fatalf("output is not valid JSON: %v\n%s", err, out)
	}
	if !doc.OK || doc.Truncated != (doc.Truncation != nil) {
		t.Errorf("bad envelope: %s", out)
	}
	if doc.Truncation != nil && doc.Truncation.AfterEntries != len(doc.Data.Outline) {
		t.Errorf("after_entries %d but %d entries", doc.Truncation.AfterEntries, len(doc.Data.Outline))
	}
	if len(doc.Data.Outline) != len(res.Data.Outline) {
		t.Errorf("encoded %d entries, result has %d", len(doc.Data.Outline), len(res.Data.Outline))
	}
	allowed := map[string]bool{"kind": true, "name": true, "receiver": true, "level": true,
		"pointer": true, "value_type": true, "line": true, "line_end": true}
	for _, e := range doc.Data.Outline {
		for k := range e {
			if !allowed[k] {
				t.Errorf("entry has field %q", k)
			}
		}
	}
	checkSameJSON(t, out, res)
}

// ctx is the context of every test that is not about cancellation.
var ctx = context.Background()

// newResultJSON returns the result of d and its exact encoding, as
// inspect_file prints it.
func newResultJSON(d Data) (*Result, []byte, error) {
	res, err := NewResult(d)
	if err != nil {
		return nil, nil, err
	}
	return res, res.AppendLines(nil), nil
}

// checkSameJSON checks that the command's bytes and the encoding/json form
// of its result (what an MCP server sends) decode to the same value.
func checkSameJSON(t *testing.T, out []byte, res *Result) {
	t.Helper()
	m, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(out, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(m, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("the encodings differ:\n command %s\n json    %s", out, m)
	}
}
