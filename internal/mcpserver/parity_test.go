package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/rows"
)

// fileRoot is a workspace with files of every outline kind and text whose
// JSON would differ under HTML escaping.
func fileRoot(t testing.TB) string {
	t.Helper()
	dir := canon(t, t.TempDir())
	write(t, filepath.Join(dir, "a.go"), "package a\n\nimport \"fmt\"\n\n// T <is> & more.\ntype T struct{}\n\nfunc (t *T) M() {\n\tfmt.Println(\"<&>\")\n}\n\nfunc F() {}\n")
	write(t, filepath.Join(dir, "p.py"), "import os\n\nclass C:\n    def m(self):\n        return 1\n\ndef f():\n    pass\n")
	write(t, filepath.Join(dir, "doc.md"), "# Title <x>\n\ntext\n\n## Sub & more\n")
	write(t, filepath.Join(dir, "data.json"), "{\"a\": {\"b\": [1, 2]}, \"<k>\\n\": \"v\"}\n")
	write(t, filepath.Join(dir, "b.txt"), "alpha\nbeta <x> & y\r\ngamma\rdelta\n")
	write(t, filepath.Join(dir, "sub/c.txt"), "alpha again\n")
	var big strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&big, "line %d alpha\n", i)
	}
	write(t, filepath.Join(dir, "big.txt"), big.String())
	return dir
}

func TestInspectFileParity(t *testing.T) {
	root := fileRoot(t)
	cs := connect(t, newServer(t, Options{Roots: []string{root}}), nil)
	tool := toolOf(t, cs, "inspect_file")
	for _, p := range []string{"a.go", "p.py", "doc.md", "data.json", "b.txt", "missing.go", "sub", "../x.go", "p.py/", "b.txt/", "sub/"} {
		res := call(t, cs, "inspect_file", map[string]any{"path": p})
		out, code := cli(t, root, "inspect", p)
		want := decodeJSON(t, out)
		sameJSON(t, "inspect_file "+p, structured(t, res), want)
		if res.IsError != (code != 0) {
			t.Errorf("%s: isError %v, CLI exit %d", p, res.IsError, code)
		}
		validateOutput(t, tool, res.StructuredContent)
	}
	// A trailing slash names a directory, which a file is not: refused
	// as open(2) refuses it, also after an absolute path is made relative.
	for _, p := range []string{"p.py/", filepath.Join(root, "p.py") + "/", filepath.Join(root, "b.txt") + "/."} {
		if code := failureCode(t, call(t, cs, "inspect_file", map[string]any{"path": p})); code != "not_regular" {
			t.Errorf("inspect_file %s: %s, want not_regular", p, code)
		}
		if e, _ := structured(t, call(t, cs, "read_file", map[string]any{"path": p}))["error"].(map[string]any); e["code"] != "NOT_FOUND" {
			t.Errorf("read_file %s: %v, want NOT_FOUND", p, e)
		}
	}
	res := call(t, cs, "inspect_file", map[string]any{"path": "a.go"})
	want := "a.go: code go, 12 lines\n"
	if got := text(res); !strings.HasPrefix(got, want) || !strings.Contains(got, "method (*T).M\n") || !strings.Contains(got, "..10:") {
		t.Errorf("outline text:\n%s", got)
	}
	res = call(t, cs, "inspect_file", map[string]any{"path": "data.json"})
	if got := text(res); !strings.Contains(got, `json /<k>\n string`) {
		t.Errorf("a JSON key with a line break must stay on its line:\n%s", got)
	}
}

