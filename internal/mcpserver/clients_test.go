package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/agent"
	"github.com/rowkit/rowkit/internal/agenttest"
	"github.com/rowkit/rowkit/internal/inspect"
	"github.com/rowkit/rowkit/internal/read"
	"github.com/rowkit/rowkit/internal/review"
	"github.com/rowkit/rowkit/internal/tokens"
	"github.com/rowkit/rowkit/internal/workspace"
)

// TestAgentClients is what a model receives from rowkit through the real
// agent clients: the Codex CLI and Claude Code (from package-lock.json),
// each run offline against a scripted model (internal/agenttest) with
// `rowkit mcp` registered as docs/mcp.md says and the shell names linked
// onto PATH. The scripted model calls every MCP tool and, through the
// client's shell, hread, hgrep and hpatch; it copies the rows of its
// edits from the reads as the client delivered them. The test asserts on
// what the client sent back to the model: exactly the text rowkit's own
// commands print for the same request (so every row is a literal LINE:HASH
// TEXT line and the tokens are the text rendering's), nothing cut by the
// client, failures as one line, the review tools' JSON within twice their
// Markdown, and the files changed on disk.
func TestAgentClients(t *testing.T) {
	bin := rowkitBin(t)
	src := filepath.Join(goroot(t), "src", "net", "http", "server.go")
	for _, c := range []agentClient{codexClient(), claudeClient()} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			testAgentClient(t, c, bin, src)
		})
	}
}

// agentClient is what differs between the two clients: the tool names,
// how tools are found, and how a run starts.
type agentClient struct {
	name string
	// mcp is a call of rowkit's MCP tool name; shell one of the shell.
	mcp   func(id, name string, args map[string]any) agenttest.Item
	shell func(id, cmd string) agenttest.Item
	// find is the first turn: loading rowkit's tools through the
	// client's tool search.
	find []agenttest.Item
	run  func(ctx context.Context, s *agenttest.Server, ws, linkDir string, server agenttest.MCPServer) (*agenttest.Run, error)
	// trimsErrors: the client drops the final newline of an error
	// result and of shell output (Claude Code).
	trimsErrors bool
}

func codexClient() agentClient {
	return agentClient{
		name: "codex",
		mcp: func(id, name string, args map[string]any) agenttest.Item {
			return agenttest.Call{ID: id, Name: name, Namespace: "mcp__rowkit", Args: args}
		},
		shell: func(id, cmd string) agenttest.Item {
			return agenttest.Call{ID: id, Name: "exec_command", Args: map[string]any{"cmd": cmd}}
		},
		find: func() []agenttest.Item {
			var items []agenttest.Item
			for _, q := range toolSearches {
				items = append(items, agenttest.Object{"type": "tool_search_call", "call_id": "find-" + strings.ReplaceAll(q.query, " ", "-"), "execution": "client",
					"status": "completed", "arguments": map[string]any{"query": q.query}})
			}
			return items
		}(),
		run: func(ctx context.Context, s *agenttest.Server, ws, linkDir string, server agenttest.MCPServer) (*agenttest.Run, error) {
			c := &agenttest.Codex{MCP: map[string]agenttest.MCPServer{"rowkit": server},
				HomeFiles: map[string]string{".profile": "PATH=" + linkDir + ":$PATH\n"}}
			return c.Run(ctx, s.URL, ws, "work on server.go")
		},
	}
}

