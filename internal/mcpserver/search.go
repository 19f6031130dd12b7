package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/grep"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/spool"
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
			"Past 15,000 tokens: [search: output_incomplete], the rest kept for read_file.",
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
		// Room for the line that says the bound stopped the search and
		// names the rows kept.
		b.MaxBytes = bound
		b.Reserve = max(len(searchStopped(b, true)), len(searchStopped(b, false))) + len(keptContinuation(keptRef, 1<<30))
	}
	// What the bound leaves out is kept: the search goes on past it, and
	// the rows it leaves out go, with those shown, to the store of kept
	// outputs, which read_file reads on (kept.go). The engine reads every
	// row the token rule could admit, whatever the byte bound.
	c := rows.NewCollector(b)
	if !s.structured {
		c = rows.NewGroupedCollector(b, plan.Before+plan.After > 0)
	}
	k := &keptRows{s: s}
	sink := rows.NewSpill(c, k.open)
	res, err := grep.Search(ctx, plan, grep.Config{Root: r.ws, Budget: rows.DefaultBudget, LookupEnv: s.env}, sink)
	if err != nil {
		k.abort()
		return nil, nil, err
	}
	res.Rows = c.Records
	if res.Rows == nil {
		res.Rows = []rows.Record{}
	}
	var stopped *errs.Error
	switch {
	case sink.Spilled():
		stopped = rows.Incomplete(sink)
	case sink.Err() != nil && res.Incomplete != nil && res.Incomplete.Code == errs.Incomplete:
		// Not kept: the rows that fit, and why the rest are not.
		res.Incomplete.Message += notKept(sink.Err())
	}
	text := s.searchWithin(res, b, bound, in.Context > 0, stopped, k)
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
// that the byte bound stopped it. stopped, when not nil, says that the
// search's rows went past the bound into k: a cut result keeps all its
// rows in k and names the call that reads them on.
func (s *Server) searchWithin(res *grep.Result, b rows.Budget, bound int, context bool, stopped *errs.Error, k *keptRows) string {
	print := func(r *grep.Result) string { return grep.GroupedText(r, context) }
	size := func(r *grep.Result) int {
		if s.structured {
			j, _ := encode(r)
			return len(j)
		}
		return len(print(r))
	}
	all := res.Rows
	other := res.Incomplete // what else ended the search, if anything
	if other != nil && other.Code == errs.Incomplete {
		other = nil
	}
	ref := keptRef
	cut := func(n int) *grep.Result {
		c := *res
		c.Rows = all[:n]
		if n == len(all) && stopped == nil {
			return &c
		}
		why := stopped
		if why == nil || n < len(all) {
			why = b.Stopped(true)
		}
		msg := why.Msg
		if strings.HasPrefix(ref, spool.Prefix) {
			msg += keptContinuation(ref, n+1)
		} else {
			msg += ref // why the rows were not kept
		}
		if other != nil {
			msg += "; and " + other.Code + ": " + other.Message
		}
		c.Complete = false
		c.Incomplete = &grep.Reason{Code: errs.Incomplete, Message: msg}
		return &c
	}
	text := print(res) // formatted once when it fits
	if stopped == nil && (bound <= 0 || !s.structured && len(text) <= bound || s.structured && size(res) <= bound) {
		return text
	}
	// The longest prefix of the rows that fits.
	n := len(all)
	if bound > 0 {
		n = longestFit(len(all), func(n int) bool { return size(cut(n)) <= bound })
	}
	if n < len(all) && stopped == nil {
		// Cut here, not by the search's bound: the rows the search
		// found are kept now.
		if _, err := k.open(); err != nil {
			ref = notKept(err)
		} else {
			var buf []byte
			for _, r := range all {
				buf = rows.AppendRecord(buf[:0], r)
				k.w.Write(buf)
			}
		}
	}
	if k.w != nil {
		if id, err := k.w.Commit(); err != nil {
			ref = notKept(err)
		} else {
			ref = spool.Prefix + id
		}
	}
	if bound > 0 && size(cut(n)) > bound {
		// The name (or why the rows were not kept) took more room than
		// the name it stood for.
		n = longestFit(n, func(n int) bool { return size(cut(n)) <= bound })
	}
	*res = *cut(n)
	if skipped := res.Skipped; len(skipped) > 0 {
		// The paths skipped, then how many more were.
		for n := len(skipped) - 1; n >= 0 && bound > 0 && size(res) > bound; n-- {
			res.Skipped = append(skipped[:n:n], fmt.Sprintf("%d more paths skipped", len(skipped)-n))
		}
	}
	return print(res)
}
