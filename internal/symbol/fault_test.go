package symbol

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/symbol/symboltest"
)

// genModule writes a Go module of n packages, each calling the one
// before it through an interface and a generic function, so that gopls
// has a workspace to load and a symbol with references in every package.
func genModule(t testing.TB, n int) string {
	t.Helper()
	root := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/gen\n\ngo 1.26\n")
	write("base/base.go", `package base

// Doer does.
type Doer interface {
	Do(n int) int
}

// Apply applies d to every value.
func Apply[T Doer](d T, xs []int) int {
	total := 0
	for _, x := range xs {
		total += d.Do(x)
	}
	return total
}
`)
	for i := range n {
		prev := "example.com/gen/base"
		write(fmt.Sprintf("p%03d/p.go", i), fmt.Sprintf(`package p%03d

import "%s"

// T%03d is a Doer.
type T%03d struct{ k int }

// Do multiplies.
func (t T%03d) Do(n int) int { return n * t.k }

// Run uses base.Apply.
func Run() int { return base.Apply(T%03d{k: %d}, []int{1, 2, 3}) }
`, i, prev, i, i, i, i, i))
	}
	real, _ := filepath.EvalSymlinks(root)
	return real
}

// applyRefs asks for the references of base.Apply.
var applyRefs = Request{Op: OpRefs, Path: "base/base.go", Row: "9", Symbol: "Apply"}

