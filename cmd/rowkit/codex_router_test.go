package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/agent"
	"github.com/rowkit/rowkit/internal/agenttest"
	"github.com/rowkit/rowkit/internal/router"
)

// The tests below run the real Codex CLI (@openai/codex 0.169.0 from the
// module's package-lock.json) through rowkit router to agenttest's
// scripted model, offline:
//
//	codex exec -> agenttest.Proxy (what Codex sent) -> rowkit router -> agenttest.Server (what the upstream got)
//
// and assert on both sides of the router: the tools and instructions the
// model is offered, the model's own calls coming back with their outputs,
// the prefix of every request staying the prefix of the next, and what
// the calls did to the workspace. The rowkit binary is this test binary
// (TestMain: run under the name rowkit, it is rowkit), started as a
// router and run by Codex as the carriers' binary.

// rowkitBin is the rowkit on PATH (testscript.Main puts this test binary
// there under the name rowkit).
func rowkitBin(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("rowkit")
	if err != nil {
		t.Fatal(err)
	}
	bin, err = filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// routerProc is a running rowkit router.
type routerProc struct {
	URL string
	cmd *exec.Cmd
	mu  sync.Mutex
	log bytes.Buffer // its stderr after the first line
	end chan struct{}
}

// startRouter runs bin as rowkit router on a free loopback port with args.
func startRouter(t *testing.T, bin string, args ...string) *routerProc {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"router", "--listen", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &routerProc{cmd: cmd, end: make(chan struct{})}
	t.Cleanup(func() { r.stop(t) })
	rd := bufio.NewReader(stderr)
	line, err := rd.ReadString('\n')
	m := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+) `).FindStringSubmatch(line)
	if err != nil || m == nil {
		t.Fatalf("rowkit router %v: %q %v", args, line, err)
	}
	r.URL = m[1]
	go func() {
		defer close(r.end)
		b := make([]byte, 4096)
		for {
			n, err := rd.Read(b)
			r.mu.Lock()
			r.log.Write(b[:n])
			r.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return r
}

// stop stops the router with SIGINT and waits for it.
func (r *routerProc) stop(t *testing.T) {
	if r.cmd.ProcessState != nil {
		return
	}
	r.cmd.Process.Signal(os.Interrupt)
	r.cmd.Wait()
	<-r.end
}

// logLines are the router's log lines, decoded.
func (r *routerProc) logLines(t *testing.T) []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(r.log.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// readmeProvider is the Codex configuration the router's reference
// (docs/router.md) gives, and the README's set-up repeats: the
// model_provider line and the [model_providers.rowkit] table, with
// base_url pointed at base. The tests run Codex with it, so both say what
// works.
func readmeProvider(t *testing.T, base string) (provider, table string) {
	t.Helper()
	block := regexp.MustCompile("(?s)```toml\n(model_provider = \"rowkit\")\n\n(\\[model_providers\\.rowkit\\]\n.*?)```")
	var m []string
	for _, f := range []string{"docs/router.md", "README.md"} {
		b, err := os.ReadFile("../../" + f)
		if err != nil {
			t.Fatal(err)
		}
		mf := block.FindStringSubmatch(string(b))
		if mf == nil {
			t.Fatalf("%s has no ```toml block with model_provider = \"rowkit\" and its table", f)
		}
		if m != nil && mf[0] != m[0] {
			t.Fatalf("%s's provider block is not docs/router.md's:\n%s", f, mf[0])
		}
		m = mf
	}
	table = strings.Replace(m[2], `base_url = "http://127.0.0.1:8787"`, fmt.Sprintf("base_url = %q", base), 1)
	if table == m[2] || !strings.Contains(table, `env_key = "OPENAI_API_KEY"`) {
		t.Fatalf("docs/router.md's provider table is not the one the tests use:\n%s", m[2])
	}
	return m[1], table
}

// codexThrough is a Codex run against a Proxy at base, configured as the
// README says, in the given sandbox mode ("" bypasses it).
func codexThrough(t *testing.T, base, sandbox, home string) *agenttest.Codex {
	provider, table := readmeProvider(t, base)
	return &agenttest.Codex{
		Sandbox: sandbox,
		Home:    home,
		Args:    []string{"-c", strings.ReplaceAll(provider, " = ", "=")},
		Config:  table,
		Env:     []string{"OPENAI_API_KEY=agenttest"},
	}
}

// item is one input item of a request: its raw bytes and what the tests
// read of it.
type item struct {
	raw                                 json.RawMessage
	Type, Name, CallID, Input, Role, ID string
	Arguments                           string
	Output                              json.RawMessage
}

func (it item) output() string {
	var s string
	if json.Unmarshal(it.Output, &s) == nil {
		return s
	}
	var parts []struct{ Text string }
	json.Unmarshal(it.Output, &parts)
	var ts []string
	for _, p := range parts {
		ts = append(ts, p.Text)
	}
	return strings.Join(ts, "\n")
}

