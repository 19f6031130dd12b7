package mcpserver

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/workspace"
)

// root is one confinement root: the canonical workspace and the spelling
// it was given in (a --root argument or a client root's path), so that an
// absolute path written either way is recognised.
type root struct {
	ws    *workspace.Root
	alias string // absolute, lexically clean; may equal ws.Dir()
}

func openRoot(dir string) (root, error) {
	ws, err := workspace.Open(dir)
	if err != nil {
		return root{}, err
	}
	alias, err := filepath.Abs(dir)
	if err != nil {
		alias = ws.Dir()
	}
	return root{ws: ws, alias: filepath.Clean(alias)}, nil
}

// narrow keeps the client's roots that lie inside a server root, and the
// server roots that lie inside a client root: the intersection of what the
// operator allowed and what the client asked for. A client root outside
// every server root is dropped and logged. When nothing is left (the
// client sent no root, or only foreign ones), the server roots stand.
func narrow(server []root, client []*mcp.Root, logf func(string, ...any)) []root {
	var out []root
	seen := map[string]bool{}
	add := func(r root) {
		if !seen[r.ws.Dir()] {
			seen[r.ws.Dir()] = true
			out = append(out, r)
		}
	}
	for _, c := range client {
		dir, err := rootPath(c.URI)
		if err != nil {
			logf("ignoring client root %q: %v", c.URI, err)
			continue
		}
		// Judged on its canonical path before it is opened: a client
		// root outside every --root must not be touched at all (an edit
		// there would settle a transaction a crash left pending).
		canon, err := filepath.EvalSymlinks(dir)
		if err != nil {
			logf("ignoring client root %q: %v", c.URI, err)
			continue
		}
		kept := false
		for _, s := range server {
			switch {
			case workspace.Inside(s.ws.Dir(), canon):
				cr, err := openRoot(dir)
				if err != nil {
					logf("ignoring client root %q: %v", c.URI, err)
				} else if !workspace.Inside(s.ws.Dir(), cr.ws.Dir()) {
					// Swapped for a link leading out between the two
					// looks: not served (a recovery may already have
					// run there; only this race is left).
					logf("ignoring client root %s: it is outside every --root", cr.ws.Dir())
				} else {
					add(cr)
				}
				kept = true
			case workspace.Inside(canon, s.ws.Dir()):
				add(s)
				kept = true
			}
			if kept {
				break
			}
		}
		if !kept {
			logf("ignoring client root %s: it is outside every --root", canon)
		}
	}
	if len(out) == 0 {
		if len(client) > 0 {
			logf("no client root lies inside a --root; serving the --roots")
		}
		return server
	}
	return out
}

// rootPath is the local directory of a file:// root URI.
func rootPath(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", err
	}
	if u.Scheme != "file" {
		return "", fmt.Errorf("only file:// roots are served")
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("a file URI on host %q is not local", u.Host)
	}
	if !strings.HasPrefix(u.Path, "/") {
		return "", fmt.Errorf("the root's path is not absolute")
	}
	return u.Path, nil
}

// sessionRoots is the confinement of one client session. The client's
// roots are asked for when first needed and again after it says they
// changed.
type sessionRoots struct {
	mu    sync.Mutex
	roots []root
	fresh bool
}

// noRootsList is the first protocol version in which a server may not send
// roots/list (SEP-2575, SEP-2577).
const noRootsList = "2026-07-28"

// rootsOf returns the roots a call of session ss is confined to.
func (s *Server) rootsOf(ctx context.Context, ss *mcp.ServerSession) []root {
	if ss == nil || !clientHasRoots(ss) {
		return s.roots
	}
	v, _ := s.sessions.LoadOrStore(ss, &sessionRoots{})
	sr := v.(*sessionRoots)
	sr.mu.Lock()
	defer sr.mu.Unlock()
	if sr.fresh {
		return sr.roots
	}
	if p := ss.InitializeParams(); p != nil && p.ProtocolVersion >= noRootsList {
		// Roots are deprecated from this version on and the server may
		// not ask for them: the operator's roots stand.
		s.logf("protocol %s has no roots/list; serving the --roots", p.ProtocolVersion)
		sr.roots, sr.fresh = s.roots, true
		return sr.roots
	}
	res, err := ss.ListRoots(ctx, nil)
	if err != nil {
		// The client said it has roots and then could not list them:
		// serve the operator's roots, and ask again next time.
		s.logf("listing the client's roots failed: %v; serving the --roots", err)
		return s.roots
	}
	sr.roots = narrow(s.roots, res.Roots, s.logf)
	sr.fresh = true
	var dirs []string
	for _, r := range sr.roots {
		dirs = append(dirs, r.ws.Dir())
	}
	s.logf("session roots: %s", strings.Join(dirs, ", "))
	return sr.roots
}

func clientHasRoots(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil {
		return false
	}
	return p.Capabilities.RootsV2 != nil || p.Capabilities.Roots.ListChanged
}

// rootsChanged marks a session's roots stale.
func (s *Server) rootsChanged(_ context.Context, req *mcp.RootsListChangedRequest) {
	if v, ok := s.sessions.Load(req.Session); ok {
		sr := v.(*sessionRoots)
		sr.mu.Lock()
		sr.fresh = false
		sr.mu.Unlock()
	}
}

// locate finds the root a path argument belongs to and the request
// relative to it. A relative path is relative to the first root; an
// absolute one must lie lexically inside some root (as the root was
// spelled or canonically), and becomes relative to it. Either way the
// request still goes through workspace.Root.Resolve, which follows
// symlinks and refuses any that lead out.
func locate(roots []root, p string) (root, string, error) {
	if len(roots) == 0 {
		return root{}, "", errs.New(errs.Outside, "the server has no workspace root")
	}
	if p == "" {
		return root{}, "", errs.New(errs.NotFound, "the path is empty; give a path relative to the workspace")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return root{}, "", errs.New(errs.NotFound, "the path contains a NUL byte")
	}
	if !strings.HasPrefix(p, "/") {
		return roots[0], p, nil
	}
	clean := filepath.Clean(p)
	for _, r := range roots {
		for _, dir := range []string{r.ws.Dir(), r.alias} {
			if workspace.Inside(dir, clean) {
				if clean == dir {
					return r, ".", nil
				}
				rel := clean[len(dir):][1:]
				if workspace.NamesDir(p) {
					rel += "/" // a file spelled as a directory stays refused
				}
				return r, rel, nil
			}
		}
	}
	return root{}, "", errs.Errorf(errs.Outside, "%s is outside every workspace root (%s)", p, rootList(roots))
}

func rootList(roots []root) string {
	var dirs []string
	for _, r := range roots {
		dirs = append(dirs, r.ws.Dir())
	}
	return strings.Join(dirs, ", ")
}