func openEngine(t *testing.T, root string, trace func(lang string, in bool, body []byte)) *Engine {
	t.Helper()
	e, err := Open(mustRoot(t, root), Options{LookupEnv: symboltest.Lookup(symboltest.Env(t)), Trace: trace})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

var unbounded = rows.Budget{Limit: 1 << 30, Ceiling: 1 << 30}

// TestColdServer: the first query, asked with a wait shorter than gopls
// takes to load the workspace, is never a complete answer; once gopls is
// ready, the same query is, and holds every reference.
func TestColdServer(t *testing.T) {
	root := genModule(t, 120)
	e := openEngine(t, root, nil)
	cold := applyRefs
	cold.Wait = 20 * time.Millisecond
	res, err := e.Query(context.Background(), cold, unbounded)
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete || res.Reason == nil || res.Reason.Code != CodeIndexIncomplete {
		t.Fatalf("a cold answer: complete %v, reason %+v, %d entries", res.Complete, res.Reason, len(res.Entries))
	}
	t.Logf("cold: %d entries, %s", len(res.Entries), res.Reason.Message)
	warm, err := e.Query(context.Background(), applyRefs, unbounded)
	if err != nil {
		t.Fatal(err)
	}
	if !warm.Complete || len(warm.Entries) != 121 {
		t.Fatalf("warm: complete %v, %d entries, want 121 (the definition and a call in each package)", warm.Complete, len(warm.Entries))
	}
}

// serverPid is the pid of the engine's server of lang.
func serverPid(t *testing.T, e *Engine, lang string) int {
	t.Helper()
	pid := e.Servers()[lang]
	if pid == 0 {
		t.Fatalf("no %s server runs", lang)
	}
	return pid
}

// onRequest returns a trace that runs fn once, when the query's method is
// sent.
func onRequest(method string, fn func()) (func(string, bool, []byte), *sync.Once) {
	var once sync.Once
	armed := make(chan struct{})
	trace := func(lang string, in bool, body []byte) {
		select {
		case <-armed:
		default:
			return
		}
		if !in && strings.Contains(string(body), `"method":"`+method+`"`) {
			once.Do(fn)
		}
	}
	return trace, &once
}

// TestServerKilledMidQuery: a server that dies while it answers is
// server_crashed, never an empty or short answer; the next query starts a
// new one and answers whole.
func TestServerKilledMidQuery(t *testing.T) {
	root := genModule(t, 20)
	var e *Engine
	armed := false
	var mu sync.Mutex
	e = openEngine(t, root, func(lang string, in bool, body []byte) {
		mu.Lock()
		defer mu.Unlock()
		if armed && !in && strings.Contains(string(body), `"method":"textDocument/references"`) {
			armed = false
			syscall.Kill(e.Servers()["go"], syscall.SIGKILL)
		}
	})
	if _, err := e.Query(context.Background(), applyRefs, unbounded); err != nil {
		t.Fatal(err)
	}
	first := serverPid(t, e, "go")
	mu.Lock()
	armed = true
	mu.Unlock()
	res, err := e.Query(context.Background(), applyRefs, unbounded)
	if !errs.Is(err, CodeServerCrashed) || res != nil {
		t.Fatalf("killed mid-query: %v, %+v", err, res)
	}
	t.Log(err)
	res, err = e.Query(context.Background(), applyRefs, unbounded)
	if err != nil || !res.Complete || len(res.Entries) != 21 {
		t.Fatalf("after the crash: %v, %+v", err, res)
	}
	if serverPid(t, e, "go") == first {
		t.Error("the dead server was not replaced")
	}
}

// TestHangingServer: a server that stops answering (SIGSTOP) is
// server_timeout once the wait runs out; once it runs again, it answers.
func TestHangingServer(t *testing.T) {
	root := genModule(t, 5)
	e := openEngine(t, root, nil)
	if _, err := e.Query(context.Background(), applyRefs, unbounded); err != nil {
		t.Fatal(err)
	}
	pid := serverPid(t, e, "go")
	syscall.Kill(pid, syscall.SIGSTOP)
	defer syscall.Kill(pid, syscall.SIGCONT)
	r := applyRefs
	r.Wait = 500 * time.Millisecond
	start := time.Now()
	res, err := e.Query(context.Background(), r, unbounded)
	if !errs.Is(err, CodeServerTimeout) || res != nil {
		t.Fatalf("a hung server: %v, %+v", err, res)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the wait took %s", d)
	}
	syscall.Kill(pid, syscall.SIGCONT)
	res, err = e.Query(context.Background(), applyRefs, unbounded)
	if err != nil || !res.Complete {
		t.Fatalf("once it runs again: %v, %+v", err, res)
	}
}

// TestEditedDuringQuery: a file the answer shows, edited while the server
// answers, fails the query with changed; the next query sees the edit.
func TestEditedDuringQuery(t *testing.T) {
	root := genModule(t, 5)
	var mu sync.Mutex
	armed := false
	e := openEngine(t, root, func(lang string, in bool, body []byte) {
		mu.Lock()
		defer mu.Unlock()
		if armed && !in && strings.Contains(string(body), `"method":"textDocument/references"`) {
			armed = false
			p := filepath.Join(root, "p003", "p.go")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, append([]byte("// edited\n"), b...), 0o644)
		}
	})
	if _, err := e.Query(context.Background(), applyRefs, unbounded); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	armed = true
	mu.Unlock()
	res, err := e.Query(context.Background(), applyRefs, unbounded)
	if !errs.Is(err, errs.Changed) || res != nil {
		t.Fatalf("edited during the query: %v, %+v", err, res)
	}
	res, err = e.Query(context.Background(), applyRefs, unbounded)
	if err != nil || !res.Complete {
		t.Fatalf("after the edit: %v, %+v", err, res)
	}
	for _, en := range res.Entries {
		if en.Path == "p003/p.go" && !strings.Contains(en.Text, "base.Apply") {
			t.Errorf("a row that is not the call: %+v", en)
		}
		if en.Path == "p003/p.go" && en.Line != 13 {
			t.Errorf("the call moved to line 13, the answer says %d", en.Line)
		}
	}
}

