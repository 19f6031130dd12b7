package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/agenttest"
	"github.com/rowkit/rowkit/internal/tokens"
)

func TestSpan(t *testing.T) {
	content := "a\nb\nc\nb\nd\n"
	for _, tc := range []struct {
		old         string
		first, last int
		err         string
	}{
		{"a\n", 1, 1, ""},
		{"c\nb\n", 3, 4, ""},
		{"c\nb", 3, 4, ""},
		{"b\n", 0, 0, "not one place"},
		{"x\n", 0, 0, "not in the file"},
		{"b\nc\nb\nd\n", 2, 5, ""},
	} {
		first, last, err := span(content, tc.old)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("span(%q): %v, want an error with %q", tc.old, err, tc.err)
			}
			continue
		}
		if err != nil || first != tc.first || last != tc.last {
			t.Errorf("span(%q) = %d, %d, %v; want %d, %d", tc.old, first, last, err, tc.first, tc.last)
		}
	}
}

func rowOf(n int, text string) string {
	h := sha256.Sum256([]byte(text))
	return fmt.Sprintf("%d:%s %s", n, hex.EncodeToString(h[:2]), text)
}

// request is a Messages request whose history carries outputs, by call id.
func request(t *testing.T, outputs map[string]string) *agenttest.Request {
	var blocks []any
	for id, text := range outputs {
		blocks = append(blocks, map[string]any{"type": "tool_result", "tool_use_id": id, "content": text})
	}
	b, _ := json.Marshal(map[string]any{"messages": []any{map[string]any{"role": "user", "content": blocks}}})
	r := &agenttest.Request{API: agenttest.Messages, Body: b}
	if err := json.Unmarshal(b, &r.JSON); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestEditText: one abstract edit in the four configurations' own
// forms; in rowkit's, addressed by the rows the client handed back, and
// refused when a row of the span was not handed back or is stale.
func TestEditText(t *testing.T) {
	tree := t.TempDir()
	content := "package p\n\nfunc f() int {\n\treturn 1\n}\n\nfunc g() {}\n"
	os.WriteFile(filepath.Join(tree, "p.go"), []byte(content), 0o644)
	edit := Step{Edit: "p.go", Old: "func f() int {\n\treturn 1\n", New: "func f() int {\n\treturn 2\n"}
	read := Step{Read: "p.go", From: 3, To: 5}
	search := Step{Search: "return"}
	outline := Step{Outline: "p.go"}
	shown := strings.Join([]string{rowOf(3, "func f() int {"), rowOf(4, "\treturn 1"), rowOf(5, "}")}, "\n")

	p := &policy{cfg: ClaudeMCP, tree: tree, calls: map[string]Step{"read-1-0": read, "search-0-0": search, "outline-0-1": outline}}
	got, err := p.editText(request(t, map[string]string{"read-1-0": shown}), "p.go", []Step{edit})
	want := "in p.go\ntype " + rowOf(3, "func f() int {")[:6] + ".." + rowOf(4, "\treturn 1")[:6] + " <<PATCH\nfunc f() int {\n\treturn 2\nPATCH\n"
	if err != nil || got != want {
		t.Errorf("hpatch script:\n%s%v\nwant\n%s", got, err, want)
	}
	// Rows from a search name their file; an outline's entries are not
	// rows even where they look like one.
	got, err = p.editText(request(t, map[string]string{"search-0-0": `"p.go":` + rowOf(3, "func f() int {") + "\n\"p.go\":" + rowOf(4, "\treturn 1")}), "p.go", []Step{edit})
	if err != nil || got != want {
		t.Errorf("rows from a search: %s %v", got, err)
	}
	if _, err := p.editText(request(t, map[string]string{"outline-0-1": "3:" + rowOf(3, "func f() int {")[2:6] + " func f\n" + rowOf(4, "\treturn 1")}), "p.go", []Step{edit}); err == nil || !strings.Contains(err.Error(), "not handed back") {
		t.Errorf("an outline's entry taken for a row: %v", err)
	}
	if _, err := p.editText(request(t, map[string]string{"read-1-0": rowOf(3, "func f() int {")}), "p.go", []Step{edit}); err == nil || !strings.Contains(err.Error(), "row 4") {
		t.Errorf("a span with a row not handed back: %v", err)
	}
	os.WriteFile(filepath.Join(tree, "p.go"), []byte("package p\n\n\nfunc f() int {\n\treturn 1\n}\n"), 0o644)
	if _, err := p.editText(request(t, map[string]string{"read-1-0": shown}), "p.go", []Step{edit}); err == nil || !strings.Contains(err.Error(), "stale") {
		t.Errorf("rows handed back before the file changed: %v", err)
	}
	os.WriteFile(filepath.Join(tree, "p.go"), []byte(content), 0o644)

	p.cfg = CodexPlain
	got, err = p.editText(nil, "p.go", []Step{edit, {Edit: "p.go", Old: "func g() {}\n", New: "func g() { f() }\n"}})
	want = "*** Begin Patch\n*** Update File: p.go\n@@\n package p\n \n-func f() int {\n-\treturn 1\n+func f() int {\n+\treturn 2\n }\n \n-func g() {}\n+func g() { f() }\n*** End Patch\n"
	if err != nil || got != want {
		t.Errorf("apply_patch:\n%s%v\nwant\n%s", got, err, want)
	}
	p.cfg = ClaudePlain
	got, err = p.editText(nil, "p.go", []Step{edit})
	var args map[string]string
	json.Unmarshal([]byte(got), &args)
	if err != nil || args["old_string"] != "func f() int {\n\treturn 1" || args["file_path"] != filepath.Join(tree, "p.go") {
		t.Errorf("Edit's arguments: %s %v", got, err)
	}
}

// TestRender: the steps of one response, as each configuration's calls.
func TestRender(t *testing.T) {
	tree := t.TempDir()
	os.WriteFile(filepath.Join(tree, "a.py"), []byte("x = 1\n"), 0o644)
	steps := []Step{{Search: "x =", Path: "a.py", Context: 2, Glob: "*.py"}, {Read: "a.py", From: 1, To: 1}, {Outline: "a.py"},
		{Edit: "a.py", Old: "x = 1\n", New: "x = 2\n"}, {Run: "python3 -m unittest"}}
	r := request(t, map[string]string{"read-0-0": rowOf(1, "x = 1")})
	want := map[Config]string{
		CodexPlain: `exec_command {"cmd":"rg -n -C 2 -g '*.py' -e 'x =' a.py"}|exec_command {"cmd":"sed -n '1,1p' a.py"}|exec_command {"cmd":"rg -n -e '^\\s*(class|def|async def) ' a.py"}|` +
			"apply_patch *** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n" + `|exec_command {"cmd":"python3 -m unittest","yield_time_ms":60000}`,
		CodexRouter: `shell hgrep -C 2 -g '*.py' -e 'x =' a.py|shell hread a.py 1:1|shell inspect_file --text a.py|` +
			"shell hpatch <<'HPATCH'\nin a.py\ntype 1:" + rowOf(1, "x = 1")[2:6] + " <<PATCH\nx = 2\nPATCH\nHPATCH\npython3 -m unittest",
		ClaudeMCP: `mcp__rowkit__search {"context":2,"glob":["*.py"],"paths":["a.py"],"pattern":"x ="}|mcp__rowkit__read_file {"limit":1,"offset":1,"path":"a.py"}|mcp__rowkit__inspect_file {"path":"a.py"}|` +
			`mcp__rowkit__edit {"script":"in a.py\ntype 1:` + rowOf(1, "x = 1")[2:6] + ` \u003c\u003cPATCH\nx = 2\nPATCH\n"}|Bash {"command":"python3 -m unittest","description":"Run the tests"}`,
		ClaudePlain: `Bash {"command":"rg -n -C 2 -g '*.py' -e 'x =' a.py","description":"Search the code"}|Read {"file_path":"` + tree + `/a.py","limit":1,"offset":1}|` +
			`Bash {"command":"rg -n -e '^\\s*(class|def|async def) ' a.py","description":"Search the code"}|Edit {"file_path":"` + tree + `/a.py","new_string":"x = 2","old_string":"x = 1"}|Bash {"command":"python3 -m unittest","description":"Run the tests"}`,
	}
	for _, cfg := range Configs {
		p := &policy{cfg: cfg, tree: tree, calls: map[string]Step{"read-0-0": {Read: "a.py"}}}
		items, err := p.render(r, steps)
		if err != nil {
			t.Fatalf("%s: %v", cfg, err)
		}
		var got []string
		for _, it := range items {
			switch x := it.(type) {
			case agenttest.Call:
				got = append(got, x.Name+" "+argsText(x.Args))
			case agenttest.CustomCall:
				got = append(got, x.Name+" "+x.Input)
			}
		}
		if g := strings.Join(got, "|"); g != want[cfg] {
			t.Errorf("%s:\n%s\nwant\n%s", cfg, g, want[cfg])
		}
		for _, it := range items {
			id := ""
			switch x := it.(type) {
			case agenttest.Call:
				id = x.ID
			case agenttest.CustomCall:
				id = x.ID
			}
			if _, ok := p.calls[id]; !ok || callTurn(id) != 0 {
				t.Errorf("%s: call %q is not the policy's", cfg, id)
			}
		}
	}
}

func TestLoadPlan(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{
		`{"turns":[{"steps":[{"read":"a","search":"b"}]}]}`:                 "exactly one",
		`{"turns":[{"say":"done"},{"steps":[{"run":"true"}]}]}`:             "not the last",
		`{"turns":[{"steps":[{"read":"a","from":5,"to":2}]}]}`:              "before from",
		`{"turns":[{"steps":[{"edit":"a"}]}]}`:                              "no old lines",
		`{"turns":[{"steps":[{"reed":"a"}]}]}`:                              "unknown field",
		`{"turns":[{"steps":[{"read":"a","from":1,"to":2}]},{"say":"ok"}]}`: "",
	} {
		p := filepath.Join(dir, "plan.json")
		os.WriteFile(p, []byte(body), 0o644)
		_, err := LoadPlan(p)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("LoadPlan(%s): %v, want %q", body, err, want)
		}
	}
	if p, err := LoadPlan(filepath.Join(dir, "none.json")); err != nil || len(p.Turns) != 0 {
		t.Errorf("a missing plan: %v %v", p, err)
	}
}

