package grep

import (
	"strconv"
	"strings"

	"github.com/rowkit/rowkit/internal/rows"
)

// Text is the rows as hgrep prints them, then why the result is not
// the whole search, when it is not.
func Text(res *Result) string {
	var b []byte
	for _, r := range res.Rows {
		b = rows.AppendPrinted(b, rows.Row{Path: r.Path, Line: r.Line, Text: []byte(r.Text)})
	}
	if res.Incomplete != nil {
		b = append(b, "[search: "+res.Incomplete.Code+"] "+res.Incomplete.Message+"\n"...)
	}
	for _, sk := range res.Skipped {
		b = append(b, "[search: skipped] "+oneLine(sk)+"\n"...)
	}
	if len(b) == 0 {
		b = []byte("no matches\n")
	}
	return string(b)
}

// oneLine keeps a name on its line: a JSON key or heading can hold a line
// break or another control character.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}
