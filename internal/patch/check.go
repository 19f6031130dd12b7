package patch

import (
	"context"

	"github.com/rowkit/rowkit/internal/lang"
)

// Checker reports the first syntax error of src in the language its path
// names: the one-based verified-row line and a one-line message, with bad
// set. A path with no known language is never bad. Options.Check takes one
// so that callers (and tests) can substitute their own. It may stop early
// when ctx is done; its answer is then ignored.
type Checker func(ctx context.Context, path string, src []byte) (line int, msg string, bad bool)

// LangChecker is the default check: lang.CheckContext (Go by go/parser,
// Python and JavaScript/TypeScript by tree-sitter, JSON strictly).
func LangChecker(ctx context.Context, path string, src []byte) (int, string, bool) {
	e, err := lang.CheckContext(ctx, path, src)
	if err != nil || e == nil {
		return 0, "", false
	}
	return e.Line, e.Msg, true
}
