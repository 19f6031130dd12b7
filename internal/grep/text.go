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
	return string(appendEnd(b, res))
}

// GroupedText is the rows grouped under their file, as ripgrep's
// --heading shows them (rows.Grouping: the path once, then LINE:HASH TEXT
// rows; with context, "--" between runs that are not adjacent), then why
// the result is not the whole search, when it is not: the text of MCP
// search, which rowkit owns (hgrep's is the seed's, Text).
func GroupedText(res *Result, context bool) string {
	var b []byte
	g := rows.Grouping{Context: context}
	for _, r := range res.Rows {
		b = g.AppendRecord(b, r)
	}
	return string(appendEnd(b, res))
}

// appendEnd appends the lines after a result's rows.
func appendEnd(b []byte, res *Result) []byte {
	if res.Incomplete != nil {
		b = append(b, "[search: "+res.Incomplete.Code+"] "+res.Incomplete.Message+"\n"...)
	}
	for _, sk := range res.Skipped {
		b = append(b, "[search: skipped] "+oneLine(sk)+"\n"...)
	}
	if len(b) == 0 {
		b = []byte("no matches\n")
	}
	return b
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