func claudeClient() agentClient {
	// The tools that are not loaded from the first request (alwaysLoad).
	tools := []string{}
	for _, n := range []string{"inspect_repository", "run_validations"} {
		tools = append(tools, "mcp__rowkit__"+n)
	}
	return agentClient{
		name: "claude",
		mcp: func(id, name string, args map[string]any) agenttest.Item {
			return agenttest.Call{ID: id, Name: "mcp__rowkit__" + name, Args: args}
		},
		shell: func(id, cmd string) agenttest.Item {
			return agenttest.Call{ID: id, Name: "Bash", Args: map[string]any{"command": cmd, "description": "run " + id}}
		},
		find: func() []agenttest.Item {
			items := []agenttest.Item{agenttest.Call{ID: "load", Name: "ToolSearch", Args: map[string]any{"query": "select:" + strings.Join(tools, ",")}}}
			for _, q := range toolSearches {
				if alwaysLoad[q.tool] {
					continue // offered from the first request: nothing to find
				}
				items = append(items, agenttest.Call{ID: "find-" + strings.ReplaceAll(q.query, " ", "-"), Name: "ToolSearch", Args: map[string]any{"query": q.query}})
			}
			return items
		}(),
		run: func(ctx context.Context, s *agenttest.Server, ws, linkDir string, server agenttest.MCPServer) (*agenttest.Run, error) {
			c := &agenttest.Claude{MCP: map[string]agenttest.MCPServer{"rowkit": server},
				Env: []string{"PATH=" + linkDir + ":" + os.Getenv("PATH")}}
			return c.Run(ctx, s.URL, ws, "work on server.go")
		},
		trimsErrors: true,
	}
}

// toolSearches are searches a model might make for each tool; the first
// tool found must be rowkit's.
var toolSearches = []struct{ query, tool string }{
	{"read file lines", "read_file"},
	{"grep code", "search"},
	{"outline symbols", "inspect_file"},
	{"edit file", "edit"},
	{"git changes", "inspect_repository"},
	{"run tests", "run_validations"},
	{"go to definition", "symbol"},
	{"find references", "symbol"},
	{"find symbol", "symbol"},
}

func goroot(t testing.TB) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// rowsRE is a verified row as read_file and hread print it.
var rowsRE = regexp.MustCompile(`^[1-9][0-9]*:[0-9a-f]{4} `)

// rowOf finds line n among the delivered rows: its "N:HASH". It runs in a
// scripted step, on the model server's goroutine: it reports with Errorf.
func rowOf(t *testing.T, body string, n int) (string, bool) {
	prefix := fmt.Sprintf("%d:", n)
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix) && rowsRE.MatchString(l) {
			ref, _, _ := strings.Cut(l, " ")
			return ref, true
		}
	}
	t.Errorf("row %d is not among the rows the model got:\n%.300s", n, body)
	return "", false
}

// stuck is the turn of a scripted model that cannot go on.
var stuck = agenttest.Turn{Items: []agenttest.Item{agenttest.Message{Text: "stuck"}}}

// cutMarkers are what the clients put in place of an output they cut.
var cutMarkers = []string{"tokens truncated", "Warning: truncated output", "<persisted-output>", "Output too large", "exceeds maximum allowed tokens", " characters truncated] ..."}

