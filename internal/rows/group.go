package rows

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rowkit/rowkit/internal/jsonstr"
)

// Grouping lays out the rows of a result that spans files the way
// ripgrep's --heading does: a file's path once, on a line of its own,
// before its first row, then its rows as LINE:HASH TEXT; with Context,
// "--" between two runs of one file's rows that are not adjacent. It is
// the model's text of MCP search, which rowkit owns; hgrep keeps the
// seed's "PATH":LINE:HASH TEXT on every row. A path prints as is unless a
// reader could take it for something else (a row, the separator, white
// space it would not see): then it prints as a JSON string.
//
// Each heading and separator goes with the row after it, so every chunk
// an Admitter counts starts with a path, "--" or a digit after the LF
// that ends the chunk before: no o200k_base pre-token spans two chunks
// (see Admitter), because a heading never starts with white space or
// '/'. TestGroupedCountsWholeOutput checks it.
type Grouping struct {
	// Context separates runs of rows that are not adjacent with "--",
	// as ripgrep does when context was asked for.
	Context bool

	path    string
	line    int
	started bool
}

// Append appends what comes before a row of path at line: its file's
// heading when the file changes, or the separator.
func (g *Grouping) Append(dst []byte, path string, line int) []byte {
	switch {
	case !g.started || path != g.path:
		dst = AppendHeading(dst, path)
	case g.Context && line != g.line+1:
		dst = append(dst, "--\n"...)
	}
	g.started, g.path, g.line = true, path, line
	return dst
}

// AppendHeading appends path's heading line.
func AppendHeading(dst []byte, path string) []byte {
	if headingNeedsQuotes(path) {
		dst = jsonstr.Append(dst, path)
	} else {
		dst = append(dst, path...)
	}
	return append(dst, '\n')
}

// looksLikeRow matches a path that begins as a row or a separator does.
var looksLikeRow = regexp.MustCompile(`^(?:[0-9]+:|--$)`)

func headingNeedsQuotes(p string) bool {
	if p == "" || strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029 }) {
		return true
	}
	first, _ := utf8.DecodeRuneInString(p)
	last, _ := utf8.DecodeLastRuneInString(p)
	return first == '"' || first == '/' || unicode.IsSpace(first) || unicode.IsSpace(last) || looksLikeRow.MatchString(p)
}

// AppendRecord appends r as g lays it out: its heading or
// separator, if any, then LINE:HASH TEXT with r's own hash.
func (g *Grouping) AppendRecord(dst []byte, r Record) []byte {
	dst = g.Append(dst, r.Path, r.Line)
	r.Path = ""
	return AppendRecord(dst, r)
}
