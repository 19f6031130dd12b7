package mcpserver

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/symbol/symboltest"
)

// symbolServer is a server whose roots hold the Go fixture, with the
// language servers found.
func symbolServer(t *testing.T, structuredOut bool) (*Server, string, map[string]string) {
	t.Helper()
	env := symboltest.Env(t)
	root := canon(t, t.TempDir())
	symboltest.Copy(t, filepath.Join(symboltest.Repo(), "internal", "symbol", "testdata", "go"), root)
	o := Options{Roots: []string{root}, LookupEnv: symboltest.Lookup(env), Structured: structuredOut}
	s := newTextServer(t, o)
	t.Cleanup(s.Close)
	return s, root, env
}

// hsymbolOut is what hsymbol prints for the same question, with its
// servers started for the call (--no-broker).
func hsymbolOut(t *testing.T, root string, env map[string]string, args ...string) string {
	t.Helper()
	cmd := exec.Command(rowkitBin(t), append([]string{"symbol", "--no-broker"}, args...)...)
	cmd.Dir = root
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, _ := cmd.Output()
	return string(out)
}

// TestSymbolTool: the tool's text is hsymbol's output for the same
// question; a structured server returns the engine's result with it; a
// stale row fails with the current rows; bad arguments fail before any
// server is asked; every code is in the tool's vocabulary (checkCodes).
func TestSymbolTool(t *testing.T) {
	s, root, env := symbolServer(t, false)
	cs := connect(t, s, nil)
	row := func(file string, n int) string { return strconv.Itoa(n) + ":" + rowHash(t, root, file, n) }
	for _, q := range [][]string{
		{"def", "cmd/geo/main.go", row("cmd/geo/main.go", 10), "Total"},
		{"refs", "geo/shape.go", row("geo/shape.go", 12), "Area"},
		{"impl", "geo/shape.go", row("geo/shape.go", 11), "Shape"},
		{"calls-in", "geo/shape.go", row("geo/shape.go", 35), "Sum"},
		{"hover", "geo/shape.go", row("geo/shape.go", 35), "Sum"},
	} {
		res := call(t, cs, "symbol", map[string]any{"op": q[0], "path": q[1], "row": q[2], "symbol": q[3]})
		want := hsymbolOut(t, root, env, q...)
		if res.IsError || text(res) != want || want == "" {
			t.Errorf("%v: the tool says\n%s\nhsymbol says\n%s", q, text(res), want)
		}
		if res.StructuredContent != nil {
			t.Errorf("%v: structuredContent on a text server", q)
		}
	}
	res := call(t, cs, "symbol", map[string]any{"op": "find", "query": "Sum", "paths": []string{"geo"}})
	if want := hsymbolOut(t, root, env, "find", "Sum", "geo"); text(res) != want {
		t.Errorf("find: %q, want %q", text(res), want)
	}
	// A bare line: the answer, then the row's identity.
	res = call(t, cs, "symbol", map[string]any{"op": "def", "path": "cmd/geo/main.go", "row": "10", "symbol": "Total"})
	if !strings.HasSuffix(text(res), "[symbol: row 10 is "+row("cmd/geo/main.go", 10)+"]\n") {
		t.Errorf("a bare row: %q", text(res))
	}
	// A stale row: one line, then the current rows.
	res = call(t, cs, "symbol", map[string]any{"op": "def", "path": "cmd/geo/main.go", "row": "10:0000", "symbol": "Total"})
	lines := strings.Split(strings.TrimSuffix(text(res), "\n"), "\n")
	if !res.IsError || !strings.HasPrefix(lines[0], "row_stale: cmd/geo/main.go row 10:0000 is stale") || len(lines) != 8 || !strings.HasPrefix(lines[4], `"cmd/geo/main.go":10:`) {
		t.Errorf("a stale row: %q", text(res))
	}
	for _, bad := range []map[string]any{
		{"op": "goto", "path": "a.go", "row": "1", "symbol": "x"},
		{"op": "def", "path": "geo/shape.go", "row": "x", "symbol": "Sum"},
		{"op": "def", "path": "geo/shape.go", "row": "35", "symbol": "Sum", "n": 0, "wait_seconds": -1},
		{"op": "find"},
		{"op": "def", "path": "../etc/passwd", "row": "1", "symbol": "root"},
	} {
		if res := call(t, cs, "symbol", bad); !res.IsError || strings.Contains(strings.TrimSuffix(text(res), "\n"), "\n") {
			t.Errorf("%v: %q", bad, text(res))
		}
	}
}

// TestSymbolToolStructured: a structured server's result is the engine's
// Result, its entries the rows of the text.
func TestSymbolToolStructured(t *testing.T) {
	s, _, _ := symbolServer(t, true)
	cs := connect(t, s, nil)
	res := call(t, cs, "symbol", map[string]any{"op": "find", "query": "Describe"})
	m := structured(t, res)
	entries, _ := m["entries"].([]any)
	if res.IsError || m["complete"] != true || len(entries) != 1 || !strings.Contains(text(res), "func Describe(") {
		t.Errorf("structured find: %v\n%s", m, text(res))
	}
	validateOutput(t, toolOf(t, cs, "symbol"), m)
}