// TestEditsSeenBetweenQueries: what hpatch does between two queries (a
// file renamed over another, a new file, a deleted one) is what the next
// answer shows, from the same server.
func TestEditsSeenBetweenQueries(t *testing.T) {
	root := genModule(t, 3)
	e := openEngine(t, root, func(lang string, in bool, body []byte) {
		if os.Getenv("TRACE") != "" && !strings.Contains(string(body), "logMessage") {
			t.Logf("%v %s", in, body)
		}
	})
	if _, err := e.Query(context.Background(), applyRefs, unbounded); err != nil {
		t.Fatal(err)
	}
	pid := serverPid(t, e, "go")
	tmp := filepath.Join(root, "p001", ".p.go.tmp")
	os.WriteFile(tmp, []byte("package p001\n\nimport \"example.com/gen/base\"\n\ntype T struct{}\n\nfunc (T) Do(n int) int { return n }\n\nvar _ = base.Apply(T{}, nil)\nvar _ = base.Apply(T{}, []int{1})\n"), 0o644)
	os.Rename(tmp, filepath.Join(root, "p001", "p.go"))
	os.Remove(filepath.Join(root, "p002", "p.go"))
	os.MkdirAll(filepath.Join(root, "q"), 0o755)
	os.WriteFile(filepath.Join(root, "q", "q.go"), []byte("package q\n\nimport \"example.com/gen/base\"\n\ntype U int\n\nfunc (U) Do(n int) int { return n }\n\nvar X = base.Apply(U(0), nil)\n"), 0o644)
	if os.Getenv("SLEEP") != "" {
		time.Sleep(3 * time.Second)
	}
	res, err := e.Query(context.Background(), applyRefs, unbounded)
	if err != nil || !res.Complete {
		t.Fatalf("%v, %+v", err, res)
	}
	var got []string
	for _, en := range res.Entries {
		got = append(got, fmt.Sprintf("%s:%d", en.Path, en.Line))
	}
	want := "base/base.go:9 p000/p.go:12 p001/p.go:9 p001/p.go:10 q/q.go:9"
	if strings.Join(got, " ") != want {
		t.Errorf("got %s\nwant %s", strings.Join(got, " "), want)
	}
	if serverPid(t, e, "go") == pid {
		t.Error("a new package did not restart gopls (it would not see it)")
	}
	// A file added to a package gopls knows, and an edit: told, no restart.
	pid = serverPid(t, e, "go")
	os.WriteFile(filepath.Join(root, "p000", "more.go"), []byte("package p000\n\nimport \"example.com/gen/base\"\n\nvar Y = base.Apply(T000{}, nil)\n"), 0o644)
	res, err = e.Query(context.Background(), applyRefs, unbounded)
	if err != nil || !res.Complete {
		t.Fatalf("%v, %+v", err, res)
	}
	if !strings.Contains(Body(res), `"p000/more.go":5:`) {
		t.Errorf("the new file of a known package is missing:\n%s", Body(res))
	}
	if serverPid(t, e, "go") != pid {
		t.Error("a new file in a known package restarted gopls; it should have been told")
	}
}

// TestNewFilesSeenPythonTypeScript: a file made in a new directory is in
// the next answer: TypeScript 7 is told, pyright restarted (it takes a
// new file in only after a delay of its own).
func TestNewFilesSeenPythonTypeScript(t *testing.T) {
	for _, tc := range []struct {
		fixture, file, text string
		req                 Request
		want                string
	}{
		{"testdata/py", "extra/more.py", "from zoo.animals import Dog\n\nprint(Dog(\"x\").speak())\n",
			Request{Op: OpRefs, Path: "zoo/animals.py", Row: "15", Symbol: "Dog"}, `"extra/more.py":1:`},
		{"testdata/ts", "src/extra/more.ts", "import { Task } from \"../model\";\n\nexport const t = new Task(2, \"x\");\n",
			Request{Op: OpRefs, Path: "src/model.ts", Row: "6", Symbol: "Task"}, `"src/extra/more.ts":3:`},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			root := copyTree(t, tc.fixture)
			e := openEngine(t, root, nil)
			if _, err := e.Query(context.Background(), tc.req, unbounded); err != nil {
				t.Fatal(err)
			}
			lang := serverFor(filepath.Ext(tc.file)).Lang
			pid := serverPid(t, e, lang)
			os.MkdirAll(filepath.Dir(filepath.Join(root, tc.file)), 0o755)
			os.WriteFile(filepath.Join(root, tc.file), []byte(tc.text), 0o644)
			res, err := e.Query(context.Background(), tc.req, unbounded)
			if err != nil || !res.Complete {
				t.Fatalf("%v, %+v", err, res)
			}
			if !strings.Contains(Body(res), tc.want) {
				t.Errorf("the new file is missing:\n%s", Body(res))
			}
			if restarted := serverPid(t, e, lang) != pid; restarted != (lang == "python") {
				t.Errorf("restarted %v", restarted)
			}
		})
	}
}

// TestFirstAnswerListsWorkspace: the first references answer of a fresh
// pyright names the files that import the symbol, not only the open
// document: pyright lists the workspace's files in a timer after its
// workspace is initialized, and the engine waits for the list.
func TestFirstAnswerListsWorkspace(t *testing.T) {
	for i := range 3 {
		root := copyTree(t, "testdata/py")
		e := openEngine(t, root, nil)
		res, err := e.Query(context.Background(), Request{Op: OpRefs, Path: "zoo/animals.py", Row: "15", Symbol: "Dog"}, unbounded)
		if err != nil || !res.Complete {
			t.Fatalf("%v, %+v", err, res)
		}
		if body := Body(res); !strings.Contains(body, `"zoo/keeper.py":17:`) {
			t.Fatalf("run %d: the importing file is missing:\n%s", i, body)
		}
	}
}
