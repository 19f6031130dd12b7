package symbol

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/inspect"
	"github.com/rowkit/rowkit/internal/lsp"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/workspace"
)

// The operations.
const (
	OpDef      = "def"
	OpRefs     = "refs"
	OpImpl     = "impl"
	OpTypedef  = "typedef"
	OpHover    = "hover"
	OpCallsIn  = "calls-in"
	OpCallsOut = "calls-out"
	OpFind     = "find"
)

// Ops are the operations in the order help lists them.
var Ops = []string{OpDef, OpRefs, OpImpl, OpTypedef, OpHover, OpCallsIn, OpCallsOut, OpFind}

// Failure codes of hsymbol and the MCP symbol tool, beside errs' shared
// ones (usage, not_found, not_regular, not_utf8, read, outside_workspace,
// changed, cancelled, output_incomplete).
const (
	CodeRowStale        = "row_stale"        // LINE:HASH no longer names that line
	CodeRowMissing      = "row_missing"      // LINE is past the end of the file
	CodeSymbolMissing   = "symbol_missing"   // SYMBOL is not a token on the row
	CodeUnsupported     = "unsupported"      // no server for the file's language, or the server lacks the operation
	CodeServerMissing   = "server_missing"   // the language's server is not installed
	CodeServerFailed    = "server_failed"    // the server could not start, or refused the request
	CodeServerCrashed   = "server_crashed"   // the server died during the query
	CodeServerTimeout   = "server_timeout"   // the server, ready, did not answer in time
	CodeIndexIncomplete = "index_incomplete" // the index was not ready by the deadline
	CodeBroker          = "broker_failed"    // the per-workspace broker could not be reached or started
)

// Request is one query.
type Request struct {
	Op string `json:"op"`
	// Path, Row, Symbol and N name the position (every op but find): the
	// file relative to the workspace, its row as LINE:HASH or a bare
	// LINE, the exact token on that row, and which of its occurrences
	// (1-based; 0 when it occurs once).
	Path   string `json:"path,omitempty"`
	Row    string `json:"row,omitempty"`
	Symbol string `json:"symbol,omitempty"`
	N      int    `json:"n,omitempty"`
	// Query is find's name to search for; Paths limits what find lists,
	// and In what refs, impl and the call operations list, to files
	// under them (relative to the workspace).
	Query string   `json:"query,omitempty"`
	Paths []string `json:"paths,omitempty"`
	In    []string `json:"in,omitempty"`
	// Wait bounds the wait for the index; 0: the engine's.
	Wait time.Duration `json:"wait,omitempty"`
	// Env, when not nil, is the environment a server this query starts
	// is found in and runs with, in place of the engine's: the broker's
	// callers each send theirs, so that a server installed after the
	// broker started is found.
	Env map[string]string `json:"env,omitempty"`
	// Keep asks for what the bound leaves out too: its rows are read as
	// the answer's are and returned printed in Result.Left, so that the
	// caller can keep them and read them on without asking again.
	Keep bool `json:"keep,omitempty"`
}

// lookup is the environment a query starts servers with.
func (q *query) lookup() func(string) (string, bool) {
	if q.req.Env == nil {
		return q.e.opts.LookupEnv
	}
	return func(k string) (string, bool) {
		v, ok := q.req.Env[k]
		return v, ok
	}
}

// Check refuses a malformed request before anything is read.
func (r *Request) Check() error {
	if !slices.Contains(Ops, r.Op) {
		return errs.Usagef("unknown operation %s: want one of %s", quote(r.Op), strings.Join(Ops, ", "))
	}
	if r.Op == OpFind {
		if strings.TrimSpace(r.Query) == "" {
			return errs.Usagef("find needs a QUERY: the name, or part of it, to search for")
		}
		return nil
	}
	switch {
	case r.Path == "":
		return errs.Usagef("%s needs PATH ROW SYMBOL", r.Op)
	case r.Row == "":
		return errs.Usagef("%s needs ROW (LINE:HASH or LINE) and SYMBOL after the path", r.Op)
	}
	if _, _, err := parseRow(r.Row); err != nil {
		return err
	}
	if err := checkSymbol(r.Symbol); err != nil {
		return err
	}
	if r.N < 0 {
		return errs.Usagef("N must be a positive number")
	}
	return nil
}

