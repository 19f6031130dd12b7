package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/rowkit/rowkit/internal/proc"
)

// Config says how to run one server.
type Config struct {
	// Path is the server's executable (absolute, or found on Env's PATH),
	// Args its arguments.
	Path string
	Args []string
	// Dir is the working directory, Env the whole environment
	// (proc.Env): nothing of rowkit's own passes unless listed.
	Dir string
	Env []string
	// Root is the absolute workspace directory: rootUri and the one
	// workspace folder.
	Root string
	// InitializationOptions are sent as they are; nil sends none.
	InitializationOptions any
	// Settings answer workspace/configuration: the section asked for is
	// looked up here (a dotted section such as "python.analysis" walks
	// into maps); a section not found is answered with null.
	Settings map[string]any
	// Trace, when not nil, sees every message to and from the server (for
	// tests and debugging).
	Trace func(in bool, body []byte)
	// StderrBytes bounds what is kept of the server's stderr (its head
	// and tail, for a log and for the message of a crash); 0: 16 KiB.
	StderrBytes int
}

// Server is a running language server and the client connected to it.
type Server struct {
	cfg    Config
	p      *proc.Process
	conn   *Conn
	stdin  *os.File
	stderr *lockedCapture
	exited chan struct{} // closed when the process has been reaped
	result proc.Result

	// Capabilities is what the server announced in its initialize answer.
	Capabilities json.RawMessage
	// Info is the server's serverInfo (name and version), when it sent one.
	Info struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}

	mu       sync.Mutex
	progress map[string]string // active work-done progress: token -> title
	begun    int               // progress reports ever begun
	ended    int               // and ended
	changed  chan struct{}     // closed and replaced when progress or state changes
	watchers bool              // the server registered file watchers
	notes    []Note            // what the server said (logMessage, showMessage), bounded
}

// Note is one message the server logged.
type Note struct {
	Method  string
	Type    int
	Message string
}

const maxNotes = 64

// Start runs the server and initializes it: it has answered initialize
// and been sent initialized when Start returns. ctx bounds the start only;
// the server lives until Close (or until it dies).
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.StderrBytes <= 0 {
		cfg.StderrBytes = 16 << 10
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, stdin: inW, stderr: &lockedCapture{c: proc.NewCapture(cfg.StderrBytes)},
		exited: make(chan struct{}), progress: map[string]string{}, changed: make(chan struct{})}
	// The server's life is its own, not the start's: Close ends it.
	p, err := proc.Start(context.Background(), proc.Spec{
		Path: cfg.Path, Args: cfg.Args, Dir: cfg.Dir, Env: cfg.Env,
		Stdin: inR, Stderr: s.stderr, Grace: time.Second,
	})
	inR.Close()
	if err != nil {
		inW.Close()
		return nil, err
	}
	s.p = p
	s.conn = NewConn(p.Stdout, inW, handler{s}, cfg.Trace)
	go func() {
		s.result = p.Wait()
		close(s.exited)
	}()
	if err := s.initialize(ctx); err != nil {
		s.Kill()
		return nil, err
	}
	return s, nil
}

// clientCapabilities is what rowkit's client can do: the navigation
// requests, work-done progress (the readiness signal), configuration
// requests, and watched files by registration (so that a server that
// wants them says so).
// (A function: a map built at start-up would cost every rowkit process.)
func clientCapabilities() map[string]any {
	return map[string]any{
		"general": map[string]any{"positionEncodings": []string{"utf-16"}},
		"window":  map[string]any{"workDoneProgress": true},
		"workspace": map[string]any{
			"configuration":          true,
			"workspaceFolders":       true,
			"didChangeWatchedFiles":  map[string]any{"dynamicRegistration": true, "relativePatternSupport": true},
			"symbol":                 map[string]any{"dynamicRegistration": false},
			"didChangeConfiguration": map[string]any{"dynamicRegistration": false},
		},
		"textDocument": map[string]any{
			"synchronization": map[string]any{"dynamicRegistration": false, "didSave": false},
			"definition":      map[string]any{"linkSupport": false},
			"typeDefinition":  map[string]any{"linkSupport": false},
			"implementation":  map[string]any{"linkSupport": false},
			"declaration":     map[string]any{"linkSupport": false},
			"references":      map[string]any{},
			"hover":           map[string]any{"contentFormat": []string{"plaintext", "markdown"}},
			"callHierarchy":   map[string]any{"dynamicRegistration": false},
			"documentSymbol":  map[string]any{"hierarchicalDocumentSymbolSupport": true},
			// Diagnostics are not read; saying so keeps pull-model servers quiet.
			"publishDiagnostics": map[string]any{"relatedInformation": false},
		},
	}
}

