package symbol

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/lsp"
	"github.com/rowkit/rowkit/internal/proc"
	"github.com/rowkit/rowkit/internal/workspace"
)

// DefaultWait is how long a query waits for a server's index before it
// answers with what the server has and index_incomplete.
const DefaultWait = 30 * time.Second

// answerGrace is how long a request gets once the wait for the index has
// run out: a server that answers only once loaded (gopls, pyright) is
// then cancelled, and the answer is empty and incomplete.
const answerGrace = 2 * time.Second

// initTimeout bounds a server's start: its answer to initialize.
const initTimeout = 30 * time.Second

// maxOpenDocs bounds the documents a server is kept told about; the
// oldest is closed first.
const maxOpenDocs = 64

// Options configure an Engine.
type Options struct {
	// LookupEnv finds the caller's environment: PATH (to find the
	// servers), HOME and each server's own allowlist (servers.go).
	LookupEnv proc.Lookup
	// Wait bounds the wait for a server's index; 0: DefaultWait. A
	// Request's own Wait wins.
	Wait time.Duration
	// Log receives what servers write on stderr when they end, and the
	// engine's own notes (server started, restarted). Never a model's
	// text. Nil discards.
	Log io.Writer
	// Trace, when set, sees every LSP message (tests, debugging).
	Trace func(lang string, in bool, body []byte)
}

// Engine answers symbol queries in one workspace, keeping one language
// server per language alive between queries and telling it about every
// change under the root (lsp.Watcher). Safe for concurrent use.
type Engine struct {
	root  *workspace.Root
	opts  Options
	watch *lsp.Watcher

	mu     sync.Mutex
	conns  map[string]*conn // by language
	closed bool
	used   time.Time

	// The files answers showed rows of, kept between queries (reading a
	// file through the root costs a dozen system calls; refs of a widely
	// used name show hundreds of files): an entry goes when the watcher
	// sees its file change.
	cacheMu   sync.Mutex
	cache     map[string]*fileRows // by clean path
	cacheSeq  uint64               // the watcher's Seq the cache is current with
	cacheSize int                  // bytes of source kept
}

// maxCache bounds the source the file cache keeps.
const maxCache = 64 << 20

// refresh drops the cached files that changed since the last refresh.
func (e *Engine) refresh() {
	e.cacheMu.Lock()
	defer e.cacheMu.Unlock()
	changes, next, ok := e.watch.Since(e.cacheSeq)
	e.cacheSeq = next
	if !ok {
		e.cache, e.cacheSize = nil, 0
		return
	}
	for _, ch := range changes {
		rel, err := filepath.Rel(e.root.Dir(), ch.Path)
		if err != nil {
			continue
		}
		for p, f := range e.cache {
			if p == rel || ch.Dir && strings.HasPrefix(p, rel+"/") {
				delete(e.cache, p)
				e.cacheSize -= len(f.x.Src())
			}
		}
	}
}

// cached is the file kept for rel, or nil.
func (e *Engine) cached(rel string) *fileRows {
	e.cacheMu.Lock()
	defer e.cacheMu.Unlock()
	return e.cache[rel]
}

// keep caches f, read after the watcher's Seq was seq, unless a refresh
// has passed seq since (it could have missed a change made while f was
// read).
func (e *Engine) keep(rel string, f *fileRows, seq uint64) {
	e.cacheMu.Lock()
	defer e.cacheMu.Unlock()
	if e.cacheSeq > seq {
		return
	}
	if e.cache == nil || e.cacheSize+len(f.x.Src()) > maxCache {
		e.cache, e.cacheSize = map[string]*fileRows{}, 0
	}
	if old := e.cache[rel]; old != nil {
		e.cacheSize -= len(old.x.Src())
	}
	e.cache[rel] = f
	e.cacheSize += len(f.x.Src())
}

// conn is one language's server as the engine keeps it.
type conn struct {
	spec *server
	e    *Engine

	mu     sync.Mutex // held to start, restart and tell the server about changes
	srv    *lsp.Server
	synced uint64              // the watcher's Seq the server has been told up to
	docs   map[string]*openDoc // by absolute path
	order  []string            // docs, oldest first
	since  time.Time           // when srv started
	// listedBy is the server that has said it listed the workspace's
	// source files (see listed).
	listedBy atomic.Pointer[lsp.Server]
}

