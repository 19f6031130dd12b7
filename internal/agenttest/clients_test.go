package agenttest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rowkit/rowkit/internal/agent"
)

// The tests below drive the real clients (installed by `npm ci` from the
// module's package-lock.json) against a Server, with this test binary as
// their MCP server (TestMain: the echo tool returns outputs of exact
// sizes). They check the harness end to end and pin what each client
// hands its model: the wrappers, and the exact sizes above which it cuts
// a tool's output. rowkit's per-client bounds depend on these figures;
// when a client is upgraded, this test says what changed.

// echoServers registers this test binary as the MCP server "echo".
func echoServers(t *testing.T) map[string]MCPServer {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return map[string]MCPServer{"echo": {Command: exe, Env: map[string]string{"AGENTTEST_ECHO": "1"}}}
}

// bigFile writes echoText of n bytes to a file for the shell calls.
func bigFile(t *testing.T, n int, unit string) string {
	p := filepath.Join(t.TempDir(), "big.txt")
	if err := os.WriteFile(p, []byte(echoText(n, unit)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// carrier is an exec_command call as rowkit router's carriers make it
// (/bin/sh, no login shell, a 30 s yield, max_output_tokens), printing n
// bytes of file.
func carrier(id string, maxTokens, n int, file string) Call {
	return Call{ID: id, Name: "exec_command", Args: map[string]any{"cmd": fmt.Sprintf("head -c %d %s", n, file),
		"shell": "/bin/sh", "login": false, "yield_time_ms": 30000, "max_output_tokens": maxTokens}}
}

func output(t *testing.T, s *Server, id string) Output {
	t.Helper()
	o, ok := s.Output(id)
	if !ok {
		t.Fatalf("no output of call %s reached the model", id)
	}
	return o
}

// whole checks that the model got text exactly, and cut that it did not.
func whole(t *testing.T, what string, o Output, text string) {
	t.Helper()
	if o.Body() != text {
		t.Errorf("%s: the model got %d bytes, want the %d bytes whole; head %q", what, len(o.Body()), len(text), head(o.Body(), 200))
	}
}

func cut(t *testing.T, what string, o Output, marker string) {
	t.Helper()
	if !strings.Contains(o.Body(), marker) {
		t.Errorf("%s: the model got %d bytes without %q; head %q", what, len(o.Body()), marker, head(o.Body(), 200))
	}
}

func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// sessionSnapshot is a command that copies, as it runs, Codex's session
// files into the workspace's snap directory and prints its thread ID: what
// a command in Codex's shell can know of the session (agent.CodexModel).
const sessionSnapshot = `mkdir -p snap && cp -r "$CODEX_HOME/sessions" snap/ && echo "$CODEX_THREAD_ID"`

// codexModelSeen checks that agent.CodexModel, given what a command saw of
// Codex's session when it ran (sessionSnapshot's output and copy), finds
// the session's model: Codex recorded it before it ran the call.
func codexModelSeen(t *testing.T, dir string, o Output, model string) {
	t.Helper()
	env := map[string]string{"CODEX_HOME": filepath.Join(dir, "snap"), "CODEX_THREAD_ID": strings.TrimSpace(o.Body())}
	got, ok := agent.CodexModel(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if !ok || got != model {
		t.Errorf("the session file as a command saw it (thread %q) names model %q (%v), want %q", env["CODEX_THREAD_ID"], got, ok, model)
	}
}

func TestCodex(t *testing.T) {
	file := bigFile(t, 60000, "")
	echo := func(id string, args map[string]any) Call {
		return Call{ID: id, Name: "echo", Namespace: "mcp__echo", Args: args}
	}
	s := NewServer(
		Reply(Object{"type": "tool_search_call", "call_id": "search", "execution": "client", "status": "completed",
			"arguments": map[string]any{"query": "text of an exact size"}}),
		// An HTTP error: Codex retries the same request.
		func(*Request) Turn {
			return Turn{Status: 500, ErrorBody: `{"error":{"message":"scripted","type":"server_error"}}`}
		},
		Reply(
			Reasoning{Summary: "measuring", EncryptedContent: "ENC1"},
			CustomCall{ID: "patch", Name: "apply_patch", Input: "*** Begin Patch\n*** Add File: added.txt\n+added by apply_patch\n*** End Patch\n"},
			echo("mcp-whole", map[string]any{"bytes": CodexResultBytes}),
			echo("mcp-cut", map[string]any{"bytes": CodexResultBytes + 1}),
			echo("mcp-bytes", map[string]any{"bytes": CodexResultBytes + 1, "unit": "é"}),
			echo("mcp-error", map[string]any{"bytes": 300, "is_error": true}),
			echo("mcp-structured", map[string]any{"bytes": 300, "structured": true}),
			echo("mcp-client", map[string]any{"client": true}),
			Call{ID: "exec-whole", Name: "exec_command", Args: map[string]any{"cmd": fmt.Sprintf("head -c %d %s", CodexExecBytes, file)}},
			Call{ID: "exec-cut", Name: "exec_command", Args: map[string]any{"cmd": fmt.Sprintf("head -c %d %s", CodexExecBytes+1, file)}},
			Call{ID: "exec-fail", Name: "exec_command", Args: map[string]any{"cmd": fmt.Sprintf("head -c %d %s; exit 1", CodexExecBytes, file)}},
			Call{ID: "exec-env", Name: "exec_command", Args: map[string]any{"cmd": "env | grep ^CODEX_ | cut -d= -f1 | sort"}},
			Call{ID: "exec-session", Name: "exec_command", Args: map[string]any{"cmd": sessionSnapshot}},
			carrier("carrier-2500-whole", 2500, 4*2500, file), carrier("carrier-2500-cut", 2500, 4*2500+1, file),
			carrier("carrier-20000-whole", 20000, CodexExecBytes, file), carrier("carrier-20000-cut", 20000, CodexExecBytes+1, file),
		),
		Reply(Message{Text: "finished"}),
	)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	run, err := (&Codex{MCP: echoServers(t)}).Run(ctx, s.URL, dir, "measure")
	if err != nil {
		t.Fatal(err)
	}
	if run.Exit != 0 || !strings.Contains(string(run.Stdout), "finished") {
		t.Fatalf("codex exec: exit %d\nstdout %s\nstderr %s", run.Exit, run.Stdout, run.Stderr)
	}
	turns := s.Turns()
	if len(turns) != 4 {
		t.Fatalf("%d model requests, want 4", len(turns))
	}
	if string(turns[1].Body) != string(turns[2].Body) {
		t.Error("the request after an HTTP 500 is not the same request again")
	}
	turns = append(turns[:1], turns[2:]...)
	first := turns[0]
	if ua := first.Header.Get("User-Agent"); !strings.HasPrefix(ua, "codex_exec/0.169.0 ") {
		t.Errorf("User-Agent %q", ua)
	}
	if first.Input() != "measure" || !strings.Contains(string(first.Body), `"model":"gpt-5.5-codex"`) {
		t.Errorf("the first request: input %q, body %.300s", first.Input(), first.Body)
	}
	for _, name := range []string{"exec_command", "apply_patch", "tool_search"} {
		if _, ok := first.Tool(name); !ok {
			t.Errorf("the first request offers no %s: %v", name, first.Tools())
		}
	}
	if o := output(t, s, "search"); o.Kind != "tool_search_output" || !strings.Contains(o.Text, `"name":"mcp__echo"`) {
		t.Errorf("tool_search found no mcp__echo namespace: %s %.500s", o.Kind, o.Text)
	}

	whole(t, "MCP text at 47,964 bytes", output(t, s, "mcp-whole"), echoText(CodexResultBytes, ""))
	cut(t, "MCP text at 47,965 bytes", output(t, s, "mcp-cut"), " tokens truncated…")
	cut(t, "MCP text at 47,965 bytes of é (bytes count, not characters)", output(t, s, "mcp-bytes"), " tokens truncated…")
	whole(t, "an isError result", output(t, s, "mcp-error"), echoText(300, ""))
	structured, _ := json.Marshal(map[string]string{"text": echoText(300, "")})
	whole(t, "a result with structuredContent", output(t, s, "mcp-structured"), string(structured))
	if got := output(t, s, "mcp-client").Body(); !strings.Contains(got, `"name":"codex-mcp-client"`) || !strings.Contains(got, `"version":"0.169.0"`) {
		t.Errorf("clientInfo %s", got)
	}
	if got := output(t, s, "mcp-client").Body(); !strings.Contains(got, `"model":"gpt-5.5-codex"`) {
		t.Errorf("the call's _meta names no model: %s", got)
	}
	o := output(t, s, "mcp-whole")
	if !strings.HasPrefix(o.Text, "Wall time: ") || !strings.Contains(o.Text, " seconds\nOutput:\n") {
		t.Errorf("an MCP result's header: %q", head(o.Text, 80))
	}
	whole(t, "exec_command at 40,000 bytes", output(t, s, "exec-whole"), echoText(CodexExecBytes, ""))
	cut(t, "exec_command at 40,001 bytes", output(t, s, "exec-cut"), "…1 tokens truncated…")
	whole(t, "exec_command at 40,000 bytes, exit 1", output(t, s, "exec-fail"), echoText(CodexExecBytes, ""))
	if o := output(t, s, "exec-whole"); !strings.Contains(o.Text, "\nProcess exited with code 0\nOriginal token count: 10000\nOutput:\n") {
		t.Errorf("exec_command's header: %q", head(o.Text, 200))
	}
	if env := output(t, s, "exec-env").Body(); !strings.Contains(env, "CODEX_THREAD_ID\n") {
		t.Errorf("exec_command's environment has no CODEX_THREAD_ID: %q", env)
	}
	codexModelSeen(t, dir, output(t, s, "exec-session"), "gpt-5.5-codex")
	// A call that asks for max_output_tokens M (as rowkit router's
	// carriers do) gets 4 x min(M, 10,000 tokens) bytes whole.
	whole(t, "a carrier asking 2,500 tokens, 10,000 bytes", output(t, s, "carrier-2500-whole"), echoText(4*2500, ""))
	cut(t, "a carrier asking 2,500 tokens, 10,001 bytes", output(t, s, "carrier-2500-cut"), "truncated")
	whole(t, "a carrier asking 20,000 tokens, 40,000 bytes", output(t, s, "carrier-20000-whole"), echoText(CodexExecBytes, ""))
	cut(t, "a carrier asking 20,000 tokens, 40,001 bytes", output(t, s, "carrier-20000-cut"), "truncated")
	last := turns[2]
	if len(last.Outputs()) != 17 {
		t.Errorf("the last request: %d outputs, want the search's and sixteen calls'", len(last.Outputs()))
	}
	if !strings.Contains(string(last.Body), `"encrypted_content":"ENC1"`) {
		t.Error("the reasoning item's encrypted_content did not come back")
	}
	if o := output(t, s, "patch"); o.Kind != "custom_tool_call_output" {
		t.Errorf("apply_patch's output came back as %s: %s", o.Kind, o.Raw)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "added.txt")); string(b) != "added by apply_patch\n" {
		t.Errorf("apply_patch wrote %q, %v", b, err)
	}
	if run.Duration > 20*time.Second {
		t.Errorf("codex exec took %v: something waits for the network", run.Duration)
	}
	t.Logf("codex exec: %v, %d requests", run.Duration, len(s.Requests()))
}

// TestCodexFallback pins Codex's bounds for a model it has no metadata
// for (gpt-4.1; also gpt-5.2-codex, gpt-5, o3 and any name no slug of its
// catalogue starts): a quarter of the others. The model reaches an MCP
// server in every call's _meta (x-codex-turn-metadata), the shell only
// through nothing: its environment does not name it.
func TestCodexFallback(t *testing.T) {
	file := bigFile(t, 60000, "")
	echo := func(id string, args map[string]any) Call {
		return Call{ID: id, Name: "echo", Namespace: "mcp__echo", Args: args}
	}
	exec := func(id, cmd string) Call { return Call{ID: id, Name: "exec_command", Args: map[string]any{"cmd": cmd}} }
	// Output within CodexReadBytes, written at once, then a line on
	// stderr: the line comes before or after it, never inside (calls that
	// run at once, so that Codex's readers race).
	var order []Item
	for i := range 12 {
		order = append(order, exec(fmt.Sprintf("order-%d", i), fmt.Sprintf(`python3 -c "import os; os.write(1, (b'y'*99+b'\n')*%d); os.write(2, b'ERR\n')"`, CodexReadBytes/100)))
	}
	// Without metadata Codex offers no tool_search: the MCP tools are
	// there from the first request.
	s := NewServer(
		Reply(append(order,
			echo("mcp-whole", map[string]any{"bytes": CodexFallbackResultBytes}),
			echo("mcp-cut", map[string]any{"bytes": CodexFallbackResultBytes + 1}),
			echo("mcp-client", map[string]any{"client": true}),
			exec("exec-whole", fmt.Sprintf("head -c %d %s", CodexFallbackExecBytes, file)),
			exec("exec-cut", fmt.Sprintf("head -c %d %s", CodexFallbackExecBytes+1, file)),
			exec("exec-fail", fmt.Sprintf("head -c %d %s; exit 1", CodexFallbackExecBytes, file)),
			exec("exec-env", "env | grep -c gpt-4.1"),
			exec("exec-session", sessionSnapshot),
			carrier("carrier-whole", 20000, CodexFallbackExecBytes, file), carrier("carrier-cut", 20000, CodexFallbackExecBytes+1, file),
		)...),
		Reply(Message{Text: "finished"}),
	)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	run, err := (&Codex{Model: "gpt-4.1", MCP: echoServers(t)}).Run(ctx, s.URL, dir, "measure")
	if err != nil {
		t.Fatal(err)
	}
	if run.Exit != 0 || !strings.Contains(string(run.Stdout), "finished") {
		t.Fatalf("codex exec: exit %d\nstdout %s\nstderr %s", run.Exit, run.Stdout, run.Stderr)
	}
	if _, ok := s.Turns()[0].Tool("tool_search"); ok {
		t.Error("Codex offers tool_search to a model it has no metadata for")
	}
	whole(t, "MCP text at 11,964 bytes", output(t, s, "mcp-whole"), echoText(CodexFallbackResultBytes, ""))
	cut(t, "MCP text at 11,965 bytes", output(t, s, "mcp-cut"), " tokens truncated…")
	if got := output(t, s, "mcp-client").Body(); !strings.Contains(got, `"model":"gpt-4.1"`) {
		t.Errorf("the call's _meta names no model: %s", got)
	}
	whole(t, "exec_command at 10,000 bytes", output(t, s, "exec-whole"), echoText(CodexFallbackExecBytes, ""))
	cut(t, "exec_command at 10,001 bytes", output(t, s, "exec-cut"), " chars truncated…")
	whole(t, "exec_command at 10,000 bytes, exit 1", output(t, s, "exec-fail"), echoText(CodexFallbackExecBytes, ""))
	// Asking for more tokens than the policy gets no more.
	whole(t, "a carrier asking 20,000 tokens, 10,000 bytes", output(t, s, "carrier-whole"), echoText(CodexFallbackExecBytes, ""))
	cut(t, "a carrier asking 20,000 tokens, 10,001 bytes", output(t, s, "carrier-cut"), "truncated")
	if env := output(t, s, "exec-env").Body(); env != "0\n" {
		t.Errorf("the shell's environment names the model: %q", env)
	}
	codexModelSeen(t, dir, output(t, s, "exec-session"), "gpt-4.1")
	out := strings.Repeat(strings.Repeat("y", 99)+"\n", CodexReadBytes/100)
	for i := range order {
		if b := output(t, s, fmt.Sprintf("order-%d", i)).Body(); b != "ERR\n"+out && b != out+"ERR\n" {
			t.Errorf("a stderr line fell inside %d bytes of stdout: at %d", len(out), strings.Index(b, "ERR"))
		}
	}
}

func TestClaude(t *testing.T) {
	file := bigFile(t, 60000, "")
	wide := bigFile(t, 60000, "é")
	echo := func(id string, args map[string]any) Call { return Call{ID: id, Name: "mcp__echo__echo", Args: args} }
	bash := func(id, cmd string) Call {
		return Call{ID: id, Name: "Bash", Args: map[string]any{"command": cmd, "description": "print"}}
	}
	s := NewServer(
		Reply(Message{Text: "loading"}, Call{ID: "search", Name: "ToolSearch", Args: map[string]any{"query": "select:mcp__echo__echo,mcp__echo__echo_big"}}),
		Reply(
			echo("mcp-whole", map[string]any{"bytes": ClaudeResultChars}),
			echo("mcp-cut", map[string]any{"bytes": ClaudeResultChars + 1}),
			echo("mcp-chars", map[string]any{"bytes": 92000, "unit": "é"}),
			echo("mcp-error", map[string]any{"bytes": 300, "is_error": true}),
			echo("mcp-structured", map[string]any{"bytes": 300, "structured": true}),
			echo("mcp-client", map[string]any{"client": true}),
			Call{ID: "big-whole", Name: "mcp__echo__echo_big", Args: map[string]any{"bytes": 150000}},
			Call{ID: "big-cut", Name: "mcp__echo__echo_big", Args: map[string]any{"bytes": ClaudeDeclaredChars + 1}},
			bash("bash-whole", fmt.Sprintf("head -c %d %s", ClaudeBashBytes, file)),
			bash("bash-cut", fmt.Sprintf("head -c %d %s", ClaudeBashBytes+1, file)),
			bash("bash-bytes", fmt.Sprintf("head -c %d %s", ClaudeBashBytes+1, wide)),
			bash("fail-whole", fmt.Sprintf("head -c %d %s; exit 1", ClaudeBashFailChars, file)),
			bash("fail-cut", fmt.Sprintf("head -c %d %s; exit 1", ClaudeBashFailChars+1, file)),
			bash("bash-env", "env | grep -E '^(CLAUDECODE|AI_AGENT)=' | cut -d= -f1 | sort"),
		),
		Reply(Message{Text: "finished"}),
	)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := (&Claude{MCP: echoServers(t)}).Run(ctx, s.URL, t.TempDir(), "measure")
	if err != nil {
		t.Fatal(err)
	}
	if run.Exit != 0 || !strings.Contains(string(run.Stdout), "finished") {
		t.Fatalf("claude -p: exit %d\nstdout %s\nstderr %s", run.Exit, run.Stdout, run.Stderr)
	}
	turns := s.Turns()
	if len(turns) != 3 {
		t.Fatalf("%d model requests, want 3", len(turns))
	}
	first := turns[0]
	if ua := first.Header.Get("User-Agent"); !strings.HasPrefix(ua, "claude-cli/2.1.328 ") {
		t.Errorf("User-Agent %q", ua)
	}
	if first.Input() == "" || !strings.Contains(string(first.Body), "mcp__echo__echo") {
		t.Errorf("the first request names no deferred mcp__echo__echo: %.300s", first.Body)
	}
	if _, ok := first.Tool("Bash"); !ok {
		t.Errorf("the first request offers no Bash: %v", first.Tools())
	}
	if _, ok := turns[1].Tool("mcp__echo__echo"); !ok {
		t.Errorf("after ToolSearch the request offers no mcp__echo__echo: %v", turns[1].Tools())
	}

	whole(t, "MCP text at 50,000 characters", output(t, s, "mcp-whole"), echoText(ClaudeResultChars, ""))
	cut(t, "MCP text at 50,001 characters", output(t, s, "mcp-cut"), "<persisted-output>\nOutput too large")
	whole(t, "MCP text of 92,000 bytes in 49,680 characters (characters count, not bytes)", output(t, s, "mcp-chars"), echoText(92000, "é"))
	// An isError result loses its final newline.
	o := output(t, s, "mcp-error")
	whole(t, "an isError result", o, strings.TrimSuffix(echoText(300, ""), "\n"))
	if !o.IsError {
		t.Error("an isError result reached the model without is_error")
	}
	structured, _ := json.Marshal(map[string]string{"text": echoText(300, "")})
	whole(t, "a result with structuredContent", output(t, s, "mcp-structured"), string(structured))
	if got := output(t, s, "mcp-client").Body(); !strings.Contains(got, `"name":"claude-code"`) || !strings.Contains(got, `"version":"2.1.328"`) {
		t.Errorf("clientInfo %s", got)
	}
	// A tool that declares _meta "anthropic/maxResultSizeChars" moves the
	// bound (and lifts the token check that refuses 99,000 characters).
	whole(t, "MCP text at 150,000 characters, the tool's bound 200,000", output(t, s, "big-whole"), echoText(150000, ""))
	cut(t, "MCP text at 200,001 characters, the tool's bound 200,000", output(t, s, "big-cut"), "<persisted-output>\nOutput too large")
	// Bash hands over the output without its final newline.
	whole(t, "Bash at 30,000 bytes", output(t, s, "bash-whole"), strings.TrimSuffix(echoText(ClaudeBashBytes, ""), "\n"))
	cut(t, "Bash at 30,001 bytes", output(t, s, "bash-cut"), "<persisted-output>\nOutput too large")
	cut(t, "Bash at 30,001 bytes of é (bytes count, not characters)", output(t, s, "bash-bytes"), "<persisted-output>\nOutput too large")
	// A command that fails is an error result "Exit code N\n" and its
	// output, cut in the middle above 11,012 characters of output.
	o = output(t, s, "fail-whole")
	whole(t, "a failed Bash command at 11,012 characters", o, "Exit code 1\n"+echoText(ClaudeBashFailChars, ""))
	if !o.IsError {
		t.Error("a failed Bash command reached the model without is_error")
	}
	cut(t, "a failed Bash command at 11,013 characters", output(t, s, "fail-cut"), " characters truncated] ...")
	if env := output(t, s, "bash-env").Body(); env != "AI_AGENT\nCLAUDECODE" {
		t.Errorf("Bash's environment: %q, want AI_AGENT and CLAUDECODE", env)
	}
	if run.Duration > 30*time.Second {
		t.Errorf("claude -p took %v: something waits for the network", run.Duration)
	}
	for _, r := range s.Requests() {
		if r.API == "" {
			t.Logf("claude also asked %s %s", r.Method, r.Path)
		}
	}
	t.Logf("claude -p: %v, %d requests", run.Duration, len(s.Requests()))
}

// TestClaudeAlwaysLoad pins the two ways Claude Code offers an MCP tool
// from the first request, without the ToolSearch turn it otherwise costs
// (issue 26): the tool's own _meta["anthropic/alwaysLoad"] (echo_loaded),
// and the server entry's "alwaysLoad": true in the MCP config (every
// tool of the server).
func TestClaudeAlwaysLoad(t *testing.T) {
	for _, entry := range []bool{false, true} {
		s := NewServer(Reply(Message{Text: "finished"}))
		servers := echoServers(t)
		e := servers["echo"]
		e.AlwaysLoad = entry
		servers["echo"] = e
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		run, err := (&Claude{MCP: servers}).Run(ctx, s.URL, t.TempDir(), "measure")
		cancel()
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if run.Exit != 0 {
			t.Fatalf("claude -p: exit %d: %s", run.Exit, head(string(run.Stderr), 2000))
		}
		first := s.Turns()[0]
		if _, ok := first.Tool("mcp__echo__echo_loaded"); !ok {
			t.Errorf("alwaysLoad entry %v: the tool that declares anthropic/alwaysLoad is not offered up front: %v", entry, first.Tools())
		}
		if _, ok := first.Tool("mcp__echo__echo"); ok != entry {
			t.Errorf("alwaysLoad entry %v: a tool without the declaration offered up front: %v", entry, ok)
		}
	}
}