func (s *Server) initialize(ctx context.Context) error {
	root := URI(s.cfg.Root)
	params := map[string]any{
		"processId":        os.Getpid(),
		"clientInfo":       map[string]string{"name": "rowkit"},
		"rootUri":          root,
		"rootPath":         s.cfg.Root,
		"workspaceFolders": []map[string]string{{"uri": root, "name": baseName(s.cfg.Root)}},
		"capabilities":     clientCapabilities(),
	}
	if s.cfg.InitializationOptions != nil {
		params["initializationOptions"] = s.cfg.InitializationOptions
	}
	var res struct {
		Capabilities json.RawMessage `json:"capabilities"`
		ServerInfo   json.RawMessage `json:"serverInfo"`
	}
	if err := s.Call(ctx, "initialize", params, &res); err != nil {
		return err
	}
	s.Capabilities = res.Capabilities
	if len(res.ServerInfo) > 0 {
		json.Unmarshal(res.ServerInfo, &s.Info)
	}
	return s.conn.Notify("initialized", map[string]any{})
}

func baseName(p string) string {
	p = strings.TrimRight(p, "/")
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// Call sends a request. A server that dies before it answers makes the
// call fail with a *DiedError.
func (s *Server) Call(ctx context.Context, method string, params, result any) error {
	err := s.conn.Call(ctx, method, params, result)
	if err != nil && errors.Is(err, ErrClosed) {
		return s.died()
	}
	return err
}

// CallRaw sends a request and returns its result undecoded.
func (s *Server) CallRaw(ctx context.Context, method string, params any) (json.RawMessage, error) {
	var raw json.RawMessage
	err := s.Call(ctx, method, params, &raw)
	return raw, err
}

// Notify sends a notification.
func (s *Server) Notify(method string, params any) error {
	err := s.conn.Notify(method, params)
	if err != nil && errors.Is(err, ErrClosed) {
		return s.died()
	}
	return err
}

// DiedError is a server that ended without being asked to.
type DiedError struct {
	Result proc.Result
	Stderr string // the head and tail of what it wrote on stderr
}

func (e *DiedError) Error() string {
	how := fmt.Sprintf("exit status %d", e.Result.Exit)
	if e.Result.Signal != "" {
		how = "killed by " + e.Result.Signal
	}
	return "the language server ended (" + how + ")"
}

// died waits a moment for the process to be reaped and describes its end.
func (s *Server) died() error {
	select {
	case <-s.exited:
	case <-time.After(2 * time.Second):
		// The pipe closed but the process is still there: end it.
		s.Kill()
		<-s.exited
	}
	return &DiedError{Result: s.result, Stderr: s.Stderr()}
}

// Alive reports whether the server process is still running and its
// connection open.
func (s *Server) Alive() bool {
	select {
	case <-s.exited:
		return false
	case <-s.conn.Done():
		return false
	default:
		return true
	}
}

// Exited is closed once the process has ended and been reaped.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// Err describes why the server is gone; nil while it is alive.
func (s *Server) Err() error {
	if s.Alive() {
		return nil
	}
	return s.died()
}

// Pid is the server's process id (and process group).
func (s *Server) Pid() int { return s.p.Pid() }

// Stderr is the head and tail of what the server wrote on stderr. It is
// for logs and tests, never for a model.
func (s *Server) Stderr() string { return s.stderr.String() }

// Notes returns what the server logged through the protocol (the last
// maxNotes messages).
func (s *Server) Notes() []Note {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Note(nil), s.notes...)
}

// Close asks the server to shut down and exit, and ends it if it has not
// within the grace period.
func (s *Server) Close() {
	if s.Alive() {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		if s.conn.Call(ctx, "shutdown", nil, nil) == nil {
			s.conn.Notify("exit", nil)
		}
		cancel()
	}
	s.stdin.Close()
	select {
	case <-s.exited:
	case <-time.After(500 * time.Millisecond):
		s.Kill()
		<-s.exited
	}
}

// Kill ends the server's process group at once.
func (s *Server) Kill() {
	s.p.Stop()
	s.stdin.Close()
}

// Progress is a snapshot of the server's work-done progress.
type Progress struct {
	Active []string // titles of the reports still running
	Begun  int      // reports ever begun
	Ended  int      // reports ever ended
	// Watchers is true once the server registered file watchers
	// (workspace/didChangeWatchedFiles): gopls does when its workspace is
	// loaded.
	Watchers bool
}