type openDoc struct {
	version int
	sum     [32]byte
}

// skipDir names the directories the engine never watches nor lists: VCS
// data, dependencies (node_modules, shown as outside), rowkit's own state
// and caches.
func skipDir(name string) bool {
	switch name {
	case ".git", ".hg", ".svn", "node_modules", workspace.StateDir, "__pycache__", ".mypy_cache", ".pytest_cache", ".venv":
		return true
	}
	return false
}

// Open returns the engine of root. It starts watching the root at once;
// servers start on the first query of their language.
func Open(root *workspace.Root, o Options) (*Engine, error) {
	if o.LookupEnv == nil {
		o.LookupEnv = func(string) (string, bool) { return "", false }
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	w, err := lsp.Watch(root.Dir(), skipDir)
	if err != nil {
		return nil, errs.Errorf(CodeServerFailed, "cannot watch the workspace %s for changes: %v", root.Dir(), err)
	}
	return &Engine{root: root, opts: o, watch: w, conns: map[string]*conn{}, used: time.Now()}, nil
}

// Root is the engine's workspace.
func (e *Engine) Root() *workspace.Root { return e.root }

// Gone reports whether the workspace's root directory was deleted, moved
// or replaced since the engine opened it.
func (e *Engine) Gone() bool { return e.watch.Gone() || e.root.Check() != nil }

// LastUsed is when a query last started or ended.
func (e *Engine) LastUsed() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.used
}

func (e *Engine) touch() {
	e.mu.Lock()
	e.used = time.Now()
	e.mu.Unlock()
}

// Close stops every server and the watcher.
func (e *Engine) Close() {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	e.closed = true
	conns := e.conns
	e.conns = nil
	e.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.srv != nil {
				c.srv.Close()
				c.srv = nil
			}
		}()
	}
	wg.Wait()
	e.watch.Close()
}

func (e *Engine) logf(format string, args ...any) {
	fmt.Fprintf(e.opts.Log, "rowkit symbol: "+format+"\n", args...)
}

// conn returns the connection of spec's language, made on first use.
func (e *Engine) conn(spec *server) (*conn, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errs.New(errs.Cancelled, "the symbol engine is closed")
	}
	c := e.conns[spec.Lang]
	if c == nil {
		c = &conn{spec: spec, e: e, docs: map[string]*openDoc{}}
		e.conns[spec.Lang] = c
	}
	return c, nil
}

// Servers lists the servers running, for logs and tests: language to
// process id.
func (e *Engine) Servers() map[string]int {
	e.mu.Lock()
	conns := maps(e.conns)
	e.mu.Unlock()
	out := map[string]int{}
	for lang, c := range conns {
		c.mu.Lock()
		if c.srv != nil && c.srv.Alive() {
			out[lang] = c.srv.Pid()
		}
		c.mu.Unlock()
	}
	return out
}