// body is what the tests read of a request body: its items and tools as
// raw bytes.
type body struct {
	Input []json.RawMessage
	Tools []json.RawMessage
	items []item
}

func parseBody(t *testing.T, b []byte) body {
	t.Helper()
	var v body
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("a request body is not JSON: %v", err)
	}
	for _, raw := range v.Input {
		var it struct {
			Type, Name, Input, Role, ID string
			CallID                      string `json:"call_id"`
			Arguments                   string
			Output                      json.RawMessage
		}
		json.Unmarshal(raw, &it)
		v.items = append(v.items, item{raw, it.Type, it.Name, it.CallID, it.Input, it.Role, it.ID, it.Arguments, it.Output})
	}
	return v
}

// find returns the first item of type typ with callID.
func (b body) find(typ, callID string) (item, bool) {
	for _, it := range b.items {
		if it.Type == typ && it.CallID == callID {
			return it, true
		}
	}
	return item{}, false
}

// responses are the model requests (POST .../responses) of a log.
func responses(rs []*agenttest.Request) []*agenttest.Request {
	var out []*agenttest.Request
	for _, r := range rs {
		if r.API == agenttest.Responses {
			out = append(out, r)
		}
	}
	return out
}

func isCompaction(r *agenttest.Request) bool {
	return strings.Contains(r.Header.Get("X-Codex-Turn-Metadata"), `"request_kind":"compaction"`)
}

// processes returns the pids of the processes whose command line is
// exactly args, from /proc.
func processes(args ...string) []int {
	want := strings.Join(args, "\x00") + "\x00"
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && string(b) == want {
			out = append(out, pid)
		}
	}
	return out
}

