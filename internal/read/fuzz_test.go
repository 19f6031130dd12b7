package read

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rowkit/rowkit/internal/rows"
)

func TestParseCount(t *testing.T) {
	for s, want := range map[string]int{"1": 1, "2000": 2000, "007": 7, "2147483647": 2147483647} {
		if n, err := ParseCount(s); err != nil || n != want {
			t.Errorf("ParseCount(%q) = %d, %v", s, n, err)
		}
	}
	for _, s := range []string{"", "0", "00", "-1", "+1", " 1", "1.5", "1e3", "x", "2147483648", "99999999999999999999"} {
		if n, err := ParseCount(s); err == nil {
			t.Errorf("ParseCount(%q) = %d, want an error", s, n)
		}
	}
}

// ParseCount accepts exactly the decimal strings of 1..2^31-1.
func FuzzParseCount(f *testing.F) {
	for _, s := range []string{"1", "2000", "007", "0", "-1", "+1", "1.5", "2147483648", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseCount(s)
		ref, rerr := strconv.ParseUint(s, 10, 31)
		ok := rerr == nil && ref >= 1 && !strings.ContainsAny(s[:min(1, len(s))], "+-")
		if ok != (err == nil) || ok && n != int(ref) {
			t.Fatalf("ParseCount(%q) = %d, %v; strconv %d, %v", s, n, err, ref, rerr)
		}
	})
}

// The notebook renderer never fails on valid notebooks and never panics;
// its text is UTF-8 with one header per cell.
func FuzzRenderNotebook(f *testing.F) {
	f.Add([]byte(notebookJSON))
	f.Add([]byte(`{"cells": []}`))
	f.Add([]byte(`{"cells": [{"cell_type": "raw", "source": "a\rb"}]}`))
	f.Add([]byte(`{"cells": [`))
	f.Add([]byte(`{"cells": [{"source": 3}]}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		text, err := RenderNotebook(src)
		if err != nil {
			return
		}
		if !utf8.Valid(text) {
			t.Fatal("not UTF-8")
		}
		var nb struct{ Cells []json.RawMessage }
		if json.Unmarshal(src, &nb) == nil {
			if got := strings.Count(string(text), "[cell "); got < len(nb.Cells) {
				t.Fatalf("%d cells, %d headers", len(nb.Cells), got)
			}
		}
	})
}

// The view of any UTF-8 text, at any offset and limits, is the text's
// lines by rows.Lines, each clamped as the rules say, within the bounds.
func FuzzView(f *testing.F) {
	f.Add("alpha\nbeta\r\ngamma\rdelta", 1, 2, 10, 3)
	f.Add("\ufeffx\n\n\n", 2, 5, 4, 1)
	f.Add("ééééé\nx", 1, 1, 3, 2)
	f.Fuzz(func(t *testing.T, text string, offset, limit, viewBytes, chars int) {
		if !utf8.ValidString(text) || offset < 1 || limit < 1 || viewBytes < 1 || chars < 1 || offset > 1000 || limit > 1000 || viewBytes > 1000 || chars > 1000 {
			t.Skip()
		}
		root, _ := ws(t, map[string]string{"f.txt": text})
		res, _ := read(t, root, in("f.txt", offset, limit), Options{Limits: Limits{MaxViewBytes: viewBytes, MaxCharsPerLine: chars, SampleBytes: 4}})
		if res.Status != StatusOK {
			if strings.ContainsRune(text[:min(4, len(text))], 0) {
				return // binary by the sample
			}
			t.Fatalf("status %s %s", res.Status, res.Code)
		}
		var ref []string
		rows.Lines([]byte(text), func(start, n int) { ref = append(ref, text[start:start+n]) })
		if *res.Totals.Lines != len(ref) {
			t.Fatalf("totals %d, want %d", *res.Totals.Lines, len(ref))
		}
		v := res.View
		if v.Bytes > viewBytes || len(v.Lines) > limit {
			t.Fatalf("view of %d bytes, %d lines", v.Bytes, len(v.Lines))
		}
		if offset <= len(ref) && len(v.Lines) == 0 {
			t.Fatal("an empty view before the end")
		}
		for i, l := range v.Lines {
			want := ref[offset-1+i]
			if l.Number != offset+i || l.Hash != rows.Hash([]byte(want)) || !strings.HasPrefix(want, l.Text) || l.Clamped != (l.Text != want) {
				t.Fatalf("line %+v, source %q", l, want)
			}
			if utf8.RuneCountInString(l.Text) > chars {
				t.Fatalf("line %d longer than %d characters", l.Number, chars)
			}
		}
		if res.Continuation.Available && res.Continuation.Next.Offset != v.EndLine+1 {
			t.Fatalf("next %+v after line %d", res.Continuation.Next, v.EndLine)
		}
		if more := v.EndLine < len(ref) && len(v.Lines) > 0; more != res.Continuation.Available {
			t.Fatalf("continuation %v, lines after the view %v", res.Continuation.Available, more)
		}
	})
}
