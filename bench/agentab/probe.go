package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/tokens"
)

// A probe is one request of the diet (issue 26 section 2): an MCP call as
// Claude Code makes it, or a script in the router's shell as its carrier
// runs it, on a task's tree. Its tokens are what the model reads of the
// tool's own text, without the client's wrapper (the benchmark's figures
// have that), so that a printer's before and after compare on the very
// same request.
type probe struct {
	name, task string
	tool       string         // an MCP tool, or "shell"
	args       map[string]any // the MCP arguments
	script     string         // the shell script
}

var probes = []probe{
	{name: "search: three definitions in one file", task: "cobra-shadow", tool: "search",
		args: map[string]any{"pattern": `func \(c \*Command\) (LocalFlags|InheritedFlags|LocalNonPersistentFlags)\(`, "paths": []string{"command.go"}}},
	{name: "search: four definitions in one file", task: "sqlparse-realname", tool: "search",
		args: map[string]any{"pattern": `def (get_real_name|get_parent_name|get_name|_get_first_name)`, "paths": []string{"sqlparse/sql.py"}}},
	{name: "search: a directory", task: "sqlparse-ctas", tool: "search", args: map[string]any{"pattern": `== 'AS'`, "paths": []string{"sqlparse"}}},
	{name: "search: a function with context 30", task: "cobra-shadow", tool: "search",
		args: map[string]any{"pattern": `func \(c \*Command\) LocalFlags\(`, "paths": []string{"command.go"}, "context": 30}},
	{name: "search: two matches with context 3", task: "cobra-shadow", tool: "search",
		args: map[string]any{"pattern": `c.parentsPflags.Lookup`, "paths": []string{"command.go"}, "context": 3}},
	{name: "read_file: 67 lines of 1,696", task: "cobra-shadow", tool: "read_file", args: map[string]any{"path": "command.go", "offset": 1479, "limit": 67}},
	{name: "read_file: 43 lines of 145", task: "sqlparse-stripws", tool: "read_file", args: map[string]any{"path": "sqlparse/filters/others.py", "offset": 59, "limit": 43}},
	{name: "read_file: a whole small file", task: "cobra-shadow", tool: "read_file", args: map[string]any{"path": "cobra.go"}},
	{name: "read_file: to the end", task: "sqlparse-stripws", tool: "read_file", args: map[string]any{"path": "sqlparse/filters/others.py", "offset": 120}},
	{name: "read_file: a whole big file (cut)", task: "cobra-shadow", tool: "read_file", args: map[string]any{"path": "command.go"}},
	{name: "inspect_file: a Python file", task: "sqlparse-stripws", tool: "inspect_file", args: map[string]any{"path": "sqlparse/filters/others.py"}},
	{name: "inspect_file: command.go", task: "cobra-shadow", tool: "inspect_file", args: map[string]any{"path": "command.go"}},
	{name: "shell: hread 43 lines", task: "sqlparse-stripws", tool: "shell", script: "hread sqlparse/filters/others.py 59:101"},
	{name: "shell: hgrep one file", task: "cobra-shadow", tool: "shell", script: `hgrep -e 'func \(c \*Command\) (LocalFlags|InheritedFlags|LocalNonPersistentFlags)\(' command.go`},
	{name: "shell: hgrep context 3", task: "cobra-shadow", tool: "shell", script: `hgrep -C 3 -e 'c.parentsPflags.Lookup' command.go`},
	{name: "shell: inspect_file a Python file", task: "sqlparse-stripws", tool: "shell", script: "inspect_file sqlparse/filters/others.py"},
	{name: "shell: hread a whole big file", task: "cobra-shadow", tool: "shell", script: "hread command.go"},
	{name: "shell: inspect_file --text a Python file", task: "sqlparse-stripws", tool: "shell", script: "inspect_file --text sqlparse/filters/others.py"},
	{name: "shell: hpatch refused for Go syntax", task: "cobra-shadow", tool: "shell",
		script: "hpatch <<'HPATCH'\nin command.go\ntype 1508:b041 <<PATCH\n\t\tif c.lflags.Lookup(f.Name) == nil && (c.parentsPflags.Lookup(f.Name) == nil {\nPATCH\nHPATCH"},
	{name: "edit: refused for Go syntax", task: "cobra-shadow", tool: "edit",
		args: map[string]any{"script": "in command.go\ntype 1508:b041 <<PATCH\n\t\tif c.lflags.Lookup(f.Name) == nil && (c.parentsPflags.Lookup(f.Name) == nil {\nPATCH\n"}},
}

// probeAll runs every probe against rowkit, on task trees kept in trees
// (made by Setup when missing), and prints each one's tokens; with show,
// the texts too.
func probeAll(ctx context.Context, bench, rowkit, trees string, show bool) error {
	sessions := map[string]*mcp.ClientSession{}
	defer func() {
		for _, s := range sessions {
			s.Close()
		}
	}()
	for _, p := range probes {
		dir := filepath.Join(trees, p.task)
		if _, err := os.Stat(dir); err != nil {
			t, err := loadTask(bench, p.task)
			if err != nil {
				return err
			}
			if err := t.Setup(ctx, dir); err != nil {
				return err
			}
		}
		var text string
		if p.tool == "shell" {
			cmd := exec.CommandContext(ctx, rowkit, "carrier", "shell")
			cmd.Dir = dir
			cmd.Stdin = strings.NewReader(p.script + "\n")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			cmd.Run()
			text = out.String()
		} else {
			cs := sessions[p.task]
			if cs == nil {
				c := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "2.1.328"}, nil)
				var err error
				cs, err = c.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(rowkit, "mcp", "--root", dir)}, nil)
				if err != nil {
					return err
				}
				sessions[p.task] = cs
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: p.tool, Arguments: p.args})
			if err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			for _, c := range res.Content {
				if t, ok := c.(*mcp.TextContent); ok {
					text += t.Text
				}
			}
		}
		fmt.Printf("%6d  %s\n", tokens.Count(text), p.name)
		if show {
			fmt.Printf("%s\n", indent(text))
		}
	}
	// The tools as Claude Code sends them, and their sum.
	var cs *mcp.ClientSession
	for _, s := range sessions {
		cs = s
		break
	}
	if cs == nil {
		return nil
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	sum := 0
	for _, t := range lt.Tools {
		// As Claude Code's JSON.stringify writes it: no HTML escapes.
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.Encode(map[string]any{"name": "mcp__rowkit__" + t.Name, "description": t.Description, "input_schema": t.InputSchema})
		b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		n := tokens.Count(string(b))
		sum += n
		fmt.Printf("%6d  tool %s\n", n, t.Name)
		if show {
			fmt.Printf("%s\n", indent(string(b)))
		}
	}
	fmt.Printf("%6d  tools, all\n", sum)
	return nil
}

func indent(s string) string {
	return "        " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n        ")
}