// TestFigures: turns, the tokens of each output counted once as the
// client delivered it (Claude Code's reminder left out), written tokens,
// and which calls failed as calls.
func TestFigures(t *testing.T) {
	mk := func(seq, turn int, body string, reply agenttest.Turn) *agenttest.Request {
		r := &agenttest.Request{API: agenttest.Messages, Seq: seq, Turn: turn, Body: []byte(body), Reply: &reply}
		json.Unmarshal(r.Body, &r.JSON)
		return r
	}
	call := func(id, name, args string) agenttest.Call {
		return agenttest.Call{ID: id, Name: name, Args: json.RawMessage(args)}
	}
	res := func(id, text string, isErr bool) string {
		b, _ := json.Marshal(map[string]any{"type": "tool_result", "tool_use_id": id, "content": text, "is_error": isErr})
		return string(b)
	}
	reqs := []*agenttest.Request{
		mk(0, 0, `{"tools":[{"name":"Bash"}],"messages":[]}`, agenttest.Turn{Items: []agenttest.Item{agenttest.Message{Text: "Looking."},
			call("search-0-0", "Bash", `{"command":"rg x"}`), call("run-0-1", "Bash", `{"command":"go test"}`)}}),
		{API: agenttest.Messages, Seq: 1, Turn: -1, Side: true, Reply: &agenttest.Turn{Items: []agenttest.Item{agenttest.Message{Text: "a title"}}}},
		mk(2, 1, `{"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":[`+res("search-0-0", "a.go:1:x", false)+`,`+
			res("run-0-1", "Exit code 1\nFAIL\n\n<system-reminder>\nnoise noise noise\n</system-reminder>", true)+`]}]}`,
			agenttest.Turn{Items: []agenttest.Item{call("read-1-0", "Bash", `{"command":"cat nothere"}`)}}),
		mk(3, 2, `{"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":[`+res("search-0-0", "a.go:1:x", false)+`,`+
			res("read-1-0", "Exit code 1\ncat: nothere: No such file", true)+`]}]}`,
			agenttest.Turn{Items: []agenttest.Item{agenttest.Message{Text: "done"}}}),
	}
	f, err := figuresOf(reqs)
	if err != nil {
		t.Fatal(err)
	}
	if f.Turns != 3 || len(f.Calls) != 3 || f.Failed != 1 || !f.Calls[2].Failed || f.Calls[1].Failed {
		t.Errorf("figures %+v", f)
	}
	c := tokens.Count
	if want := c("a.go:1:x") + c("Exit code 1\nFAIL") + c("Exit code 1\ncat: nothere: No such file"); f.Read != want {
		t.Errorf("read %d, want %d", f.Read, want)
	}
	if want := c("Looking.") + c(`{"command":"rg x"}`) + c(`{"command":"go test"}`) + c(`{"command":"cat nothere"}`) + c("done"); f.Written != want {
		t.Errorf("written %d, want %d", f.Written, want)
	}
	if want := c(string(reqs[0].Body)) + c(string(reqs[2].Body)) + c(string(reqs[3].Body)); f.Sent != want {
		t.Errorf("sent %d, want %d (the model requests' bodies, side requests left out)", f.Sent, want)
	}
	if f.Tools != c(`[{"name":"Bash"}]`) {
		t.Errorf("tools %d", f.Tools)
	}
	// A call whose output never came back is an error, not a zero.
	if _, err := figuresOf(reqs[:1]); err == nil {
		t.Error("a session whose calls got no output measured")
	}
}

