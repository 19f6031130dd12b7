package mcpserver

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/agent"
	"github.com/rowkit/rowkit/internal/agenttest"
	"github.com/rowkit/rowkit/internal/symbol/symboltest"
	"github.com/rowkit/rowkit/internal/tokens"
)

// TestAgentClientsSymbol is what a model receives of the symbol tool and
// of hsymbol through the real clients: the scripted model, in Codex and in
// Claude Code, loads the symbol tool with the client's tool search, asks
// for a definition, references and a symbol by name over MCP, and runs
// hsymbol for the same in the client's shell (the shell names linked on
// PATH). Every answer the client hands back must be exactly what hsymbol
// prints for the same question, nothing cut, within 1.10x its tokens with
// the client's wrapper.
func TestAgentClientsSymbol(t *testing.T) {
	bin := rowkitBin(t)
	for _, c := range []agentClient{codexClient(), claudeClient()} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			testSymbolClient(t, c, bin, false)
		})
	}
}

// TestCodexShellHsymbol runs hsymbol in Codex's own exec_command shell.
// After the router's shell (rowkit shell, being rewritten to run real bash
// with the shell names linked) lands, point this test at the router: the
// same script, with the calls routed through `rowkit router` as the
// TestCodexRouter* tests of cmd/rowkit run Codex.
func TestCodexShellHsymbol(t *testing.T) {
	testSymbolClient(t, codexClient(), rowkitBin(t), true)
}