func TestReadFileParity(t *testing.T) {
	root := fileRoot(t)
	cs := connect(t, newServer(t, Options{Roots: []string{root}}), nil)
	tool := toolOf(t, cs, "read_file")
	for _, tc := range []struct {
		args map[string]any
		cli  []string
	}{
		{map[string]any{"path": "b.txt"}, nil},
		{map[string]any{"path": "big.txt", "offset": 2990}, []string{"--offset", "2990"}},
		{map[string]any{"path": "big.txt", "limit": 5, "offset": 7}, []string{"--offset", "7", "--limit", "5"}},
		{map[string]any{"path": "sub"}, nil},
		{map[string]any{"path": "missing.txt"}, nil},
		{map[string]any{"path": "b.txt", "offset": 99}, []string{"--offset", "99"}},
		{map[string]any{"path": "../outside.txt"}, nil},
		// A trailing slash names a directory; b.txt is a file.
		{map[string]any{"path": "b.txt/"}, nil},
	} {
		p := tc.args["path"].(string)
		res := call(t, cs, "read_file", tc.args)
		out, code := cli(t, root, append([]string{"read", p, "--format", "json", "--root", root}, tc.cli...)...)
		sameJSON(t, fmt.Sprint("read_file ", tc.args), dropKeys(structured(t, res), "observedAt", "id"), dropKeys(decodeJSON(t, out), "observedAt", "id"))
		if res.IsError != (code == 1) {
			t.Errorf("%v: isError %v, CLI exit %d", tc.args, res.IsError, code)
		}
		validateOutput(t, tool, res.StructuredContent)
	}
	// Seed 003: OUTSIDE_ALLOWED_ROOTS fails in phase open, whether the
	// server finds the path in none of its roots or the reader refuses it.
	outside := filepath.Join(filepath.Dir(root), "elsewhere.txt")
	res := call(t, cs, "read_file", map[string]any{"path": outside})
	out, _ := cli(t, root, "read", outside, "--format", "json", "--root", root)
	for _, r := range []map[string]any{structured(t, res), decodeJSON(t, out)} {
		if e, _ := r["error"].(map[string]any); e["code"] != "OUTSIDE_ALLOWED_ROOTS" || e["phase"] != "open" {
			t.Errorf("%s: error %v, want OUTSIDE_ALLOWED_ROOTS in phase open", outside, r["error"])
		}
	}
	res = call(t, cs, "read_file", map[string]any{"path": "b.txt"})
	if got, want := text(res), "1:8ed3 alpha\n2:881c beta <x> & y\n"; !strings.HasPrefix(got, want) {
		t.Errorf("read_file text %q, want verified rows %q...", got, want)
	}
}

// printedRows parses hgrep's output, "PATH":LINE:HASH TEXT per line.
func printedRows(t testing.TB, out []byte) []any {
	t.Helper()
	recs := []any{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		dec := json.NewDecoder(strings.NewReader(line))
		var path string
		if err := dec.Decode(&path); err != nil {
			t.Fatalf("hgrep row %q: %v", line, err)
		}
		rest := line[dec.InputOffset()+1:]
		ref, text, _ := strings.Cut(rest, " ")
		num, hash, _ := strings.Cut(ref, ":")
		n, _ := strconv.Atoi(num)
		recs = append(recs, map[string]any{"path": path, "line": float64(n), "hash": hash, "text": text})
	}
	return recs
}

// TestSearchParity compares the search rows with hgrep's printed rows for
// the same request (hgrep has no JSON mode: its rows are its output).
func TestSearchParity(t *testing.T) {
	root := fileRoot(t)
	// The CLI has no byte bound: the server has none either (bound_test.go
	// tests the bounds).
	cs := connect(t, newServer(t, Options{Roots: []string{root}, OutputBytes: NoOutputBound}), nil)
	tool := toolOf(t, cs, "search")
	for _, tc := range []struct {
		args map[string]any
		cli  []string
	}{
		{map[string]any{"pattern": "alpha", "paths": []string{"b.txt", "sub"}}, []string{"alpha", "b.txt", "sub"}},
		{map[string]any{"patterns": []string{"BETA", "gamma"}, "case": "insensitive", "context": 1, "paths": []string{"b.txt"}}, []string{"-i", "-C1", "-e", "BETA", "-e", "gamma", "b.txt"}},
		{map[string]any{"pattern": "<x> &", "fixed": true, "glob": []string{"*.txt"}}, []string{"-F", "-g", "*.txt", "<x> &"}},
		{map[string]any{"pattern": "alpha", "word": true, "max_count": 2, "type": []string{"txt"}}, []string{"-w", "-m2", "-t", "txt", "alpha"}},
		{map[string]any{"pattern": "line [0-9]+ alpha"}, []string{"line [0-9]+ alpha"}},
	} {
		res := call(t, cs, "search", tc.args)
		if res.IsError {
			t.Errorf("%v: %s", tc.args, text(res))
			continue
		}
		out, code := cli(t, root, append([]string{"grep", "--sort=path"}, tc.cli...)...)
		got := structured(t, res)
		complete := got["complete"] == true
		if complete != (code == 0) {
			t.Errorf("%v: complete %v, hgrep exit %d", tc.args, complete, code)
		}
		// ripgrep's order across files depends on its threads; compare
		// as sets of rows, with each row once.
		sameJSON(t, fmt.Sprint("search ", tc.args), sortRows(got["rows"].([]any)), sortRows(printedRows(t, out)))
		validateOutput(t, tool, res.StructuredContent)
		if rowsText := ungroup(t, text(res)); len(out) > 0 && !strings.Contains(rowsText, strings.SplitN(string(out), "\n", 2)[0]+"\n") {
			t.Errorf("%v: text content does not hold hgrep's rows:\n%s", tc.args, rowsText)
		}
	}
}