func TestFailed(t *testing.T) {
	for _, tc := range []struct {
		kind string
		o    agenttest.Output
		want bool
	}{
		{"run", agenttest.Output{Text: "Process exited with code 1\nOutput:\nFAIL", Kind: "function_call_output"}, false},
		{"search", agenttest.Output{Text: "Chunk ID: 1\nProcess exited with code 2\nOutput:\nrg: bad", Kind: "function_call_output"}, true},
		{"read", agenttest.Output{Text: "Process exited with code 0\nOutput:\n1:ca97 a", Kind: "custom_tool_call_output"}, false},
		{"edit", agenttest.Output{Text: "Process exited with code 1\nOutput:\napplied: 1 modified\n--- FAIL", Kind: "custom_tool_call_output"}, false},
		{"edit", agenttest.Output{Text: "Process exited with code 1\nOutput:\ntype: command 2, path \"a\", reason row-stale: ...", Kind: "custom_tool_call_output"}, true},
		{"edit", agenttest.Output{Text: "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nM a.go\n", Kind: "custom_tool_call_output"}, false},
		{"edit", agenttest.Output{Text: "apply_patch verification failed: Failed to find expected lines in a.go", Kind: "custom_tool_call_output"}, true},
		{"edit", agenttest.Output{Text: "<tool_use_error>String to replace not found</tool_use_error>", IsError: true}, true},
	} {
		if got := failed(tc.kind, tc.o); got != tc.want {
			t.Errorf("failed(%s, %q) = %v", tc.kind, tc.o.Text, got)
		}
	}
}

