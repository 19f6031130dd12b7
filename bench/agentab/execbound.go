package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rowkit/rowkit/internal/agenttest"
)

// execBound measures what Codex hands its model whole of a command's
// output when the call carries max_output_tokens, as the router's
// carriers do (exec_command with /bin/sh, no login shell, a yield of
// 30 s): for each model and each max_output_tokens M, outputs of sizes
// around 4 M bytes and around Codex's own policy, all in one response;
// it prints, per model and M, the largest size that came whole and the
// smallest that was cut.
func execBound(ctx context.Context) (string, error) {
	dir, err := os.MkdirTemp("", "agentab-execbound-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "big.txt")
	var b strings.Builder
	for i := 0; b.Len() < 200000; i++ {
		fmt.Fprintf(&b, "%06d %s\n", i, strings.Repeat("x", 92))
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		return "", err
	}
	var out strings.Builder
	for _, model := range []string{"gpt-5.5-codex", "gpt-4.1"} {
		type probe struct{ m, n int }
		var probes []probe
		for _, m := range []int{2500, 5000, 10000, 12500, 20000} {
			for _, n := range []int{4*m - 1, 4 * m, 4*m + 1, 9600, 10000, 10001, 40000, 40001} {
				probes = append(probes, probe{m, n})
			}
		}
		var items []agenttest.Item
		for i, p := range probes {
			items = append(items, agenttest.Call{ID: fmt.Sprintf("p%d", i), Name: "exec_command", Args: map[string]any{
				"cmd": fmt.Sprintf("head -c %d %s", p.n, file), "shell": "/bin/sh", "login": false, "yield_time_ms": 30000, "max_output_tokens": p.m}})
		}
		s := agenttest.NewServer(agenttest.Reply(items...), agenttest.Reply(agenttest.Message{Text: "measured"}))
		cctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		run, err := (&agenttest.Codex{Model: model}).Run(cctx, s.URL, dir, "measure")
		cancel()
		if err != nil {
			s.Close()
			return "", err
		}
		if run.Exit != 0 {
			s.Close()
			return "", fmt.Errorf("codex exec (%s): exit %d: %s", model, run.Exit, tail(run.Stderr))
		}
		whole := map[int]int{} // m -> largest n whole
		cut := map[int]int{}   // m -> smallest n cut
		data, _ := os.ReadFile(file)
		for i, p := range probes {
			o, ok := s.Output(fmt.Sprintf("p%d", i))
			if !ok {
				s.Close()
				return "", fmt.Errorf("%s: no output of probe %d", model, i)
			}
			if o.Body() == string(data[:p.n]) {
				whole[p.m] = max(whole[p.m], p.n)
			} else if cut[p.m] == 0 || p.n < cut[p.m] {
				cut[p.m] = p.n
			}
		}
		s.Close()
		var ms []int
		for m := range whole {
			ms = append(ms, m)
		}
		for m := range cut {
			if _, ok := whole[m]; !ok {
				ms = append(ms, m)
			}
		}
		sort.Ints(ms)
		for _, m := range ms {
			fmt.Fprintf(&out, "%-14s max_output_tokens %6d: largest whole %6d bytes, smallest cut %6d bytes\n", model, m, whole[m], cut[m])
		}
	}
	return out.String(), nil
}

// mcpCosts runs each client with rowkit mcp registered, in an empty
// directory, through what loads rowkit's tools (Codex's tool_search for a
// model it has metadata for; Claude Code's ToolSearch, or its
// alwaysLoad), and prints what the requests carry (costs): the per-request
// price of rowkit's MCP tool schemas as each client sends them.
func mcpCosts(ctx context.Context, rowkit string) (string, error) {
	dir, err := os.MkdirTemp("", "agentab-mcpcosts-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	servers := func(always bool) map[string]agenttest.MCPServer {
		return map[string]agenttest.MCPServer{"rowkit": {Command: rowkit, Args: []string{"mcp", "--root", dir}, AlwaysLoad: always}}
	}
	var out strings.Builder
	type run struct {
		name  string
		steps []agenttest.Step
		start func(ctx context.Context, url string) (*agenttest.Run, error)
	}
	done := agenttest.Reply(agenttest.Message{Text: "measured"})
	runs := []run{
		{"codex gpt-5.5-codex + rowkit mcp (tool_search)", []agenttest.Step{agenttest.Reply(agenttest.Object{"type": "tool_search_call", "call_id": "load-0-0",
			"execution": "client", "status": "completed", "arguments": map[string]any{"query": "rowkit read_file search inspect_file edit"}}), done},
			func(ctx context.Context, url string) (*agenttest.Run, error) {
				return (&agenttest.Codex{MCP: servers(false)}).Run(ctx, url, dir, "measure")
			}},
		{"codex gpt-4.1 + rowkit mcp", []agenttest.Step{done},
			func(ctx context.Context, url string) (*agenttest.Run, error) {
				return (&agenttest.Codex{Model: "gpt-4.1", MCP: servers(false)}).Run(ctx, url, dir, "measure")
			}},
		{"claude + rowkit mcp (ToolSearch)", []agenttest.Step{agenttest.Reply(agenttest.Call{ID: "load-0-0", Name: "ToolSearch",
			Args: map[string]any{"query": "select:" + strings.Join(mcpTools, ","), "max_results": len(mcpTools)}}), done},
			func(ctx context.Context, url string) (*agenttest.Run, error) {
				return (&agenttest.Claude{MCP: servers(false)}).Run(ctx, url, dir, "measure")
			}},
		{"claude + rowkit mcp, alwaysLoad", []agenttest.Step{done},
			func(ctx context.Context, url string) (*agenttest.Run, error) {
				return (&agenttest.Claude{MCP: servers(true)}).Run(ctx, url, dir, "measure")
			}},
		{"claude alone", []agenttest.Step{done},
			func(ctx context.Context, url string) (*agenttest.Run, error) {
				return (&agenttest.Claude{}).Run(ctx, url, dir, "measure")
			}},
	}
	for _, r := range runs {
		s := agenttest.NewServer(r.steps...)
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		res, err := r.start(cctx, s.URL)
		cancel()
		reqs := s.Requests()
		s.Close()
		if err != nil {
			return "", err
		}
		if res.Exit != 0 {
			return "", fmt.Errorf("%s: exit %d: %s", r.name, res.Exit, tail(res.Stderr))
		}
		fmt.Fprintf(&out, "== %s\n%s", r.name, costs(reqs))
	}
	return out.String(), nil
}
