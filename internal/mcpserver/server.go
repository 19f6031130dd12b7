// Package mcpserver owns rowkit's MCP surface: a stdio server on the
// official Go SDK that serves the engines (inspect, review, grep, the
// reader) as tools. It is an adapter like internal/cmd: each tool file
// turns typed arguments into an engine call inside a confinement root and
// the engine's result into structuredContent plus a compact text for the
// model. It owns confinement across roots (the operator's --root
// directories, narrowed by the client's MCP roots), the failure envelope of
// every tool and the operator's validation allowlist.
package mcpserver

import (
	"context"
	"io"
	"log"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/review"
	"github.com/rowkit/rowkit/internal/workspace"
)

// Options configure a server.
type Options struct {
	Roots   []string // --root directories; none means the current directory
	Config  string   // --config: the operator's validation allowlist, "" for none
	Version string   // reported as serverInfo.version
	Log     io.Writer
	// Structured serves every tool with its output schema and
	// structuredContent (rowkit mcp --structured), for programmatic
	// clients. Without it read_file, search, inspect_file and edit return
	// their text alone, since agent clients show a model the JSON in place
	// of the text whenever a result has structuredContent; see modelText.
	Structured bool
	// OutputBytes bounds every result at that many bytes of what the
	// client shows its model (rowkit mcp --max-output); 0 bounds each
	// result by what its client passes whole (resultBytes), NoOutputBound
	// by the token rule alone.
	OutputBytes int
	// LookupEnv finds the variables of the environment the server was
	// started in: ripgrep, git and validations keep an allowlist of them.
	// Nil is an empty environment (no PATH: no tool that runs a program
	// works).
	LookupEnv func(key string) (string, bool)
}

// Server is rowkit's MCP server.
type Server struct {
	mcp      *mcp.Server
	roots    []root
	config   *review.Config
	allow    []string // validations an MCP caller may run, in config order
	log      *log.Logger
	env      func(string) (string, bool)
	sessions sync.Map // *mcp.ServerSession -> *sessionRoots

	// structured serves structuredContent for every tool (Options.Structured).
	structured bool
	// outputBytes is Options.OutputBytes.
	outputBytes int

	// symbols are the symbol tool's engines, with their language servers.
	symbols symbolEngines

	// editMu serialises edits: each commits a journalled transaction in
	// the root, and two at once would race for the same files.
	editMu sync.Mutex

	// life ends when the server is told to stop (the context of Run or
	// ServeStdio): every running call is cancelled with it, so a search
	// in progress stops at once instead of holding up the exit.
	lifeMu sync.Mutex
	life   context.Context
}

// Instructions tell the client how the tools fit together. Both agent
// clients defer MCP tools behind a tool search: Claude Code shows the
// model these instructions and the tool names only, Codex only the first
// 250 characters or so of the instructions as the namespace's description.
// So the first sentence names every tool and what it is for, in the words
// a model searches with.
const Instructions = `rowkit reads, searches, outlines and edits the files of this workspace (read_file, search, inspect_file, edit), finds definitions, references and symbols (symbol) and lists what changed in a git repository (inspect_repository). Every line it shows is a verified row LINE:HASH TEXT: edit targets a row by its LINE:HASH and refuses one that changed. To see a function, outline the file (inspect_file) or look the name up (symbol), then read its span with read_file; read only the rows you need. Paths are relative to the first workspace root. Every output is bounded and says what it left out.`

// New builds the server: roots opened and canonical, the config read, the
// tools registered.
func New(o Options) (*Server, error) {
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	s := &Server{log: log.New(logw, "rowkit mcp: ", 0), env: o.LookupEnv, structured: o.Structured, outputBytes: o.OutputBytes}
	dirs := o.Roots
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	for _, d := range dirs {
		r, err := openRoot(d)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(s.roots, func(x root) bool { return x.ws.Dir() == r.ws.Dir() }) {
			s.roots = append(s.roots, r)
		}
	}
	if o.Config != "" {
		c, err := review.LoadConfig("", o.Config)
		if err != nil {
			return nil, err
		}
		s.config = c
		if c.MCP != nil {
			s.allow = append(s.allow, c.MCP.AllowValidations...)
		}
	}
	version := o.Version
	if version == "" {
		version = "devel"
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "rowkit", Title: "rowkit", Version: version}, &mcp.ServerOptions{
		Instructions:            Instructions,
		RootsListChangedHandler: s.rootsChanged,
		Capabilities:            &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	s.addTools()
	return s, nil
}

// MCP returns the SDK server, for transports and in-process tests.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Run serves one client on t until it disconnects or ctx ends; calls still
// running when ctx ends are cancelled.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	s.setLife(ctx)
	return s.mcp.Run(ctx, t)
}

func (s *Server) setLife(ctx context.Context) {
	s.lifeMu.Lock()
	s.life = ctx
	s.lifeMu.Unlock()
}

// callContext is the context of one tool call: the SDK's (a client's
// notifications/cancelled ends it), also ended when the server's life
// does. The SDK waits for running calls before it lets the server go, and
// does not cancel them itself.
func (s *Server) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	s.lifeMu.Lock()
	life := s.life
	s.lifeMu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	if life == nil {
		return ctx, cancel
	}
	stop := context.AfterFunc(life, cancel)
	return ctx, func() { stop(); cancel() }
}

// Banner is the one line the command prints on stderr at start.
func (s *Server) Banner() string {
	var b strings.Builder
	b.WriteString("rowkit mcp: roots ")
	b.WriteString(rootList(s.roots))
	if s.config == nil {
		b.WriteString("; no --config, run_validations is off")
	} else {
		b.WriteString("; validations allowed: ")
		if len(s.allow) == 0 {
			b.WriteString("none (the config's mcp.allowValidations is empty), run_validations is off")
		} else {
			b.WriteString(strings.Join(s.allow, ", "))
		}
	}
	if s.structured {
		b.WriteString("; structured: every tool returns structuredContent")
	}
	switch {
	case s.outputBytes == NoOutputBound:
		b.WriteString("; results bounded by tokens only")
	case s.outputBytes > 0:
		b.WriteString("; results within " + strconv.Itoa(s.outputBytes) + " bytes")
	}
	return b.String()
}

func (s *Server) logf(format string, args ...any) { s.log.Printf(format, args...) }

// callRoots is the confinement of the call req belongs to.
func (s *Server) callRoots(ctx context.Context, req *mcp.CallToolRequest) []root {
	if req == nil {
		return s.roots
	}
	return s.rootsOf(ctx, req.Session)
}

func bptr(b bool) *bool { return &b }

// roots returns the canonical workspaces a server was started with.
func (s *Server) Roots() []*workspace.Root {
	out := make([]*workspace.Root, len(s.roots))
	for i, r := range s.roots {
		out[i] = r.ws
	}
	return out
}

func (s *Server) addTools() {
	s.addInspectRepository()
	s.addInspectFile()
	s.addReadFile()
	s.addSearch()
	s.addEdit()
	s.addSymbol()
	if len(s.allow) > 0 {
		s.addRunValidations()
	}
}