// Query answers r, keeping entries within budget b (the zero Budget is
// rows.DefaultBudget). An answer that is not whole (the index was not
// ready, the bound cut it) is a Result with its Reason, not an error.
// A position that does not check out (stale row, missing symbol,
// ambiguous occurrence) is an error before any server is involved.
func (e *Engine) Query(ctx context.Context, r Request, b rows.Budget) (*Result, error) {
	if err := r.Check(); err != nil {
		return nil, err
	}
	e.touch()
	defer e.touch()
	wait := r.Wait
	if wait <= 0 {
		wait = e.opts.Wait
	}
	if wait <= 0 {
		wait = DefaultWait
	}
	q := &query{e: e, req: r, budget: b, deadline: time.Now().Add(wait), wait: wait, files: map[string]*fileRows{}}
	q.in, q.err = e.cleanPaths(r.In)
	if q.err != nil {
		return nil, q.err
	}
	if r.Op == OpFind {
		return q.find(ctx)
	}
	return q.position(ctx)
}

// query is one Query's state.
type query struct {
	e        *Engine
	req      Request
	budget   rows.Budget
	deadline time.Time
	wait     time.Duration
	in       []string // In, clean
	err      error

	start  uint64 // the watcher's Seq when the query began
	t      *target
	c      *conn
	srv    *lsp.Server
	files  map[string]*fileRows // result files read, by clean path
	res    *Result
	col    *collector
	notYet string // what the server was still doing when the wait ran out
}

// fileRows is a workspace file the answer shows rows of. The engine's
// cache shares one between queries that run at once (a broker answers
// several calls together), so its outline is made under mu.
type fileRows struct {
	x       *rows.Index
	mu      sync.Mutex
	outline []inspect.Entry
	parsed  bool
}

// entries is f's outline, made on first use. A parse that fails is the
// file's and is kept; one a cancelled query stopped is tried again by the
// next query.
func (f *fileRows) entries(ctx context.Context, path string) []inspect.Entry {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.parsed {
		d, err := inspect.OutlineSource(ctx, path, f.x.Src())
		if err == nil {
			f.outline = d.Outline
		}
		f.parsed = err == nil || ctx.Err() == nil
	}
	return f.outline
}

// cleanPaths checks paths as workspace paths and returns them clean.
func (e *Engine) cleanPaths(paths []string) ([]string, error) {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		clean, _, err := e.root.Resolve(p)
		if err != nil {
			return nil, err
		}
		out = append(out, clean)
	}
	return out, nil
}

