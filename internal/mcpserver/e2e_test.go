package mcpserver

import (
	"encoding/json"
	"fmt"
	"github.com/rowkit/rowkit/internal/symbol/symboltest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// repoRoot is the module's root directory, where package.json and
// node_modules live.
func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// e2eReport is what testdata/e2e/client.mjs prints for one server.
type e2eReport struct {
	ServerVersion struct {
		Name string `json:"name"`
	} `json:"serverVersion"`
	Instructions string `json:"instructions"`
	Tools        []struct {
		Name         string          `json:"name"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
		Annotations  map[string]any  `json:"annotations"`
	} `json:"tools"`
	Results []e2eResult `json:"results"`
	Cancel  *struct {
		Thrown string `json:"thrown"`
		MS     int    `json:"ms"`
	} `json:"cancel"`
	After  *e2eResult `json:"after"`
	Stderr string     `json:"stderr"`
}

type e2eResult struct {
	Thrown            string           `json:"thrown"`
	IsError           bool             `json:"isError"`
	StructuredContent map[string]any   `json:"structuredContent"`
	Content           []map[string]any `json:"content"`
}

type e2eServer struct {
	Command string     `json:"command"`
	Args    []string   `json:"args"`
	Cwd     string     `json:"cwd"`
	Calls   []e2eCall  `json:"calls"`
	Cancel  *e2eCancel `json:"cancel,omitempty"`
	After   *e2eCall   `json:"after,omitempty"`
	expect  []func(e2eResult) string
}

type e2eCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

type e2eCancel struct {
	e2eCall
	AfterMS int `json:"afterMs"`
}

// e2eCalls is one successful call of every tool the server can list; a
// listed tool without an entry here fails the test.
func e2eCalls(root string) map[string]e2eCall {
	return map[string]e2eCall{
		"inspect_repository": {"inspect_repository", map[string]any{"repo_path": "."}},
		"run_validations":    {"run_validations", map[string]any{"repo_path": ".", "validations": []string{"ok"}}},
		"inspect_file":       {"inspect_file", map[string]any{"path": "a.go"}},
		"read_file":          {"read_file", map[string]any{"path": "b.txt"}},
		"search":             {"search", map[string]any{"pattern": "alpha"}},
		"edit":               {"edit", map[string]any{"script": "in b.txt\ntype 1:8ed3 \"ALPHA\"\n"}},
		"symbol":             {"symbol", map[string]any{"op": "find", "query": "A", "paths": []string{"a.go"}}},
	}
}

// TestEndToEndTypeScriptClient runs the official TypeScript SDK client
// against the rowkit binary over stdio: a default server, whose
// read_file, search, inspect_file and edit answer with text alone, and a
// --structured one, where every tool has its output schema.
func TestEndToEndTypeScriptClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed: this test drives rowkit mcp with the official TypeScript MCP client; scripts/test installs nodejs and npm")
	}
	mods := filepath.Join(repoRoot(t), "node_modules", "@modelcontextprotocol", "sdk")
	if _, err := os.Stat(mods); err != nil {
		t.Fatalf("%s is missing: run `npm ci` at the repository root (scripts/test does)", mods)
	}
	bin := rowkitBin(t)
	root := canon(t, t.TempDir())
	newRepo(t, root)
	pidFile := filepath.Join(t.TempDir(), "pid")
	cfg := allowConfig(t, map[string][]string{
		"ok":   {"true"},
		"slow": {"sh", "-c", "sleep 60 & echo $! > " + pidFile + "; wait"},
	})

	// Server 1: no config. Every listed tool is called once, plus failures.
	plain := e2eServer{Command: bin, Args: []string{"mcp", "--root", root}, Cwd: root}
	// Server 2: structured, with an allowlist; one validation is
	// cancelled mid-run.
	allowed := e2eServer{Command: bin, Args: []string{"mcp", "--root", root, "--config", cfg, "--structured"}, Cwd: root,
		Cancel: &e2eCancel{e2eCall{"run_validations", map[string]any{"repo_path": ".", "validations": []string{"slow"}}}, 1500},
		After:  &e2eCall{"inspect_repository", map[string]any{"repo_path": "."}},
	}
	calls := e2eCalls(root)
	for _, name := range []string{"inspect_repository", "inspect_file", "read_file", "search", "edit"} {
		plain.Calls = append(plain.Calls, calls[name])
	}
	plain.Calls = append(plain.Calls,
		e2eCall{"inspect_repository", map[string]any{"repo_path": "/etc"}},
		e2eCall{"inspect_repository", map[string]any{"repo_path": ".", "detail": "everything"}},
		calls["symbol"],
	)
	allowed.Calls = append(allowed.Calls, calls["run_validations"], calls["inspect_file"], calls["read_file"], calls["search"],
		e2eCall{"edit", map[string]any{"script": "in b.txt\ntype 2:6391 \"B\"\n", "dry_run": true}},
		e2eCall{"inspect_repository", map[string]any{"repo_path": "/etc"}})
	spec, _ := json.Marshal(map[string]any{"servers": []e2eServer{plain, allowed}})
	specFile := filepath.Join(t.TempDir(), "spec.json")
	write(t, specFile, string(spec))

	cmd := exec.Command(node, filepath.Join("testdata", "e2e", "client.mjs"), specFile)
	// The servers' PATH is rowkit mcp's, which the client passes on: the
	// symbol tool's call reaches gopls.
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(repoRoot(t), "node_modules"),
		"PATH="+strings.Join(append(symboltest.Bins(), os.Getenv("PATH")), string(filepath.ListSeparator)))
	cmd.Dir = "."
	var stderr strings.Builder
	cmd.Stderr = &stderr
	done := make(chan struct{})
	var out []byte
	go func() { out, err = cmd.Output(); close(done) }()
	pidc := make(chan int, 1)
	go func() { pidc <- waitPid(pidFile, 2*time.Minute) }()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("the e2e client did not finish; stderr:\n%s", stderr.String())
	}
	if err != nil {
		t.Fatalf("node client.mjs: %v\n%s", err, stderr.String())
	}
	var reports []e2eReport
	if err := json.Unmarshal(out, &reports); err != nil || len(reports) != 2 {
		t.Fatalf("client report %q: %v", out, err)
	}
	p, a := reports[0], reports[1]

	if p.ServerVersion.Name != "rowkit" || !strings.Contains(p.Instructions, "LINE:HASH") {
		t.Errorf("initialize: server %q, instructions %q", p.ServerVersion.Name, p.Instructions)
	}
	if !strings.HasPrefix(p.Stderr, "rowkit mcp: roots "+root) {
		t.Errorf("banner: %q", p.Stderr)
	}
	listed := map[string]bool{}
	for _, tool := range p.Tools {
		listed[tool.Name] = true
		if _, ok := calls[tool.Name]; !ok {
			t.Errorf("tool %s has no end-to-end call", tool.Name)
		}
		if len(tool.InputSchema) == 0 || tool.Annotations == nil {
			t.Errorf("%s: input schema or annotations missing", tool.Name)
		}
		if hasOut := len(tool.OutputSchema) > 0; hasOut != !modelText[tool.Name] {
			t.Errorf("%s: output schema %s on a default server; only the review tools have one", tool.Name, tool.OutputSchema)
		}
		if tool.Name == "run_validations" {
			t.Error("run_validations is listed without an allowlist")
		}
	}
	for _, tool := range p.Tools {
		if ro := tool.Annotations["readOnlyHint"] == true; ro != (tool.Name != "edit") {
			t.Errorf("%s: readOnlyHint %v", tool.Name, tool.Annotations["readOnlyHint"])
		}
	}
	if len(p.Tools) != 6 {
		t.Errorf("%d tools listed without an allowlist, want inspect_repository, inspect_file, read_file, search, edit, symbol", len(p.Tools))
	}
	if r := p.Results[7]; r.IsError || len(r.Content) != 1 || !regexp.MustCompile(`^"a.go":3:[0-9a-f]{4} func A\(\) \{`).MatchString(fmt.Sprint(r.Content[0]["text"])) {
		t.Errorf("symbol: %+v, want the definition row of A", r)
	}
	for i, c := range plain.Calls[:5] {
		r := p.Results[i]
		if r.Thrown != "" || r.IsError || (r.StructuredContent == nil) != modelText[c.Name] || len(r.Content) == 0 {
			t.Errorf("%s: %+v", c.Name, r)
		}
	}
	if r := p.Results[2]; len(r.Content) != 1 || r.Content[0]["text"] != "1:8ed3 alpha\n2:6391 BETA\n" {
		t.Errorf("read_file on a default server: %+v, want the verified rows alone", r.Content)
	}
	for i, want := range []string{"outside_workspace: ", "usage: "} {
		r := p.Results[5+i]
		text, _ := r.Content[0]["text"].(string)
		if r.Thrown != "" || !r.IsError || r.StructuredContent != nil || !strings.HasPrefix(text, want) || strings.Contains(text, "\n") {
			t.Errorf("failure %d: %+v, want isError with one line %s...", i, r, want)
		}
	}

	if got, _ := os.ReadFile(filepath.Join(root, "b.txt")); string(got) != "ALPHA\nBETA\n" {
		t.Errorf("after the edit, b.txt is %q", got)
	}
	if len(a.Results) != 6 || a.Results[0].IsError || a.Results[0].StructuredContent["ok"] != true {
		t.Fatalf("run_validations: %+v", a.Results)
	}
	for _, tool := range a.Tools {
		if len(tool.OutputSchema) == 0 {
			t.Errorf("%s: no output schema on a --structured server", tool.Name)
		}
	}
	for i, r := range a.Results[1:5] {
		if r.Thrown != "" || r.IsError || r.StructuredContent == nil || len(r.Content) == 0 {
			t.Errorf("--structured %s: %+v", allowed.Calls[1+i].Name, r)
		}
	}
	if e, _ := a.Results[5].StructuredContent["error"].(map[string]any); !a.Results[5].IsError || e["code"] != "outside_workspace" {
		t.Errorf("--structured failure: %+v, want a Failure with code outside_workspace", a.Results[5])
	}
	if a.Cancel == nil || a.Cancel.Thrown == "" {
		t.Errorf("the cancelled call: %+v", a.Cancel)
	}
	if a.After == nil || a.After.IsError || a.After.Thrown != "" {
		t.Errorf("the call after the cancel: %+v", a.After)
	}
	pid := <-pidc
	if pid == 0 {
		t.Fatal("the slow validation never started")
	}
	if !processGone(pid, 10*time.Second) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the cancelled validation's grandchild %d is still running", pid)
	}
}
