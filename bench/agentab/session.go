package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/rowkit/rowkit/internal/agenttest"
)

// session is one run of a task in one configuration.
type session struct {
	task   *Task
	cfg    Config
	rowkit string // the rowkit binary, absolute
	out    string // where session.jsonl.gz and figures.json go
	play   string // play mode: the file the policy writes what the client handed back to
	tree   string // "" is $TMPDIR/agentab/TASK-CONFIG, the same on every run
	keep   bool   // keep the tree
}

// run runs the session: the tree, the model server, the client (and
// the router), then checks that the plan applied and the task's test
// passes in the final tree.
func (s *session) run(ctx context.Context) (*Figures, error) {
	tree := s.tree
	if tree == "" {
		// The same path on every run and machine: the model writes it
		// (Claude Code's Read and Edit take absolute paths), so a random
		// name would change the tokens it writes from run to run.
		tree = filepath.Join(os.TempDir(), "agentab", s.task.Name+"-"+string(s.cfg))
		if err := os.RemoveAll(tree); err != nil {
			return nil, err
		}
		if !s.keep {
			defer os.RemoveAll(tree)
		}
	}
	if err := s.task.Setup(ctx, tree); err != nil {
		return nil, err
	}
	pol, err := newPolicy(s.cfg, tree, filepath.Join(s.task.Dir, "plan.json"), s.play)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.out, 0o755); err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(s.out, "session.jsonl.gz"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	zw := gzip.NewWriter(logFile)
	srv := agenttest.NewServer()
	defer srv.Close()
	srv.Final = pol.Step
	srv.KeepAlive = 5 * time.Second
	srv.Record = zw // written under the server's lock

	env := clientEnv()
	var res *agenttest.Run
	switch s.cfg {
	case CodexPlain, CodexRouter:
		c := &agenttest.Codex{Env: env, HomeFiles: map[string]string{".profile": profile(env)}}
		base := srv.URL
		if s.cfg == CodexRouter {
			rt, err := startRouter(ctx, s.rowkit, srv.URL+"/v1")
			if err != nil {
				return nil, err
			}
			defer rt.stop()
			// The README's provider block, pointed at the router.
			c.Args = []string{"-c", `model_provider="rowkit"`}
			c.Config = fmt.Sprintf("[model_providers.rowkit]\nname = \"rowkit router\"\nbase_url = %q\nwire_api = \"responses\"\nenv_key = \"OPENAI_API_KEY\"\n", rt.url)
			c.Env = append(c.Env, "OPENAI_API_KEY=agenttest")
			base = rt.url
		}
		res, err = c.Run(ctx, base, tree, s.task.Prompt)
	case ClaudePlain, ClaudeMCP, ClaudeMCPAlwaysLoad, ClaudeMCPNoToolSearch, ClaudeMCPAutoSearch:
		c := &agenttest.Claude{Env: env}
		if s.cfg.base() == ClaudeMCP {
			c.MCP = map[string]agenttest.MCPServer{"rowkit": {Command: s.rowkit, Args: []string{"mcp", "--root", tree}, AlwaysLoad: s.cfg == ClaudeMCPAlwaysLoad}}
		}
		switch s.cfg {
		case ClaudeMCPNoToolSearch:
			c.Env = append(c.Env, "ENABLE_TOOL_SEARCH=false")
		case ClaudeMCPAutoSearch:
			c.Env = append(c.Env, "ENABLE_TOOL_SEARCH=auto")
		}
		res, err = c.Run(ctx, srv.URL, tree, s.task.Prompt)
	default:
		return nil, fmt.Errorf("unknown configuration %q", s.cfg)
	}
	if err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if err := pol.Err(); err != nil {
		return nil, fmt.Errorf("%s in %s: the plan no longer applies: %w", s.task.Name, s.cfg, err)
	}
	if res.Exit != 0 {
		return nil, fmt.Errorf("%s in %s: the client exited %d\nstdout: %s\nstderr: %s", s.task.Name, s.cfg, res.Exit, tail(res.Stdout), tail(res.Stderr))
	}
	if !pol.done {
		return nil, fmt.Errorf("%s in %s: the client stopped before the plan's last turn", s.task.Name, s.cfg)
	}
	if code, out := s.task.RunTest(ctx, tree); code != 0 {
		return nil, fmt.Errorf("%s in %s: the task's test fails after the session (exit %d):\n%s", s.task.Name, s.cfg, code, tail([]byte(out)))
	}
	f, err := figuresOf(srv.Requests())
	if err != nil {
		return nil, err
	}
	f.Task, f.Config = s.task.Name, string(s.cfg)
	if f.Failed > 0 {
		// Every call succeeded when the plan was played: one that fails
		// now is a step that no longer applies.
		var ids []string
		for _, c := range f.Calls {
			if c.Failed {
				ids = append(ids, c.ID)
			}
		}
		return nil, fmt.Errorf("%s in %s: %d calls failed (%s): the plan no longer applies; see agentab show %s/session.jsonl.gz", s.task.Name, s.cfg, f.Failed, strings.Join(ids, ", "), s.out)
	}
	f.Seconds = res.Duration.Seconds()
	b, _ := json.MarshalIndent(f, "", "  ")
	return f, os.WriteFile(filepath.Join(s.out, "figures.json"), append(b, '\n'), 0o644)
}

// profile is the .profile of a Codex home: exec_command runs a login
// shell, which resets PATH from /etc/profile.
func profile(env []string) string {
	var b strings.Builder
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&b, "export %s=%s\n", k, quote(v))
	}
	return b.String()
}

func tail(b []byte) string {
	const n = 3000
	if len(b) > n {
		return "..." + string(b[len(b)-n:])
	}
	return string(b)
}

// router is a running rowkit router.
type router struct {
	url string
	cmd *exec.Cmd
}

// startRouter starts bin as rowkit router on a free loopback port in
// front of upstream, the carriers running bin.
func startRouter(ctx context.Context, bin, upstream string) (*router, error) {
	cmd := exec.CommandContext(ctx, bin, "router", "--listen", "127.0.0.1:0", "--upstream", upstream, "--frontend", bin)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	rd := bufio.NewReader(stderr)
	line, err := rd.ReadString('\n')
	m := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+) `).FindStringSubmatch(line)
	if err != nil || m == nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("rowkit router: %q %v", line, err)
	}
	go io.Copy(io.Discard, rd)
	return &router{url: m[1], cmd: cmd}, nil
}

func (r *router) stop() {
	r.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		r.cmd.Process.Kill()
		<-done
	}
}

// loadSession reads a recorded session log.
func loadSession(path string) ([]*agenttest.Request, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return agenttest.LoadSession(bytes.NewReader(b))
}
