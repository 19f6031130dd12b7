package symbol

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/lsp"
)

// find answers find: each language's server is asked (in servers' order)
// for the workspace symbols matching the query, and every hit inside the
// workspace is its definition row, in the server's order (its ranking);
// the files outside come after them. The languages asked are those of the
// PATHs given (a directory: every language of the workspace), or every
// language the workspace has files of.
func (q *query) find(ctx context.Context) (*Result, error) {
	e := q.e
	e.watch.Sync()
	q.start = e.watch.Seq()
	e.refresh()
	paths, err := e.cleanPaths(q.req.Paths)
	if err != nil {
		return nil, err
	}
	langs, err := q.findLangs(paths)
	if err != nil {
		return nil, err
	}
	q.res = &Result{Op: OpFind, Entries: []Entry{}}
	q.col = newCollector(q.budget)
	q.col.keep = q.req.Keep
	var names, missing []string
	var outside []place
	var notYet []string
	for _, spec := range langs {
		c, err := e.conn(spec)
		if err != nil {
			return nil, err
		}
		q.c = c
		q.srv, err = c.prepare(ctx, q.lookup(), nil)
		if err != nil {
			if errs.Is(err, CodeServerMissing) && len(langs) > 1 {
				missing = append(missing, spec.Name+" ("+spec.Install+")")
				continue
			}
			return nil, err
		}
		names = append(names, c.serverName(q.srv))
		ok, what, err := c.ready(ctx, q.srv, q.deadline)
		if err != nil {
			return nil, err
		}
		deadline := q.deadline
		if !ok {
			notYet = append(notYet, fmt.Sprintf("%s (still busy with %s after %s)", spec.Name, what, q.wait))
			deadline = time.Now().Add(answerGrace)
		}
		raw, err := c.call(ctx, q.srv, deadline, "workspace/symbol", map[string]string{"query": q.req.Query})
		if err != nil {
			if errors.Is(err, errTimeout) {
				if ok {
					return nil, errs.Errorf(CodeServerTimeout, "%s did not answer within %s", spec.Name, q.wait).
						WithHint("it may be busy; run the query again, or give it longer with --wait")
				}
				continue
			}
			return nil, err
		}
		var syms []lsp.Symbol
		if len(raw) > 0 && string(raw) != "null" {
			if syms, err = lsp.DecodeSymbols(raw); err != nil {
				return nil, errs.Errorf(CodeServerFailed, "%s sent workspace symbols that cannot be read: %v", spec.Name, err)
			}
		}
		var hits []hit
		for _, s := range syms {
			ps := q.places([]lsp.Location{s.Location})
			if len(ps) == 0 {
				continue
			}
			p := ps[0]
			if p.inside && !under(p.path, paths) {
				continue
			}
			if !p.inside {
				if len(paths) == 0 {
					outside = append(outside, p)
				}
				continue
			}
			hits = append(hits, hit{p, matchRank(s.Name, q.req.Query)})
		}
		// The servers' own order is their ranking, but not a stable one
		// (gopls orders equal scores differently from one answer to the
		// next): exact names first, then names that differ only in case,
		// that start with the query, that hold it, and the rest, each by
		// path and line.
		slices.SortStableFunc(hits, func(a, b hit) int {
			if a.rank != b.rank {
				return a.rank - b.rank
			}
			return comparePlaces(a.place, b.place)
		})
		for _, h := range hits {
			p := h.place
			if !q.col.adm.Open() {
				q.col.leave(Entry{Kind: KindRow, Path: p.path, Line: p.line})
				continue
			}
			row, _, err := q.row(p)
			if err != nil {
				return nil, err
			}
			q.col.put(row)
		}
		if !q.srv.Alive() {
			return nil, c.failure(q.srv, q.srv.Err())
		}
		if err := q.checkUnchanged(); err != nil {
			return nil, err
		}
	}
	q.putAll(outsideEntries(outside))
	res := q.res
	res.Server = strings.Join(names, ", ")
	res.Entries = q.col.entries
	res.Left, res.LeftCapped = q.col.left, q.col.capped
	if res.Entries == nil {
		res.Entries = []Entry{}
	}
	var why []string
	code := ""
	if len(notYet) > 0 {
		code = CodeIndexIncomplete
		why = append(why, "not ready: "+strings.Join(notYet, ", ")+": the answer may be missing symbols; run the query again once it is ready")
	}
	if len(missing) > 0 {
		if code == "" {
			code = CodeServerMissing
		}
		why = append(why, "not searched, the server is not installed: "+strings.Join(missing, ", "))
	}
	if q.col.omitted() {
		if code == "" {
			code = errs.Incomplete
		}
		why = append(why, q.col.stopped(q.narrow()).Message)
	}
	if code != "" {
		res.Reason = &Reason{Code: code, Message: strings.Join(why, "; and ")}
	}
	res.Complete = res.Reason == nil
	return res, nil
}

// hit is a symbol find shows, with the rank of its name.
type hit struct {
	place
	rank int
}

// matchRank ranks a symbol's name against the query: 0 the same, 1 the
// same but for case, 2 starts with it, 3 holds it, 4 matched otherwise
// (the server's fuzzy match). A method's name may carry its type
// ("List.Remove"): its last part counts.
func matchRank(name, query string) int {
	if i := strings.LastIndexByte(name, '.'); i >= 0 && i < len(name)-1 {
		name = name[i+1:]
	}
	ln, lq := strings.ToLower(name), strings.ToLower(query)
	switch {
	case name == query:
		return 0
	case ln == lq:
		return 1
	case strings.HasPrefix(ln, lq):
		return 2
	case strings.Contains(ln, lq):
		return 3
	}
	return 4
}

// findLangs is the servers find asks.
func (q *query) findLangs(paths []string) ([]*server, error) {
	exts := q.e.watch.Exts()
	var want []*server
	add := func(s *server) {
		for _, w := range want {
			if w == s {
				return
			}
		}
		want = append(want, s)
	}
	present := func() {
		for _, s := range servers() {
			for _, x := range s.Exts {
				if exts[x] {
					add(s)
					break
				}
			}
		}
	}
	if len(paths) == 0 {
		present()
	}
	for _, p := range paths {
		if _, fi, err := q.e.root.Stat(p); err == nil && !fi.IsDir() {
			s := serverFor(strings.ToLower(filepath.Ext(p)))
			if s == nil {
				return nil, errs.Errorf(CodeUnsupported, "%s: no language server serves this kind of file (served: Go, Python, TypeScript and JavaScript)", p)
			}
			add(s)
			continue
		} else if err != nil && !errs.Is(err, errs.NotRegular) {
			return nil, err
		}
		present()
	}
	// servers' order, whatever the order of the paths
	var out []*server
	for _, s := range servers() {
		for _, w := range want {
			if w == s {
				out = append(out, s)
			}
		}
	}
	if len(out) == 0 {
		return nil, errs.Errorf(CodeUnsupported, "the workspace has no Go, Python, TypeScript or JavaScript files to search")
	}
	return out, nil
}