func maps(m map[string]*conn) map[string]*conn {
	out := make(map[string]*conn, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// start runs the server unless it is running; c.mu is held.
func (c *conn) start(ctx context.Context, env proc.Lookup) error {
	if c.srv != nil && c.srv.Alive() {
		return nil
	}
	if c.srv != nil {
		c.e.logf("%s (pid %d) had ended: %v; its stderr:\n%s", c.spec.Name, c.srv.Pid(), c.srv.Err(), c.srv.Stderr())
		c.srv = nil
	}
	cfg, err := c.spec.config(env, c.e.root.Dir())
	if err != nil {
		return err
	}
	exe := cfg.Path
	if tr := c.e.opts.Trace; tr != nil {
		lang := c.spec.Lang
		cfg.Trace = func(in bool, body []byte) { tr(lang, in, body) }
	}
	// The watcher's position before the server reads anything: every
	// change from here on is told to it.
	c.e.watch.Sync()
	seq := c.e.watch.Seq()
	// The start has a bound of its own, not the query's wait: a short
	// wait must not kill a server that is warming up for the next query.
	// The caller's cancellation still ends it.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), initTimeout)
	stop := context.AfterFunc(ctx, func() {
		if errors.Is(context.Cause(ctx), context.Canceled) {
			cancel()
		}
	})
	srv, err := lsp.Start(sctx, cfg)
	stop()
	cancel()
	if err != nil {
		var died *lsp.DiedError
		switch {
		case errors.As(err, &died):
			c.e.logf("%s ended during its start (%v); its stderr:\n%s", c.spec.Name, died, died.Stderr)
			return errs.Errorf(CodeServerFailed, "%s (%s) ended while starting (%v)", c.spec.Name, exe, died)
		case ctx.Err() != nil:
			return cancelled(ctx)
		case sctx.Err() != nil:
			return errs.Errorf(CodeServerFailed, "%s (%s) did not answer initialize within %s", c.spec.Name, exe, initTimeout)
		}
		return errs.Errorf(CodeServerFailed, "cannot start %s (%s): %v", c.spec.Name, exe, err)
	}
	c.srv, c.synced, c.since = srv, seq, time.Now()
	c.docs, c.order = map[string]*openDoc{}, nil
	c.e.logf("started %s %s (pid %d) in %s", c.spec.Name, srv.Info.Version, srv.Pid(), c.e.root.Dir())
	return nil
}

// restart ends the server, so that the next start begins afresh; c.mu is
// held.
func (c *conn) restart(why string) {
	if c.srv != nil {
		c.e.logf("restarting %s (pid %d): %s", c.spec.Name, c.srv.Pid(), why)
		c.srv.Kill()
		c.srv = nil
	}
}

// serverName is the server as results name it.
func (c *conn) serverName(srv *lsp.Server) string {
	if v := srv.Info.Version; v != "" {
		if strings.HasPrefix(v, "{") {
			// gopls's version is a JSON document: its "Version" field.
			var gv struct{ Version string }
			if json.Unmarshal([]byte(v), &gv) == nil && gv.Version != "" {
				v = gv.Version
			}
		}
		return c.spec.Name + " " + v
	}
	return c.spec.Name
}

// prepare makes the server current: started, told every change since it
// last was (an open document that changed is closed, so the server reads
// it from disk), and, when doc is set, holding doc's current text. It
// returns the server to ask.
func (c *conn) prepare(ctx context.Context, env proc.Lookup, doc *target) (*lsp.Server, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for try := 0; ; try++ {
		if err := c.start(ctx, env); err != nil {
			return nil, err
		}
		c.e.watch.Sync()
		changes, next, ok := c.e.watch.Since(c.synced)
		if !ok {
			if try > 0 {
				return nil, errs.Errorf(CodeServerFailed, "the workspace changes faster than rowkit can follow (the kernel's inotify queue overflowed)")
			}
			c.restart("lost track of file changes (inotify queue overflow)")
			continue
		}
		restart, err := c.tell(changes)
		if err != nil {
			return nil, err
		}
		if restart {
			if try > 0 {
				return nil, errs.Errorf(CodeServerFailed, "the workspace's packages keep changing while %s restarts", c.spec.Name)
			}
			c.restart("a package was created since it loaded the workspace")
			continue
		}
		c.synced = next
		if doc != nil {
			if err := c.open(doc); err != nil {
				return nil, err
			}
		}
		return c.srv, nil
	}
}

// tell sends the server the changes; c.mu is held. It reports whether
// the server must be restarted instead, when the server cannot take the
// changes in before its next answer (server.Restart).
func (c *conn) tell(changes []lsp.Change) (restart bool, err error) {
	if len(changes) == 0 {
		return false, nil
	}
	for _, ch := range changes {
		if d := c.docs[ch.Path]; d != nil {
			c.close(ch.Path)
		}
		if ch.Dir && ch.Type == lsp.FileDeleted {
			// Files below a deleted directory: their documents too.
			for p := range c.docs {
				if strings.HasPrefix(p, ch.Path+"/") {
					c.close(p)
				}
			}
		}
	}
	events := lsp.Coalesce(changes)
	if len(events) == 0 {
		return false, nil
	}
	if c.spec.Restart != nil && c.spec.Restart(events, c.spec.Exts) {
		return true, nil
	}
	return false, c.srv.Notify("workspace/didChangeWatchedFiles", map[string]any{"changes": events})
}

// newPackage reports whether the events create a directory's first
// source files: every file of the language now in the directory of a
// file created is one of those created. gopls loads the workspace's
// packages once, and a package made since never joins its answers
// (measured with gopls v0.23.0: its references leave out a package
// created after the load, told or not, open or not).
// createdOrDeleted reports whether a file of the language was created or
// deleted. pyright takes such a change in only after a delay of its own
// (measured with pyright 1.1.414: the answer to a request sent right
// after it was told leaves a new file out, with no progress report to
// wait for; "Found N source files" is logged after that answer).
func createdOrDeleted(events []lsp.FileEvent, exts []string) bool {
	for _, ev := range events {
		if ev.Type != lsp.FileChanged && slices.Contains(exts, strings.ToLower(filepath.Ext(lsp.Path(ev.URI)))) {
			return true
		}
	}
	return false
}

func newPackage(events []lsp.FileEvent, exts []string) bool {
	created := map[string]bool{}
	for _, ev := range events {
		if ev.Type == lsp.FileCreated {
			created[lsp.Path(ev.URI)] = true
		}
	}
	for p := range created {
		if !slices.Contains(exts, strings.ToLower(filepath.Ext(p))) {
			continue
		}
		ents, err := os.ReadDir(filepath.Dir(p))
		if err != nil {
			continue
		}
		fresh := true
		for _, e := range ents {
			q := filepath.Join(filepath.Dir(p), e.Name())
			if !e.IsDir() && slices.Contains(exts, strings.ToLower(filepath.Ext(q))) && !created[q] {
				fresh = false
				break
			}
		}
		if fresh {
			return true
		}
	}
	return false
}

// open makes the server hold t's text; c.mu is held.
func (c *conn) open(t *target) error {
	sum := sha256.Sum256(t.Src)
	if d := c.docs[t.Abs]; d != nil {
		if d.sum == sum {
			return nil
		}
		d.version++
		d.sum = sum
		return c.srv.Notify("textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": lsp.URI(t.Abs), "version": d.version},
			"contentChanges": []map[string]string{{"text": string(t.Src)}},
		})
	}
	for len(c.order) >= maxOpenDocs {
		c.close(c.order[0])
	}
	c.docs[t.Abs] = &openDoc{version: 1, sum: sum}
	c.order = append(c.order, t.Abs)
	return c.srv.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": lsp.URI(t.Abs), "languageId": languageID(strings.ToLower(filepath.Ext(t.Abs))), "version": 1, "text": string(t.Src),
	}})
}

