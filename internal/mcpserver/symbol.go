package mcpserver

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/spool"
	"github.com/rowkit/rowkit/internal/symbol"
)

// SymbolInput is the arguments of symbol.
type SymbolInput struct {
	Op          string   `json:"op"`
	Path        string   `json:"path,omitempty"`
	Row         string   `json:"row,omitempty" jsonschema:"LINE:HASH or a line number"`
	Symbol      string   `json:"symbol,omitempty" jsonschema:"as written on the row"`
	N           int      `json:"n,omitempty" jsonschema:"its occurrence on the row"`
	Query       string   `json:"query,omitempty" jsonschema:"find: a name or part"`
	Paths       []string `json:"paths,omitempty" jsonschema:"find: only in these"`
	In          []string `json:"in,omitempty" jsonschema:"only results under these"`
	WaitSeconds float64  `json:"wait_seconds,omitempty" jsonschema:"for the index (default 30)"`
}

// symbolEngines are the server's symbol engines, one per workspace root,
// opened on first use: each keeps its language servers between calls.
type symbolEngines struct {
	mu      sync.Mutex
	engines map[string]*symbol.Engine
}

func (s *Server) addSymbol() {
	in := mustSchema[SymbolInput]()
	ops := make([]any, len(symbol.Ops))
	for i, o := range symbol.Ops {
		ops[i] = o
	}
	in.Properties["op"].Enum = ops
	in.Properties["n"].Minimum = fptr(1)
	in.Properties["wait_seconds"].Minimum = fptr(0)
	in.Properties["wait_seconds"].Maximum = fptr(3600)
	register(s, &mcp.Tool{
		Name:  "symbol",
		Title: "Go to definition, find references, find symbol",
		Description: "Go to definition (def), find references (refs, the declaration included), impl, typedef, hover (signature and doc), callers (calls-in), callees (calls-out) of the symbol at path and row, or find symbols by name (find), from the language server (gopls, pyright, TypeScript's), " +
			"as rows \"PATH\":LINE:HASH TEXT, definitions first after their span \"PATH\":ROW..ROW KIND NAME (read it to see one). " +
			"An answer that is not whole ends with [symbol: index_incomplete] (ask again) or [symbol: output_incomplete] (narrow with in or paths).",
		InputSchema:  in,
		OutputSchema: outputSchema[symbol.Result](),
		Annotations: &mcp.ToolAnnotations{
			// It writes no file of the workspace. The servers keep their
			// caches outside it, and gopls's go command may fetch the
			// modules go.mod requires through GOPROXY: an open world.
			ReadOnlyHint:    true,
			IdempotentHint:  true,
			DestructiveHint: bptr(false),
			OpenWorldHint:   bptr(true),
		},
	}, s.symbol)
}

// symbolEngine is the engine of a root, opened on first use.
func (s *Server) symbolEngine(r root) (*symbol.Engine, error) {
	s.symbols.mu.Lock()
	defer s.symbols.mu.Unlock()
	if e := s.symbols.engines[r.ws.Dir()]; e != nil {
		return e, nil
	}
	e, err := symbol.Open(r.ws, symbol.Options{LookupEnv: s.env, Log: s.log.Writer()})
	if err != nil {
		return nil, err
	}
	if s.symbols.engines == nil {
		s.symbols.engines = map[string]*symbol.Engine{}
	}
	s.symbols.engines[r.ws.Dir()] = e
	return e, nil
}

// Close stops what the server keeps running between calls: the language
// servers of the symbol tool.
func (s *Server) Close() {
	s.symbols.mu.Lock()
	engines := s.symbols.engines
	s.symbols.engines = nil
	s.symbols.mu.Unlock()
	for _, e := range engines {
		e.Close()
	}
}