// gone waits up to d for no process with command line args to be left.
func gone(t *testing.T, d time.Duration, args ...string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ps := processes(args...)
		if len(ps) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range ps {
				syscall.Kill(p, syscall.SIGKILL)
			}
			t.Errorf("%q still running %s later: pids %v", strings.Join(args, " "), d, ps)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// rowsOf is content as verified rows, LINE:HASH TEXT.
func rowsOf(content string) string {
	var b strings.Builder
	for i, line := range strings.SplitAfter(content, "\n") {
		if line == "" {
			break
		}
		text := strings.TrimSuffix(line, "\n")
		h := sha256.Sum256([]byte(text))
		fmt.Fprintf(&b, "%d:%s %s\n", i+1, hex.EncodeToString(h[:2]), text)
	}
	return b.String()
}

// exited is the exit code the header of a Codex command output names.
func exited(out string) int {
	m := regexp.MustCompile(`(?m)^Process exited with code (\d+)$`).FindStringSubmatch(out)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// outputBody is a Codex command output without its header.
func outputBody(out string) string {
	_, rest, ok := strings.Cut(out, "\nOutput:\n")
	if !ok {
		return ""
	}
	return rest
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Error(err)
	}
	return string(b)
}

// thousands writes n with comma separators, as the router's messages do.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// routed is a call the scripted model made of hpatch or shell, and what
// its output must show.
type routed struct {
	call agenttest.CustomCall
	exit int    // Codex's "Process exited with code N"; -1: not a carrier
	want string // the output's body exactly ("" unchecked)
}

// TestCodexRouter is one Codex session through rowkit router, in Codex's
// workspace-write sandbox (it works in this VM: Codex runs its bundled
// bubblewrap; the carriers and rowkit's shell run inside it): a first turn
// whose responses call hpatch and shell in every way the issue lists, then
// the router stopped and another started with a different binary path,
// `codex exec resume --last`, and a compaction forced in that second turn.
func TestCodexRouter(t *testing.T) {
	t.Parallel()
	bin := rowkitBin(t)
	ws, home := t.TempDir(), t.TempDir()
	notes := "alpha\nbeta\ngamma\nbeta\n"
	write(t, ws, "notes.txt", notes)
	write(t, ws, "rows.txt", "alpha\nbeta\ngamma\n")
	write(t, ws, "sub/f.txt", "x marks\ny\n")
	write(t, ws, "par.txt", "one\ntwo\nthree\n")
	var big strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&big, "line %d of a file longer than one output\n", i)
	}
	write(t, ws, "big.txt", big.String())
	// Codex runs its model's commands in a login shell's environment; so
	// does rowkit's shell, with its own commands first on PATH all the
	// same.
	write(t, home, ".profile", "export FROM_PROFILE='from the profile'\nPATH=/usr/local/bin:/usr/bin:/bin\n")
	// A unique command line for the background job, to look it up.
	sleeper := fmt.Sprintf("300.%d", os.Getpid())

	// The calls, response by response. Each step checks what the calls
	// before it did, since it runs when Codex sends their outputs.
	notesWant := "first\nalpha\nBETA\ngamma\nBETA\ndelta\n"
	oversized := "touch oversized-ran\n" + strings.Repeat("# padding to make the script too large to carry\n", 130<<10/48)
	calls := [][]routed{
		{
			{call: agenttest.CustomCall{ID: "example", Name: "hpatch", Input: "in notes.txt\ntype \"beta\" 2 \"BETA\"\nadd 1:8ed3 \"first\\n\"\nadd EOF <<PATCH\ndelta\nPATCH"}, exit: 0},
			{call: agenttest.CustomCall{ID: "rows", Name: "shell", Input: "hread rows.txt 1:2"}, exit: 0, want: "1:8ed3 alpha\n2:f44e beta\n"},
			{call: agenttest.CustomCall{ID: "sub", Name: "shell", Input: "cd sub && hgrep marks"}, exit: 0, want: "\"f.txt\":1:7f3f x marks\n"},
			{call: agenttest.CustomCall{ID: "exit4", Name: "shell", Input: "echo before\nexit 4"}, exit: 4, want: "before\n"},
			{call: agenttest.CustomCall{ID: "profile", Name: "shell", Input: `echo "$FROM_PROFILE"; shopt -q login_shell && echo login; echo "${PATH#*:}"; type -t hread`}, exit: 0,
				want: "from the profile\nlogin\n/usr/local/bin:/usr/bin:/bin\nfile\n"},
		},
		{
			{call: agenttest.CustomCall{ID: "rejected", Name: "hpatch", Input: "in notes.txt\ntype 2:ffff \"x\""}, exit: 1},
			{call: agenttest.CustomCall{ID: "oversized", Name: "shell", Input: oversized}, exit: -1,
				want: fmt.Sprintf("shell: not run: the script is %s bytes and one call carries at most %s bytes; split it into several calls", thousands(len(oversized)), thousands(router.MaxInputBytes))},
			{call: agenttest.CustomCall{ID: "long", Name: "shell", Input: "seq 1 100000"}, exit: 0},
			{call: agenttest.CustomCall{ID: "big", Name: "shell", Input: "hread big.txt"}, exit: 1},
		},
		{
			{call: agenttest.CustomCall{ID: "par-edit", Name: "hpatch", Input: "in par.txt\ntype 2:" + rowsOf("two\n")[2:6] + " \"TWO\""}, exit: 0},
			{call: agenttest.CustomCall{ID: "par-read1", Name: "shell", Input: "hread par.txt"}, exit: 0},
			{call: agenttest.CustomCall{ID: "par-read2", Name: "shell", Input: "hread par.txt"}, exit: 0},
		},
		{
			{call: agenttest.CustomCall{ID: "bg", Name: "shell", Input: "sleep " + sleeper + " &\nsleep 0.5\necho started"}, exit: 0},
		},
	}
	var mu sync.Mutex
	emitted := map[int][]routed{} // response number -> its routed calls
	step := func(k int, check func(r *agenttest.Request), items ...agenttest.Item) agenttest.Step {
		return func(r *agenttest.Request) agenttest.Turn {
			if check != nil {
				check(r)
			}
			mu.Lock()
			emitted[r.Turn] = nil
			if k >= 0 {
				emitted[r.Turn] = calls[k]
			}
			mu.Unlock()
			if k >= 0 {
				for _, c := range calls[k] {
					items = append(items, c.call)
				}
			}
			return agenttest.Turn{Items: items}
		}
	}
	srv := agenttest.NewServer(
		step(0, nil, agenttest.Reasoning{Summary: "planning", EncryptedContent: "ENC1"}),
		step(1, func(*agenttest.Request) {
			if got := read(t, ws, "notes.txt"); got != notesWant {
				t.Errorf("the design notes' HPATCH example left notes.txt %q, want %q", got, notesWant)
			}
		}),
		step(2, func(*agenttest.Request) {
			if got := read(t, ws, "notes.txt"); got != notesWant {
				t.Errorf("a rejected script changed notes.txt: %q", got)
			}
			if _, err := os.Stat(filepath.Join(ws, "oversized-ran")); err == nil {
				t.Error("the oversized script ran")
			}
		}),
		step(3, func(*agenttest.Request) {
			if got := read(t, ws, "par.txt"); got != "one\nTWO\nthree\n" {
				t.Errorf("par.txt after the edit beside two reads: %q", got)
			}
			if ents, _ := os.ReadDir(filepath.Join(ws, ".rowkit")); len(ents) > 0 {
				for _, e := range ents {
					if strings.Contains(e.Name(), "journal") {
						t.Errorf("a journal was left behind: .rowkit/%s", e.Name())
					}
				}
			}
		}),
		step(-1, func(*agenttest.Request) {
			// The shell call has returned: its background job is gone (the
			// shell stops it; in this sandbox the command's PID namespace
			// would too: TestCodexRouterPoll runs without it).
			gone(t, 0, "sleep", sleeper)
		}, agenttest.Message{Text: "turn one done"}),
		// Turn 2, after the restart: one call, usage over the compaction
		// limit, so Codex compacts before its next request.
		func(r *agenttest.Request) agenttest.Turn {
			mu.Lock()
			emitted[r.Turn] = []routed{{call: agenttest.CustomCall{ID: "after", Name: "shell", Input: "hread rows.txt 3:3"}, exit: 0, want: "3:be9d gamma\n"}}
			mu.Unlock()
			return agenttest.Turn{Items: []agenttest.Item{emitted[r.Turn][0].call}, Usage: agenttest.Usage{Input: 90000, Output: 10}}
		},
		step(-1, nil, agenttest.Message{Text: "turn two done"}),
	)
	defer srv.Close()
	srv.Side = isCompaction
	srv.SideText = "Summary of the work so far."

	// Router A, then router B naming the binary by another path.
	routerA := startRouter(t, bin, "--upstream", srv.URL+"/v1", "--frontend", bin)
	proxy := agenttest.NewProxy(routerA.URL)
	defer proxy.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	codex := codexThrough(t, proxy.URL, "workspace-write", home)
	run, err := codex.Run(ctx, proxy.URL, ws, "work on the notes")
	if err != nil {
		t.Fatal(err)
	}
	if run.Exit != 0 || !strings.Contains(string(run.Stdout), "turn one done") {
		t.Fatalf("codex exec: exit %d\nstdout %s\nstderr %s", run.Exit, run.Stdout, run.Stderr)
	}
	turnOne := len(responses(proxy.Requests()))
	routerA.stop(t)

	other := filepath.Join(t.TempDir(), "bin", "rowkit")
	if err := os.MkdirAll(filepath.Dir(other), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, other); err != nil {
		t.Fatal(err)
	}
	routerB := startRouter(t, bin, "--upstream", srv.URL+"/v1", "--frontend", other)
	proxy.SetTarget(routerB.URL)
	codex.Resume = "--last"
	codex.Args = append(codex.Args, "-c", "model_auto_compact_token_limit=50000")
	run, err = codex.Run(ctx, proxy.URL, ws, "and again")
	if err != nil {
		t.Fatal(err)
	}
	if run.Exit != 0 || !strings.Contains(string(run.Stdout), "turn two done") {
		t.Fatalf("codex exec resume: exit %d\nstdout %s\nstderr %s", run.Exit, run.Stdout, run.Stderr)
	}
	routerB.stop(t)

	sent, got := responses(proxy.Requests()), responses(srv.Requests())
	if len(sent) != len(got) {
		t.Fatalf("Codex sent %d model requests, the upstream got %d", len(sent), len(got))
	}
	compactions := 0
	for _, r := range got {
		if isCompaction(r) {
			compactions++
		}
	}
	if turnOne != 5 || len(got) != 8 || compactions != 1 {
		t.Fatalf("requests: %d in turn one (want 5), %d in all (want 8), %d compactions (want 1)", turnOne, len(got), compactions)
	}

	t.Run("tools", func(t *testing.T) {
		hpatchTool, shellTool := builtinToolsOf(t)
		var first []json.RawMessage
		for i, r := range got {
			b, c := parseBody(t, r.Body), parseBody(t, sent[i].Body)
			if isCompaction(r) {
				if len(b.Tools) != 0 {
					t.Errorf("the compaction request offers %d tools", len(b.Tools))
				}
				continue
			}
			// Codex's tools without apply_patch and exec_command, byte for
			// byte and in order, then hpatch and shell.
			var want []json.RawMessage
			names := map[string]bool{}
			for _, tl := range c.Tools {
				n := toolField(tl, "name")
				names[n] = true
				if n != "apply_patch" && n != "exec_command" {
					want = append(want, tl)
				}
			}
			if !names["apply_patch"] || !names["exec_command"] || !names["write_stdin"] {
				t.Fatalf("request %d: Codex did not offer apply_patch, exec_command and write_stdin: %v", i, names)
			}
			want = append(want, hpatchTool, shellTool)
			if len(b.Tools) != len(want) {
				t.Fatalf("request %d: %d tools upstream, want %d", i, len(b.Tools), len(want))
			}
			for j := range want {
				if !bytes.Equal(b.Tools[j], want[j]) {
					t.Errorf("request %d: tool %d is %.120s, want %.120s", i, j, b.Tools[j], want[j])
				}
			}
			var h struct {
				Type, Name string
				Format     struct{ Type, Syntax, Definition string }
			}
			json.Unmarshal(b.Tools[len(b.Tools)-2], &h)
			if h.Type != "custom" || h.Name != "hpatch" || h.Format.Type != "grammar" || h.Format.Syntax != "lark" || h.Format.Definition != router.Grammar() {
				t.Errorf("request %d: the hpatch tool is %+v", i, h)
			}
			if toolField(b.Tools[len(b.Tools)-1], "type") != "custom" || toolField(b.Tools[len(b.Tools)-1], "name") != "shell" {
				t.Errorf("request %d: the last tool is not the custom shell", i)
			}
			if first == nil {
				first = b.Tools
			} else if !equalRaw(first, b.Tools) {
				t.Errorf("request %d offers other tools than the first: the tool list is not cache-stable", i)
			}
		}
	})

	t.Run("instructions", func(t *testing.T) {
		for i, r := range got {
			b, c := parseBody(t, r.Body), parseBody(t, sent[i].Body)
			up, codexText := devText(t, b), devText(t, c)
			if strings.Contains(up, "apply_patch") || strings.Contains(up, "exec_command") {
				t.Errorf("request %d: the base instructions upstream still name apply_patch or exec_command", i)
			}
			if !strings.Contains(up, "`hpatch`") || !strings.Contains(up, "`shell`") {
				t.Errorf("request %d: the base instructions upstream do not name hpatch and shell", i)
			}
			// Line by line, the texts differ only where Codex's named
			// apply_patch or exec_command, and there rowkit's name hpatch
			// or shell.
			cl, ul := strings.Split(codexText, "\n"), strings.Split(up, "\n")
			if len(cl) != len(ul) {
				t.Fatalf("request %d: %d lines of instructions upstream, Codex sent %d", i, len(ul), len(cl))
			}
			changed := 0
			for j := range cl {
				if cl[j] == ul[j] {
					continue
				}
				changed++
				if !strings.Contains(cl[j], "apply_patch") && !strings.Contains(cl[j], "exec_command") ||
					!strings.Contains(ul[j], "hpatch") && !strings.Contains(ul[j], "shell") {
					t.Errorf("request %d: line %d changed beyond the passages:\n%s\n->\n%s", i, j, cl[j], ul[j])
				}
			}
			if changed == 0 {
				t.Errorf("request %d: the base instructions were not rewritten", i)
			}
			// Everything else in the developer message and the request's
			// other members is Codex's.
			for _, key := range []string{"model", "reasoning", "include", "store", "prompt_cache_key", "parallel_tool_calls", "text", "client_metadata", "tool_choice", "stream"} {
				if !bytes.Equal(member(t, r.Body, key), member(t, sent[i].Body, key)) {
					t.Errorf("request %d: %s changed", i, key)
				}
			}
			for _, h := range []string{"Authorization", "Session-Id", "X-Codex-Turn-Metadata", "Originator", "User-Agent"} {
				if r.Header.Get(h) != sent[i].Header.Get(h) {
					t.Errorf("request %d: header %s changed", i, h)
				}
			}
		}
	})

	t.Run("history", func(t *testing.T) {
		for i, r := range got {
			if bytes.Contains(r.Body, []byte("ROWKIT_")) || bytes.Contains(r.Body, []byte(" carrier --max-output")) {
				t.Errorf("request %d: a carrier reached the upstream", i)
			}
			for _, it := range parseBody(t, r.Body).items {
				if it.Type == "function_call" && it.Name == "exec_command" {
					t.Errorf("request %d: an exec_command call reached the upstream: %.200s", i, it.raw)
				}
			}
		}
		// Every routed call comes back, in the next request, as the
		// model's own call with its output.
		checked := 0
		for k := range got {
			mu.Lock()
			calls := emitted[got[k].Turn]
			mu.Unlock()
			if len(calls) == 0 || got[k].Turn < 0 {
				continue
			}
			// The next request: the compaction request, when Codex
			// compacted after this response, holds the whole history.
			next := k + 1
			b := parseBody(t, got[next].Body)
			for _, c := range calls {
				call, ok := b.find("custom_tool_call", c.call.ID)
				if !ok || call.Name != c.call.Name || call.Input != c.call.Input {
					t.Errorf("call %s: request %d holds %+v, want the model's own %s call", c.call.ID, next, call, c.call.Name)
					continue
				}
				out, ok := b.find("custom_tool_call_output", c.call.ID)
				if !ok {
					t.Errorf("call %s: no custom_tool_call_output in request %d", c.call.ID, next)
					continue
				}
				checked++
				text := out.output()
				if c.exit < 0 {
					if text != c.want {
						t.Errorf("call %s: output %q, want %q", c.call.ID, text, c.want)
					}
					continue
				}
				if exited(text) != c.exit {
					t.Errorf("call %s: output %q, want exit code %d", c.call.ID, head(text), c.exit)
				}
				if c.want != "" && outputBody(text) != c.want {
					t.Errorf("call %s: output %q, want %q", c.call.ID, outputBody(text), c.want)
				}
				checkOutput(t, c.call.ID, outputBody(text), big.String())
			}
		}
		if checked != 14 {
			t.Errorf("%d routed calls came back, want 14", checked)
		}
		// Reasoning comes back as it went.
		if it, ok := findType(parseBody(t, got[1].Body), "reasoning"); !ok || !bytes.Contains(it.raw, []byte(`"encrypted_content":"ENC1"`)) {
			t.Errorf("the reasoning item did not come back whole: %s", it.raw)
		}
	})

	t.Run("prefix", func(t *testing.T) {
		// Each request's input is an item-wise prefix of the next: within
		// a turn, across the router's restart and resume --last, and into
		// the compaction request. After the compaction the history starts
		// again from Codex's summary.
		for k := 0; k+1 < len(got); k++ {
			if isCompaction(got[k]) {
				continue
			}
			a, b := parseBody(t, got[k].Body).Input, parseBody(t, got[k+1].Body).Input
			if len(a) > len(b) {
				t.Errorf("request %d has %d items, request %d only %d", k, len(a), k+1, len(b))
				continue
			}
			for j := range a {
				if !bytes.Equal(a[j], b[j]) {
					t.Errorf("request %d's item %d is not request %d's: %.200s\n%.200s", k, j, k+1, a[j], b[j])
					break
				}
			}
		}
		if got[0].Header.Get("Session-Id") == "" || got[turnOne].Header.Get("Session-Id") != got[0].Header.Get("Session-Id") {
			t.Error("resume --last did not continue the session")
		}
	})

	t.Run("restart", func(t *testing.T) {
		// Turn one's carriers named A's binary, turn two's B's; the
		// upstream saw neither.
		for i, r := range sent {
			for _, it := range parseBody(t, r.Body).items {
				if it.Type != "function_call" || it.Name != "exec_command" {
					continue
				}
				var args struct{ Cmd string }
				json.Unmarshal([]byte(it.Arguments), &args)
				want := bin
				if it.CallID == "after" {
					want = other
				}
				if !strings.HasPrefix(args.Cmd, fmt.Sprintf("'%s' carrier --max-output %d ", want, codexBound)) {
					t.Errorf("request %d: the carrier of %s runs %.80q, want %s", i, it.CallID, args.Cmd, want)
				}
			}
		}
	})
}

