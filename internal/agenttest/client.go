package agenttest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// MCPServer is a stdio MCP server a client starts.
type MCPServer struct {
	Command string
	Args    []string
	Env     map[string]string
	// AlwaysLoad is Claude Code's "alwaysLoad" of the server's entry: its
	// tools are offered from the first request instead of being deferred
	// behind ToolSearch (Codex has no such key).
	AlwaysLoad bool
}

// Run is one finished client run.
type Run struct {
	Stdout, Stderr []byte
	Exit           int // -1 when killed by a signal
	Duration       time.Duration
	// Home is the temporary home the client ran with (CODEX_HOME for
	// Codex, HOME for Claude Code); it is removed after the run unless
	// Keep was set.
	Home string
}

// Codex runs the Codex CLI (`codex exec`) against a Server.
type Codex struct {
	// Bin is the codex executable; "" finds node_modules/.bin/codex in
	// the working directory or a parent (the npm package's launcher,
	// which execs its native binary).
	Bin string
	// Model is the model name sent upstream; "" is gpt-5.5-codex, which
	// makes Codex 0.169 send its full tool set (apply_patch, tool_search).
	Model string
	// MCP are the MCP servers registered under [mcp_servers.NAME].
	MCP map[string]MCPServer
	// Config is more config.toml text, appended as is.
	Config string
	// Args come after `exec` and before the prompt.
	Args []string
	// Env is added to the client's environment, after (and so over) its
	// defaults: PATH from this process, CODEX_HOME (a new temporary
	// directory), HOME (the same directory), the API key variable,
	// NO_COLOR=1 and TERM=dumb.
	Env []string
	// HomeFiles are written into the home before the run, by path
	// relative to it: a .profile, since exec_command runs a login shell
	// that resets PATH from /etc/profile.
	HomeFiles map[string]string
	// Keep leaves the home in place after the run (Run.Home).
	Keep bool
	// Sandbox, when set, runs Codex under its own sandbox, --sandbox
	// Sandbox (e.g. "workspace-write", with no approvals asked in exec
	// mode), in place of --dangerously-bypass-approvals-and-sandbox.
	Sandbox string
	// Home, when set, is the run's home (CODEX_HOME and HOME), used as it
	// is and kept: runs sharing a Home share Codex's sessions, so that a
	// later one can resume an earlier one.
	Home string
	// Resume, when set, resumes a session instead of starting one:
	// "--last" or a session id (codex exec resume), after exec's options.
	Resume string
}

// CodexArgs are the arguments every run passes: config keys checked (a
// misspelt one fails the run), no git repository needed, no approvals,
// no sandbox (the MCP servers and the shell run as the test does).
var CodexArgs = []string{"exec", "--strict-config", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"}

// CodexConfig is the config.toml of a run against base (the Server's URL
// or a proxy's): the provider, the model, and what keeps Codex offline
// and quiet. The MCP servers follow it.
func (c *Codex) CodexConfig(base string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "model = %s\nmodel_provider = \"agenttest\"\n", tomlString(c.model()))
	b.WriteString("check_for_update_on_startup = false\n\n")
	fmt.Fprintf(&b, "[model_providers.agenttest]\nname = \"agenttest\"\nbase_url = %s\nwire_api = \"responses\"\nenv_key = \"AGENTTEST_API_KEY\"\n\n", tomlString(base+"/v1"))
	b.WriteString("[analytics]\nenabled = false\n\n[feedback]\nenabled = false\n\n")
	// Plugins sync a marketplace with git ls-remote at start.
	b.WriteString("[features]\nplugins = false\nremote_plugin = false\n\n")
	b.WriteString(CodexMCPConfig(c.MCP))
	if c.Config != "" {
		b.WriteString(c.Config)
		b.WriteByte('\n')
	}
	return b.String()
}

