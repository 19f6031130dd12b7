package read

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/rows"
)

// A kept output's lines end at LF alone, the way the shell counts the
// lines it leaves out; whatever bytes a program printed are shown.
func TestReadKept(t *testing.T) {
	long := strings.Repeat("yes ", 17<<10) // 68 KiB: past the reader's buffer
	for _, c := range []struct {
		name, src string
		r         Range
		budget    rows.Budget
		want      string
		code      string
	}{
		{"empty", "", All, rows.DefaultBudget, "", ""},
		{"one line", "a\n", All, rows.DefaultBudget, "1|a\n", ""},
		{"no final LF", "a\nb", All, rows.DefaultBudget, "1|a\n2|b\n", ""},
		{"empty lines", "\n\n", All, rows.DefaultBudget, "1|\n2|\n", ""},
		{"CR stays", "a\r\nb\rc\n", All, rows.DefaultBudget, "1|a\r\n2|b\rc\n", ""},
		{"not UTF-8", "a\xffb\xc3\n", All, rows.DefaultBudget, "1|a\uFFFDb\uFFFD\n", ""},
		{"range", "a\nb\nc\nd\n", Range{2, 3}, rows.DefaultBudget, "2|b\n3|c\n", ""},
		{"past the end", "a\nb\n", Range{3, 9}, rows.DefaultBudget, "", CodePastEOF},
		{"a long line", "a\n" + long + "\nb\n", All, rows.Budget{Limit: 1 << 30, Ceiling: 1 << 30}, "1|a\n2|" + long + "\n3|b\n", ""},
		{"too long for the bound", "a\n" + long + "\nb\n", All, rows.Budget{Limit: 15000, Ceiling: 15500, MaxBytes: 1000}, "1|a\n", errs.Incomplete},
		{"the bound", "aaaa\nbbbb\ncccc\n", All, rows.Budget{Limit: 15000, Ceiling: 15500, MaxBytes: 14}, "1|aaaa\n2|bbbb\n", errs.Incomplete},
	} {
		var out bytes.Buffer
		p := rows.NewFormPrinter(&out, c.budget, rows.AppendNumbered)
		err := ReadKept(context.Background(), strings.NewReader(c.src), "@out/x", c.r, p)
		p.Flush()
		if out.String() != c.want || errs.Code(err) != c.code && !(c.code == "" && err == nil) {
			t.Errorf("%s: got %q, %v; want %q, %s", c.name, head(out.String()), err, head(c.want), c.code)
		}
	}
}

func head(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