// codexBound is the carriers' bound for Codex's default model, gpt-5.5-codex,
// which has metadata: 39,600 bytes, below the 40,000 Codex passes whole.
var codexBound = router.OutputBound(agent.CodexPolicy("gpt-5.5-codex"))

// checkOutput checks the outputs whose body is a bound or a race.
// liveEditRE is the line of a read beside a live commit.
var liveEditRE = regexp.MustCompile(`(?m)^hread: pending_edit: an edit of par\.txt is being committed in this workspace by another rowkit process \(transaction [0-9a-f]{12}\); what is shown may mix old and new content: read again when it ends\n`)

func checkOutput(t *testing.T, id, out, big string) {
	t.Helper()
	switch id {
	case "rejected":
		if !strings.Contains(out, `reason row-stale`) || !strings.Contains(out, "1:a793 first\n") {
			t.Errorf("the rejection's repair rows did not reach the model: %q", out)
		}
	case "long":
		// The shell's note naming where the whole output is kept, within
		// the carrier's bound, and no cut of Codex's.
		if len(out) > codexBound || !regexp.MustCompile(`\n\[rowkit shell: output limit reached: [0-9,]+ bytes \([0-9,]+ lines\) left out here; kept: hread @out/[0-9a-z]{10} [0-9]+:; the last [0-9,]+ bytes follow\]\n`).MatchString(out) ||
			!strings.HasSuffix(out, "\n99999\n100000\n") || strings.Contains(out, "truncated") {
			t.Errorf("seq 1 100000 reached the model as %d bytes: %q ... %q", len(out), head(out), tail(out))
		}
	case "big":
		// Whole rows of the file from its start, then hread's diagnostic.
		rows, diag, ok := strings.Cut(out, "hread: output incomplete: ")
		if !ok || len(out) > codexBound || !strings.HasPrefix(rowsOf(big), rows) || rows == "" ||
			!regexp.MustCompile(`^[0-9,]+-byte output limit reached; continue with: hread big.txt \d+:\n$`).MatchString(diag) || strings.Contains(out, "truncated") {
			t.Errorf("hread of a 5,000-line file reached the model as %d bytes: %q ... %q", len(out), head(out), tail(out))
		}
	case "par-read1", "par-read2":
		// A read that met the edit's commit says so (the lock is seen
		// from Codex's sandbox too); one that says the edit was
		// interrupted is wrong: it was not.
		out = liveEditRE.ReplaceAllString(out, "")
		if out != rowsOf("one\ntwo\nthree\n") && out != rowsOf("one\nTWO\nthree\n") {
			t.Errorf("a read beside the edit saw neither the old file nor the new: %q", out)
		}
	case "bg":
		if !strings.HasPrefix(out, "started\n") {
			t.Errorf("the background call: %q", out)
		}
	}
}