// CodexMCPConfig is the config.toml text registering servers, one
// [mcp_servers.NAME] table each (NAME must be a bare TOML key).
func CodexMCPConfig(servers map[string]MCPServer) string {
	var b strings.Builder
	for _, name := range sortedKeys(servers) {
		m := servers[name]
		fmt.Fprintf(&b, "[mcp_servers.%s]\ncommand = %s\nargs = %s\n", name, tomlString(m.Command), tomlStrings(m.Args))
		if len(m.Env) > 0 {
			fmt.Fprintf(&b, "[mcp_servers.%s.env]\n", name)
			for _, k := range sortedKeys(m.Env) {
				fmt.Fprintf(&b, "%s = %s\n", tomlString(k), tomlString(m.Env[k]))
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func (c *Codex) model() string {
	if c.Model == "" {
		return "gpt-5.5-codex"
	}
	return c.Model
}

// Run runs `codex exec ... PROMPT` in dir against base (a Server's URL),
// until it exits or ctx ends.
func (c *Codex) Run(ctx context.Context, base, dir, prompt string) (*Run, error) {
	bin, err := c.bin(dir)
	if err != nil {
		return nil, err
	}
	home := c.Home
	if home == "" {
		if home, err = os.MkdirTemp("", "agenttest-codex-"); err != nil {
			return nil, err
		}
		if !c.Keep {
			defer os.RemoveAll(home)
		}
	}
	if err := writeHome(home, c.HomeFiles, "config.toml", c.CodexConfig(base)); err != nil {
		return nil, err
	}
	var args []string
	for _, a := range CodexArgs {
		if a == "--dangerously-bypass-approvals-and-sandbox" && c.Sandbox != "" {
			args = append(args, "--sandbox", c.Sandbox)
			continue
		}
		args = append(args, a)
	}
	args = append(append(args, c.Args...), "--cd", dir)
	if c.Resume != "" {
		args = append(args, "resume", c.Resume)
	}
	args = append(args, "--", prompt)
	env := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CODEX_HOME=" + home,
		"AGENTTEST_API_KEY=agenttest", "NO_COLOR=1", "TERM=dumb"}, c.Env...)
	return run(ctx, bin, args, dir, env, home)
}

func (c *Codex) bin(dir string) (string, error) {
	if c.Bin != "" {
		return c.Bin, nil
	}
	return NodeBin("codex")
}

// Claude runs Claude Code (`claude -p`) against a Server.
type Claude struct {
	// Bin is the claude executable; "" finds node_modules/.bin/claude in
	// the working directory or a parent (the npm package's native
	// binary).
	Bin string
	// Model is the model name sent upstream; "" is claude-sonnet-4-5.
	Model string
	// MCP are the MCP servers of the run's --mcp-config file
	// (with --strict-mcp-config: no other server is loaded).
	MCP map[string]MCPServer
	// Args come after the fixed flags and before the prompt.
	Args []string
	// Env is added to the client's environment, after (and so over) its
	// defaults: PATH from this process, HOME (a new temporary directory),
	// ANTHROPIC_BASE_URL, an API key, what keeps it offline
	// (DISABLE_TELEMETRY=1, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1,
	// DISABLE_AUTOUPDATER=1), NO_COLOR=1, TERM=dumb, and IS_SANDBOX=1
	// when running as root, which --dangerously-skip-permissions requires.
	Env []string
	// HomeFiles are written into the home before the run, by path
	// relative to it.
	HomeFiles map[string]string
	// Keep leaves the home in place after the run (Run.Home).
	Keep bool
}

// ClaudeArgs are the arguments every run passes before its own: print
// mode, the MCP config and only it, no permission prompts.
var ClaudeArgs = []string{"-p", "--strict-mcp-config", "--dangerously-skip-permissions"}

// MCPConfig is the JSON of a --mcp-config file registering servers (the
// format of a project's .mcp.json too).
func MCPConfig(servers map[string]MCPServer) []byte {
	type server struct {
		Type       string            `json:"type"`
		Command    string            `json:"command"`
		Args       []string          `json:"args"`
		Env        map[string]string `json:"env,omitempty"`
		AlwaysLoad bool              `json:"alwaysLoad,omitempty"`
	}
	m := map[string]server{}
	for name, s := range servers {
		m[name] = server{Type: "stdio", Command: s.Command, Args: append([]string{}, s.Args...), Env: s.Env, AlwaysLoad: s.AlwaysLoad}
	}
	b, _ := json.MarshalIndent(map[string]any{"mcpServers": m}, "", "  ")
	return b
}

// Run runs `claude -p ... PROMPT` in dir against base (a Server's URL),
// until it exits or ctx ends.
func (c *Claude) Run(ctx context.Context, base, dir, prompt string) (*Run, error) {
	bin := c.Bin
	if bin == "" {
		var err error
		if bin, err = NodeBin("claude"); err != nil {
			return nil, err
		}
	}
	home, err := os.MkdirTemp("", "agenttest-claude-")
	if err != nil {
		return nil, err
	}
	if !c.Keep {
		defer os.RemoveAll(home)
	}
	cfg := filepath.Join(home, "mcp.json")
	if err := writeHome(home, c.HomeFiles, "mcp.json", string(MCPConfig(c.MCP))); err != nil {
		return nil, err
	}
	model := c.Model
	if model == "" {
		model = "claude-sonnet-4-5"
	}
	args := append(append(append([]string(nil), ClaudeArgs...), "--mcp-config", cfg, "--model", model), c.Args...)
	args = append(args, "--", prompt)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "ANTHROPIC_BASE_URL=" + base,
		"ANTHROPIC_API_KEY=agenttest", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1", "NO_COLOR=1", "TERM=dumb"}
	if os.Geteuid() == 0 {
		env = append(env, "IS_SANDBOX=1")
	}
	return run(ctx, bin, args, dir, append(env, c.Env...), home)
}

// writeHome writes files into home, then name with content (the run's own
// file wins over a file of the same name).
func writeHome(home string, files map[string]string, name, content string) error {
	write := func(rel, data string) error {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		return os.WriteFile(p, []byte(data), 0o600)
	}
	for _, rel := range sortedKeys(files) {
		if err := write(rel, files[rel]); err != nil {
			return err
		}
	}
	return write(name, content)
}

// NodeBin finds node_modules/.bin/name in the working directory or the
// nearest parent that has it: the clients come from the module's
// package-lock.json through `npm ci`.
func NodeBin(name string) (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "node_modules", ".bin", name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("node_modules/.bin/%s is not in the working directory or a parent: run `npm ci` at the module's root (scripts/test does)", name)
		}
		dir = parent
	}
}

// run starts bin in its own process group, waits, and kills the whole
// group when ctx ends or the client exits (its MCP servers and shell
// commands included).
func run(ctx context.Context, bin string, args []string, dir string, env []string, home string) (*Run, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = nil
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	pgid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-done
		err = ctx.Err()
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
	r := &Run{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Duration: time.Since(start), Home: home}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.Exit = ee.ExitCode()
		err = nil
	default:
		r.Exit = -1
	}
	return r, err
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// tomlString is s as a TOML basic string: quotes and backslashes escaped,
// control characters as \uXXXX, everything else literal.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func tomlStrings(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = tomlString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
