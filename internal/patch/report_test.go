package patch

import (
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