// under reports whether clean path p lies in one of dirs (all of them
// when dirs is empty).
func under(p string, dirs []string) bool {
	if len(dirs) == 0 {
		return true
	}
	for _, d := range dirs {
		if d == "." || p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// position answers every operation about a position.
func (q *query) position(ctx context.Context) (*Result, error) {
	e := q.e
	e.watch.Sync()
	q.start = e.watch.Seq()
	e.refresh()
	t, err := resolveTarget(e.root, q.req.Path, q.req.Row, q.req.Symbol, q.req.N)
	if err != nil {
		return nil, err
	}
	q.t = t
	if err := served(t.Path); err != nil {
		return nil, err
	}
	spec := serverFor(strings.ToLower(filepath.Ext(t.Path)))
	if q.c, err = e.conn(spec); err != nil {
		return nil, err
	}
	q.srv, err = q.c.prepare(ctx, q.lookup(), t)
	if err != nil {
		return nil, err
	}
	q.res = &Result{Op: q.req.Op, Server: q.c.serverName(q.srv), Path: t.Path, Row: t.Ref.String(), Entries: []Entry{}}
	q.col = newCollector(q.budget)
	q.col.keep = q.req.Keep
	ok, what, err := q.c.ready(ctx, q.srv, q.deadline)
	if err != nil {
		return nil, err
	}
	deadline := q.deadline
	if !ok {
		q.notYet = what
		deadline = time.Now().Add(answerGrace)
	}
	pos := lsp.TextDocumentPositionParams{
		TextDocument: lsp.TextDocumentIdentifier{URI: lsp.URI(t.Abs)},
		Position:     lsp.Position{Line: t.Line - 1, Character: t.Char},
	}
	switch q.req.Op {
	case OpDef, OpImpl, OpTypedef:
		method := map[string]string{OpDef: "textDocument/definition", OpImpl: "textDocument/implementation", OpTypedef: "textDocument/typeDefinition"}[q.req.Op]
		locs, err := q.locations(ctx, deadline, method, pos)
		if err != nil {
			return q.failed(err)
		}
		if q.req.Op == OpImpl {
			locs = q.filterIn(locs)
		}
		if err := q.definitions(ctx, locs); err != nil {
			return nil, err
		}
	case OpRefs:
		params := lsp.ReferenceParams{TextDocumentPositionParams: pos}
		params.Context.IncludeDeclaration = true
		refs, err := q.locations(ctx, deadline, "textDocument/references", params)
		if err != nil {
			return q.failed(err)
		}
		defs, err := q.locations(ctx, deadline, "textDocument/definition", pos)
		if err != nil {
			return q.failed(err)
		}
		if err := q.references(ctx, defs, q.filterIn(refs)); err != nil {
			return nil, err
		}
	case OpHover:
		raw, err := q.c.call(ctx, q.srv, deadline, "textDocument/hover", pos)
		if err != nil {
			return q.failed(err)
		}
		var h *lsp.Hover
		if err := json.Unmarshal(raw, &h); err != nil {
			return nil, errs.Errorf(CodeServerFailed, "%s sent a hover that cannot be read: %v", q.c.spec.Name, err)
		}
		if h != nil {
			text := strings.TrimSpace(lsp.HoverText(h.Contents))
			if text != "" {
				kept, left := admitHover(text, q.budget)
				q.res.Hover = kept
				if left > 0 {
					q.res.Reason = &Reason{Code: errs.Incomplete, Message: fmt.Sprintf("%s; %d more %s of the hover left out",
						q.col.budget.Stopped(q.budget.MaxBytes > 0 && len(text) > q.budget.MaxBytes-q.budget.Reserve).Msg, left, plural(left, "line", "lines"))}
				}
			}
		}
	case OpCallsIn, OpCallsOut:
		if err := q.calls(ctx, deadline, pos); err != nil {
			return q.failed(err)
		}
	}
	return q.finish(ctx)
}

// failed is the answer when a request failed: a timeout while the index
// was not ready is an empty, incomplete answer; a timeout of a ready
// server is server_timeout; anything else is the error.
func (q *query) failed(err error) (*Result, error) {
	if !errors.Is(err, errTimeout) {
		return nil, err
	}
	if q.notYet != "" {
		return q.notReady(""), nil
	}
	return nil, errs.Errorf(CodeServerTimeout, "%s did not answer within %s", q.c.spec.Name, q.wait).
		WithHint("it may be busy; run the query again, or give it longer with --wait")
}

// notReady is the empty answer of a server whose index never got ready.
func (q *query) notReady(why string) *Result {
	res := q.res
	if res == nil {
		res = &Result{Op: q.req.Op, Entries: []Entry{}}
		if q.t != nil {
			res.Path, res.Row = q.t.Path, q.t.Ref.String()
		}
	}
	res.Entries = []Entry{}
	res.Hover = ""
	msg := why
	if msg == "" {
		msg = fmt.Sprintf("%s was still waiting for %s after %s and gave no answer", q.c.spec.Name, q.notYet, q.wait)
	}
	res.Reason = &Reason{Code: CodeIndexIncomplete, Message: msg + "; run the query again once it is ready"}
	return res
}

// locations sends a definition-like request and decodes its answer.
func (q *query) locations(ctx context.Context, deadline time.Time, method string, params any) ([]lsp.Location, error) {
	raw, err := q.c.call(ctx, q.srv, deadline, method, params)
	if err != nil {
		return nil, err
	}
	locs, err := lsp.DecodeLocations(raw)
	if err != nil {
		return nil, errs.Errorf(CodeServerFailed, "%s sent an answer to %s that cannot be read: %v", q.c.spec.Name, method, err)
	}
	return locs, nil
}

// filterIn keeps the locations under In.
func (q *query) filterIn(locs []lsp.Location) []lsp.Location {
	if len(q.in) == 0 {
		return locs
	}
	out := locs[:0:0]
	for _, l := range locs {
		if p := lsp.Path(l.URI); p != "" {
			if rel, inside := q.rel(p); inside && under(rel, q.in) {
				out = append(out, l)
			}
		}
	}
	return out
}

// place is a location as the answer shows it.
type place struct {
	path   string // clean relative path (inside), or absolute (outside)
	inside bool
	line   int // one-based
	char   int // UTF-16
	end    lsp.Position
}

// rel is abs relative to the root, and whether it lies inside the
// workspace (not under a node_modules: a dependency is shown as outside).
func (q *query) rel(abs string) (string, bool) {
	root := q.e.root.Dir()
	if !workspace.Inside(root, abs) {
		return abs, false
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == "." {
		return abs, false
	}
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "node_modules" {
			return rel, false
		}
	}
	return rel, true
}

// places turns locations into places, in the order given.
func (q *query) places(locs []lsp.Location) []place {
	out := make([]place, 0, len(locs))
	for _, l := range locs {
		abs := lsp.Path(l.URI)
		if abs == "" {
			continue // not a file (an untitled buffer, a virtual document)
		}
		p, inside := q.rel(abs)
		out = append(out, place{path: p, inside: inside, line: l.Range.Start.Line + 1, char: l.Range.Start.Character, end: l.Range.End})
	}
	return out
}

// sortPlaces orders places by path, then line and column.
func sortPlaces(ps []place) {
	slices.SortStableFunc(ps, func(a, b place) int {
		if c := strings.Compare(a.path, b.path); c != 0 {
			return c
		}
		if a.line != b.line {
			return a.line - b.line
		}
		return a.char - b.char
	})
}

// comparePlaces orders places inside the workspace first, then by path,
// line and column.
func comparePlaces(a, b place) int {
	switch {
	case a.inside && !b.inside:
		return -1
	case !a.inside && b.inside:
		return 1
	}
	if c := strings.Compare(a.path, b.path); c != 0 {
		return c
	}
	if a.line != b.line {
		return a.line - b.line
	}
	return a.char - b.char
}

// file reads a workspace file the answer shows rows of (once a query).
func (q *query) file(rel string) (*fileRows, error) {
	if f := q.files[rel]; f != nil {
		return f, nil
	}
	if f := q.e.cached(rel); f != nil {
		q.files[rel] = f
		return f, nil
	}
	seq := q.e.watch.Seq()
	var src []byte
	if q.t != nil && rel == q.t.Path {
		src = q.t.Src
	} else {
		var err error
		if _, src, err = q.e.root.ReadFile(rel); err != nil {
			if errs.Is(err, errs.NotFound) {
				return nil, errs.Errorf(errs.Changed, "%s, where %s answered, is gone", rel, q.c.spec.Name).WithHint("run the query again")
			}
			return nil, err
		}
	}
	x, err := rows.NewIndex(src)
	if err != nil {
		return nil, errs.Errorf(errs.NotUTF8, "%s, where %s answered, is not valid UTF-8 (%v)", rel, q.c.spec.Name, err)
	}
	f := &fileRows{x: x}
	q.files[rel] = f
	q.e.keep(rel, f, seq)
	return f, nil
}

// row is the row of p (inside), checked: a line the file does not have,
// or a column past its end, means the file changed since the server read
// it.
func (q *query) row(p place) (Entry, *fileRows, error) {
	f, err := q.file(p.path)
	if err != nil {
		return Entry{}, nil, err
	}
	if p.line < 1 || p.line > f.x.Count() {
		return Entry{}, nil, q.changedErr(p.path)
	}
	text := f.x.Text(p.line)
	if _, ok := byteCol(text, p.char); !ok {
		return Entry{}, nil, q.changedErr(p.path)
	}
	rec := rows.ClampedRecord(p.line, text)
	if rec.Clamped {
		rec.Text = string(text) // rows are never cut; the budget decides
	}
	return Entry{Kind: KindRow, Path: p.path, Line: p.line, Hash: rec.Hash, Text: rec.Text}, f, nil
}

func (q *query) changedErr(path string) error {
	return errs.Errorf(errs.Changed, "%s changed while %s answered (its answer names a place the file no longer has)", path, q.c.spec.Name).
		WithHint("run the query again")
}

// span is the inspect_file outline entry of the definition at p, when
// there is one: the innermost entry whose name is the identifier at p
// and whose span holds p's line.
func (q *query) span(ctx context.Context, p place, f *fileRows) (Entry, bool) {
	outline := f.entries(ctx, p.path)
	text := f.x.Text(p.line)
	from, ok1 := byteCol(text, p.char)
	name := identAt(text, from)
	if !ok1 || name == "" {
		return Entry{}, false
	}
	var best *inspect.Entry
	for i := range outline {
		o := &outline[i]
		if o.Name == nil || *o.Name != name || o.Span.Start.Line > p.line || o.Span.End.Line < p.line {
			continue
		}
		if best == nil || o.Span.End.Line-o.Span.Start.Line < best.Span.End.Line-best.Span.Start.Line {
			best = o
		}
	}
	if best == nil {
		return Entry{}, false
	}
	return Entry{Kind: KindSpan, Path: p.path, Line: best.Span.Start.Line, Hash: best.Span.Start.Hash,
		EndLine: best.Span.End.Line, EndHash: best.Span.End.Hash, SymbolKind: best.Kind, Name: entryName(best)}, true
}

// entryName is an outline entry's name as inspect_file's text shows it
// outside its class: a method with its receiver.
func entryName(o *inspect.Entry) string {
	name := ""
	if o.Name != nil {
		name = *o.Name
	}
	if o.Receiver != nil && *o.Receiver != "" {
		recv := *o.Receiver
		if strings.HasPrefix(recv, "*") {
			recv = "(" + recv + ")"
		}
		return recv + "." + name
	}
	return name
}

// identAt is the identifier that starts at byte offset i of text.
func identAt(text []byte, i int) string {
	j := i
	for _, r := range string(text[i:]) {
		if !isIdent(r) {
			break
		}
		j += len(string(r))
	}
	return string(text[i:j])
}

// outside groups places outside the workspace by file, in path order.
func outsideEntries(ps []place) []Entry {
	counts := map[string]int{}
	var paths []string
	for _, p := range ps {
		if p.inside {
			continue
		}
		if counts[p.path] == 0 {
			paths = append(paths, p.path)
		}
		counts[p.path]++
	}
	slices.Sort(paths)
	out := make([]Entry, len(paths))
	for i, p := range paths {
		out[i] = Entry{Kind: KindOutside, Path: p, Count: counts[p]}
	}
	return out
}

// definitions answers def, impl and typedef: each definition inside the
// workspace as its outline span (when inspect_file outlines it) and its
// row, by path and line; the files outside after them.
func (q *query) definitions(ctx context.Context, locs []lsp.Location) error {
	ps := q.places(locs)
	sortPlaces(ps)
	open := true
	for _, p := range ps {
		if !p.inside {
			continue
		}
		if !open && !q.keeping() {
			q.col.leave(Entry{Kind: KindRow, Path: p.path})
			continue
		}
		row, f, err := q.row(p)
		if err != nil {
			return err
		}
		if sp, ok := q.span(ctx, p, f); ok {
			open = q.col.put(sp)
		}
		if open || q.keeping() {
			open = q.col.put(row) && open
		}
	}
	q.putAll(outsideEntries(ps))
	return nil
}

// putAll admits entries while the answer is open, counting the rest.
func (q *query) putAll(es []Entry) {
	for _, e := range es {
		q.col.put(e)
	}
}

// references answers refs: the definitions' rows first, then every
// reference's row by path and line, then the files outside.
func (q *query) references(ctx context.Context, defs, refs []lsp.Location) error {
	dps := q.places(defs)
	sortPlaces(dps)
	rps := q.places(refs)
	sortPlaces(rps)
	open := true
	for _, p := range append(dps, rps...) {
		if !p.inside {
			continue
		}
		if !open && !q.keeping() {
			q.col.leave(Entry{Kind: KindRow, Path: p.path, Line: p.line})
			continue
		}
		row, _, err := q.row(p)
		if err != nil {
			return err
		}
		open = q.col.put(row)
	}
	// The definitions outside are counted with the references there.
	var out []place
	for _, p := range rps {
		if !p.inside {
			out = append(out, p)
		}
	}
	for _, d := range dps {
		if !d.inside && !slices.ContainsFunc(out, func(p place) bool { return p.path == d.path && p.line == d.line && p.char == d.char }) {
			out = append(out, d)
		}
	}
	q.putAll(outsideEntries(out))
	return nil
}

// calls answers calls-in and calls-out: for each caller (or callee), its
// definition as a span (or its file, outside the workspace), then the
// rows of the calls.
func (q *query) calls(ctx context.Context, deadline time.Time, pos lsp.TextDocumentPositionParams) error {
	raw, err := q.c.call(ctx, q.srv, deadline, "textDocument/prepareCallHierarchy", pos)
	if err != nil {
		return err
	}
	var items []lsp.CallHierarchyItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return errs.Errorf(CodeServerFailed, "%s sent a call hierarchy item that cannot be read: %v", q.c.spec.Name, err)
	}
	type group struct {
		other lsp.CallHierarchyItem // the caller or callee
		uri   string                // the file the call sites are in
		sites []lsp.Range
	}
	var groups []group
	for _, it := range items {
		if q.req.Op == OpCallsIn {
			raw, err := q.c.call(ctx, q.srv, deadline, "callHierarchy/incomingCalls", map[string]any{"item": it})
			if err != nil {
				return err
			}
			var calls []lsp.CallHierarchyIncomingCall
			if err := json.Unmarshal(raw, &calls); err != nil {
				return errs.Errorf(CodeServerFailed, "%s sent incoming calls that cannot be read: %v", q.c.spec.Name, err)
			}
			for _, c := range calls {
				groups = append(groups, group{other: c.From, uri: c.From.URI, sites: c.FromRanges})
			}
		} else {
			raw, err := q.c.call(ctx, q.srv, deadline, "callHierarchy/outgoingCalls", map[string]any{"item": it})
			if err != nil {
				return err
			}
			var calls []lsp.CallHierarchyOutgoingCall
			if err := json.Unmarshal(raw, &calls); err != nil {
				return errs.Errorf(CodeServerFailed, "%s sent outgoing calls that cannot be read: %v", q.c.spec.Name, err)
			}
			for _, c := range calls {
				groups = append(groups, group{other: c.To, uri: it.URI, sites: c.FromRanges})
			}
		}
	}
	// The callers (callees) by where they are defined.
	key := func(g group) place {
		ps := q.places([]lsp.Location{{URI: g.other.URI, Range: g.other.SelectionRange}})
		if len(ps) == 0 {
			return place{}
		}
		return ps[0]
	}
	slices.SortStableFunc(groups, func(a, b group) int {
		return comparePlaces(key(a), key(b))
	})
	open := true
	for _, g := range groups {
		var sites []lsp.Location
		for _, r := range g.sites {
			sites = append(sites, lsp.Location{URI: g.uri, Range: r})
		}
		sps := q.filterInPlaces(q.places(sites))
		sortPlaces(sps)
		if len(q.in) > 0 && len(sps) == 0 {
			continue
		}
		head := key(g)
		if head.path == "" {
			continue
		}
		if !open && !q.keeping() {
			q.col.leave(Entry{Kind: KindRow, Path: head.path})
			for _, s := range sps {
				q.col.leave(Entry{Kind: KindRow, Path: s.path})
			}
			continue
		}
		if head.inside {
			row, f, err := q.row(head)
			if err != nil {
				return err
			}
			sp, ok := q.span(ctx, head, f)
			if !ok {
				sp, ok = q.itemSpan(g.other, f)
			}
			if ok {
				open = q.col.put(sp)
			} else {
				open = q.col.put(row)
			}
		} else {
			open = q.col.put(Entry{Kind: KindOutside, Path: head.path, Count: len(sps)})
		}
		for _, s := range sps {
			if !open && !q.keeping() {
				q.col.leave(Entry{Kind: KindRow, Path: s.path})
				continue
			}
			if !s.inside {
				continue // the call sites of a caller outside: counted on its line
			}
			row, _, err := q.row(s)
			if err != nil {
				return err
			}
			open = q.col.put(row)
		}
	}
	return nil
}

// filterInPlaces keeps the places under In.
func (q *query) filterInPlaces(ps []place) []place {
	if len(q.in) == 0 {
		return ps
	}
	out := ps[:0:0]
	for _, p := range ps {
		if p.inside && under(p.path, q.in) {
			out = append(out, p)
		}
	}
	return out
}

// itemSpan is a call hierarchy item's own range as a span, when
// inspect_file does not outline it (a function literal, say).
func (q *query) itemSpan(it lsp.CallHierarchyItem, f *fileRows) (Entry, bool) {
	a, b := it.Range.Start.Line+1, it.Range.End.Line+1
	if it.Range.End.Character == 0 && b > a {
		b--
	}
	if a < 1 || b > f.x.Count() || b < a {
		return Entry{}, false
	}
	rel, _ := q.rel(lsp.Path(it.URI))
	return Entry{Kind: KindSpan, Path: rel, Line: a, Hash: f.x.Ref(a).Hash, EndLine: b, EndHash: f.x.Ref(b).Hash,
		SymbolKind: lsp.SymbolKindName(it.Kind), Name: it.Name}, true
}

// finish checks that the answer still stands (the server alive, no file
// it shows or its language's files changed since the query began) and
// says why it is not whole, when it is not.
func (q *query) finish(ctx context.Context) (*Result, error) {
	if !q.srv.Alive() {
		return nil, q.c.failure(q.srv, q.srv.Err())
	}
	if err := q.checkUnchanged(); err != nil {
		return nil, err
	}
	res := q.res
	res.Entries = q.col.entries
	res.Left, res.LeftCapped = q.col.left, q.col.capped
	if res.Entries == nil {
		res.Entries = []Entry{}
	}
	switch {
	case q.notYet != "":
		msg := fmt.Sprintf("%s was still busy with %s after %s: the answer may be missing locations", q.c.spec.Name, q.notYet, q.wait)
		if q.col.omitted() {
			msg += "; and " + q.col.stopped("").Message
		}
		res.Reason = &Reason{Code: CodeIndexIncomplete, Message: msg + "; run the query again once it is ready"}
	case q.col.omitted():
		res.Reason = q.col.stopped(q.narrow())
	}
	res.Complete = res.Reason == nil
	return res, nil
}

// narrow says how to see what the bound left out.
func (q *query) narrow() string {
	switch q.req.Op {
	case OpFind:
		return "give a longer query or PATHs to narrow"
	case OpRefs, OpImpl, OpCallsIn, OpCallsOut:
		return "narrow to a directory with --in PATH"
	}
	return ""
}

// checkUnchanged fails with changed when a file the answer depends on
// changed since the query began: the file asked about, a file it shows,
// or any file of the server's language (a reference may have come or
// gone there).
func (q *query) checkUnchanged() error {
	w := q.e.watch
	w.Sync()
	changes, _, ok := w.Since(q.start)
	if !ok {
		return errs.Errorf(errs.Changed, "the workspace changed while %s answered (too many changes to follow)", q.c.spec.Name).WithHint("run the query again")
	}
	for _, ch := range changes {
		rel, inside := q.rel(ch.Path)
		if !inside {
			continue
		}
		if ch.Dir {
			// A directory made changes nothing shown (its files are
			// reported one by one); one removed or moved may hold a file
			// the answer shows.
			if ch.Type != lsp.FileDeleted {
				continue
			}
			for p := range q.files {
				if strings.HasPrefix(p, rel+"/") {
					return errs.Errorf(errs.Changed, "%s changed while %s answered", p, q.c.spec.Name).WithHint("run the query again")
				}
			}
			continue
		}
		ext := strings.ToLower(filepath.Ext(ch.Path))
		if q.files[rel] != nil || slices.Contains(q.c.spec.Exts, ext) {
			return errs.Errorf(errs.Changed, "%s changed while %s answered", rel, q.c.spec.Name).WithHint("run the query again")
		}
	}
	return nil
}

// keeping reports whether the rows the bound leaves out are still read,
// to be kept: the request asked for them and the kept rows are not yet
// at their cap (past it, they are only counted).
func (q *query) keeping() bool { return q.req.Keep && !q.col.capped }
