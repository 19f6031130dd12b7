package symbol

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/rowkit/rowkit/internal/inspect"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/symbol/symboltest"
	"github.com/rowkit/rowkit/internal/workspace"
)

// refQuery is one question for the reference client (testdata/refclient.py).
type refQuery struct {
	Op        string `json:"op"`
	File      string `json:"file,omitempty"`
	Line      int    `json:"line"`
	Character int    `json:"character"`
	Query     string `json:"query,omitempty"`
}

// reference asks the reference client, a plain LSP client written apart
// from rowkit's in Python, the queries against the same server, and
// returns its answers mapped to rows as hsymbol documents them.
func reference(t *testing.T, spec *server, root string, env map[string]string, qs []refQuery) []string {
	t.Helper()
	e, err := Open(mustRoot(t, root), Options{LookupEnv: symboltest.Lookup(env)})
	if err != nil {
		t.Fatal(err)
	}
	exe, args, ok := spec.find(symboltest.Lookup(env), absPath(symboltest.Lookup(env)), root)
	e.Close()
	if !ok {
		t.Fatalf("%s not found", spec.Name)
	}
	wait := map[readiness]string{readyProgress: "progress", readyProbe: "probe", readyAnswer: "answer"}[spec.Ready]
	settings := spec.Settings
	if settings == nil {
		settings = map[string]any{}
	}
	in, _ := json.Marshal(map[string]any{
		"cmd": append([]string{exe}, args...), "env": env, "root": root,
		"settings": settings, "wait": wait, "queries": qs,
	})
	cmd := exec.Command("python3", "testdata/refclient.py")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the reference client failed: %v\n%s", err, stderr.String())
	}
	var res []string
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("the reference client's output: %v\n%s", err, out)
	}
	return res
}

