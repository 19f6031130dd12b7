package symbol

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/lsp"
	"github.com/rowkit/rowkit/internal/symbol/symboltest"
)

// The trust boundary, vector by vector: each is shown armed (the server
// run as a plain client would run it) and disarmed (as the engine runs
// it). A marker file written by code the repository names is the sign
// that it ran.

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, text := range files {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		mode := os.FileMode(0o644)
		if strings.HasPrefix(text, "#!") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// plainStart runs a server as a client that trusts the repository would:
// with env as it is, no allowlist.
func plainStart(t *testing.T, exe string, args []string, root string, env []string) *lsp.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := lsp.Start(ctx, lsp.Config{Path: exe, Args: args, Dir: root, Root: root, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// waitLoaded waits for gopls's first progress report to end.
func waitLoaded(s *lsp.Server) {
	deadline := time.After(30 * time.Second)
	for {
		p, ch := s.Progress()
		if p.Begun > 0 && len(p.Active) == 0 {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			return
		}
	}
}

// TestTrustGoToolchain: a go.mod whose go line asks for a newer Go makes
// the go command gopls runs download that toolchain (and run it) unless
// GOTOOLCHAIN=local. A GOPROXY on loopback records the request.
func TestTrustGoToolchain(t *testing.T) {
	env := symboltest.Env(t)
	var asked atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "golang.org/toolchain") {
			asked.Add(1)
		}
		http.NotFound(w, r)
	}))
	defer proxy.Close()
	env["GOPROXY"] = proxy.URL
	env["GOSUMDB"] = "off"
	for _, armed := range []bool{true, false} {
		root := t.TempDir()
		root, _ = filepath.EvalSymlinks(root)
		writeFiles(t, root, map[string]string{
			"go.mod":  "module example.com/t\n\ngo 1.99.0\n\ntoolchain go1.99.1\n",
			"main.go": "package main\n\nfunc main() { f() }\n\nfunc f() {}\n",
		})
		asked.Store(0)
		if armed {
			exe, _, _ := serverByLang("go").find(symboltest.Lookup(env), absPath(symboltest.Lookup(env)), root)
			var vars []string
			for k, v := range env {
				vars = append(vars, k+"="+v)
			}
			s := plainStart(t, exe, nil, root, append(vars, "GOTOOLCHAIN=auto"))
			waitLoaded(s)
			if asked.Load() == 0 {
				t.Errorf("armed: gopls's go command did not ask the proxy for the toolchain go.mod names")
			}
			continue
		}
		env2 := map[string]string{}
		for k, v := range env {
			env2[k] = v
		}
		env2["GOTOOLCHAIN"] = "auto" // the user's own setting does not pass
		e, err := Open(mustRoot(t, root), Options{LookupEnv: symboltest.Lookup(env2)})
		if err != nil {
			t.Fatal(err)
		}
		e.Query(context.Background(), Request{Op: OpDef, Path: "main.go", Row: "3", Symbol: "f"}, unbounded)
		e.Close()
		if n := asked.Load(); n != 0 {
			t.Errorf("disarmed: %d toolchain requests", n)
		}
	}
}

