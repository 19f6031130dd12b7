package patch

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/rows"
)

func TestBound(t *testing.T) {
	res := &Result{Status: StatusDryRun, Diff: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"}
	for i := 0; i < 5; i++ {
		res.Edits = append(res.Edits, EditRows{Command: i + 1, Op: "type", Path: "x"})
		res.Failures = append(res.Failures, Failure{Command: i + 1})
	}
	res.Bound(Bounds{Edits: 3, Failures: 5, DiffBytes: 20})
	if len(res.Edits) != 3 || len(res.Failures) != 5 || res.Diff != "--- a/x\n+++ b/x\n" {
		t.Fatalf("bounded to %d edits, %d failures, diff %q", len(res.Edits), len(res.Failures), res.Diff)
	}
	if tr := res.Truncated; tr == nil || *tr != (Truncation{Edits: 2, DiffBytes: 18}) {
		t.Fatalf("truncated = %+v", res.Truncated)
	}
	small := &Result{Edits: []EditRows{{}}}
	if small.Bound(Bounds{Edits: 3}); small.Truncated != nil {
		t.Errorf("a result within bounds was marked truncated: %+v", small.Truncated)
	}
}

// The report admits whole blocks under the budget and says how many it
// left out.
func TestReportBudget(t *testing.T) {
	res := &Result{Status: StatusApplied, Files: []FileAction{{Action: "modified", Path: "a.go"}}}
	for i := 0; i < 400; i++ {
		res.Edits = append(res.Edits, EditRows{Command: i + 1, Op: "type", Path: "a.go",
			Rows: []rows.Record{{Line: i + 1, Hash: "0000", Text: strings.Repeat("word ", 10)}}})
	}
	b := rows.Budget{Limit: 500, Ceiling: 550}
	out := Report(res, b)
	last := out[strings.LastIndexByte(out[:len(out)-1], '\n')+1:]
	if !strings.Contains(last, "more edits left out: output incomplete: 500-token limit reached") {
		t.Fatalf("last line %q", last)
	}
	if n := rows.CountTokens(out[:len(out)-len(last)]); n > b.Ceiling {
		t.Errorf("admitted %d tokens, ceiling %d", n, b.Ceiling)
	}
}

// The one description of the language names every command, and every
// failure reason a rejection can carry is the parser's.
func TestLanguageNamesEveryCommand(t *testing.T) {
	for _, verb := range []string{"in PATH", "new PATH", "mv PATH", "rm ", "type TARGET VALUE", "add DEST VALUE", "type VALUE", "type EOF VALUE", "<<PATCH"} {
		if !strings.Contains(Language, "\n  "+verb) && !strings.Contains(Language, verb) {
			t.Errorf("Language does not describe %q", verb)
		}
	}
}

// A line of 20 MB: the rejection's repair rows, the dry run's diff and an
// applied edit's edge rows each show it clamped, with the whole line's
// hash, and the text and structured results stay within the budget. (A
// rejection against a 100 MB line answered 100 MB; a dry run on a 200 MB
// line 629 MB.) The engine allocates a small multiple of the file, not of
// its results.
func TestHugeLineResultsAreBounded(t *testing.T) {
	huge := strings.Repeat("x", 20<<20)
	file := "alpha\n" + huge + "\nomega\n"
	hugeRef := ref(2, huge)
	cases := []struct {
		name, script string
		opts         Options
		status       string
	}{
		{"rejection", "in f.txt\ntype 3:0000 \"x\"\n", Options{}, StatusRejected},
		{"dry run", "in f.txt\ntype " + hugeRef + " \"y" + strings.Repeat("z", 5000) + "\"\n", Options{DryRun: true}, StatusDryRun},
		{"applied", "in f.txt\nadd 3:" + rows.Hash([]byte("omega")) + " \"new\"\n", Options{}, StatusApplied},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := workspaceWith(t, map[string]string{"f.txt": file})
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			res, _ := Apply(context.Background(), root, c.script, c.opts)
			runtime.ReadMemStats(&after)
			if res == nil || res.Status != c.status {
				t.Fatalf("%+v", res)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(6*len(file)) {
				t.Errorf("allocated %d bytes for a %d-byte file", alloc, len(file))
			}
			full, _ := json.Marshal(res)
			text := res.Within(rows.DefaultBudget, "edit: ")
			bounded, _ := json.Marshal(res)
			if n := rows.CountTokens(text); n > rows.DefaultBudget.Ceiling+200 {
				t.Errorf("text of %d tokens", n)
			}
			if len(full) > 64<<10 || len(bounded) > 64<<10 {
				t.Errorf("structured result of %d bytes (%d bounded)", len(full), len(bounded))
			}
			var seen bool
			for _, r := range allRecords(res) {
				if r.Line == 2 && r.Hash == hugeRef[2:] {
					seen = true
					if !r.Clamped || r.SourceChars != len(huge) || len(r.Text) != rows.MaxLineChars {
						t.Errorf("row 2: clamped %v, %d chars, text of %d", r.Clamped, r.SourceChars, len(r.Text))
					}
				}
			}
			if c.status != StatusDryRun && !seen {
				t.Errorf("row %s not in the result: %s", hugeRef, bounded)
			}
			if c.status != StatusDryRun && !strings.Contains(text, hugeRef+" xxxx") {
				t.Errorf("text does not name row %s: %.300s", hugeRef, text)
			}
			if c.status != StatusDryRun && !strings.Contains(text, "[clamped] line 2: 2000 of 20971520 characters shown") {
				t.Errorf("text: %.500s", text)
			}
			if c.status == StatusDryRun && !strings.Contains(res.Diff, "\n\\ clamped: 2000 of 20971520 characters shown\n+y") {
				t.Errorf("diff: %.300s", res.Diff)
			}
		})
	}
}

func allRecords(res *Result) []rows.Record {
	var out []rows.Record
	for _, f := range res.Failures {
		out = append(out, f.Rows...)
	}
	for _, e := range res.Edits {
		out = append(out, e.Rows...)
	}
	return out
}