// Progress returns the current progress and a channel closed at the next
// change.
func (s *Server) Progress() (Progress, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := Progress{Begun: s.begun, Ended: s.ended, Watchers: s.watchers}
	for _, t := range s.progress {
		p.Active = append(p.Active, t)
	}
	return p, s.changed
}

// bump announces a change of state to the waiters; s.mu is held.
func (s *Server) bump() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// answer answers the server's requests.
func (s *Server) answer(method string, params json.RawMessage) (any, error) {
	switch method {
	case "window/workDoneProgress/create":
		var p struct {
			Token json.RawMessage `json:"token"`
		}
		json.Unmarshal(params, &p)
		return nil, nil
	case "workspace/configuration":
		var p struct {
			Items []struct {
				Section string `json:"section"`
			} `json:"items"`
		}
		json.Unmarshal(params, &p)
		out := make([]any, len(p.Items))
		for i, it := range p.Items {
			out[i] = lookupSetting(s.cfg.Settings, it.Section)
		}
		return out, nil
	case "client/registerCapability":
		var p struct {
			Registrations []struct {
				Method string `json:"method"`
			} `json:"registrations"`
		}
		json.Unmarshal(params, &p)
		for _, r := range p.Registrations {
			if r.Method == "workspace/didChangeWatchedFiles" {
				s.mu.Lock()
				s.watchers = true
				s.bump()
				s.mu.Unlock()
			}
		}
		return nil, nil
	case "client/unregisterCapability", "window/showMessageRequest", "window/showDocument",
		"workspace/semanticTokens/refresh", "workspace/inlayHint/refresh", "workspace/inlineValue/refresh",
		"workspace/diagnostic/refresh", "workspace/codeLens/refresh", "workspace/foldingRange/refresh":
		return nil, nil
	case "workspace/workspaceFolders":
		return []map[string]string{{"uri": URI(s.cfg.Root), "name": baseName(s.cfg.Root)}}, nil
	case "workspace/applyEdit":
		return map[string]any{"applied": false, "failureReason": "rowkit applies no edits from a language server"}, nil
	}
	return nil, &ResponseError{Code: CodeMethodNotFound, Message: "rowkit's client does not handle " + method}
}

// lookupSetting finds a dotted section in settings; "" is all of them.
func lookupSetting(settings map[string]any, section string) any {
	if section == "" {
		return settings
	}
	var cur any = settings
	for _, part := range strings.Split(section, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		if cur, ok = m[part]; !ok {
			return nil
		}
	}
	return cur
}

// progressParams is a $/progress notification.
type progressParams struct {
	Token json.RawMessage `json:"token"`
	Value struct {
		Kind    string `json:"kind"`
		Title   string `json:"title"`
		Message string `json:"message"`
	} `json:"value"`
}

// handler is the Server as the connection's Handler.
type handler struct{ s *Server }

func (h handler) Request(method string, params json.RawMessage) (any, error) {
	return h.s.answer(method, params)
}

func (h handler) Notify(method string, params json.RawMessage) { h.s.onNotify(method, params) }

func (s *Server) onNotify(method string, params json.RawMessage) {
	switch method {
	case "$/progress":
		var p progressParams
		if json.Unmarshal(params, &p) != nil {
			return
		}
		tok := string(p.Token)
		s.mu.Lock()
		switch p.Value.Kind {
		case "begin":
			s.progress[tok] = p.Value.Title
			s.begun++
		case "end":
			if _, ok := s.progress[tok]; ok {
				delete(s.progress, tok)
				s.ended++
			}
		}
		s.bump()
		s.mu.Unlock()
	case "window/logMessage", "window/showMessage":
		var p struct {
			Type    int    `json:"type"`
			Message string `json:"message"`
		}
		if json.Unmarshal(params, &p) != nil {
			return
		}
		s.mu.Lock()
		if len(s.notes) == maxNotes {
			s.notes = append(s.notes[:0], s.notes[1:]...)
		}
		s.notes = append(s.notes, Note{Method: method, Type: p.Type, Message: p.Message})
		s.bump()
		s.mu.Unlock()
	}
}

// lockedCapture is a proc.Capture safe to read while the process writes.
type lockedCapture struct {
	mu sync.Mutex
	c  *proc.Capture
}

func (l *lockedCapture) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c.Write(p)
}

func (l *lockedCapture) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, _ := l.c.Result()
	return s
}