func sortRows(rs []any) []any {
	keyed := make([]string, len(rs))
	for i, r := range rs {
		b, _ := json.Marshal(r)
		keyed[i] = string(b)
	}
	out := make([]any, len(rs))
	idx := make([]int, len(rs))
	for i := range idx {
		idx[i] = i
	}
	sortStable(idx, func(a, b int) bool { return keyed[a] < keyed[b] })
	for i, j := range idx {
		out[i] = rs[j]
	}
	return out
}

func sortStable(idx []int, less func(a, b int) bool) {
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && less(idx[j], idx[j-1]); j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
}

// TestReadFileBudget: a read_file view is bounded by verified-row token
// admission (the CLI reads without a token budget, so this is where the two
// differ): the rows shown stay within the ceiling and the continuation
// names the first row left out.
func TestReadFileBudget(t *testing.T) {
	root := fileRoot(t)
	cs := connect(t, newServer(t, Options{Roots: []string{root}, OutputBytes: NoOutputBound}), nil)
	res := call(t, cs, "read_file", map[string]any{"path": "big.txt"})
	if res.IsError {
		t.Fatal(text(res))
	}
	m := structured(t, res)
	view := m["view"].(map[string]any)
	end := int(view["endLine"].(float64))
	if end >= 2000 || end < 100 {
		t.Fatalf("view ends at line %d; want the token budget to stop it before the 2,000-line limit", end)
	}
	reasons := m["truncation"].(map[string]any)["reasons"].([]any)
	if !contains(anyStrings(reasons), "budget") {
		t.Errorf("truncation reasons %v, want budget", reasons)
	}
	next := m["continuation"].(map[string]any)["next"].(map[string]any)
	if int(next["offset"].(float64)) != end+1 {
		t.Errorf("continuation %v after line %d", next, end)
	}
	rowsText := text(res)[:strings.Index(text(res), "\n\n")+1]
	if n := rows.CountTokens(rowsText); n > readBudget.Ceiling || n < readBudget.Limit-100 {
		t.Errorf("the rows shown are %d tokens; the budget is %d (ceiling %d)", n, readBudget.Limit, readBudget.Ceiling)
	}
}

func anyStrings(v []any) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i], _ = x.(string)
	}
	return out
}

// TestEditParity runs the same script through edit and through hpatch
// --json, each on its own copy of the workspace, and compares results and
// the files left behind.
func TestEditParity(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		dry          bool
		isError      bool
	}{
		{"applied", "in b.txt\ntype 1:8ed3 \"ALPHA <&>\"\nadd EOF \"omega\\n\"\nnew sub/n.go\ntype \"package n\\n\"\n", false, false},
		{"stale row", "in b.txt\ntype 1:0000 \"x\"\n", false, true},
		{"syntax", "in b.txt\nfrobnicate\n", false, true},
		{"language syntax", "in a.go\ntype \"func F() {}\" \"func F( {}\"\n", false, true},
		{"dry run", "in b.txt\ntype \"alpha\" \"ALPHA\"\n", true, false},
		{"unchanged", "in b.txt\ntype \"alpha\" \"alpha\"\n", false, false},
		{"escape", "in ../outside.txt\ntype 1:8ed3 \"x\"\n", false, true},
	} {
		mcpRoot, cliRoot := fileRoot(t), fileRoot(t)
		cs := connect(t, newServer(t, Options{Roots: []string{mcpRoot}}), nil)
		res := call(t, cs, "edit", map[string]any{"script": tc.script, "dry_run": tc.dry})
		if res.IsError != tc.isError {
			t.Errorf("%s: isError %v: %s", tc.name, res.IsError, text(res))
		}
		args := []string{"patch", "--json"}
		if tc.dry {
			args = append(args, "--dry-run")
		}
		script := filepath.Join(t.TempDir(), "script")
		write(t, script, tc.script)
		out, code := cli(t, cliRoot, append(args, "-f", script)...)
		if (code != 0) != tc.isError {
			t.Errorf("%s: hpatch exit %d", tc.name, code)
		}
		sameJSON(t, "edit "+tc.name, structured(t, res), decodeJSON(t, out))
		validateOutput(t, toolOf(t, cs, "edit"), res.StructuredContent)
		for _, f := range []string{"b.txt", "a.go", "sub/n.go"} {
			a, aerr := os.ReadFile(filepath.Join(mcpRoot, f))
			b, berr := os.ReadFile(filepath.Join(cliRoot, f))
			if string(a) != string(b) || (aerr == nil) != (berr == nil) {
				t.Errorf("%s: %s differs after edit and hpatch: %q vs %q", tc.name, f, a, b)
			}
		}
	}
}
