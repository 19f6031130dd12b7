package symbol

import (
	"encoding/json"
	"github.com/rowkit/rowkit/internal/lsp"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/proc"
)

// The pinned versions the test suite installs (scripts/test: tools/go.mod
// for gopls, package-lock.json for pyright and TypeScript) and the README
// names. Any version of the same server works; these are the ones measured.
const (
	GoplsVersion      = "v0.23.0"
	PyrightVersion    = "1.1.414"
	TypeScriptVersion = "7.0.2"
)

// readiness is how a server says its index is ready (see Engine.ready).
type readiness int

const (
	// readyProgress: the server reports its initial load as work-done
	// progress; ready once a report has begun and none is running
	// (gopls: "Setting up workspace", ended when the workspace's packages
	// are loaded).
	readyProgress readiness = iota
	// readyProbe: every request about a file waits for the server's
	// workspace to be initialized, but a workspace symbol search does not
	// (pyright: getWorkspaceForFile awaits each workspace's isInitialized;
	// WorkspaceSymbolProvider skips workspaces not yet initialized). A
	// request about a file that does not exist is the probe: its answer
	// says the workspace is initialized.
	readyProbe
	// readyAnswer: the server builds what a request needs while it
	// answers it (TypeScript 7 loads the project, and for references the
	// project tree, inside the request); an answer is complete.
	readyAnswer
)

// server describes one language server: which files it serves, how it is
// found and started, and how it says it is ready.
type server struct {
	Lang    string   // go, python, typescript
	Name    string   // as messages name it
	Exts    []string // file extensions it serves, with the dot
	Install string   // the command that installs the pinned version
	Ready   readiness
	// Env are the variables the server keeps of the caller's environment
	// (PATH, with only absolute entries, and HOME are always kept); Extra
	// are set whatever the caller has.
	Env, Extra []string
	Settings   map[string]any // answers workspace/configuration
	InitOpts   any
	// Restart, when set, reports whether changes the server is to be
	// told need a new server instead (see conn.tell).
	Restart func(events []lsp.FileEvent, exts []string) bool
	// find locates the executable and its arguments: on PATH first, then
	// in the workspace's own node_modules/.bin (see the README's trust
	// table).
	find func(env proc.Lookup, path []string, root string) (exe string, args []string, ok bool)
}

// languageID is the LSP language identifier of a file with extension ext.
func languageID(ext string) string {
	switch ext {
	case ".go":
		return "go"
	case ".py", ".pyi":
		return "python"
	case ".ts", ".mts", ".cts":
		return "typescript"
	case ".tsx":
		return "typescriptreact"
	case ".js", ".mjs", ".cjs":
		return "javascript"
	case ".jsx":
		return "javascriptreact"
	}
	return ""
}