func testAgentClient(t *testing.T, c agentClient, bin, src string) {
	ws := canon(t, t.TempDir())
	newRepo(t, ws)
	original, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, "server.go"), string(original))
	twin := canon(t, t.TempDir()) // the same files, for the CLI's answers
	write(t, filepath.Join(twin, "server.go"), string(original))
	linkDir := t.TempDir()
	// The real binary links its own path (in-process, it would be this
	// test binary's).
	if out, err := exec.Command(bin, "link", linkDir).CombinedOutput(); err != nil {
		t.Fatalf("rowkit link: %v\n%s", err, out)
	}
	cfg := allowConfig(t, map[string][]string{"ok": {"true"}})
	server := agenttest.MCPServer{Command: bin, Args: []string{"mcp", "--root", ws, "--config", cfg}}

	const limit = 300
	const pattern = `^func \(\w+ \*Server\) `
	const editLine, shellLine = 200, 10
	var editScript, shellScript string
	comment := func(line int) string { return fmt.Sprintf("// inserted before line %d by the scripted model\n", line) }
	s := agenttest.NewServer(
		agenttest.Reply(c.find...),
		agenttest.Reply(
			c.mcp("read", "read_file", map[string]any{"path": "server.go", "limit": limit}),
			c.mcp("outline", "inspect_file", map[string]any{"path": "server.go"}),
			c.mcp("search", "search", map[string]any{"pattern": pattern, "paths": []string{"server.go"}}),
			c.mcp("refused", "read_file", map[string]any{"path": "/etc/passwd"}),
			c.mcp("missing", "read_file", map[string]any{"path": "missing.go"}),
			c.mcp("repo", "inspect_repository", map[string]any{"repo_path": "."}),
			c.mcp("validate", "run_validations", map[string]any{"repo_path": ".", "validations": []string{"ok"}}),
			c.shell("hread", "hread server.go 1:40"),
			c.shell("hgrep", "hgrep '"+pattern+"' server.go"),
		),
		// The model reads on after the last row it got, since the
		// file's length says there is more (the view is the limit it
		// asked for: no continue note), and edits a row it copies from
		// the read, both as the client delivered them.
		func(r *agenttest.Request) agenttest.Turn {
			read, _ := r.Output("read")
			length := regexp.MustCompile(`\n\n\(([0-9]+) lines\)\n?$`).FindStringSubmatch(read.Body())
			ref, ok := rowOf(t, read.Body(), editLine)
			if length == nil || strings.Contains(read.Body(), "[read:continue]") {
				t.Errorf("the read the model got does not end with the file's length alone:\n%.300s", tail(read.Body(), 300))
			}
			last, lastOK := rowOf(t, read.Body(), limit)
			if length == nil || !ok || !lastOK || !strings.HasPrefix(last, fmt.Sprint(limit)+":") {
				return stuck
			}
			offset := limit + 1
			editScript = fmt.Sprintf("in server.go\nadd %s %q\n", ref, comment(editLine))
			return agenttest.Turn{Items: []agenttest.Item{
				c.mcp("continue", "read_file", map[string]any{"path": "server.go", "offset": offset, "limit": limit}),
				c.mcp("edit", "edit", map[string]any{"script": editScript}),
			}}
		},
		// The same edit again: its row is stale now. And an edit through
		// the shell, with a row copied from hread's output.
		func(r *agenttest.Request) agenttest.Turn {
			hread, _ := r.Output("hread")
			ref, ok := rowOf(t, hread.Body(), shellLine)
			if !ok {
				return stuck
			}
			shellScript = fmt.Sprintf("in server.go\nadd %s %q\n", ref, comment(shellLine))
			return agenttest.Turn{Items: []agenttest.Item{
				c.mcp("rejected", "edit", map[string]any{"script": editScript}),
				c.shell("hpatch", "hpatch <<'SCRIPT'\n"+shellScript+"SCRIPT"),
			}}
		},
		agenttest.Reply(agenttest.Message{Text: "finished"}),
	)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run, err := c.run(ctx, s, ws, linkDir, server)
	if err != nil {
		t.Fatal(err)
	}
	if run.Exit != 0 || !strings.Contains(string(run.Stdout), "finished") {
		t.Fatalf("%s: exit %d\nstdout %s\nstderr %s", c.name, run.Exit, run.Stdout, run.Stderr)
	}
	t.Logf("%s ran %v, %d model requests", c.name, run.Duration, len(s.Turns()))

	got := func(id string) agenttest.Output {
		t.Helper()
		o, ok := s.Output(id)
		if !ok {
			t.Fatalf("no output of %s reached the model", id)
		}
		for _, m := range cutMarkers {
			if strings.Contains(o.Text, m) {
				t.Errorf("%s: the client cut the output (%q):\n%.300s", id, m, o.Text)
			}
		}
		return o
	}
	// cliOut is what rowkit's own command prints: stdout, and with
	// stderr too for a failure an agent's shell would show.
	cliOut := func(dir string, withStderr bool, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		var out strings.Builder
		cmd.Stdout = &out
		if withStderr {
			cmd.Stderr = &out
		}
		cmd.Run()
		return out.String()
	}
	// same compares what the model got with want, the text rowkit's own
	// command prints, and records the token ratio of what the client
	// handed the model (its wrapper included) to that text.
	same := func(id string, o agenttest.Output, want string) {
		t.Helper()
		body := o.Body()
		if c.trimsErrors && (o.IsError || strings.HasPrefix(id, "h")) {
			want = strings.TrimRight(want, "\n")
		}
		if id == "search" {
			// search groups hgrep's rows under their file.
			if !strings.HasPrefix(body, "server.go\n") {
				t.Errorf("search: the model got no heading: %.100q", body)
			}
			body = ungroup(t, body)
		}
		if id == "search" || id == "hgrep" {
			body, want = sortedLines(body), sortedLines(want)
		}
		if body != want {
			t.Errorf("%s: the model got\n%.600s\nwant\n%.600s", id, body, want)
		}
		ratio := float64(tokens.Count(o.Text)) / float64(tokens.Count(want))
		t.Logf("%-9s %6d tokens of text, %6d as the model got it (%.3fx)", id, tokens.Count(want), tokens.Count(o.Text), ratio)
		if tokens.Count(want) >= 1000 && ratio > 1.10 {
			t.Errorf("%s: the model got %.3fx the tokens of the text", id, ratio)
		}
	}

	if c.name == "codex" {
		// The namespace Codex lists before any tool search: the start
		// of the server instructions, which must name the tools.
		dev := string(s.Turns()[0].Body)
		if !strings.Contains(dev, `- mcp__rowkit: rowkit reads, searches, outlines and edits the files of this workspace (read_file, search, inspect_file, edit), finds definitions, references and symbols (symbol) and lists what changed in a git repository (inspect_repository).`) {
			i := strings.Index(dev, "- mcp__rowkit:")
			t.Errorf("Codex's deferred namespace line does not name rowkit's tools: %.400s", dev[max(i, 0):])
		}
	}
	if c.name == "claude" {
		// The tools of every task are offered from the first request,
		// the others behind ToolSearch.
		first := s.Turns()[0]
		for _, n := range []string{"read_file", "search", "inspect_file", "edit", "symbol", "inspect_repository"} {
			if _, ok := first.Tool("mcp__rowkit__" + n); ok != alwaysLoad[n] {
				t.Errorf("Claude Code's first request offers %s: %v, want %v", n, ok, alwaysLoad[n])
			}
		}
	}
	for _, q := range toolSearches {
		if c.name == "claude" && alwaysLoad[q.tool] {
			continue
		}
		if first := firstFound(t, got("find-"+strings.ReplaceAll(q.query, " ", "-"))); first != q.tool && first != "mcp__rowkit__"+q.tool {
			t.Errorf("the first tool a search for %q found is %q, not rowkit's %s", q.query, first, q.tool)
		}
	}

	// Reads, search, outline: exactly the CLI's text.
	viewed := got("read")
	// read_file's text is the CLI's view in brief (read.Brief): its
	// rows, then only what the model cannot know.
	brief := func(args ...string) string {
		t.Helper()
		var res read.Result
		if err := json.Unmarshal([]byte(cliOut(twin, false, append(args, "--format", "json")...)), &res); err != nil {
			t.Fatal(err)
		}
		return string(read.Brief(&res, true))
	}
	same("read", viewed, brief("read", "server.go", "--limit", fmt.Sprint(limit)))
	for _, l := range strings.Split(strings.TrimSuffix(viewed.Body(), "\n"), "\n")[:limit] {
		if !rowsRE.MatchString(l) {
			t.Fatalf("read: %q is not a verified row", l)
		}
	}
	cont := got("continue")
	same("continue", cont, brief("read", "server.go", "--offset", fmt.Sprint(limit+1), "--limit", fmt.Sprint(limit)))
	same("search", got("search"), cliOut(twin, false, "grep", pattern, "server.go"))
	wsTwin, err := workspace.Open(twin)
	if err != nil {
		t.Fatal(err)
	}
	res, err := inspect.Inspect(context.Background(), wsTwin, "server.go")
	if err != nil {
		t.Fatal(err)
	}
	same("outline", got("outline"), inspect.OutlineText(res))

	// Failures: one line each.
	refused := got("refused")
	if b := refused.Body(); !regexp.MustCompile(`^\[read:outside-allowed-roots\] [^\n]+$`).MatchString(strings.TrimSuffix(b, "\n")) {
		t.Errorf("refused: the model got %q, want one line [read:outside-allowed-roots] ...", b)
	}
	same("missing", got("missing"), cliOut(twin, false, "read", "missing.go"))
	if c.name == "claude" && (!refused.IsError || !got("missing").IsError) {
		t.Errorf("Claude Code did not mark the failures is_error")
	}

	// The review tools: their JSON, within twice their Markdown.
	for _, id := range []string{"repo", "validate"} {
		o := got(id)
		var rep review.Report
		if err := json.Unmarshal([]byte(o.Body()), &rep); err != nil {
			t.Errorf("%s: the model got no report: %v\n%.300s", id, err, o.Body())
			continue
		}
		md, js := tokens.Count(string(rep.Markdown())), tokens.Count(o.Text)
		t.Logf("%-9s %6d tokens of Markdown, %6d as the model got it (%.3fx)", id, md, js, float64(js)/float64(md))
		if js > 2*md {
			t.Errorf("%s: the model got %d tokens, over twice the Markdown's %d", id, js, md)
		}
	}

	// Shell names: what the commands print.
	same("hread", got("hread"), cliOut(twin, false, "hread", "server.go", "1:40"))
	same("hgrep", got("hgrep"), cliOut(twin, false, "grep", pattern, "server.go"))

	// Edits: replayed with hpatch on the twin, the same report and the
	// same file.
	replay := func(script string) string {
		t.Helper()
		f := filepath.Join(t.TempDir(), "script")
		write(t, f, script)
		return cliOut(twin, true, "patch", "-f", f)
	}
	same("edit", got("edit"), replay(editScript))
	rejected := got("rejected")
	same("rejected", rejected, replay(editScript))
	if !strings.HasPrefix(rejected.Body(), `add: command 2, path "server.go", reason row-stale: `) {
		t.Errorf("rejected: %q", rejected.Body())
	}
	same("hpatch", got("hpatch"), replay(shellScript))
	final, _ := os.ReadFile(filepath.Join(ws, "server.go"))
	want, _ := os.ReadFile(filepath.Join(twin, "server.go"))
	lines := strings.Split(string(final), "\n")
	if string(final) != string(want) || lines[shellLine-1]+"\n" != comment(shellLine) || lines[editLine]+"\n" != comment(editLine) {
		t.Errorf("server.go after the edits: lines %d and %d are %q, %q; equal to the replay: %v", shellLine, editLine+1, lines[shellLine-1], lines[editLine], string(final) == string(want))
	}
}