// close tells the server a document is closed; c.mu is held.
func (c *conn) close(abs string) {
	delete(c.docs, abs)
	if i := slices.Index(c.order, abs); i >= 0 {
		c.order = slices.Delete(c.order, i, i+1)
	}
	c.srv.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": lsp.URI(abs)}})
}

// ready waits until srv's index is ready, until deadline at most. It
// reports whether it is, and what it was waiting for when not.
func (c *conn) ready(ctx context.Context, srv *lsp.Server, deadline time.Time) (bool, string, error) {
	switch c.spec.Ready {
	case readyAnswer:
		return true, "", nil
	case readyProbe:
		wctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		probe := filepath.Join(c.e.root.Dir(), ".rowkit-ready-probe.py")
		_, err := srv.CallRaw(wctx, "textDocument/documentSymbol", map[string]any{"textDocument": map[string]any{"uri": lsp.URI(probe)}})
		switch {
		case err == nil:
			return c.listed(ctx, srv, deadline)
		case ctx.Err() != nil:
			return false, "", cancelled(ctx)
		case wctx.Err() != nil:
			return false, "its workspace to be initialized", nil
		}
		var re *lsp.ResponseError
		if errors.As(err, &re) {
			return c.listed(ctx, srv, deadline) // answered: the workspace is initialized
		}
		return false, "", c.failure(srv, err)
	}
	return c.await(ctx, srv, deadline, func(p lsp.Progress) (bool, string) {
		if p.Begun > 0 && len(p.Active) == 0 {
			return true, ""
		}
		if len(p.Active) > 0 {
			return false, strings.Join(p.Active, ", ")
		}
		return false, "its first progress report"
	})
}

