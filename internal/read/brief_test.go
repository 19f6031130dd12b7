package read

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/rows"
)

// Brief keeps the rows and says only what the model cannot know: the
// file's length when the view is not the whole file, the continuation
// only when the view was cut short of what was asked.
func TestBrief(t *testing.T) {
	var five, long strings.Builder
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&five, "line %d\n", i)
	}
	for i := 1; i <= 2100; i++ {
		fmt.Fprintf(&long, "l%d\n", i)
	}
	root, _ := ws(t, map[string]string{"five.txt": five.String(), "long.txt": long.String(), "empty.txt": "", "d/a": "", "d/b": "", "d/c": ""})
	rowsOf := func(from, to int, f func(int) string) string {
		var b strings.Builder
		for n := from; n <= to; n++ {
			b.WriteString(fmt.Sprintf("%d:%s %s\n", n, rows.Hash([]byte(f(n))), f(n)))
		}
		return b.String()
	}
	fiveRow := func(n int) string { return fmt.Sprintf("line %d", n) }
	longRow := func(n int) string { return fmt.Sprintf("l%d", n) }
	for _, tc := range []struct {
		name  string
		input Input
		want  string
	}{
		{"the whole file", in("five.txt", 0, 0), rowsOf(1, 5, fiveRow)},
		{"the whole file, asked with a limit", in("five.txt", 1, 5), rowsOf(1, 5, fiveRow)},
		{"a range", in("five.txt", 2, 2), rowsOf(2, 3, fiveRow) + "\n(5 lines)\n"},
		{"a range to the end", in("five.txt", 4, 0), rowsOf(4, 5, fiveRow) + "\n(5 lines)\n"},
		{"the first lines", in("five.txt", 0, 3), rowsOf(1, 3, fiveRow) + "\n(5 lines)\n"},
		{"cut by the default limit", in("long.txt", 0, 0), rowsOf(1, 2000, longRow) +
			"\n[read:continue] cut at line 2000 of 2100 lines by the 2000-line limit; to continue, read offset 2001\n"},
		{"a limit over the ceiling", in("long.txt", 0, 3000), rowsOf(1, 2000, longRow) +
			"\n[read:continue] cut at line 2000 of 2100 lines by the 2000-line limit; to continue, read offset 2001\n" +
			"[read:clamped] limit 3000 is over the maximum of 2000 lines; reading 2000\n"},
		{"past the end", in("five.txt", 9, 0), "[read:offset-past-eof] offset 9 is past the end: there are 5 lines\n"},
		{"an empty file", in("empty.txt", 0, 0), "[read:empty] the file is empty\n"},
		{"part of a directory", in("d", 2, 1), "2|b\n\n(3 entries)\n"},
	} {
		res, _ := read(t, root, tc.input, Options{})
		if got := string(Brief(res, tc.input.Limit != nil)); got != tc.want {
			t.Errorf("%s: got\n%s\nwant\n%s", tc.name, tail(got), tail(tc.want))
		}
	}

	// Cut by the token budget: the continuation names it.
	res, _ := read(t, root, in("long.txt", 0, 1000), Options{Budget: Tokens(rows.Budget{Limit: 100, Ceiling: 110})})
	got := string(Brief(res, true))
	if !strings.HasSuffix(got, fmt.Sprintf("\n\n[read:continue] cut at line %d of 2100 lines by the token limit; to continue, read offset %d\n", res.View.EndLine, res.View.EndLine+1)) {
		t.Errorf("cut by the budget: %s", tail(got))
	}
}

func tail(s string) string {
	if len(s) > 300 {
		return "..." + s[len(s)-300:]
	}
	return s
}
