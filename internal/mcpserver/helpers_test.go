package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/jsonstr"
)

// TestMain gives every git call, rowkit's included, a private HOME and
// fixed identities, so the machine's own git config plays no part.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "mcpserver-home-")
	if err != nil {
		panic(err)
	}
	// The go command of rowkitBin keeps the real build and module caches.
	if out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output(); err == nil {
		for i, v := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			os.Setenv([]string{"GOCACHE", "GOMODCACHE", "GOPATH"}[i], v)
		}
	}
	for k, v := range map[string]string{
		"HOME": home, "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com",
		"GIT_COMMITTER_NAME": "C", "GIT_COMMITTER_EMAIL": "c@example.com",
		"GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
	} {
		os.Setenv(k, v)
	}
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[init]\n\tdefaultBranch = main\n"), 0o644)
	// As in a terminal, even when an agent's shell runs the tests: the
	// CLI side of the parity tests would bound its output for that agent.
	for _, k := range []string{"CLAUDECODE", "AI_AGENT", "CODEX_THREAD_ID", "CODEX_VERSION", "ROWKIT_MAX_OUTPUT"} {
		os.Unsetenv(k)
	}
	checkOutputs = true // every result of every test is checked against its schema
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

func gitT(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// canon is dir with symlinks resolved, as roots report it.
func canon(t testing.TB, dir string) string {
	t.Helper()
	c, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newRepo makes a repository at dir with a commit on main and a change in
// each of the four scopes.
func newRepo(t testing.TB, dir string) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	gitT(t, dir, "init", "-q", "-b", "main")
	write(t, filepath.Join(dir, "a.go"), "package a\n\nfunc A() {}\n")
	write(t, filepath.Join(dir, "b.txt"), "alpha\nbeta\n")
	write(t, filepath.Join(dir, "docs/<x&y>.md"), "# T\n")
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "base")
	gitT(t, dir, "checkout", "-q", "-b", "topic")
	write(t, filepath.Join(dir, "c.txt"), "gamma\n")
	gitT(t, dir, "add", "c.txt")
	gitT(t, dir, "commit", "-q", "-m", "topic")
	write(t, filepath.Join(dir, "b.txt"), "alpha\nBETA\n")
	gitT(t, dir, "add", "b.txt")
	write(t, filepath.Join(dir, "a.go"), "package a\n\nfunc A() { _ = 1 }\n")
	write(t, filepath.Join(dir, "new.txt"), "new\n")
}

// connect starts s and a client on in-memory transports. roots, when not
// nil, are the client's MCP roots.
func connect(t testing.TB, s *Server, copts *mcp.ClientOptions, roots ...string) *mcp.ClientSession {
	t.Helper()
	return connectVersion(t, s, copts, "", roots...)
}

// connectVersion is connect with the protocol version the client offers
// ("" for the SDK's latest).
func connectVersion(t testing.TB, s *Server, copts *mcp.ClientOptions, version string, roots ...string) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if copts == nil {
		copts = &mcp.ClientOptions{}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, copts)
	for _, r := range roots {
		c.AddRoots(&mcp.Root{URI: "file://" + r})
	}
	cs, err := c.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// newServer is a structured server: the parity and failure tests compare
// structuredContent with the CLI's JSON. newTextServer is the default one
// agent clients get.
func newServer(t testing.TB, o Options) *Server {
	t.Helper()
	o.Structured = true
	return newTextServer(t, o)
}

func newTextServer(t testing.TB, o Options) *Server {
	t.Helper()
	var log bytes.Buffer
	if o.Log == nil {
		o.Log = &log
	}
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func call(t testing.TB, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return res
}

// structured is a result's structuredContent as a decoded JSON value.
func structured(t testing.TB, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structuredContent %s: %v", b, err)
	}
	return m
}