// firstFound is the first tool a tool search found: Codex's
// tool_search_output lists namespaces and their tools, Claude Code's
// ToolSearch result is tool_reference blocks.
func firstFound(t *testing.T, o agenttest.Output) string {
	var item struct {
		Tools []struct {
			Name  string `json:"name"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"tools"`
		Content []struct {
			ToolName string `json:"tool_name"`
		} `json:"content"`
	}
	if err := json.Unmarshal(o.Raw, &item); err != nil {
		t.Fatalf("tool search output %s: %v", o.Raw, err)
	}
	switch {
	case len(item.Content) > 0:
		return item.Content[0].ToolName
	case len(item.Tools) > 0 && len(item.Tools[0].Tools) > 0 && item.Tools[0].Name == "mcp__rowkit":
		return item.Tools[0].Tools[0].Name
	}
	return string(o.Raw)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// TestReadmeRegistration: the registration snippets of docs/mcp.md, and
// the Codex one the README's set-up repeats, are the ones
// TestAgentClients runs the clients with (agenttest writes both files),
// paths aside.
func TestReadmeRegistration(t *testing.T) {
	servers := map[string]agenttest.MCPServer{"rowkit": {Command: "/home/me/bin/rowkit", Args: []string{"mcp", "--root", "/home/me/src/project"}}}
	claude := "```json\n" + string(agenttest.MCPConfig(servers)) + "\n```\n"
	codex := "```toml\n" + strings.TrimSuffix(agenttest.CodexMCPConfig(servers), "\n") + "```\n"
	for f, snippets := range map[string][]string{"docs/mcp.md": {claude, codex}, "README.md": {codex}} {
		b, err := os.ReadFile(filepath.Join(repoRoot(t), f))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range snippets {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s has no registration snippet\n%s", f, want)
			}
		}
	}
}

// TestAgentClientsReadOn is issue 18's "every output reaches the model
// whole", with the real clients: the scripted model reads two files
// larger than any client's bound, the Python standard library's
// argparse.py and a generated 5,000-line file, through MCP (read_file)
// and through the client's shell (hread), and follows each continuation
// it got, as the client delivered it, until the file ends. Every output
// must reach the model whole (no truncation marker, no saved-file
// preview), be exactly what rowkit prints for the same request under the
// same bound, end at a whole row with its continuation, at most 1.10x
// the tokens of rowkit's text with the client's wrapper; the views
// together must be the file's rows, each once. Codex runs twice: with a
// model it has metadata for, and with one it has not (gpt-4.1), whose
// bounds are a quarter.
func TestAgentClientsReadOn(t *testing.T) {
	bin := rowkitBin(t)
	ws := canon(t, t.TempDir())
	out, err := exec.Command("python3", "-c", "import argparse; print(argparse.__file__)").Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	argparse, err := os.ReadFile(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, "argparse.py"), string(argparse))
	var big strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&big, "\tcase %d: return f%d(x)\n", i, i%97)
	}
	write(t, filepath.Join(ws, "big.go"), big.String())
	linkDir := t.TempDir()
	if out, err := exec.Command(bin, "link", linkDir).CombinedOutput(); err != nil {
		t.Fatalf("rowkit link: %v\n%s", err, out)
	}
	clients := []struct {
		agentClient
		model string // Codex's model; "" for the default
	}{
		{codexClient(), "gpt-5.5-codex"},
		{codexModelClient("gpt-4.1"), "gpt-4.1"},
		{claudeClient(), ""},
	}
	for _, c := range clients {
		name := c.name
		if c.model != "" && c.model != "gpt-5.5-codex" {
			name += "-" + c.model
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testReadOn(t, c.agentClient, c.model, bin, ws, linkDir, map[string][]byte{"argparse.py": argparse, "big.go": []byte(big.String())})
		})
	}
}