// await waits until done says the server is ready, asking it again at
// each change of the server's state, until deadline at most; when not
// ready, done also says what the server is still doing.
func (c *conn) await(ctx context.Context, srv *lsp.Server, deadline time.Time, done func(lsp.Progress) (bool, string)) (bool, string, error) {
	for {
		p, changed := srv.Progress()
		ok, what := done(p)
		if ok {
			return true, "", nil
		}
		select {
		case <-changed:
		case <-srv.Exited():
			return false, "", c.failure(srv, srv.Err())
		case <-ctx.Done():
			return false, "", cancelled(ctx)
		case <-time.After(time.Until(deadline)):
			return false, what, nil
		}
	}
}

// listed waits until the server has listed the workspace's source files,
// until deadline at most. An initialized pyright workspace has not: it
// lists them in a timer it sets when its settings arrive (5 to 250 ms
// later, measured with pyright 1.1.414), and a references request
// answered before that searches the open documents alone, with no error
// (seen in CI: a new file's reference missing from the first answer of
// a restarted server). It logs "Found N source files" (or "No source
// files found.") once the list is made.
func (c *conn) listed(ctx context.Context, srv *lsp.Server, deadline time.Time) (bool, string, error) {
	if c.listedBy.Load() == srv {
		return true, "", nil
	}
	return c.await(ctx, srv, deadline, func(lsp.Progress) (bool, string) {
		for _, n := range srv.Notes() {
			if listedNote(n.Message) {
				c.listedBy.Store(srv)
				return true, ""
			}
		}
		return false, "its list of the workspace's source files"
	})
}

// listedNote reports whether a message is pyright's end of listing the
// workspace's source files.
func listedNote(msg string) bool {
	if msg == "No source files found." {
		return true
	}
	n, ok := strings.CutPrefix(msg, "Found ")
	if !ok {
		return false
	}
	n, ok = strings.CutSuffix(n, " source files")
	if !ok {
		n, ok = strings.CutSuffix(n, " source file")
	}
	_, err := strconv.Atoi(n)
	return ok && err == nil
}

// failure turns an error of a request into the query's error: a server
// that died is server_crashed (and is restarted by the next query).
func (c *conn) failure(srv *lsp.Server, err error) error {
	var died *lsp.DiedError
	if errors.As(err, &died) || !srv.Alive() {
		if died == nil {
			if e, ok := srv.Err().(*lsp.DiedError); ok {
				died = e
			}
		}
		how := "it ended"
		if died != nil {
			how = died.Error()
		}
		c.e.logf("%s (pid %d) died during a query: %s; its stderr:\n%s", c.spec.Name, srv.Pid(), how, srv.Stderr())
		return errs.Errorf(CodeServerCrashed, "%s ended while answering (%s); nothing it said is shown", c.spec.Name, strings.TrimPrefix(how, "the language server ended ")).
			WithHint("run the query again: a new server starts")
	}
	var re *lsp.ResponseError
	if errors.As(err, &re) {
		if re.Code == lsp.CodeMethodNotFound {
			return errs.Errorf(CodeUnsupported, "%s does not answer this request (%s)", c.spec.Name, oneLine(re.Message))
		}
		if re.Code == lsp.CodeContentModified || re.Code == lsp.CodeRequestCancelled {
			return errs.Errorf(errs.Changed, "%s dropped the request because the workspace changed (%s)", c.spec.Name, oneLine(re.Message)).
				WithHint("run the query again")
		}
		return errs.Errorf(CodeServerFailed, "%s refused the request: %s", c.spec.Name, oneLine(re.Message))
	}
	return errs.Errorf(CodeServerFailed, "%s: %v", c.spec.Name, err)
}

func cancelled(ctx context.Context) error {
	return errs.Errorf(errs.Cancelled, "the query was cancelled: %v", context.Cause(ctx))
}

// call sends one request within the query's deadline (plus answerGrace
// when the index was not ready), and returns its raw answer.
func (c *conn) call(ctx context.Context, srv *lsp.Server, deadline time.Time, method string, params any) (json.RawMessage, error) {
	rctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	raw, err := srv.CallRaw(rctx, method, params)
	switch {
	case err == nil:
		return raw, nil
	case ctx.Err() != nil:
		return nil, cancelled(ctx)
	case rctx.Err() != nil:
		return nil, errTimeout
	}
	return nil, c.failure(srv, err)
}

// errTimeout is a request the deadline ended; the caller decides what it
// means.
var errTimeout = errors.New("timeout")