func mustRoot(t *testing.T, dir string) *workspace.Root {
	t.Helper()
	r, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// copyTree copies the fixture src to a new temporary directory and returns
// its canonical path.
func copyTree(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	symboltest.Copy(t, src, dst)
	real, err := filepath.EvalSymlinks(dst)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// position is a place a test asks about: a token's occurrence.
type position struct {
	path   string
	line   int // one-based
	n      int // which occurrence on the line, 1-based; 0 when alone
	sym    string
	char16 int
}

// positions finds every occurrence of the names in the files below root
// with one of exts, as whole words.
func positions(t testing.TB, root string, exts []string, names []string) []position {
	t.Helper()
	var out []position
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !contains(exts, filepath.Ext(p)) {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		b, _ := os.ReadFile(p)
		x, err := rows.NewIndex(b)
		if err != nil {
			t.Fatal(err)
		}
		for ln := 1; ln <= x.Count(); ln++ {
			text := string(x.Text(ln))
			for _, name := range names {
				locs := regexp.MustCompile(`\b`+regexp.QuoteMeta(name)+`\b`).FindAllStringIndex(text, -1)
				for i, l := range locs {
					n := 0
					if len(locs) > 1 {
						n = i + 1
					}
					out = append(out, position{path: rel, line: ln, n: n, sym: name, char16: len(utf16.Encode([]rune(text[:l[0]])))})
				}
			}
		}
		return nil
	})
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// withoutSpans is an answer without its span lines (which come from
// inspect_file, not from the server), checking each span against
// inspect_file's outline: an entry with that span, kind and name, and
// the definition's row right after it.
func withoutSpans(t *testing.T, root *workspace.Root, res *Result) string {
	calls := res.Op == OpCallsIn || res.Op == OpCallsOut
	t.Helper()
	var b []byte
	for i, e := range res.Entries {
		if e.Kind != KindSpan {
			b = AppendEntry(b, &res.Entries[i])
			continue
		}
		ir, err := inspect.Inspect(context.Background(), root, e.Path)
		found := false
		for _, o := range ir.Data.Outline {
			if err == nil && o.Span.Start.Line == e.Line && o.Span.Start.Hash == e.Hash && o.Span.End.Line == e.EndLine &&
				o.Span.End.Hash == e.EndHash && o.Kind == e.SymbolKind && strings.HasSuffix(e.Name, *o.Name) {
				found = true
			}
		}
		if !found && !calls {
			// A caller or callee inspect_file does not outline is shown
			// with the server's own range (a function literal).
			t.Errorf("span %s is not an outline entry of %s", AppendEntry(nil, &e), e.Path)
		}
		if calls {
			continue
		}
		if i+1 >= len(res.Entries) || res.Entries[i+1].Kind != KindRow || res.Entries[i+1].Path != e.Path {
			t.Errorf("span %s is not followed by a row of its file", AppendEntry(nil, &e))
		}
	}
	return string(b)
}

// agreement asks hsymbol's engine and the reference client the same
// questions and requires the same answers, byte for byte.
func agreement(t *testing.T, fixture string, names []string, ops []string, finds []string) {
	env := symboltest.Env(t)
	root := copyTree(t, fixture)
	lang := map[string]string{"go": "go", "py": "python", "ts": "typescript"}[filepath.Base(fixture)]
	if lang == "" {
		lang = filepath.Base(fixture)
	}
	spec := serverByLang(lang)
	ws := mustRoot(t, root)
	e, err := Open(ws, Options{LookupEnv: symboltest.Lookup(env)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var qs []refQuery
	var reqs []Request
	for _, p := range positions(t, root, spec.Exts, names) {
		for _, op := range ops {
			qs = append(qs, refQuery{Op: op, File: p.path, Line: p.line - 1, Character: p.char16})
			reqs = append(reqs, Request{Op: op, Path: p.path, Row: fmt.Sprint(p.line), Symbol: p.sym, N: p.n})
		}
	}
	for _, f := range finds {
		qs = append(qs, refQuery{Op: OpFind, Query: f})
		reqs = append(reqs, Request{Op: OpFind, Query: f})
	}
	if len(reqs) < 10 {
		t.Fatalf("only %d queries", len(reqs))
	}
	// rowkit's answers first: its wait for the index is what is tested;
	// the reference client then starts on a warm cache.
	got := make([]string, len(reqs))
	for i, r := range reqs {
		res, err := e.Query(context.Background(), r, rows.Budget{Limit: 1 << 30, Ceiling: 1 << 30})
		if err != nil {
			got[i] = "error: " + err.Error()
			continue
		}
		if !res.Complete {
			t.Errorf("%+v: not complete: %+v", r, res.Reason)
		}
		got[i] = withoutSpans(t, ws, res) + res.Hover
	}
	want := reference(t, spec, root, env, qs)
	nonEmpty := 0
	for i := range reqs {
		if want[i] != "" {
			nonEmpty++
		}
		if strings.HasPrefix(got[i], "error: ") && strings.HasPrefix(want[i], "error: ") {
			// Both were refused (pyright has no implementation request).
			continue
		}
		if got[i] != want[i] {
			t.Errorf("%s %s:%s %s (N %d):\nrowkit:\n%s\nreference client:\n%s", reqs[i].Op, reqs[i].Path, reqs[i].Row, reqs[i].Symbol, reqs[i].N, got[i], want[i])
		}
	}
	if nonEmpty < len(reqs)/3 {
		t.Errorf("only %d of %d answers are not empty: the positions ask about nothing", nonEmpty, len(reqs))
	}
	t.Logf("%d queries agree, %d with a non-empty answer", len(reqs), nonEmpty)
}

var allOps = []string{OpDef, OpRefs, OpImpl, OpTypedef, OpHover, OpCallsIn, OpCallsOut}

func TestAgreementGo(t *testing.T) {
	agreement(t, "testdata/go", []string{"Shape", "Area", "Sum", "Square", "Circle", "Describe", "Total", "Name", "Println", "geo"}, allOps, []string{"Sum", "Area", "Shap", "circle"})
}

func TestAgreementPython(t *testing.T) {
	agreement(t, "testdata/py", []string{"Animal", "Dog", "Cat", "speak", "Keeper", "adopt", "chorus", "morning", "name", "append"}, allOps, []string{"speak", "Keep", "Dog"})
}

func TestAgreementTypeScript(t *testing.T) {
	agreement(t, "testdata/ts", []string{"Item", "Task", "Note", "label", "byId", "List", "First", "id", "labels", "map"}, allOps, []string{"Task", "label", "byI"})
}