// failureCode is the machine code of an isError result, checking that its
// structuredContent is a Failure.
func failureCode(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want isError, got %s", text(res))
	}
	m := structured(t, res)
	if m["ok"] != false {
		t.Fatalf("failure without ok:false: %v", m)
	}
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(string)
	if code == "" {
		t.Fatalf("failure without a code: %v", m)
	}
	return code
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// decodeJSON decodes CLI output into a JSON value.
func decodeJSON(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("CLI JSON %q: %v", b, err)
	}
	return m
}

// dropKeys removes every key named in keys at any depth: measured
// durations differ between two runs.
func dropKeys(v any, keys ...string) any {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range keys {
			delete(x, k)
		}
		for k, e := range x {
			x[k] = dropKeys(e, keys...)
		}
	case []any:
		for i, e := range x {
			x[i] = dropKeys(e, keys...)
		}
	}
	return v
}

func sameJSON(t testing.TB, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("%s: structuredContent differs from the CLI's JSON\n--- mcp\n%s\n--- cli\n%s", what, g, w)
	}
}

// toolOf lists the tools and returns the one named.
func toolOf(t testing.TB, cs *mcp.ClientSession, name string) *mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name == name {
			return tool
		}
	}
	return nil
}

// validateOutput checks v against a tool's advertised output schema, as a
// client that validates (the TypeScript SDK does, error results included).
func validateOutput(t testing.TB, tool *mcp.Tool, v any) {
	t.Helper()
	b, _ := json.Marshal(tool.OutputSchema)
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	vb, _ := json.Marshal(v)
	var val any
	json.Unmarshal(vb, &val)
	if err := r.Validate(val); err != nil {
		t.Errorf("%s: output %s does not match the advertised schema: %v", tool.Name, vb, err)
	}
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// rowkitBin builds the rowkit binary once per test run: the server the
// end-to-end client launches and the signal test stops.
func rowkitBin(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcpserver-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "rowkit")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/rowkit/rowkit/cmd/rowkit").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// RunCLI runs a rowkit command line in dir in-process (cli.Call over the
// command table) and returns its stdout, stderr and exit code. The command
// table imports this package, so the external test package sets it
// (inprocess_test.go).
var RunCLI func(dir string, args ...string) (stdout, stderr []byte, code int)

// cli runs the rowkit command args in dir, in-process, and returns its
// stdout and exit code: the CLI side of the parity tests.
func cli(t testing.TB, dir string, args ...string) ([]byte, int) {
	t.Helper()
	if RunCLI == nil {
		t.Fatal("RunCLI is not set: inprocess_test.go sets it")
	}
	stdout, stderr, code := RunCLI(dir, args...)
	if len(stdout) == 0 {
		t.Logf("rowkit %s: exit %d, stderr %s", strings.Join(args, " "), code, stderr)
	}
	return stdout, code
}

// groupedRow is a row of search's grouped text.
var groupedRow = regexp.MustCompile(`^[0-9]+:[0-9a-f]{4} `)

// ungroup turns search's grouped text (each file's path once, then its
// rows; "--" between runs) into hgrep's printed rows, "PATH":LINE:HASH
// TEXT, with the lines after the rows unchanged. It fails on a row before
// any heading.
func ungroup(t testing.TB, grouped string) string {
	t.Helper()
	var b []byte
	path, inRows := "", false
	for _, l := range strings.SplitAfter(grouped, "\n") {
		switch {
		case l == "":
		case groupedRow.MatchString(l):
			if path == "" {
				t.Fatalf("a row before any heading: %q", l)
			}
			b = append(append(jsonstr.Append(b, path), ':'), l...)
			inRows = true
		case l == "--\n" && inRows:
		case strings.HasPrefix(l, "[search: ") || l == "no matches\n":
			b = append(b, l...)
		default:
			path = strings.TrimSuffix(l, "\n")
			if strings.HasPrefix(path, `"`) {
				if err := json.Unmarshal([]byte(path), &path); err != nil {
					t.Fatalf("heading %q: %v", l, err)
				}
			}
		}
	}
	return string(b)
}
