package grep

import (
	"strconv"

	"github.com/rowkit/rowkit/internal/errs"
)

// Query is a structured search, as the MCP search tool takes it. Plan
// turns it into ripgrep options through the same policy table as the
// command line, so a query can only ask for what hgrep accepts.
type Query struct {
	Patterns []string `json:"patterns" jsonschema:"regular expressions (ripgrep syntax), or literal strings with fixed; a line matching any of them is a match"`
	Paths    []string `json:"paths,omitempty" jsonschema:"files or directories to search, relative to the workspace root; none searches the whole root"`
	Globs    []string `json:"globs,omitempty" jsonschema:"include (or with a leading ! exclude) files whose path matches, e.g. *.go or !vendor/**"`
	Types    []string `json:"types,omitempty" jsonschema:"ripgrep file types to search, e.g. go, py, js"`
	Case     string   `json:"case,omitempty" jsonschema:"smart (insensitive unless a pattern has an upper-case letter), sensitive (the default) or insensitive"`
	Fixed    bool     `json:"fixed,omitempty" jsonschema:"treat the patterns as literal strings"`
	Word     bool     `json:"word,omitempty" jsonschema:"match whole words only"`
	Context  int      `json:"context,omitempty" jsonschema:"rows of context before and after each matched row"`
	MaxCount int      `json:"max_count,omitempty" jsonschema:"stop searching a file after this many matching lines; 0 means no limit"`
}

// Plan checks q and returns its plan: the options a person would type for
// it, applied by a Planner as the command line's are.
func (q *Query) Plan() (*Plan, error) {
	if len(q.Patterns) == 0 {
		return nil, errs.Usagef("a query needs at least one pattern")
	}
	var b Planner
	var err error
	use := func(long, value string) {
		if err == nil {
			err = b.Use(Lookup(long), "--"+long, value)
		}
	}
	for _, p := range q.Patterns {
		use("regexp", p)
	}
	for _, g := range q.Globs {
		use("glob", g)
	}
	for _, t := range q.Types {
		use("type", t)
	}
	switch q.Case {
	case "", "sensitive":
		use("case-sensitive", "")
	case "smart":
		use("smart-case", "")
	case "insensitive":
		use("ignore-case", "")
	default:
		return nil, errs.Usagef("case %s is not smart, sensitive or insensitive", quote(q.Case))
	}
	if q.Fixed {
		use("fixed-strings", "")
	}
	if q.Word {
		use("word-regexp", "")
	}
	if q.Context < 0 || q.MaxCount < 0 {
		return nil, errs.Usagef("context and max_count must not be negative")
	}
	if q.Context > MaxContext {
		return nil, errs.Usagef("context %d is more than any output admits; the most is %d rows", q.Context, MaxContext)
	}
	if q.Context > 0 {
		use("context", strconv.Itoa(q.Context))
	}
	if q.MaxCount > 0 {
		use("max-count", strconv.Itoa(q.MaxCount))
	}
	if err != nil {
		return nil, err
	}
	return b.Finish(q.Paths)
}
