package symbol

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/workspace"
)

// target is the position a query asks about, checked against the file.
type target struct {
	Path   string // clean, relative to the workspace root
	Abs    string // absolute, under the root's canonical path
	Src    []byte
	Index  *rows.Index
	Line   int
	Ref    rows.Ref
	Col    int // byte offset of the occurrence in the line
	Char   int // the same in UTF-16 code units
	Symbol string
	Bare   bool // the row was a bare LINE: its identity is echoed
}

// RowError is a row that does not name a line of the file as it is now:
// stale (row_stale), past the end (row_missing). Context is the file's
// current rows around the place asked about, for the caller to repair its
// request with, as hpatch shows them.
type RowError struct {
	Err     *errs.Error
	Path    string
	Context []rows.Record
}

func (e *RowError) Error() string { return e.Err.Error() }
func (e *RowError) Unwrap() error { return e.Err }

// contextRows is how many rows either side of the place asked about a
// RowError shows.
const contextRows = 3

// parseRow reads ROW: LINE:HASH, or a bare LINE.
func parseRow(s string) (line int, hash string, err error) {
	if strings.Contains(s, ":") {
		r, err := rows.ParseRef(s)
		if err != nil {
			return 0, "", errs.Usagef("%s is not a row: give LINE:HASH (as hread prints it) or a line number", quote(s))
		}
		return r.Line, r.Hash, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || strconv.Itoa(n) != s {
		return 0, "", errs.Usagef("%s is not a row: give LINE:HASH (as hread prints it) or a line number", quote(s))
	}
	return n, "", nil
}

// quote shows a user's word in a message: as typed when it is plain,
// Go-quoted when it holds a control character or invalid UTF-8.
func quote(s string) string { return errs.Name(s) }

// checkSymbol refuses a SYMBOL that cannot be one token.
func checkSymbol(sym string) error {
	switch {
	case sym == "":
		return errs.Usagef("SYMBOL is empty: give the name as it is written on the row")
	case !utf8.ValidString(sym):
		return errs.Usagef("SYMBOL %s is not UTF-8", quote(sym))
	case strings.ContainsFunc(sym, unicode.IsSpace):
		return errs.Usagef("SYMBOL %s holds white space: give one name as it is written on the row", quote(sym))
	}
	return nil
}

// resolveTarget reads the file, checks the row and finds the Nth
// occurrence of sym on it. Every failure here comes before any server is
// involved.
func resolveTarget(root *workspace.Root, path, row, sym string, n int) (*target, error) {
	line, hash, err := parseRow(row)
	if err != nil {
		return nil, err
	}
	if err := checkSymbol(sym); err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, errs.Usagef("N must be a positive number")
	}
	clean, src, err := root.ReadFile(path)
	if err != nil {
		return nil, err
	}
	x, err := rows.NewIndex(src)
	if err != nil {
		var ee *rows.EncodingError
		if errors.As(err, &ee) {
			return nil, errs.Errorf(errs.NotUTF8, "%s is not valid UTF-8 (%v)", clean, err)
		}
		return nil, errs.Errorf(errs.Read, "%s: %v", clean, err)
	}
	if line > x.Count() {
		return nil, &RowError{
			Err:     errs.Errorf(CodeRowMissing, "%s has %d lines; there is no row %d", clean, x.Count(), line),
			Path:    clean,
			Context: around(clean, x, x.Count()),
		}
	}
	ref := x.Ref(line)
	if hash != "" && ref.Hash != hash {
		return nil, &RowError{
			Err:     errs.Errorf(CodeRowStale, "%s row %d:%s is stale: line %d is now %s; the current rows follow", clean, line, hash, line, ref),
			Path:    clean,
			Context: around(clean, x, line),
		}
	}
	text := x.Text(line)
	cols := occurrences(text, sym)
	switch {
	case len(cols) == 0:
		return nil, errs.Errorf(CodeSymbolMissing, "%s is not on %s row %s: %s", quote(sym), clean, ref, oneLine(string(text))).
			WithHint("give a name exactly as it is written on the row")
	case n > len(cols):
		return nil, errs.Usagef("%s occurs %d %s on %s row %s; N must be at most %d", quote(sym), len(cols), plural(len(cols), "time", "times"), clean, ref, len(cols))
	case n == 0 && len(cols) > 1:
		return nil, errs.Usagef("%s occurs %d times on %s row %s (at columns %s); add N, 1 to %d, to choose one",
			quote(sym), len(cols), clean, ref, columnList(text, cols), len(cols))
	}
	if n == 0 {
		n = 1
	}
	col := cols[n-1]
	return &target{
		Path: clean, Abs: filepath.Join(root.Dir(), clean), Src: src, Index: x,
		Line: line, Ref: ref, Col: col, Char: utf16Len(text[:col]), Symbol: sym, Bare: hash == "",
	}, nil
}