func head(s string) string { return s[:min(len(s), 300)] }
func tail(s string) string { return s[max(0, len(s)-300):] }

func findType(b body, typ string) (item, bool) {
	for _, it := range b.items {
		if it.Type == typ {
			return it, true
		}
	}
	return item{}, false
}

// devText is the text of a request's first developer message.
func devText(t *testing.T, b body) string {
	t.Helper()
	for _, it := range b.items {
		if it.Type == "message" && it.Role == "developer" {
			var m struct{ Content []struct{ Text string } }
			json.Unmarshal(it.raw, &m)
			var ts []string
			for _, c := range m.Content {
				ts = append(ts, c.Text)
			}
			return strings.Join(ts, "\n")
		}
	}
	t.Fatal("a request without a developer message")
	return ""
}

// member is the raw value of a top-level member of a JSON object.
func member(t *testing.T, b []byte, key string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m[key]
}

func toolField(tl json.RawMessage, key string) string {
	var m map[string]any
	json.Unmarshal(tl, &m)
	s, _ := m[key].(string)
	return s
}

func equalRaw(a, b []json.RawMessage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// builtinToolsOf are the hpatch and shell tools as the router appends
// them: read from a request it rewrote, through the package's own
// rewrite of a minimal request.
func builtinToolsOf(t *testing.T) (hpatch, shell json.RawMessage) {
	t.Helper()
	c, err := router.NewCarrier("/usr/local/bin/rowkit")
	if err != nil {
		t.Fatal(err)
	}
	// For Codex's default model, as the recorded requests name it.
	r := c.Rewrite([]byte(`{"model":"gpt-5.5-codex","stream":true,"input":[],"tools":[{"type":"function","name":"exec_command"}]}`))
	var b body
	if err := json.Unmarshal(r.Body, &b); err != nil || len(b.Tools) != 2 {
		t.Fatalf("the router's own tools: %s", r.Body)
	}
	return b.Tools[0], b.Tools[1]
}

// TestCodexRouterPoll is a call that outlasts its yield, polled with
// write_stdin, and a call still running when Codex exits, through rowkit
// router (with its hidden --yield-ms lowering the yield to one second).
// It runs with Codex's sandbox bypassed: under workspace-write every
// command runs in a PID namespace of its own (bubblewrap's; measured: $$
// is 2 there), which the kernel empties when the command ends, so the
// sandbox alone would stop what a call left running; here only rowkit's
// shell and its guardian do.
func TestCodexRouterPoll(t *testing.T) {
	t.Parallel()
	bin := rowkitBin(t)
	ws := t.TempDir()
	sleeper := fmt.Sprintf("301.%d", os.Getpid())
	var session string
	srv := agenttest.NewServer(
		agenttest.Reply(
			agenttest.CustomCall{ID: "poll", Name: "shell", Input: "sleep 6\necho finished\nexit 5"},
			agenttest.CustomCall{ID: "bg", Name: "shell", Input: "sleep " + sleeper + " &\nsleep 0.3\necho started"},
		),
		func(r *agenttest.Request) agenttest.Turn {
			o, _ := r.Output("poll")
			m := regexp.MustCompile(`Process running with session ID (\d+)`).FindStringSubmatch(o.Text)
			if m == nil {
				t.Errorf("the long call did not yield: %q", o.Text)
				return agenttest.Turn{Items: []agenttest.Item{agenttest.Message{Text: "no session"}}}
			}
			session = m[1]
			// The background job of the finished shell call is stopped.
			gone(t, 2*time.Second, "sleep", sleeper)
			n, _ := strconv.Atoi(session)
			return agenttest.Turn{Items: []agenttest.Item{
				agenttest.Call{ID: "wait", Name: "write_stdin", Args: map[string]any{"session_id": n, "chars": "", "yield_time_ms": 20000}},
				// Grandchildren: sh runs each sleep as its child, so only the
				// shell's guardian, which stops whole process groups, reaches
				// them once Codex has killed the carrier (a direct child dies
				// with the shell anyway: proc's Pdeathsig).
				agenttest.CustomCall{ID: "exiting", Name: "shell", Input: "sh -c 'sleep " + sleeper + "; :' &\nsh -c 'sleep " + sleeper + "; :'"},
			}}
		},
		agenttest.Reply(agenttest.Message{Text: "bye"}),
	)
	defer srv.Close()
	rt := startRouter(t, bin, "--upstream", srv.URL+"/v1", "--yield-ms", "2000")
	proxy := agenttest.NewProxy(rt.URL)
	defer proxy.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := codexThrough(t, proxy.URL, "", "").Run(ctx, proxy.URL, ws, "wait for it")
	if err != nil {
		t.Fatal(err)
	}
	if run.Exit != 0 || !strings.Contains(string(run.Stdout), "bye") {
		t.Fatalf("codex exec: exit %d\nstdout %s\nstderr %s", run.Exit, run.Stdout, run.Stderr)
	}
	// Codex has exited with "exiting" still running: neither of its
	// sleeps is left.
	gone(t, 5*time.Second, "sleep", sleeper)

	turns := srv.Turns()
	if len(turns) != 3 {
		t.Fatalf("%d model requests, want 3", len(turns))
	}
	last := parseBody(t, turns[2].Body)
	call, ok := last.find("custom_tool_call", "poll")
	out, ok2 := last.find("custom_tool_call_output", "poll")
	if !ok || !ok2 || call.Name != "shell" || !strings.Contains(out.output(), "Process running with session ID "+session) {
		t.Errorf("the yielded call in the history: %+v %+v", call, out)
	}
	wait, ok := last.find("function_call", "wait")
	waited, ok2 := last.find("function_call_output", "wait")
	if !ok || !ok2 || wait.Name != "write_stdin" || exited(waited.output()) != 5 || outputBody(waited.output()) != "finished\n" {
		t.Errorf("the poll in the history: %+v, output %q", wait, waited.output())
	}
	if o, ok := last.find("custom_tool_call_output", "bg"); !ok || exited(o.output()) != 0 {
		t.Errorf("the background call: %q", o.output())
	}
	if o, ok := last.find("custom_tool_call_output", "exiting"); !ok || !strings.Contains(o.output(), "Process running with session ID") {
		t.Errorf("the call Codex left running: %q", o.output())
	}
}

// TestCodexRouterPassthrough: with --passthrough the upstream receives
// exactly the bytes Codex sent, apply_patch and exec_command included.
func TestCodexRouterPassthrough(t *testing.T) {
	t.Parallel()
	bin := rowkitBin(t)
	// What Codex 0.169 does with its own exec_command, as rowkit's shell
	// does it: the default (login true) runs the command in the login
	// shell's environment (/bin/bash -lc, or bash -c with Codex's snapshot
	// of that environment once it has one), login false without it.
	srv := agenttest.NewServer(
		agenttest.Reply(
			agenttest.Call{ID: "native", Name: "exec_command", Args: map[string]any{"cmd": "echo native", "login": false}},
			agenttest.Call{ID: "login", Name: "exec_command", Args: map[string]any{"cmd": `echo "[$FROM_PROFILE]"`}},
			agenttest.Call{ID: "nologin", Name: "exec_command", Args: map[string]any{"cmd": `echo "[$FROM_PROFILE]"`, "login": false}},
		),
		agenttest.Reply(agenttest.Message{Text: "passed"}),
	)
	defer srv.Close()
	rt := startRouter(t, bin, "--upstream", srv.URL+"/v1", "--passthrough")
	proxy := agenttest.NewProxy(rt.URL)
	defer proxy.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	codex := codexThrough(t, proxy.URL, "workspace-write", "")
	codex.HomeFiles = map[string]string{".profile": "export FROM_PROFILE=profile\n"}
	run, err := codex.Run(ctx, proxy.URL, t.TempDir(), "pass it on")
	if err != nil {
		t.Fatal(err)
	}
	if run.Exit != 0 || !strings.Contains(string(run.Stdout), "passed") {
		t.Fatalf("codex exec: exit %d\nstdout %s\nstderr %s", run.Exit, run.Stdout, run.Stderr)
	}
	sent, got := proxy.Requests(), srv.Requests()
	if len(sent) != len(got) || len(responses(got)) != 2 {
		t.Fatalf("Codex sent %d requests, the upstream got %d (%d model requests, want 2)", len(sent), len(got), len(responses(got)))
	}
	for i := range sent {
		if sent[i].Method != got[i].Method || "/v1"+sent[i].Path != got[i].Path || !bytes.Equal(sent[i].Body, got[i].Body) {
			t.Errorf("request %d: Codex sent %s %s (%d bytes), the upstream got %s %s (%d bytes)", i, sent[i].Method, sent[i].Path, len(sent[i].Body), got[i].Method, got[i].Path, len(got[i].Body))
		}
	}
	for _, name := range []string{"apply_patch", "exec_command"} {
		if _, ok := responses(got)[0].Tool(name); !ok {
			t.Errorf("passthrough: the upstream is not offered %s", name)
		}
	}
	for id, want := range map[string]string{"native": "native\n", "login": "[profile]\n", "nologin": "[]\n"} {
		if o, ok := srv.Output(id); !ok || outputBody(o.Text) != want {
			t.Errorf("the native exec_command %s: %q, want %q", id, o.Text, want)
		}
	}
	// The log's digests say the same.
	rt.stop(t)
	for _, l := range rt.logLines(t) {
		if l["in_crc32c"] != l["up_crc32c"] || l["in_crc32c"] == nil || l["routed"] != false {
			t.Errorf("passthrough log line: %v", l)
		}
	}
}