// TestTrustPythonInterpreter: pyright runs a python3 found on PATH to
// learn the search paths, in the workspace's directory. A PATH with a
// relative entry would find one the repository ships; the engine keeps
// PATH's absolute entries only. A pyrightconfig.json naming a virtual
// environment in the repository does not make pyright run its python
// (it reads the site-packages directory).
func TestTrustPythonInterpreter(t *testing.T) {
	env := symboltest.Env(t)
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	marker := filepath.Join(t.TempDir(), "ran")
	evil := "#!/bin/sh\necho \"$0 $*\" >> " + marker + "\nexec /usr/bin/python3 \"$@\"\n"
	writeFiles(t, root, map[string]string{
		"python3":                  evil,
		"python":                   evil,
		".venv/bin/python":         evil,
		".venv/bin/python3":        evil,
		"pyrightconfig.json":       `{"venvPath": ".", "venv": ".venv"}`,
		"app.py":                   "def f() -> int:\n    return 1\n\n\nprint(f())\n",
		".venv/lib/python3.11/x.x": "",
	})
	exe, args, _ := serverByLang("python").find(symboltest.Lookup(env), absPath(symboltest.Lookup(env)), root)
	// Armed: PATH starts with "." (the workspace, pyright's directory).
	s := plainStart(t, exe, args, root, []string{"PATH=.:" + env["PATH"], "HOME=" + env["HOME"]})
	s.CallRaw(context.Background(), "textDocument/documentSymbol", map[string]any{"textDocument": map[string]any{"uri": lsp.URI(filepath.Join(root, "app.py"))}})
	s.Close()
	b, _ := os.ReadFile(marker)
	if !strings.Contains(string(b), "./python") {
		t.Errorf("armed: the workspace's python did not run (%q)", b)
	}
	if strings.Contains(string(b), ".venv") {
		t.Errorf("pyright ran the virtual environment's python: %q", b)
	}
	os.Remove(marker)
	// Disarmed: the same PATH, as the engine runs pyright.
	env2 := map[string]string{}
	for k, v := range env {
		env2[k] = v
	}
	env2["PATH"] = ".:" + env["PATH"]
	e, err := Open(mustRoot(t, root), Options{LookupEnv: symboltest.Lookup(env2)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Query(context.Background(), Request{Op: OpDef, Path: "app.py", Row: "5", Symbol: "f"}, unbounded)
	e.Close()
	if err != nil || !res.Complete || len(res.Entries) == 0 {
		t.Fatalf("disarmed: %v %+v", err, res)
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("disarmed: the workspace's python ran: %q", b)
	}
}

// TestTrustTypeScriptPlugins: a tsconfig naming a language service plugin
// in the repository's node_modules. TypeScript 7's server does not load
// plugins (tsserver 5 and 6 load them: bench/symbol_ts.sh measures it).
func TestTrustTypeScriptPlugins(t *testing.T) {
	env := symboltest.Env(t)
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	marker := filepath.Join(t.TempDir(), "ran")
	writeFiles(t, root, map[string]string{
		"tsconfig.json":                         `{"compilerOptions": {"strict": true, "plugins": [{"name": "evil-plugin"}]}}`,
		"node_modules/evil-plugin/package.json": `{"name": "evil-plugin", "main": "index.js"}`,
		"node_modules/evil-plugin/index.js":     "require('fs').writeFileSync(" + jsString(marker) + ", 'ran');\nmodule.exports = () => ({ create: (info) => info.languageService });\n",
		"a.ts":                                  "export function f(): number { return 1; }\nf();\n",
	})
	e, err := Open(mustRoot(t, root), Options{LookupEnv: symboltest.Lookup(env)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err := e.Query(context.Background(), Request{Op: OpRefs, Path: "a.ts", Row: "1", Symbol: "f"}, unbounded)
	if err != nil || !res.Complete || len(res.Entries) != 2 {
		t.Fatalf("%v %+v", err, res)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("TypeScript 7's server loaded the repository's plugin")
	}
}

func jsString(s string) string { return "'" + strings.ReplaceAll(s, "'", "\\'") + "'" }

// TestTrustWorkspaceBins: a server is looked for on PATH first; only
// when PATH has none is the workspace's node_modules/.bin used (the
// repository's own code: see the trust table, docs/confinement.md).
func TestTrustWorkspaceBins(t *testing.T) {
	env := symboltest.Env(t)
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	marker := filepath.Join(t.TempDir(), "ran")
	writeFiles(t, root, map[string]string{
		"node_modules/.bin/pyright-langserver": "#!/bin/sh\ntouch " + marker + "\nexit 1\n",
		"a.py":                                 "x = 1\nprint(x)\n",
	})
	e, err := Open(mustRoot(t, root), Options{LookupEnv: symboltest.Lookup(env)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Query(context.Background(), Request{Op: OpDef, Path: "a.py", Row: "2", Symbol: "x"}, unbounded)
	e.Close()
	if err != nil || !res.Complete {
		t.Fatalf("%v %+v", err, res)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the workspace's pyright-langserver ran although PATH has one")
	}
	// Without one on PATH, the workspace's runs: stated, not disarmed.
	noServers := map[string]string{"PATH": "/usr/bin:/bin", "HOME": env["HOME"]}
	e, err = Open(mustRoot(t, root), Options{LookupEnv: symboltest.Lookup(noServers)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Query(context.Background(), Request{Op: OpDef, Path: "a.py", Row: "2", Symbol: "x"}, unbounded)
	e.Close()
	if _, serr := os.Stat(marker); serr != nil || err == nil {
		t.Errorf("the workspace's own server: ran %v, error %v", serr == nil, err)
	}
}