// around is the rows of x around line n, for a RowError.
func around(path string, x *rows.Index, n int) []rows.Record {
	var out []rows.Record
	for i := max(n-contextRows, 1); i <= min(n+contextRows, x.Count()); i++ {
		out = append(out, rows.ClampedRecord(i, x.Text(i)))
		out[len(out)-1].Path = path
	}
	return out
}

// columnList names occurrences by their one-based column in characters.
func columnList(text []byte, cols []int) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = strconv.Itoa(utf8.RuneCount(text[:c]) + 1)
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// isIdent reports whether r can be part of an identifier in any of the
// languages served ($ is one in JavaScript).
func isIdent(r rune) bool {
	return r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)
}

// occurrences returns the byte offsets where sym occurs in text as a
// token: not preceded or followed by an identifier character where sym
// itself begins or ends with one (so "Sum" is not found in "Summary").
func occurrences(text []byte, sym string) []int {
	first, _ := utf8.DecodeRuneInString(sym)
	last, _ := utf8.DecodeLastRuneInString(sym)
	s := string(text)
	var out []int
	for from := 0; from <= len(s)-len(sym); {
		i := strings.Index(s[from:], sym)
		if i < 0 {
			break
		}
		at := from + i
		ok := true
		if isIdent(first) && at > 0 {
			r, _ := utf8.DecodeLastRuneInString(s[:at])
			ok = !isIdent(r)
		}
		if ok && isIdent(last) && at+len(sym) < len(s) {
			r, _ := utf8.DecodeRuneInString(s[at+len(sym):])
			ok = !isIdent(r)
		}
		if ok {
			out = append(out, at)
		}
		_, size := utf8.DecodeRuneInString(s[at:])
		from = at + size
	}
	return out
}

// utf16Len is the length of b (valid UTF-8) in UTF-16 code units.
func utf16Len(b []byte) int {
	n := 0
	for _, r := range string(b) {
		n += utf16.RuneLen(r)
	}
	return n
}

// byteCol converts a UTF-16 offset in line text to a byte offset; ok is
// false when the offset lies past the line's end or inside a character.
func byteCol(text []byte, char int) (int, bool) {
	n := 0
	for i, r := range string(text) {
		if n == char {
			return i, true
		}
		if n > char {
			return 0, false
		}
		n += utf16.RuneLen(r)
	}
	if n == char {
		return len(text), true
	}
	return 0, false
}

// oneLine shows a line in a one-line message, control characters escaped.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// describe is a row for messages: "PATH":LINE:HASH.
func describe(path string, ref rows.Ref) string {
	return fmt.Sprintf("%q:%s", path, ref)
}

// Resolve checks r's position against the file as it is now, as a query
// does before it asks a server: the row (a RowError when stale or past
// the end), the symbol on it, and which occurrence. It returns the row's
// identity and whether ROW was a bare LINE.
func Resolve(root *workspace.Root, r Request) (rows.Ref, bool, error) {
	t, err := resolveTarget(root, r.Path, r.Row, r.Symbol, r.N)
	if err != nil {
		return rows.Ref{}, false, err
	}
	if err := served(t.Path); err != nil {
		return rows.Ref{}, false, err
	}
	return t.Ref, t.Bare, nil
}

// served fails with unsupported for a file no server serves.
func served(path string) error {
	if serverFor(strings.ToLower(filepath.Ext(path))) == nil {
		return errs.Errorf(CodeUnsupported, "%s: no language server serves this kind of file (served: Go, Python, TypeScript and JavaScript)", path)
	}
	return nil
}