func testSymbolClient(t *testing.T, c agentClient, bin string, shellOnly bool) {
	env := symboltest.Env(t)
	ws := canon(t, t.TempDir())
	twin := canon(t, t.TempDir())
	for _, dir := range []string{ws, twin} {
		symboltest.Copy(t, filepath.Join(symboltest.Repo(), "internal", "symbol", "testdata", "go"), dir)
		// Packages that call geo.Sum, for an answer of a few thousand
		// tokens.
		for i := range 120 {
			write(t, filepath.Join(dir, "gen", fmt.Sprintf("p%03d", i), "p.go"), fmt.Sprintf(
				"package p%03d\n\nimport \"example.com/fixture/geo\"\n\n// Area%03d is the area of %d squares.\nfunc Area%03d() float64 { return geo.Sum([]geo.Square{{Side: %d}}) }\n", i, i, i, i, i))
		}
	}
	linkDir := t.TempDir()
	if out, err := exec.Command(bin, "link", linkDir).CombinedOutput(); err != nil {
		t.Fatalf("rowkit link: %v\n%s", err, out)
	}
	brokers, err := os.MkdirTemp("", "rkb")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(brokers, 0o700)
	defer func() {
		for _, l := range globLocks(brokers) {
			if pid, err := strconv.Atoi(strings.TrimSpace(l)); err == nil {
				syscall.Kill(pid, syscall.SIGTERM)
			}
		}
		os.RemoveAll(brokers)
	}()
	path := linkDir + ":" + env["PATH"]
	vars := map[string]string{"PATH": path, "GOCACHE": env["GOCACHE"], "GOMODCACHE": env["GOMODCACHE"], "GOPATH": env["GOPATH"], "ROWKIT_BROKER_DIR": brokers}
	server := agenttest.MCPServer{Command: bin, Args: []string{"mcp", "--root", ws}, Env: vars}

	// The questions: a definition (its span and row), references of an
	// interface method, a symbol by name.
	def := map[string]any{"op": "def", "path": "cmd/geo/main.go", "row": "10:" + rowHash(t, twin, "cmd/geo/main.go", 10), "symbol": "Total"}
	refs := map[string]any{"op": "refs", "path": "geo/shape.go", "row": "12:" + rowHash(t, twin, "geo/shape.go", 12), "symbol": "Area"}
	find := map[string]any{"op": "find", "query": "Sum"}
	many := map[string]any{"op": "refs", "path": "geo/shape.go", "row": "35:" + rowHash(t, twin, "geo/shape.go", 35), "symbol": "Sum"}
	hsymbol := func(a map[string]any) string {
		if a["op"] == "find" {
			return fmt.Sprintf("hsymbol find %s", a["query"])
		}
		return fmt.Sprintf("hsymbol %s %s %s %s", a["op"], a["path"], a["row"], a["symbol"])
	}
	shell := c.shell
	if c.name == "codex" {
		// A first call starts the broker and gopls: on a busy machine
		// that can outlast Codex's default yield of 10 s.
		shell = func(id, cmd string) agenttest.Item {
			return agenttest.Call{ID: id, Name: "exec_command", Args: map[string]any{"cmd": cmd, "yield_time_ms": 30000}}
		}
	}
	var first []agenttest.Item
	var calls []agenttest.Item
	if !shellOnly {
		if c.name == "codex" {
			first = append(first, agenttest.Object{"type": "tool_search_call", "call_id": "load", "execution": "client",
				"status": "completed", "arguments": map[string]any{"query": "go to definition"}})
		} else {
			first = append(first, agenttest.Call{ID: "load", Name: "ToolSearch", Args: map[string]any{"query": "select:mcp__rowkit__symbol"}})
		}
		calls = append(calls, c.mcp("def", "symbol", def), c.mcp("refs", "symbol", refs), c.mcp("find", "symbol", find), c.mcp("many", "symbol", many))
	}
	calls = append(calls, shell("hdef", hsymbol(def)), shell("hrefs", hsymbol(refs)), shell("hfind", hsymbol(find)), shell("hmany", hsymbol(many)))
	var steps []agenttest.Step
	if len(first) > 0 {
		steps = append(steps, agenttest.Reply(first...))
	}
	steps = append(steps, agenttest.Reply(calls...), agenttest.Reply(agenttest.Message{Text: "finished"}))
	s := agenttest.NewServer(steps...)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var run *agenttest.Run
	switch c.name {
	case "codex":
		profile := ""
		for k, v := range vars {
			profile += "export " + k + "=" + v + "\n"
		}
		cx := &agenttest.Codex{MCP: map[string]agenttest.MCPServer{"rowkit": server}, HomeFiles: map[string]string{".profile": profile}}
		if shellOnly {
			cx.MCP = nil
		}
		run, err = cx.Run(ctx, s.URL, ws, "navigate the code")
	default:
		var e []string
		for k, v := range vars {
			e = append(e, k+"="+v)
		}
		run, err = (&agenttest.Claude{MCP: map[string]agenttest.MCPServer{"rowkit": server}, Env: e}).Run(ctx, s.URL, ws, "navigate the code")
	}
	if err != nil {
		t.Fatal(err)
	}
	if run.Exit != 0 || !strings.Contains(string(run.Stdout), "finished") {
		t.Fatalf("%s: exit %d\nstdout %s\nstderr %s", c.name, run.Exit, run.Stdout, run.Stderr)
	}
	// What hsymbol prints for the same question, in the twin workspace,
	// with the servers found as the client's shell finds them.
	// In a client's shell, hsymbol is bounded by what that shell shows
	// (Codex: 40,000 bytes for its default model, as hsymbol finds it in
	// Codex's session file), and the client shows stdout and stderr
	// together, the diagnostic last (it waits until Codex has read the
	// rows from their pipe).
	cli := func(a map[string]any, shell bool) []string {
		t.Helper()
		args := strings.Fields(strings.TrimPrefix(hsymbol(a), "hsymbol "))
		cmd := exec.Command(filepath.Join(linkDir, "hsymbol"), args...)
		cmd.Dir = twin
		cmd.Env = []string{"PATH=" + path, "HOME=" + os.Getenv("HOME"), "GOCACHE=" + env["GOCACHE"], "GOMODCACHE=" + env["GOMODCACHE"], "GOPATH=" + env["GOPATH"], "ROWKIT_BROKER_DIR=" + brokers}
		if shell && c.name == "codex" {
			cmd.Env = append(cmd.Env, fmt.Sprintf("ROWKIT_MAX_OUTPUT=%d", agent.CodexShellBytes))
		}
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.Run()
		if !shell || stderr.Len() == 0 {
			return []string{stdout.String()}
		}
		return []string{stdout.String() + stderr.String()}
	}
	check := func(id string, a map[string]any, minRows int) {
		t.Helper()
		o, ok := s.Output(id)
		if !ok {
			t.Fatalf("no output of %s reached the model", id)
		}
		for _, m := range cutMarkers {
			if strings.Contains(o.Text, m) {
				t.Errorf("%s: the client cut the output (%q)", id, m)
			}
		}
		wants := cli(a, strings.HasPrefix(id, "h"))
		want := wants[0]
		body := o.Body()
		found := false
		for _, w := range wants {
			if c.trimsErrors && strings.HasPrefix(id, "h") {
				w = strings.TrimRight(w, "\n")
			}
			found = found || body == w
		}
		if !found {
			t.Errorf("%s: the model got\n%s\nwant\n%s", id, body, want)
		}
		if len(wants) > 1 {
			// Cut by the shell's bound, and saying so.
			minRows = min(minRows, 50)
		}
		if n := strings.Count(want, "\n\""); n+1 < minRows {
			t.Errorf("%s: %d rows, want at least %d:\n%s", id, n+1, minRows, want)
		}
		ratio := float64(tokens.Count(o.Text)) / float64(tokens.Count(want))
		t.Logf("%-5s %5d tokens of text, %5d as the model got it (%.3fx)", id, tokens.Count(want), tokens.Count(o.Text), ratio)
		// A small answer's ratio is the client's fixed wrapper (Codex's
		// shell: about 35 tokens of chunk id, wall time and exit code).
		if ratio > 1.10 && tokens.Count(want) >= 1000 {
			t.Errorf("%s: the model got %.3fx the tokens of the text", id, ratio)
		}
	}
	if !shellOnly {
		if first := firstFound(t, mustOutput(t, s, "load")); first != "symbol" && first != "mcp__rowkit__symbol" {
			t.Errorf("the tool search found %q first, not rowkit's symbol", first)
		}
		check("def", def, 2)
		check("refs", refs, 4)
		check("find", find, 1)
		check("many", many, 122)
	}
	check("hdef", def, 2)
	check("hrefs", refs, 4)
	check("hfind", find, 1)
	check("hmany", many, 122)
}

func mustOutput(t *testing.T, s *agenttest.Server, id string) agenttest.Output {
	t.Helper()
	o, ok := s.Output(id)
	if !ok {
		t.Fatalf("no output of %s reached the model", id)
	}
	return o
}

// rowHash is the hash of line n of a file, as hread prints it.
func rowHash(t *testing.T, dir, file string, n int) string {
	t.Helper()
	out, err := exec.Command(rowkitBin(t), "hread", filepath.Join(dir, file), fmt.Sprintf("%d:%d", n, n)).Output()
	if err != nil {
		t.Fatal(err)
	}
	_, h, _ := strings.Cut(strings.Fields(string(out))[0], ":")
	return h
}

// globLocks is the contents of the broker lock files in dir: their pids.
func globLocks(dir string) []string {
	locks, _ := filepath.Glob(filepath.Join(dir, "*.lock"))
	var out []string
	for _, l := range locks {
		b, _ := os.ReadFile(l)
		out = append(out, string(b))
	}
	return out
}
