package lang

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rowkit/rowkit/internal/rows"
)

// SyntaxError is where a file is first malformed.
type SyntaxError struct {
	// Line is the one-based verified-row line (rows.Lines: LF, CRLF and a
	// lone CR each end a line) holding the first error; an error at the
	// very end of a file is on its last line. It is 0 only for an empty
	// file.
	Line int
	// Msg says what is wrong, in one line.
	Msg string
}

func (e *SyntaxError) Error() string { return "line " + strconv.Itoa(e.Line) + ": " + e.Msg }

// Check reports the first syntax error of src in the format its path
// names, or nil when src is well formed or the path has no format with a
// grammar. Go is checked by go/parser; Python, TypeScript, TSX and
// JavaScript by their tree-sitter grammars (the first ERROR or MISSING
// node; JavaScript as the package documentation says); JSON strictly by
// RFC 8259 (encoding/json), a leading byte order mark allowed. Markdown
// has no syntax errors. Invalid UTF-8 is an error in every format.
func Check(path string, src []byte) *SyntaxError {
	e, _ := CheckContext(context.Background(), path, src)
	return e
}

// CheckContext is Check stopped by ctx: a done ctx ends a tree-sitter parse
// in progress and returns ctx's error.
func CheckContext(ctx context.Context, path string, src []byte) (*SyntaxError, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f := Lookup(path)
	if f == nil {
		return nil, nil
	}
	if !utf8.Valid(src) {
		off := rows.FirstInvalid(src)
		line := lineOf(src[:off], off)
		if off == 0 || src[off-1] == '\n' || src[off-1] == '\r' {
			line++ // the invalid byte starts a line of its own
		}
		return &SyntaxError{Line: line, Msg: "invalid UTF-8 at byte offset " + strconv.Itoa(off)}, nil
	}
	var s *site
	switch f {
	case Markdown:
	case JSON:
		s = checkJSON(src)
	case Go:
		g, err := ParseGo(ctx, src)
		if err != nil {
			return nil, err
		}
		s = g.err
	default:
		t, err := ParseTree(ctx, f, src)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			s = &site{msg: err.Error()}
			break
		}
		s = t.err
		t.Close()
	}
	if s == nil {
		return nil, nil
	}
	return &SyntaxError{Line: lineOf(src, s.off), Msg: oneLine.Replace(s.msg)}, nil
}

// oneLine keeps a parser's message (which may quote source) on one line.
var oneLine = strings.NewReplacer("\r\n", `\r\n`, "\n", `\n`, "\r", `\r`)

// checkJSON checks src against the JSON grammar.
func checkJSON(src []byte) *site {
	body := src
	bom := 0
	if len(body) >= 3 && body[0] == 0xef && body[1] == 0xbb && body[2] == 0xbf {
		body, bom = body[3:], 3
	}
	if json.Valid(body) {
		return nil
	}
	var raw json.RawMessage
	err := json.Unmarshal(body, &raw)
	if se, ok := err.(*json.SyntaxError); ok {
		// Offset counts the bytes read, the offending one included.
		return &site{off: bom + max(int(se.Offset)-1, 0), msg: se.Error()}
	}
	return &site{off: len(src), msg: "not valid JSON"}
}

// lineOf returns the one-based verified-row line of src holding byte
// offset off (src is valid UTF-8). An offset past the last line's text
// falls on the last line; 0 means src has no lines.
func lineOf(src []byte, off int) int {
	x, err := rows.NewIndex(src)
	if err != nil || x.Count() == 0 {
		return 0
	}
	return max(x.LineAt(off), 1)
}

// quoteToken quotes the start of a token for a message: its first line,
// at most 40 bytes.
func quoteToken(b []byte) string {
	for i, c := range b {
		if c == '\n' || c == '\r' {
			b = b[:i]
			break
		}
	}
	cut := false
	if len(b) > 40 {
		n := 40
		for n > 0 && !utf8.RuneStart(b[n]) {
			n--
		}
		b, cut = b[:n], true
	}
	q := strconv.Quote(string(b))
	if cut {
		q += "..."
	}
	return q
}
