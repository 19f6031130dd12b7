package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/grep"
	"github.com/rowkit/rowkit/internal/rows"
)

// SearchInput is the arguments of search.
type SearchInput struct {
	Pattern  string   `json:"pattern,omitempty" jsonschema:"a regex"`
	Patterns []string `json:"patterns,omitempty"`
	Paths    []string `json:"paths,omitempty"`
	Glob     []string `json:"glob,omitempty" jsonschema:"e.g. *.go"`
	Type     []string `json:"type,omitempty" jsonschema:"e.g. go"`
	Case     string   `json:"case,omitempty"`
	Fixed    bool     `json:"fixed,omitempty"`
	Word     bool     `json:"word,omitempty"`
	Context  int      `json:"context,omitempty"`
	MaxCount int      `json:"max_count,omitempty"`
}

func (s *Server) addSearch() {
	in := mustSchema[SearchInput]()
	in.Properties["case"].Enum = []any{"sensitive", "insensitive", "smart"}
	in.Properties["context"].Minimum = fptr(0)
	in.Properties["context"].Maximum = fptr(grep.MaxContext)
	in.Properties["max_count"].Minimum = fptr(0)
	in.Properties["patterns"].MinItems = iptr(1)
	register(s, &mcp.Tool{
		Name:  "search",
		Title: "Search the workspace",
		Description: "Searches code (grep) with ripgrep: matching lines as rows LINE:HASH TEXT under each file's path. " +
			"To see a function, outline it or look it up (symbol) and read its span, not wide context. " +
			"Past 15,000 tokens: [search: output_incomplete].",
		InputSchema:  in,
		OutputSchema: outputSchema[grep.Result](),
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    true,
			IdempotentHint:  true,
			DestructiveHint: bptr(false),
			OpenWorldHint:   bptr(false),
		},
	}, s.search)
}

// searchBudget is the token budget of one search.
var searchBudget = rows.DefaultBudget

func (s *Server) search(ctx context.Context, req *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, *grep.Result, error) {
	q := grep.Query{Patterns: in.Patterns, Globs: in.Glob, Types: in.Type, Case: in.Case,
		Fixed: in.Fixed, Word: in.Word, Context: in.Context, MaxCount: in.MaxCount}
	switch {
	case in.Pattern != "" && len(in.Patterns) > 0:
		return nil, nil, errs.Usagef("give pattern or patterns, not both")
	case in.Pattern != "":
		q.Patterns = []string{in.Pattern}
	case len(in.Patterns) == 0:
		return nil, nil, errs.Usagef("give a pattern (or patterns) to search for")
	}
	roots := s.callRoots(ctx, req)
	r := roots[0]
	for i, p := range in.Paths {
		pr, rel, err := locate(roots, p)
		if err != nil {
			return nil, nil, withPath(p, err)
		}
		if i == 0 {
			r = pr
		} else if pr.ws != r.ws {
			return nil, nil, errs.Usagef("the paths lie in different roots (%s, %s); search one root at a time", r.ws.Dir(), pr.ws.Dir())
		}
		q.Paths = append(q.Paths, rel)
	}
	plan, err := q.Plan()
	if err != nil {
		return nil, nil, err
	}
	shown := q.Paths
	if len(shown) == 0 {
		shown = []string{"."}
	}
	note := pendingNote(r.ws, shown)
	bound := noteBound(s.resultBytes(req), note)
	b := searchBudget
	if bound > 0 {
		// Room for the line that says the bound stopped the search.
		b.MaxBytes = bound
		b.Reserve = max(len(searchStopped(b, true)), len(searchStopped(b, false)))
	}
	res, err := grep.Collect(ctx, plan, grep.Config{Root: r.ws, Budget: b, LookupEnv: s.env, Grouped: !s.structured})
	if err != nil {
		return nil, nil, err
	}
	text := s.searchWithin(res, b, bound, in.Context > 0)
	out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
	withNote(out, note)
	return out, res, nil
}

// searchStopped is the line that ends a search b stopped.
func searchStopped(b rows.Budget, bytes bool) string {
	return grep.Text(&grep.Result{Rows: []rows.Record{}, Incomplete: &grep.Reason{Code: errs.Incomplete, Message: b.Stopped(bytes).Msg}})
}

// searchWithin returns res's text within bound, cutting res to it where
// the rows alone did not make it fit: on a structured server, whose client
// shows the JSON (a row is longer there than printed), or when the lines
// after the rows (paths skipped, ripgrep's message) take more than the
// room kept for them. What is cut is rows from the end, and res then says
// that the byte bound stopped it.
func (s *Server) searchWithin(res *grep.Result, b rows.Budget, bound int, context bool) string {
	print := func(r *grep.Result) string { return grep.GroupedText(r, context) }
	size := func(r *grep.Result) int {
		if s.structured {
			j, _ := encode(r)
			return len(j)
		}
		return len(print(r))
	}
	text := print(res) // formatted once when it fits
	if bound <= 0 || !s.structured && len(text) <= bound || s.structured && size(res) <= bound {
		return text
	}
	all := res.Rows
	cut := func(n int) *grep.Result {
		c := *res
		c.Rows = all[:n]
		c.Complete = false
		if n < len(all) || c.Incomplete == nil {
			c.Incomplete = &grep.Reason{Code: errs.Incomplete, Message: b.Stopped(true).Msg}
		}
		return &c
	}
	// The longest prefix of the rows that fits.
	*res = *cut(longestFit(len(all), func(n int) bool { return size(cut(n)) <= bound }))
	if skipped := res.Skipped; len(skipped) > 0 {
		// The paths skipped, then how many more were.
		for n := len(skipped) - 1; n >= 0 && size(res) > bound; n-- {
			res.Skipped = append(skipped[:n:n], fmt.Sprintf("%d more paths skipped", len(skipped)-n))
		}
	}
	return print(res)
}
