package mcpserver

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/read"
)

// TestTextResults: a default server (what agent clients get) answers
// read_file, search, inspect_file and edit with their text alone, equal to
// the CLI's text for the same request; only the review tools keep an
// output schema; every failure is one line, CODE: MESSAGE (HINT), without
// structuredContent.
func TestTextResults(t *testing.T) {
	root := fileRoot(t)
	cs := connect(t, newTextServer(t, Options{Roots: []string{root}}), nil)
	for _, name := range []string{"read_file", "search", "inspect_file", "edit", "inspect_repository"} {
		tool := toolOf(t, cs, name)
		if (tool.OutputSchema != nil) == modelText[name] {
			t.Errorf("%s: output schema %v on a default server", name, tool.OutputSchema)
		}
	}

	for _, tc := range []struct {
		tool string
		args map[string]any
		cli  []string // the command whose stdout the text equals
	}{
		{"read_file", map[string]any{"path": "big.txt", "offset": 2990}, []string{"read", "big.txt", "--offset", "2990", "--root", root}},
		{"read_file", map[string]any{"path": "b.txt", "offset": 2, "limit": 1}, []string{"read", "b.txt", "--offset", "2", "--limit", "1", "--root", root}},
		{"read_file", map[string]any{"path": "sub"}, []string{"read", "sub", "--root", root}},
		{"read_file", map[string]any{"path": "b.tx"}, []string{"read", "b.tx", "--root", root}},
		{"search", map[string]any{"pattern": "alpha", "paths": []string{"b.txt", "sub"}}, []string{"grep", "--sort=path", "alpha", "b.txt", "sub"}},
		{"search", map[string]any{"pattern": "nothing here"}, nil},
	} {
		res := call(t, cs, tc.tool, tc.args)
		if res.StructuredContent != nil || len(res.Content) != 1 {
			t.Errorf("%s %v: structuredContent %v, %d contents; want the text alone", tc.tool, tc.args, res.StructuredContent, len(res.Content))
		}
		want := "no matches\n"
		if tc.cli != nil {
			out, _ := cli(t, root, tc.cli...)
			want = string(out)
		}
		if tc.tool == "read_file" {
			// The CLI's view in brief: its rows, then only what the
			// model cannot know.
			out, _ := cli(t, root, append(tc.cli, "--format", "json")...)
			var res read.Result
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatal(err)
			}
			want = string(read.Brief(&res, tc.args["limit"] != nil))
		}
		got := text(res)
		if tc.tool == "search" {
			got = ungroup(t, got) // the rows hgrep prints, grouped under their file
		}
		if sortedLines(got) != sortedLines(want) {
			t.Errorf("%s %v: text\n%q\nwant (rowkit %s)\n%q", tc.tool, tc.args, got, strings.Join(tc.cli, " "), want)
		}
	}
	if res := call(t, cs, "read_file", map[string]any{"path": "b.tx"}); !res.IsError || !strings.HasPrefix(text(res), "[read:not-found] b.tx: ") || strings.Count(text(res), "\n") != 1 {
		t.Errorf("a missing file: isError %v, %q; want one line with the reader's code", res.IsError, text(res))
	}

	res := call(t, cs, "inspect_file", map[string]any{"path": "a.go"})
	if res.StructuredContent != nil || !strings.HasPrefix(text(res), "a.go: code go, 12 lines\n") {
		t.Errorf("inspect_file: %v %q", res.StructuredContent, text(res))
	}

	// edit: the same report hpatch prints, on a twin of the workspace.
	twin := fileRoot(t)
	script := "in b.txt\ntype 1:8ed3 \"ALPHA\"\n"
	res = call(t, cs, "edit", map[string]any{"script": script})
	f := filepath.Join(t.TempDir(), "script")
	write(t, f, script)
	out, _ := cli(t, twin, "patch", "-f", f)
	if res.IsError || res.StructuredContent != nil || text(res) != string(out) {
		t.Errorf("edit: isError %v, structuredContent %v, text\n%q\nwant hpatch's\n%q", res.IsError, res.StructuredContent, text(res), out)
	}
	res = call(t, cs, "edit", map[string]any{"script": script})
	cmd := exec.Command(rowkitBin(t), "patch", "-f", f)
	cmd.Dir = twin
	rejection, _ := cmd.CombinedOutput()
	if !res.IsError || res.StructuredContent != nil || text(res) != string(rejection) {
		t.Errorf("a rejected edit: isError %v, text\n%q\nwant hpatch's rejection\n%q", res.IsError, text(res), rejection)
	}

	for _, tc := range []struct {
		tool, prefix string
		args         map[string]any
	}{
		{"read_file", "[read:outside-allowed-roots] ", map[string]any{"path": "../etc/passwd"}},
		{"read_file", "[read:outside-allowed-roots] ", map[string]any{"path": "/etc/passwd"}},
		{"inspect_file", "not_found: ", map[string]any{"path": "missing.go"}},
		{"search", "usage: ", map[string]any{"pattern": "a", "patterns": []string{"b"}}},
		{"read_file", "usage: invalid arguments: ", map[string]any{"offset": 0}},
		{"inspect_repository", "outside_workspace: ", map[string]any{"repo_path": "/etc"}},
	} {
		res := call(t, cs, tc.tool, tc.args)
		got := text(res)
		if !res.IsError || res.StructuredContent != nil || !strings.HasPrefix(got, tc.prefix) || strings.Contains(strings.TrimSuffix(got, "\n"), "\n") {
			t.Errorf("%s %v: isError %v, structuredContent %v, text %q; want one line %s...", tc.tool, tc.args, res.IsError, res.StructuredContent, got, tc.prefix)
		}
	}
}

// sortedLines is s with its lines sorted: ripgrep's order across files
// depends on its threads.
func sortedLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "")
}