// codexModelClient is Codex with a model it has no metadata for: no tool
// search, the MCP tools offered from the first request.
func codexModelClient(model string) agentClient {
	c := codexClient()
	c.find = nil
	c.run = func(ctx context.Context, s *agenttest.Server, ws, linkDir string, server agenttest.MCPServer) (*agenttest.Run, error) {
		cx := &agenttest.Codex{Model: model, MCP: map[string]agenttest.MCPServer{"rowkit": server},
			HomeFiles: map[string]string{".profile": "PATH=" + linkDir + ":$PATH\n"}}
		return cx.Run(ctx, s.URL, ws, "read the files")
	}
	return c
}

// readChain is one file read on and on through one channel.
type readChain struct {
	id, file string
	shell    bool
	calls    []string // the call ids, in order
	done     bool
}

var (
	readContinueRE = regexp.MustCompile(`\[read:continue\] [^\n]* read offset ([0-9]+)\n?$`)
	hreadContinue  = "; continue with: "
)

func testReadOn(t *testing.T, c agentClient, model, bin, ws, linkDir string, files map[string][]byte) {
	var chains []*readChain
	for _, f := range []string{"argparse.py", "big.go"} {
		chains = append(chains, &readChain{id: "mcp-" + f, file: f}, &readChain{id: "sh-" + f, file: f, shell: true})
	}
	// call is a chain's next call: the first, or the continuation its
	// last output names; ok false when there is none.
	call := func(r *agenttest.Request, ch *readChain) (agenttest.Item, bool) {
		id := fmt.Sprintf("%s-%d", ch.id, len(ch.calls)+1)
		args := map[string]any{"path": ch.file}
		cmd := "hread " + ch.file
		if len(ch.calls) > 0 {
			o, ok := r.Output(ch.calls[len(ch.calls)-1])
			if !ok {
				t.Errorf("%s: no output of %s", ch.id, ch.calls[len(ch.calls)-1])
				return nil, false
			}
			body := strings.TrimRight(o.Body(), "\n")
			if ch.shell {
				var ok bool
				if cmd, ok = continuation(body); !ok {
					return nil, false
				}
			} else {
				m := readContinueRE.FindStringSubmatch(body)
				if m == nil {
					return nil, false
				}
				var offset int
				fmt.Sscan(m[1], &offset)
				args["offset"] = offset
			}
		}
		ch.calls = append(ch.calls, id)
		if ch.shell {
			return c.shell(id, cmd), true
		}
		return c.mcp(id, "read_file", args), true
	}
	step := func(r *agenttest.Request) agenttest.Turn {
		var items []agenttest.Item
		for _, ch := range chains {
			if ch.done {
				continue
			}
			if it, ok := call(r, ch); ok && len(ch.calls) <= 40 {
				items = append(items, it)
			} else {
				ch.done = true
			}
		}
		if len(items) == 0 {
			return agenttest.Turn{Items: []agenttest.Item{agenttest.Message{Text: "finished"}}}
		}
		return agenttest.Turn{Items: items}
	}
	var steps []agenttest.Step
	if len(c.find) > 0 {
		steps = append(steps, agenttest.Reply(c.find[0]))
	}
	s := agenttest.NewServer(steps...)
	s.Final = step
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run, err := c.run(ctx, s, ws, linkDir, agenttest.MCPServer{Command: bin, Args: []string{"mcp", "--root", ws}})
	if err != nil {
		t.Fatal(err)
	}
	if run.Exit != 0 || !strings.Contains(string(run.Stdout), "finished") {
		t.Fatalf("%s: exit %d\nstdout %s\nstderr %.2000s", c.name, run.Exit, run.Stdout, run.Stderr)
	}
	t.Logf("%s %s ran %v, %d model requests", c.name, model, run.Duration, len(s.Turns()))

	// What rowkit prints for the same requests: the server in-process,
	// told the same client and model; the shell names run with the
	// variables the client's shell sets.
	clientName, version := codexName, "0.169.0"
	// Codex's shell gives hread the bound of the session's model, which
	// hread finds in Codex's session file (agent.CodexModel).
	shellEnv := fmt.Sprintf("ROWKIT_MAX_OUTPUT=%d", agent.CodexFallbackShellBytes)
	if agent.CodexKnows(model) {
		shellEnv = fmt.Sprintf("ROWKIT_MAX_OUTPUT=%d", agent.CodexShellBytes)
	}
	if c.name == "claude" {
		clientName, version, shellEnv = claudeName, "2.1.328", "CLAUDECODE=1"
	}
	cs := connectAs(t, newTextServer(t, Options{Roots: []string{ws}}), clientName, version)
	// want is what rowkit prints for call number n of ch: stdout, and
	// stderr for the shell.
	want := func(ch *readChain, n int) (string, string) {
		if !ch.shell {
			offset := 1
			if n > 0 {
				prev, _ := s.Output(ch.calls[n-1])
				m := readContinueRE.FindStringSubmatch(strings.TrimRight(prev.Body(), "\n"))
				fmt.Sscan(m[1], &offset)
			}
			return text(callAs(t, cs, boundClient{name: clientName, version: version, model: model}, "read_file", map[string]any{"path": ch.file, "offset": offset})), ""
		}
		argv := []string{ch.file}
		if n > 0 {
			prev, _ := s.Output(ch.calls[n-1])
			next, _ := continuation(prev.Body())
			argv = strings.Fields(next)[1:]
		}
		cmd := exec.Command(filepath.Join(linkDir, "hread"), argv...)
		cmd.Dir = ws
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), shellEnv}
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.Run()
		return stdout.String(), stderr.String()
	}
	for _, ch := range chains {
		var rowsRead strings.Builder
		for i, id := range ch.calls {
			o, ok := s.Output(id)
			if !ok {
				t.Fatalf("%s: no output of %s reached the model", ch.id, id)
			}
			for _, m := range cutMarkers {
				if strings.Contains(o.Text, m) {
					t.Errorf("%s: the client cut the output (%q):\n%.300s", id, m, o.Text)
				}
			}
			stdout, stderr := want(ch, i)
			body, w := o.Body(), stdout+stderr
			switch {
			case c.trimsErrors && ch.shell:
				// Claude Code drops the final newline, and says the exit
				// status of one that failed.
				w = strings.TrimRight(w, "\n")
				body = strings.TrimPrefix(body, "Exit code 1\n")
			}
			// Codex reads stdout and stderr from two pipes, but the
			// diagnostic waits until it has read the rows: it comes last.
			if body != w {
				t.Fatalf("%s: the model got\n%s\nwant\n%s\nraw %.400s", id, tail(body, 400), tail(w, 400), o.Text)
			}
			ratio := float64(tokens.Count(o.Text)) / float64(tokens.Count(w))
			if tokens.Count(w) >= 1000 && ratio > 1.10 {
				t.Errorf("%s: the model got %.3fx the tokens of the text", id, ratio)
			}
			// The rows, up to the blank line before read_file's notes
			// (or the file's length), or the shell's diagnostic.
			rowsPart := body
			if j := strings.Index(body, "\n\n"); !ch.shell && j >= 0 {
				rowsPart = body[:j+1]
			}
			if ch.shell {
				rowsPart = stdout
			}
			rowsRead.WriteString(strings.TrimRight(rowsPart, "\n") + "\n")
			if i == 0 {
				t.Logf("%s: %d bytes, %d tokens as the model got them (%.3fx)", id, len(o.Text), tokens.Count(o.Text), ratio)
			}
		}
		var all strings.Builder
		for i, l := range strings.Split(strings.TrimSuffix(string(files[ch.file]), "\n"), "\n") {
			all.Write(rowsAppend(i+1, l))
		}
		if rowsRead.String() != all.String() {
			t.Errorf("%s: %d calls read %d bytes of rows; the file has %d", ch.id, len(ch.calls), rowsRead.Len(), all.Len())
		}
		t.Logf("%s: %d calls", ch.id, len(ch.calls))
	}
}

// rowsAppend is line n as a verified row, computed here.
func rowsAppend(n int, text string) []byte {
	h := sha256.Sum256([]byte(text))
	return fmt.Appendf(nil, "%d:%s %s\n", n, hex.EncodeToString(h[:2]), text)
}

// continuation is the command a shell diagnostic in body names to read on.
func continuation(body string) (string, bool) {
	i := strings.Index(body, hreadContinue)
	if i < 0 {
		return "", false
	}
	next, _, _ := strings.Cut(body[i+len(hreadContinue):], "\n")
	return next, true
}
