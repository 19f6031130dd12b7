package mcpserver

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/rows"
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

// symbolKeptRE is the line that ends a symbol answer a bound cut: why,
// and the read_file call that reads the rest on.
var symbolKeptRE = regexp.MustCompile(`\[symbol: output_incomplete\] [^\n]*; continue with: read_file \{"path":"(@out/[0-9a-z]{10})","offset":([0-9]+)\}\n$`)

// TestSymbolKeptFollow: an answer cut by a client's byte bound, or by the
// engine's token rule, is kept whole, and read_file from the offset its
// line names reads the rest on within the bound: the rows shown and read
// on are the whole answer of real gopls, each once, in order.
func TestSymbolKeptFollow(t *testing.T) {
	env := symboltest.Env(t)
	env["TMPDIR"] = t.TempDir()
	root := canon(t, t.TempDir())
	const calls = 3000
	var use strings.Builder
	use.WriteString("package use\n\nimport \"example.com/kept/lib\"\n\nfunc Use() {\n")
	want := []string{`"lib/lib.go":3:` + rows.Hash([]byte("func F(n int) int { return n }")) + " func F(n int) int { return n }"}
	for i := 1; i <= calls; i++ {
		line := fmt.Sprintf("\t_ = lib.F(%d)", i)
		use.WriteString(line + "\n")
		want = append(want, fmt.Sprintf(`"use/use.go":%d:%s %s`, 5+i, rows.Hash([]byte(line)), line))
	}
	use.WriteString("}\n")
	for name, src := range map[string]string{
		"go.mod":     "module example.com/kept\n\ngo 1.26\n",
		"lib/lib.go": "package lib\n\nfunc F(n int) int { return n }\n",
		"use/use.go": use.String(),
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755)
		if err := os.WriteFile(filepath.Join(root, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, structured := range []bool{false, true} {
		s := newTextServer(t, Options{Roots: []string{root}, LookupEnv: symboltest.Lookup(env), Structured: structured})
		t.Cleanup(s.Close)
		for _, c := range boundClients {
			cs := connectAs(t, s, c.name, c.version)
			res := callAs(t, cs, c, "symbol", map[string]any{"op": "refs", "path": "lib/lib.go", "row": "3", "symbol": "F"})
			if res.IsError {
				t.Fatalf("%s: %s", c.name, text(res))
			}
			if size := len(shown(t, res)); size > c.bound {
				t.Errorf("%s structured=%v: %d bytes, over %d", c.name, structured, size, c.bound)
			}
			body := strings.TrimSuffix(text(res), "[symbol: row 3 is 3:"+rows.Hash([]byte("func F(n int) int { return n }"))+"]\n")
			m := symbolKeptRE.FindStringSubmatch(body)
			if m == nil {
				t.Fatalf("%s structured=%v: the answer ends %q", c.name, structured, tail(body, 300))
			}
			shownRows := strings.Split(strings.TrimSuffix(body[:len(body)-len(m[0])], "\n"), "\n")
			next, _ := strconv.Atoi(m[2])
			if next != len(shownRows)+1 {
				t.Fatalf("%s structured=%v: %d rows shown, read on at %d", c.name, structured, len(shownRows), next)
			}
			rest := followKept(t, cs, c, m[1], next)
			if all := append(slices.Clone(shownRows), rest...); !slices.Equal(all, want) {
				t.Fatalf("%s structured=%v: %d rows shown and %d read on, want the %d of the answer (first difference %q)",
					c.name, structured, len(shownRows), len(rest), len(want), firstDiff(all, want))
			}
			t.Logf("%s structured=%v: %d rows shown, %d read on", c.name, structured, len(shownRows), len(rest))
		}
	}
}