// commonEnv is what every server keeps of the caller's environment.
var commonEnv = []string{"HOME", "TMPDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "LANG", "LC_ALL"}

// servers are the language servers, made on first use (a table built at
// start-up would cost every rowkit process).
var servers = sync.OnceValue(func() []*server {
	return []*server{
		{
			Lang:    "go",
			Name:    "gopls",
			Exts:    []string{".go"},
			Install: "go install golang.org/x/tools/gopls@" + GoplsVersion,
			Ready:   readyProgress,
			Restart: newPackage,
			// The go command gopls runs keeps the user's module settings;
			// GOFLAGS does not pass (a -toolexec there would run a program
			// on every package gopls loads), and GOTOOLCHAIN=local keeps a
			// go.mod's toolchain line from downloading and running another
			// Go (see the trust table).
			Env: []string{"GOPATH", "GOROOT", "GOCACHE", "GOMODCACHE", "GOPROXY", "GOPRIVATE", "GONOPROXY",
				"GONOSUMDB", "GONOSUMCHECK", "GOSUMDB", "GOINSECURE", "GOOS", "GOARCH", "CGO_ENABLED", "GOENV"},
			Extra: []string{"GOTOOLCHAIN=local", "GOFLAGS="},
			Settings: map[string]any{"gopls": map[string]any{
				// find lists the workspace's own symbols, not the
				// standard library's and the dependencies'.
				"symbolScope": "workspace",
				// No diagnostics are read: none are computed on open.
				"diagnosticsTrigger": "Save",
				"linksInHover":       false,
				"hoverKind":          "FullDocumentation",
			}},
			find: func(env proc.Lookup, path []string, root string) (string, []string, bool) {
				if p, ok := lookPath("gopls", path); ok {
					return p, nil, true
				}
				// Where go install puts it.
				var dirs []string
				if v, ok := env("GOBIN"); ok && v != "" {
					dirs = append(dirs, v)
				}
				if v, ok := env("GOPATH"); ok && v != "" {
					for _, d := range filepath.SplitList(v) {
						dirs = append(dirs, filepath.Join(d, "bin"))
					}
				} else if h, ok := env("HOME"); ok && h != "" {
					dirs = append(dirs, filepath.Join(h, "go", "bin"))
				}
				if p, ok := lookPath("gopls", dirs); ok {
					return p, nil, true
				}
				return "", nil, false
			},
		},
		{
			Lang:    "python",
			Name:    "pyright",
			Exts:    []string{".py", ".pyi"},
			Install: "npm install -g pyright@" + PyrightVersion,
			Ready:   readyProbe,
			Restart: createdOrDeleted,
			Env:     []string{"VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH"},
			Settings: map[string]any{"python": map[string]any{"analysis": map[string]any{
				"diagnosticMode": "openFilesOnly", "autoSearchPaths": true, "useLibraryCodeForTypes": true,
			}}},
			find: func(_ proc.Lookup, path []string, root string) (string, []string, bool) {
				for _, dirs := range [][]string{path, {filepath.Join(root, "node_modules", ".bin")}} {
					if p, ok := lookPath("pyright-langserver", dirs); ok {
						return p, []string{"--stdio"}, true
					}
				}
				return "", nil, false
			},
		},
		{
			Lang:    "typescript",
			Name:    "typescript",
			Exts:    []string{".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"},
			Install: "npm install -g typescript@" + TypeScriptVersion,
			Ready:   readyAnswer,
			find: func(_ proc.Lookup, path []string, root string) (string, []string, bool) {
				for _, dirs := range [][]string{path, {filepath.Join(root, "node_modules", ".bin")}} {
					if exe, ok := findTypeScript7(dirs); ok {
						return exe, []string{"--lsp", "--stdio"}, true
					}
				}
				return "", nil, false
			},
		},
	}
})

// serverFor returns the server of files with extension ext (lower case,
// with the dot), or nil.
func serverFor(ext string) *server {
	for _, s := range servers() {
		for _, e := range s.Exts {
			if e == ext {
				return s
			}
		}
	}
	return nil
}

// serverByLang returns the server of a language, or nil.
func serverByLang(lang string) *server {
	for _, s := range servers() {
		if s.Lang == lang {
			return s
		}
	}
	return nil
}

// absPath is the PATH entries that are absolute: a relative entry would
// find a program in the workspace (a server looks programs up itself:
// pyright runs python3 from it).
func absPath(env proc.Lookup) []string {
	v, _ := env("PATH")
	var out []string
	for _, d := range filepath.SplitList(v) {
		if filepath.IsAbs(d) {
			out = append(out, d)
		}
	}
	return out
}

// lookPath finds an executable regular file name in dirs.
func lookPath(name string, dirs []string) (string, bool) {
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// findTypeScript7 finds TypeScript 7's native executable through a tsc
// (typescript 7.x) or tsgo (@typescript/native-preview) in dirs: the npm
// bin is a Node script that only finds and runs the platform package's
// executable, which is run directly here (one process, no Node start). A
// tsc of TypeScript 5 or 6, which has no language server mode, is passed
// over.
func findTypeScript7(dirs []string) (string, bool) {
	for _, d := range dirs {
		for _, bin := range []string{"tsc", "tsgo"} {
			p, ok := lookPath(bin, []string{d})
			if !ok {
				continue
			}
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				continue
			}
			pkgDir := filepath.Dir(filepath.Dir(real)) // .../typescript/bin/tsc
			var pkg struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			}
			b, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
			if err != nil || json.Unmarshal(b, &pkg) != nil {
				continue
			}
			var platform string
			switch {
			case pkg.Name == "typescript" && bin == "tsc" && majorAtLeast(pkg.Version, 7):
				platform = "typescript"
			case pkg.Name == "@typescript/native-preview" && bin == "tsgo":
				platform = "native-preview"
			default:
				continue
			}
			arch := map[string]string{"amd64": "x64", "arm64": "arm64", "arm": "arm", "386": "ia32"}[runtime.GOARCH]
			want := filepath.Join("node_modules", "@typescript", platform+"-"+runtime.GOOS+"-"+arch, "lib", bin)
			for dir := pkgDir; ; dir = filepath.Dir(dir) {
				if exe, ok := lookPath(filepath.Base(want), []string{filepath.Join(dir, filepath.Dir(want))}); ok {
					return exe, true
				}
				if dir == "/" || dir == "." {
					break
				}
			}
			// The platform package is elsewhere: the npm script finds it.
			return p, true
		}
	}
	return "", false
}

// majorAtLeast reports whether a semantic version's major number is at
// least n.
func majorAtLeast(v string, n int) bool {
	major, _, _ := strings.Cut(v, ".")
	m := 0
	for _, c := range major {
		if c < '0' || c > '9' {
			return false
		}
		m = m*10 + int(c-'0')
	}
	return major != "" && m >= n
}

// missing is the error of a server that is not installed.
func (s *server) missing() error {
	return errs.Errorf(CodeServerMissing, "%s, the %s language server, is not installed (looked on PATH and in the workspace's node_modules/.bin)", s.Name, s.Lang).
		WithHint("install it with: " + s.Install)
}

// DirectConfig is how the engine runs the server of lang (go, python,
// typescript) in root, for a client of its own beside the engine's (the
// benchmarks' direct client): the same executable, arguments,
// environment and settings.
func DirectConfig(lang, root string, env proc.Lookup) (lsp.Config, error) {
	s := serverByLang(lang)
	if s == nil {
		return lsp.Config{}, errs.Errorf(CodeUnsupported, "no language server for %s", lang)
	}
	return s.config(env, root)
}

// config is how the server runs in root: found in env, with the
// environment it keeps of env.
func (s *server) config(env proc.Lookup, root string) (lsp.Config, error) {
	path := absPath(env)
	exe, args, ok := s.find(env, path, root)
	if !ok {
		return lsp.Config{}, s.missing()
	}
	vars := proc.Env(env, append(slices.Clone(commonEnv), s.Env...), s.Extra...)
	vars = append(vars, "PATH="+strings.Join(path, string(filepath.ListSeparator)))
	return lsp.Config{Path: exe, Args: args, Dir: root, Env: vars, Root: root, InitializationOptions: s.InitOpts, Settings: s.Settings}, nil
}
