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
	"slices"
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
	lang := map[string]string{"go": "go", "py": "python", "ts": "typescript"}[filepath.Base(fixture)]
	agreeIn(t, copyTree(t, fixture), lang, names, ops, finds, 0)
}

// agreeIn is agreement in a prepared workspace, asking about at most
// most positions (0: all).
func agreeIn(t *testing.T, root, lang string, names []string, ops []string, finds []string, most int) {
	env := symboltest.Env(t)
	spec := serverByLang(lang)
	ws := mustRoot(t, root)
	e, err := Open(ws, Options{LookupEnv: symboltest.Lookup(env)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var qs []refQuery
	var reqs []Request
	ps := positions(t, root, spec.Exts, names)
	if most > 0 && len(ps) > most {
		// Spread over the files: every len/most-th position.
		step := len(ps) / most
		var keep []position
		for i := 0; i < len(ps) && len(keep) < most; i += step {
			keep = append(keep, ps[i])
		}
		ps = keep
	}
	for _, p := range ps {
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
		if reqs[i].Op == OpHover {
			// gopls lists a doc comment's link definitions ("[Pop]:
			// file:///...#59,6") in an order of its own that changes from
			// one answer to the next: compare them as a set.
			got[i], want[i] = sortLinkDefs(got[i]), sortLinkDefs(want[i])
		}
		if got[i] != want[i] {
			t.Errorf("%s %s:%s %s%s (N %d):\nrowkit:\n%s\nreference client:\n%s", reqs[i].Op, reqs[i].Path, reqs[i].Row, reqs[i].Symbol, reqs[i].Query, reqs[i].N, got[i], want[i])
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

// TestAgreementRealCode: the same agreement on code nobody here wrote, or
// generated: packages of the Go tree copied into a module of their own
// (interfaces in container/heap, generics in slices and maps), the
// Python library's json package, and a generated TypeScript project with
// types and JSX.
func TestAgreementRealCode(t *testing.T) {
	t.Run("go", func(t *testing.T) {
		goroot := strings.TrimSpace(string(must(exec.Command("go", "env", "GOROOT").Output())))
		root := t.TempDir()
		os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/std\n\ngo 1.26\n"), 0o644)
		for _, pkg := range []string{"container/heap", "container/list", "slices", "maps"} {
			copyGoPackage(t, filepath.Join(goroot, "src", pkg), filepath.Join(root, pkg))
		}
		// A user of the copies, so that references cross packages.
		os.MkdirAll(filepath.Join(root, "use"), 0o755)
		os.WriteFile(filepath.Join(root, "use", "use.go"), []byte(`package use

import (
	"slices"
	"example.com/std/container/heap"
	"example.com/std/container/list"
	"example.com/std/slices"
)

type ints []int

func (h ints) Len() int           { return len(h) }
func (h ints) Less(i, j int) bool { return h[i] < h[j] }
func (h ints) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *ints) Push(x any)        { *h = append(*h, x.(int)) }
func (h *ints) Pop() any          { old := *h; x := old[len(old)-1]; *h = old[:len(old)-1]; return x }

func Use() int {
	h := &ints{3, 1}
	heap.Init(h)
	heap.Push(h, 2)
	l := list.New()
	l.PushBack(heap.Pop(h))
	return slices.Index([]int{1, 2}, l.Front().Value.(int))
}
`), 0o644)
		real, _ := filepath.EvalSymlinks(root)
		// The finds are queries whose answers stay under gopls's cap of
		// 100 symbols: a capped answer ("Elem" fuzzily matches every Len
		// too) keeps whichever of the equal scores one server instance
		// reached first, so two servers differ on it.
		agreeIn(t, real, "go", []string{"Interface", "Push", "Pop", "Init", "PushBack", "Element", "Index", "Sort", "Keys", "Collect", "New"}, allOps, []string{"Push", "PushBa"}, 60)
	})
	t.Run("python", func(t *testing.T) {
		stdlib := strings.TrimSpace(string(must(exec.Command("python3", "-c", "import json, os; print(os.path.dirname(json.__file__))").Output())))
		root := t.TempDir()
		symboltest.Copy(t, stdlib, filepath.Join(root, "json"))
		os.RemoveAll(filepath.Join(root, "json", "__pycache__"))
		real, _ := filepath.EvalSymlinks(root)
		agreeIn(t, real, "python", []string{"JSONDecoder", "JSONDecodeError", "JSONEncoder", "decode", "encode", "scanstring", "raw_decode", "make_scanner"}, allOps, []string{"JSONDec", "scan"}, 60)
	})
	t.Run("typescript", func(t *testing.T) {
		root := t.TempDir()
		genTypeScript(t, root, 40)
		real, _ := filepath.EvalSymlinks(root)
		agreeIn(t, real, "typescript", []string{"Task", "Item", "label", "make003", "List007", "View011", "add"}, allOps, []string{"Task", "View01"}, 60)
	})
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// copyGoPackage copies a package's Go files, tests left out.
func copyGoPackage(t *testing.T, src, dst string) {
	t.Helper()
	os.MkdirAll(dst, 0o755)
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(src, e.Name()))
		os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644)
	}
}

// genTypeScript writes a project with types and JSX: a Task class and an
// Item interface, n generic list modules and n components.
func genTypeScript(t *testing.T, dir string, n int) {
	t.Helper()
	write := func(rel, text string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("tsconfig.json", `{"compilerOptions": {"target": "es2022", "module": "esnext", "moduleResolution": "bundler", "jsx": "preserve", "strict": true}, "include": ["src"]}`+"\n")
	write("src/jsx.d.ts", "declare namespace JSX {\n  interface IntrinsicElements { [name: string]: any }\n}\n")
	write("src/model/task.ts", "export interface Item {\n  id: number;\n  label(): string;\n}\n\nexport class Task implements Item {\n  constructor(public id: number, public title: string) {}\n  label(): string {\n    return this.title;\n  }\n}\n")
	for i := range n {
		write(fmt.Sprintf("src/model/m%03d.ts", i), fmt.Sprintf("import { Item, Task } from \"./task\";\n\nexport class List%03d<T extends Item> {\n  private items: T[] = [];\n  add(item: T): this {\n    this.items.push(item);\n    return this;\n  }\n  labels(): string[] {\n    return this.items.map((it) => it.label());\n  }\n}\n\nexport function make%03d(): List%03d<Task> {\n  return new List%03d<Task>().add(new Task(%d, \"t\"));\n}\n", i, i, i, i, i))
		write(fmt.Sprintf("src/view/v%03d.tsx", i), fmt.Sprintf("import { Task } from \"../model/task\";\nimport { make%03d } from \"../model/m%03d\";\n\nexport function View%03d(props: { title: string }) {\n  const list = make%03d().add(new Task(%d, props.title));\n  return <ul>{list.labels().map((l) => <li key={l}>{l}</li>)}</ul>;\n}\n", i, i, i, i, i))
	}
}

// linkDef is a Markdown link definition line of a hover.
var linkDef = regexp.MustCompile(`^\[[^\]]+\]: \S+$`)

// sortLinkDefs sorts each run of link definition lines of text.
func sortLinkDefs(text string) string {
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && linkDef.MatchString(lines[j]) {
			j++
		}
		if j > i {
			slices.Sort(lines[i:j])
			i = j
		} else {
			i++
		}
	}
	return strings.Join(lines, "\n")
}