func TestTable(t *testing.T) {
	figs := []*Figures{
		{Task: "t", Config: "codex-router", Turns: 4, Read: 1200, Written: 100, Sent: 30000,
			Calls: []Call{{Kind: "read", Read: 1000}, {Kind: "read", Read: 100}, {Kind: "edit", Read: 100}}},
		{Task: "t", Config: "codex-plain", Turns: 5, Read: 800, Written: 200, Sent: 40000},
	}
	got := table(figs)
	for _, want := range []string{"| t | codex-router | 4 | 1,200 | 100 | 0 | 0 | 30,000 |", "| t | Codex: router / alone | 4/5 | 1.50x | 0.50x | 1.30x | 0.75x |", "| all | Codex: router / alone | 4/5 | 1.50x |",
		"| codex-router | | | 1,100 (2) | | 100 (1) | |"} {
		if !strings.Contains(got, want) {
			t.Errorf("the table has no %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Claude Code") {
		t.Errorf("a ratio without its sessions:\n%s", got)
	}
}

// TestReplay is a short replay in the suite: a task made here (a Python
// module with a bug, its fix's test in a second commit), a plan of a
// search, a read, an edit with the test run, and an answer, replayed
// against the real clients in rowkit's two configurations (where the
// edit is addressed by the rows the client handed back); every session
// must end with the test passing. Then the plan with an edit whose old
// lines are not in the file, in Claude Code alone: the run fails loudly,
// naming the step. bench/agentab.sh runs the recorded tasks in all four.
func TestReplay(t *testing.T) {
	if _, err := agenttest.NodeBin("codex"); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "rowkit")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/rowkit").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	repo := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, content string) { os.WriteFile(filepath.Join(repo, name), []byte(content), 0o644) }
	git("init", "-q")
	write("calc.py", "def mean(xs):\n    \"\"\"The mean of xs.\"\"\"\n    return sum(xs) / (len(xs) + 1)\n")
	write("test_calc.py", "import unittest\nfrom calc import mean\n\n\nclass T(unittest.TestCase):\n    def test_one(self):\n        self.assertEqual(mean([2]), 2)\n")
	git("add", ".")
	git("commit", "-qm", "mean")
	write("test_calc.py", "import unittest\nfrom calc import mean\n\n\nclass T(unittest.TestCase):\n    def test_one(self):\n        self.assertEqual(mean([2]), 2)\n\n    def test_two(self):\n        self.assertEqual(mean([1, 3]), 2)\n")
	write("calc.py", "def mean(xs):\n    \"\"\"The mean of xs.\"\"\"\n    return sum(xs) / len(xs)\n")
	git("commit", "-qam", "fix mean")

	benchDir := t.TempDir()
	taskDir := filepath.Join(benchDir, "tasks", "mean")
	os.MkdirAll(taskDir, 0o755)
	plan := `{"turns":[
		{"steps":[{"search":"def mean","path":"calc.py"}]},
		{"steps":[{"read":"calc.py","from":1,"to":3}]},
		{"steps":[{"edit":"calc.py","old":"    return sum(xs) / (len(xs) + 1)\n","new":"    return sum(xs) / len(xs)\n"},{"run":"python3 -m unittest -q test_calc"}]},
		{"say":"Fixed mean's divisor."}]}`
	os.WriteFile(filepath.Join(taskDir, "plan.json"), []byte(plan), 0o644)
	task := &Task{Name: "mean", Dir: taskDir, Repo: "test", Fix: "HEAD", Tests: []string{"test_calc.py"}, GitDir: repo,
		Test: "python3 -m unittest -q test_calc", Prompt: "mean([1, 3]) is not 2; test_calc.py shows it. Fix calc.py."}

	var mu sync.Mutex
	figs := map[Config]*Figures{}
	t.Run("configs", func(t *testing.T) {
		for _, cfg := range []Config{CodexRouter, ClaudeMCP} {
			t.Run(string(cfg), func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				s := &session{task: task, cfg: cfg, rowkit: bin, out: t.TempDir(), tree: filepath.Join(t.TempDir(), "tree")}
				f, err := s.run(ctx)
				if err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				figs[cfg] = f
				mu.Unlock()
				if _, err := os.Stat(filepath.Join(s.out, "session.jsonl.gz")); err != nil {
					t.Error(err)
				}
			})
		}
	})
	if len(figs) != 2 {
		t.Fatalf("%d sessions measured, want 2", len(figs))
	}
	for cfg, f := range figs {
		// rowkit's file tools are offered from Claude Code's first
		// request (alwaysLoad): no ToolSearch turn.
		want := 4
		if f.Turns != want || f.Failed != 0 || len(f.Calls) < 3 || f.Read == 0 {
			t.Errorf("%s: %+v", cfg, f)
		}
	}
	// The same plan against a file that no longer has the old lines: the
	// run fails loudly, naming the step.
	os.WriteFile(filepath.Join(taskDir, "plan.json"), []byte(strings.Replace(plan, `(len(xs) + 1)\n","new"`, `(len(xs) + 2)\n","new"`, 1)), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := (&session{task: task, cfg: ClaudePlain, rowkit: bin, out: t.TempDir(), tree: filepath.Join(t.TempDir(), "tree")}).run(ctx)
	if err == nil || !strings.Contains(err.Error(), "no longer applies") || !strings.Contains(err.Error(), "not in the file") {
		t.Errorf("a plan whose edit no longer applies: %v", err)
	}
}

// lineIDs counts what each client's and rowkit's line prefixes cost, and
// nothing else: every output below less its prefixes is bare.
func TestLineIDs(t *testing.T) {
	bare := "func main() {\n\tx := 1\n}\n"
	for _, tc := range []struct{ kind, text, bare string }{
		{"read", "1:aa01 func main() {\n2:b2c3 \tx := 1\n3:d10b }\n", bare},
		{"search", "\"a b.go\":1:aa01 func main() {\n\"a b.go\":2:b2c3 \tx := 1\n\"a b.go\":3:d10b }\n", bare},
		{"outline", "a.py: code python, 3 lines\n1:aa01..3:d10b class A\n", "a.py: code python, 3 lines\nclass A\n"},
		{"read", "1\tfunc main() {\n2\t\tx := 1\n3\t}\n", bare},
		{"search", "a.go:1:func main() {\na.go-2-\tx := 1\n3:}\n", bare},
		{"read", bare, bare},
		// A test run's FILE:LINE: stays: it is the run's text.
		{"run", "a_test.go:12: want 1\nok\n", "a_test.go:12: want 1\nok\n"},
		{"edit", "applied: 1 modified\n\"a.go\":2:b2c3 \tx := 1\na_test.go:12: want 1\n", "applied: 1 modified\n\tx := 1\na_test.go:12: want 1\n"},
	} {
		if got, want := lineIDs(tc.kind, tc.text), tokens.Count(tc.text)-tokens.Count(tc.bare); got != want || want <= 0 && tc.text != tc.bare {
			t.Errorf("%s %q: %d tokens of prefixes, want %d", tc.kind, tc.text, got, want)
		}
	}
}
