package patch

import "github.com/rowkit/rowkit/internal/lang"

// Checker reports the first syntax error of src in the language its path
// names: the one-based verified-row line and a one-line message, with bad
// set. A path with no known language is never bad. Options.Check takes one
// so that callers (and tests) can substitute their own.
type Checker func(path string, src []byte) (line int, msg string, bad bool)

// LangChecker is the default check: lang.Check (Go by go/parser, Python and
// JavaScript/TypeScript by tree-sitter, JSON strictly).
func LangChecker(path string, src []byte) (int, string, bool) {
	if e := lang.Check(path, src); e != nil {
		return e.Line, e.Msg, true
	}
	return 0, "", false
}