func (s *Server) symbol(ctx context.Context, req *mcp.CallToolRequest, in SymbolInput) (*mcp.CallToolResult, *symbol.Result, error) {
	q := symbol.Request{Op: in.Op, Row: in.Row, Symbol: in.Symbol, N: in.N, Query: in.Query,
		Wait: time.Duration(in.WaitSeconds * float64(time.Second))}
	roots := s.callRoots(ctx, req)
	r := roots[0]
	first := true
	// Every path of the call lies in one root: the position's, or the
	// first one named.
	place := func(p string) (string, error) {
		pr, rel, err := locate(roots, p)
		if err != nil {
			return "", withPath(p, err)
		}
		if first {
			r, first = pr, false
		} else if pr.ws != r.ws {
			return "", errs.Usagef("the paths lie in different roots (%s, %s); ask about one root at a time", r.ws.Dir(), pr.ws.Dir())
		}
		return rel, nil
	}
	var err error
	if in.Op != symbol.OpFind && in.Path != "" {
		if q.Path, err = place(in.Path); err != nil {
			return nil, nil, err
		}
	}
	for _, p := range in.Paths {
		rel, err := place(p)
		if err != nil {
			return nil, nil, err
		}
		q.Paths = append(q.Paths, rel)
	}
	for _, p := range in.In {
		rel, err := place(p)
		if err != nil {
			return nil, nil, err
		}
		q.In = append(q.In, rel)
	}
	if err := q.Check(); err != nil {
		return nil, nil, err
	}
	e, err := s.symbolEngine(r)
	if err != nil {
		return nil, nil, err
	}
	bound := s.resultBytes(req)
	b := rows.DefaultBudget
	if bound > 0 {
		// Room for the lines after the entries: why the answer is not
		// whole, and the echo of a bare row.
		b.MaxBytes = bound
		b.Reserve = 400
	}
	q.Keep = true // what the bound leaves out is kept (symbolWithin)
	res, err := e.Query(ctx, q, b)
	if err != nil {
		var re *symbol.RowError
		if errors.As(err, &re) {
			return rowFailure(s.failed(withPath(in.Path, err)), re), nil, nil
		}
		return nil, nil, withPath(in.Path, err)
	}
	text := s.symbolWithin(res, q, bound)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, res, nil
}

// rowFailure adds the current rows a RowError carries to its failure: the
// model repairs its request from them, as from a rejected edit's.
func rowFailure(res *mcp.CallToolResult, re *symbol.RowError) *mcp.CallToolResult {
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok || len(re.Context) == 0 {
		return res
	}
	b := []byte(strings.TrimSuffix(tc.Text, "\n") + "\n")
	for _, r := range re.Context {
		b = rows.AppendRecord(b, r)
	}
	tc.Text = string(b)
	return res
}

// symbolText is the answer's text, with the identity of a bare row.
func symbolText(res *symbol.Result, q symbol.Request) string {
	text := symbol.Text(res)
	if q.Op != symbol.OpFind && !strings.Contains(q.Row, ":") && res.Row != "" {
		line, _, _ := strings.Cut(res.Row, ":")
		text += "[symbol: row " + line + " is " + res.Row + "]\n"
	}
	return text
}

// symbolWithin returns res's text within bound, cutting entries from the
// end where the lines after them, or the JSON a structured server's client
// shows, did not fit; res then says that the byte bound stopped it. An
// answer cut, here or by the engine's own bound (res.Left), is kept whole
// in the user's store of kept outputs, and its reason names the read_file
// call that reads it on, as search's does.
func (s *Server) symbolWithin(res *symbol.Result, q symbol.Request, bound int) string {
	size := func(r *symbol.Result) int {
		if s.structured {
			j, _ := encode(r)
			return len(j)
		}
		return len(symbolText(r, q))
	}
	left, capped := res.Left, res.LeftCapped
	res.Left = nil
	if len(left) == 0 && (bound <= 0 || size(res) <= bound) {
		return symbolText(res, q)
	}
	all := res.Entries
	ref := keptRef // as long as the name it stands for
	cut := func(n int) *symbol.Result {
		c := *res
		c.Entries = all[:n]
		c.Complete = false
		if n < len(all) || c.Reason == nil {
			c.Reason = &symbol.Reason{Code: errs.Incomplete, Message: errs.IncompleteBytes(bound).Msg + "; " +
				strconv.Itoa(len(all)-n) + " more lines of the answer left out"}
		}
		if c.Reason.Code == errs.Incomplete {
			r := *c.Reason
			if strings.HasPrefix(ref, spool.Prefix) {
				r.Message += keptContinuation(ref, n+1)
			} else {
				r.Message += ref // why it was not kept
			}
			c.Reason = &r
		}
		return &c
	}
	fits := func(n int) bool { return bound <= 0 || size(cut(n)) <= bound }
	n := len(all)
	if !fits(n) {
		n = longestFit(len(all), fits)
	}
	ref = s.keepSymbol(all, left, capped)
	if !fits(n) {
		// The name (or why it was not kept) took more room than the
		// name it stood for.
		n = longestFit(n, fits)
	}
	*res = *cut(n)
	return symbolText(res, q)
}

// keepSymbol keeps an answer's entries and what the engine left out in
// the store of kept outputs, as search keeps its rows, and returns its
// name, or why it was not kept.
func (s *Server) keepSymbol(all []symbol.Entry, left []byte, capped bool) string {
	k := &keptRows{s: s}
	if _, err := k.open(); err != nil {
		return notKept(err)
	}
	io.WriteString(k.w, symbol.Body(&symbol.Result{Entries: all}))
	k.w.Write(left)
	if capped {
		k.w.Stop()
	}
	id, err := k.w.Commit()
	if err != nil {
		return notKept(err)
	}
	return spool.Prefix + id
}
