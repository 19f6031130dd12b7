package cmd

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/patch"
	"github.com/rowkit/rowkit/internal/rows"
)

// The text reports are bounded by token admission: whole blocks up to the
// budget, then one line saying how many were left out; a report that fits
// is printed whole.
func TestPatchReportBudget(t *testing.T) {
	recs := func(n int) []rows.Record {
		var rs []rows.Record
		for i := range n {
			text := fmt.Sprintf("\tline %d of some code(%d) // with a comment", i, i*7)
			rs = append(rs, rows.Record{Line: i + 1, Hash: rows.Hash([]byte(text)), Text: text})
		}
		return rs
	}
	var fails []patch.Failure
	for i := range 2000 {
		fails = append(fails, patch.Failure{Command: i + 1, Op: "type", Path: "a.go", Reason: patch.ReasonRowStale, Message: "the row changed", Rows: recs(5)})
	}
	var edits []patch.EditRows
	for i := range 2000 {
		edits = append(edits, patch.EditRows{Command: i + 2, Op: "type", Path: "a.go", Rows: recs(4)})
	}
	res := &patch.Result{Status: patch.StatusApplied, Files: []patch.FileAction{{Action: "modified", Path: "a.go"}}, Edits: edits}

	for _, c := range []struct {
		name, out, trailer string
		blocks             func(string) int
	}{
		{"failures", formatFailures(fails, "hpatch", rows.DefaultBudget), "hpatch: %d more failures left out: output incomplete: 15,000-token limit reached\n",
			func(s string) int { return strings.Count(s, ", reason row-stale: ") }},
		{"edits", formatResult(res, rows.DefaultBudget), "%d more edits left out: output incomplete: 15,000-token limit reached\n",
			func(s string) int { return strings.Count(s, "command ") }},
	} {
		lines := strings.SplitAfter(c.out, "\n")
		last := lines[len(lines)-2]
		body := strings.TrimSuffix(c.out, last)
		n := c.blocks(body)
		if want := fmt.Sprintf(c.trailer, 2000-n); last != want {
			t.Fatalf("%s: last line %q, want %q", c.name, last, want)
		}
		if tk := rows.CountTokens(body); tk <= rows.TokenLimit || tk > rows.TokenCeiling {
			t.Fatalf("%s: %d tokens before the closing line, want just past %d and at most %d", c.name, tk, rows.TokenLimit, rows.TokenCeiling)
		}
		if n < 100 || n >= 2000 {
			t.Fatalf("%s: %d blocks printed", c.name, n)
		}
	}

	// Small reports are whole.
	if out := formatFailures(fails[:3], "hpatch", rows.DefaultBudget); strings.Contains(out, "left out") || strings.Count(out, "reason row-stale") != 3 {
		t.Fatalf("small rejection cut: %q", out)
	}
	res.Edits = edits[:3]
	if out := formatResult(res, rows.DefaultBudget); strings.Contains(out, "left out") || strings.Count(out, "command ") != 3 {
		t.Fatalf("small report cut: %q", out)
	}
}

type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// A report that cannot be written fails with the write code, in the text
// and JSON forms alike (it was a bare error without a code).
func TestPatchReportWriteFails(t *testing.T) {
	for _, args := range [][]string{{"--dry-run"}, {"--dry-run", "--json"}} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		env := &cli.Env{Stdin: strings.NewReader("in a.txt\nadd EOF \"b\\n\"\n"), Stdout: fullWriter{}, Stderr: &stderr, Dir: dir}
		code := Patch.Exec(context.Background(), env, "hpatch", args)
		if code != 1 || !strings.HasPrefix(stderr.String(), "hpatch: write: writing the report: no space left on device") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr.String())
		}
	}
}

// rowkit help patch shows the one description of HPATCH/2.
func TestPatchHelpDescribesTheLanguage(t *testing.T) {
	if !strings.Contains(Patch.Help, patch.Language) {
		t.Error("rowkit help patch lacks patch.Language")
	}
}
