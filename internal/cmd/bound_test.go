package cmd

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/agent"
	"github.com/rowkit/rowkit/internal/agenttest"
	"github.com/rowkit/rowkit/internal/cli"
)

// agentVars are the variables by which a command tells the agent whose
// shell runs it.
var agentVars = []string{"CLAUDECODE", "AI_AGENT", "CODEX_THREAD_ID", "CODEX_VERSION", MaxOutputEnv}

// TestMain runs the tests as in a terminal, even when an agent's shell
// runs them: the commands would otherwise bound their output for it. The
// test binary is rowkit too, under rowkit's names, as main runs it: the
// shell's tests link its commands to it.
func TestMain(m *testing.M) {
	if slices.Contains(ShellNames(), filepath.Base(os.Args[0])) {
		dir, _ := os.Getwd()
		os.Exit(cli.Main(context.Background(), &cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
			Dir: dir, LookupEnv: os.LookupEnv, Environ: os.Environ, Executable: "/proc/self/exe"}, os.Args, All))
	}
	for _, k := range agentVars {
		os.Unsetenv(k)
	}
	os.Exit(m.Run())
}

// callEnv runs argv in dir in-process with the environment vars and this
// process's PATH (for ripgrep).
func callEnv(dir string, vars map[string]string, stdin string, argv ...string) cli.Output {
	env := cli.Env{Dir: dir, Stdin: strings.NewReader(stdin), LookupEnv: func(k string) (string, bool) {
		if k == "PATH" {
			return os.LookupEnv(k)
		}
		v, ok := vars[k]
		return v, ok
	}}
	return cli.Call(context.Background(), env, All, argv...)
}

var (
	claudeVars = map[string]string{"CLAUDECODE": "1", "AI_AGENT": "claude-code_2-1-328_agent"}
	// codexVars are Codex's without a session file to name the model.
	codexVars = map[string]string{"CODEX_THREAD_ID": "01a2", "CODEX_VERSION": "0.169.0"}
)

// codexSession makes the session file Codex 0.169 keeps for a session of
// model (as TestCodexModel finds it) and returns the variables its shell
// gives a command.
func codexSession(t *testing.T, model string) map[string]string {
	home := t.TempDir()
	now := time.Now()
	ms := fmt.Sprintf("%012x", now.UnixMilli())
	thread := ms[:8] + "-" + ms[8:] + "-7abc-8def-0123456789ab"
	dir := filepath.Join(home, "sessions", now.Format("2006/01/02"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rec := func(typ, payload string) string {
		return `{"timestamp":"2026-12-04T16:49:15.177Z","type":"` + typ + `","payload":` + payload + "}\n"
	}
	body := rec("session_meta", `{"id":"`+thread+`","base_instructions":{"text":"`+strings.Repeat("x", 30000)+`"}}`) +
		rec("turn_context", `{"turn_id":"1","cwd":"/w","model":"`+model+`","effort":"medium"}`) +
		rec("response_item", `{"type":"function_call","name":"exec_command"}`)
	name := filepath.Join(dir, "rollout-"+now.Format("2006-01-02T15-04-05")+"-"+thread+".jsonl")
	if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"CODEX_THREAD_ID": thread, "CODEX_VERSION": "0.169.0", "CODEX_HOME": home}
}

// TestBoundOf: which bound a command takes from its command line, its
// caller and its environment, and that each agent's is under what its
// shell was measured to show whole (internal/agenttest's figures).
func TestBoundOf(t *testing.T) {
	codexKnown, codexOther := codexSession(t, "gpt-5.5-codex"), codexSession(t, "gpt-4.1")
	for _, tc := range []struct {
		vars     map[string]string
		caller   int
		flag     int
		want     outputBound
		whole    [2]int // what the agent shows whole: exit 0, exit 1
		usageErr bool
	}{
		{vars: nil, flag: notGiven, want: outputBound{}},
		{vars: map[string]string{"PATH": "/bin", "TERM": "xterm"}, flag: notGiven, want: outputBound{}},
		{vars: claudeVars, flag: notGiven, want: outputBound{claudeShellBytes, claudeShellFailBytes},
			whole: [2]int{agenttest.ClaudeBashBytes, agenttest.ClaudeBashFailChars}},
		{vars: map[string]string{"CLAUDECODE": "1"}, flag: notGiven, want: outputBound{claudeShellBytes, claudeShellFailBytes}},
		{vars: map[string]string{"AI_AGENT": "claude-code_2-2-0_agent"}, flag: notGiven, want: outputBound{claudeShellBytes, claudeShellFailBytes}},
		// Codex: 40,000 bytes for a model it has metadata for, as its
		// session file names it; 10,000 for another, or when the file
		// does not say.
		{vars: codexKnown, flag: notGiven, want: outputBound{agent.CodexShellBytes, agent.CodexShellBytes},
			whole: [2]int{agenttest.CodexExecBytes, agenttest.CodexExecBytes}},
		{vars: codexOther, flag: notGiven, want: outputBound{agent.CodexFallbackShellBytes, agent.CodexFallbackShellBytes},
			whole: [2]int{agenttest.CodexFallbackExecBytes, agenttest.CodexFallbackExecBytes}},
		{vars: codexVars, flag: notGiven, want: outputBound{agent.CodexFallbackShellBytes, agent.CodexFallbackShellBytes}},
		{vars: map[string]string{"CODEX_VERSION": "0.170.0"}, flag: notGiven, want: outputBound{agent.CodexFallbackShellBytes, agent.CodexFallbackShellBytes}},
		// Both: the smaller of each.
		{vars: map[string]string{"CLAUDECODE": "1", "CODEX_THREAD_ID": "x"}, flag: notGiven, want: outputBound{agent.CodexFallbackShellBytes, agent.CodexFallbackShellBytes}},
		// The variable, the caller and the flag, each over the ones after.
		{vars: map[string]string{"CLAUDECODE": "1", MaxOutputEnv: "50000"}, flag: notGiven, want: outputBound{50000, 50000}},
		{vars: map[string]string{"CLAUDECODE": "1", MaxOutputEnv: "0"}, flag: notGiven, want: outputBound{}},
		{vars: map[string]string{MaxOutputEnv: "50000"}, caller: 4000, flag: notGiven, want: outputBound{4000, 4000}},
		{vars: map[string]string{MaxOutputEnv: "50000"}, caller: 4000, flag: 0, want: outputBound{}},
		{vars: claudeVars, flag: 7000, want: outputBound{7000, 7000}},
		{vars: map[string]string{MaxOutputEnv: "lots"}, flag: notGiven, usageErr: true},
		{vars: map[string]string{MaxOutputEnv: "-1"}, flag: notGiven, usageErr: true},
		{vars: map[string]string{MaxOutputEnv: "", "CODEX_VERSION": "1"}, flag: notGiven, want: outputBound{agent.CodexFallbackShellBytes, agent.CodexFallbackShellBytes}},
	} {
		env := &cli.Env{OutputBytes: tc.caller, LookupEnv: func(k string) (string, bool) { v, ok := tc.vars[k]; return v, ok }}
		got, err := boundOf(env, tc.flag)
		if tc.usageErr {
			if err == nil || !strings.Contains(err.Error(), MaxOutputEnv) {
				t.Errorf("%v: %v, want a usage error naming %s", tc.vars, err, MaxOutputEnv)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v caller %d flag %d: %+v, %v; want %+v", tc.vars, tc.caller, tc.flag, got, err, tc.want)
		}
		for i, whole := range tc.whole {
			b := []int{got.ok, got.fail}[i]
			if whole != 0 && (b > whole || b < whole*94/100) {
				t.Errorf("%v: bound %d, the agent shows %d whole", tc.vars, b, whole)
			}
		}
	}
}

// Under Claude Code's Bash, an output that exits 0 may take 28,800 bytes
// and one that exits 1 (an incomplete hread or hgrep, a rejected hpatch)
// 10,500: a file that fits the first is read whole; a longer one is cut
// to the second, and its continuations read the rest, exit 0 once the
// rest fits.
func TestClaudeShellBounds(t *testing.T) {
	dir, text := bigFiles(t) // 600 rows, 27 KB
	var long strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&long, "line %d of the long file, needle here\n", i)
	}
	writeFiles(t, dir, map[string]string{"long.txt": long.String()})

	out := callEnv(dir, claudeVars, "", "hread", "big.txt")
	if out.Code != 0 || string(out.Stdout) != rowsOf(text) || len(out.Stderr) != 0 {
		t.Errorf("hread big.txt (%d bytes of rows): exit %d, %d bytes, stderr %q", len(rowsOf(text)), out.Code, len(out.Stdout), out.Stderr)
	}

	all := rowsOf(long.String())
	var got strings.Builder
	argv := []string{"hread", "long.txt"}
	for calls := 1; ; calls++ {
		out = callEnv(dir, claudeVars, "", argv...)
		got.Write(out.Stdout)
		if out.Code == 0 {
			t.Logf("%d calls", calls)
			break
		}
		if total := len(out.Stdout) + len(out.Stderr); out.Code != 1 || total > claudeShellFailBytes || total < claudeShellFailBytes-200 {
			t.Fatalf("%q: exit %d, %d bytes: %s", argv, out.Code, total, out.Stderr)
		}
		_, cmdline, ok := strings.Cut(strings.TrimSuffix(string(out.Stderr), "\n"), "; continue with: ")
		if !ok || calls > 20 {
			t.Fatalf("%q: %q", argv, out.Stderr)
		}
		argv = strings.Fields(cmdline)
	}
	if got.String() != all {
		t.Errorf("the continuations read %d bytes of %d", got.Len(), len(all))
	}

	out = callEnv(dir, claudeVars, "", "hgrep", "needle", "long.txt")
	if total := len(out.Stdout) + len(out.Stderr); out.Code != 1 || total > claudeShellFailBytes ||
		!regexp.MustCompile(`\Ahgrep: output incomplete: 10,500-byte output limit reached; continue with: hread @out/[0-9a-z]{10} `+strconv.Itoa(bytes.Count(out.Stdout, []byte("\n"))+1)+`:\n\z`).Match(out.Stderr) {
		t.Errorf("hgrep: exit %d, %d bytes, %q", out.Code, total, out.Stderr)
	}
	if full := callEnv(dir, nil, "", "hgrep", "needle", "long.txt"); !bytes.HasPrefix(full.Stdout, out.Stdout) || len(out.Stdout) < claudeShellFailBytes-300 {
		t.Errorf("hgrep: %d bytes are not the start of the whole search's rows", len(out.Stdout))
	}
	out = callEnv(dir, claudeVars, "", "hgrep", "-m", "400", "needle", "big.txt")
	if out.Code != 0 || len(out.Stdout) < 20_000 || len(out.Stdout) > claudeShellBytes {
		t.Errorf("hgrep of a search that fits: exit %d, %d bytes, %s", out.Code, len(out.Stdout), out.Stderr)
	}

	var stale strings.Builder
	for i := 1; i <= 600; i += 2 {
		fmt.Fprintf(&stale, "in big.txt\ntype %d:0000 \"x\"\n", i)
	}
	out = callEnv(dir, claudeVars, stale.String(), "hpatch")
	if total := len(out.Stdout) + len(out.Stderr); out.Code != 1 || total > claudeShellFailBytes || !bytes.HasSuffix(out.Stderr, []byte(" more failures left out: output incomplete: 10,500-byte output limit reached\n")) {
		t.Errorf("hpatch rejected: exit %d, %d bytes, %.200q", out.Code, total, lastBytes(out.Stderr, 200))
	}
}

func lastBytes(b []byte, n int) []byte { return b[max(len(b)-n, 0):] }

// Codex's shell gets 40,000 bytes whatever the exit status (10,000 when
// its session file does not name a model it knows); --max-output
// and ROWKIT_MAX_OUTPUT set any other bound, 0 none; a bad value is a
// usage error of the command.
func TestShellBoundOptions(t *testing.T) {
	dir, _ := bigFiles(t)
	var long strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&long, "line %d of the long file, needle here\n", i)
	}
	writeFiles(t, dir, map[string]string{"long.txt": long.String()})
	codex := codexSession(t, "gpt-5.5-codex")
	for _, tc := range []struct {
		vars  map[string]string
		argv  []string
		bound int
		code  int
	}{
		{codexVars, []string{"hread", "big.txt"}, agent.CodexFallbackShellBytes, 1},
		{codexVars, []string{"hgrep", "needle", "big.txt"}, agent.CodexFallbackShellBytes, 1},
		{codexVars, []string{"rowkit", "read", "big.txt"}, agent.CodexFallbackShellBytes, 0},
		{codex, []string{"hread", "long.txt"}, agent.CodexShellBytes, 1},
		{codex, []string{"hgrep", "needle", "long.txt"}, agent.CodexShellBytes, 1},
		{codex, []string{"rowkit", "read", "long.txt"}, agent.CodexShellBytes, 0},
		{codexVars, []string{"hread", "--max-output", "5000", "big.txt"}, 5000, 1},
		{codexVars, []string{"hgrep", "--max-output=5000", "needle", "big.txt"}, 5000, 1},
		{codexVars, []string{"inspect_file", "--max-output", "3000", "p.go"}, 3000, 0},
		{codexVars, []string{"rowkit", "read", "--max-output", "3000", "big.txt"}, 3000, 0},
		{map[string]string{MaxOutputEnv: "4000"}, []string{"hread", "big.txt"}, 4000, 1},
		{map[string]string{MaxOutputEnv: "4000"}, []string{"inspect_file", "p.go"}, 4000, 0},
		{codexVars, []string{"hread", "--max-output", "0", "big.txt"}, 0, 0},
		{map[string]string{MaxOutputEnv: "0", "CLAUDECODE": "1"}, []string{"hgrep", "needle", "big.txt"}, 0, 0},
	} {
		out := callEnv(dir, tc.vars, "", tc.argv...)
		total := len(out.Stdout) + len(out.Stderr)
		if out.Code != tc.code || tc.bound > 0 && (total > tc.bound || total < tc.bound*9/10) || tc.bound == 0 && total < 20_000 {
			t.Errorf("%v %q: exit %d, %d bytes; want exit %d within %d", tc.vars, tc.argv, out.Code, total, tc.code, tc.bound)
		}
	}
	for _, argv := range [][]string{
		{"hread", "--max-output", "x", "big.txt"},
		{"hgrep", "--max-output=-5", "needle"},
		{"hpatch", "--max-output", "1e3"},
		{"rowkit", "read", "--max-output", " 5", "big.txt"},
	} {
		if out := callEnv(dir, nil, "", argv...); out.Code != 2 || !bytes.Contains(out.Stderr, []byte("usage: --max-output")) {
			t.Errorf("%q: exit %d, %q", argv, out.Code, out.Stderr)
		}
	}
	// inspect_file reports usage like every failure: a document, exit 1.
	if out := callEnv(dir, map[string]string{MaxOutputEnv: "many"}, "", "inspect_file", "p.go"); out.Code != 1 || !bytes.Contains(out.Stdout, []byte(`"code":"usage"`)) {
		t.Errorf("inspect_file with a bad %s: exit %d, %s", MaxOutputEnv, out.Code, out.Stdout)
	}
}

// hread's continuation quotes a path the shell would read otherwise, and
// skips a line too long for the bound rather than naming it again.
func TestHreadContinuation(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"a b's.txt": strings.Repeat("some words in a row\n", 2000),
		"-dash.txt": strings.Repeat("some words in a row\n", 2000),
		"long.txt":  "short\n" + strings.Repeat("x", 5000) + "\nafter\n",
	})
	out := callEnv(dir, nil, "", "hread", "--max-output", "3000", "a b's.txt")
	next := bytes.Count(out.Stdout, []byte("\n")) + 1
	if !bytes.HasSuffix(out.Stderr, fmt.Appendf(nil, `; continue with: hread 'a b'\''s.txt' %d:`+"\n", next)) {
		t.Errorf("%q", out.Stderr)
	}
	out = callEnv(dir, nil, "", "hread", "--max-output", "3000", "--", "-dash.txt", "5:900")
	next = bytes.Count(out.Stdout, []byte("\n")) + 5
	if !bytes.HasSuffix(out.Stderr, fmt.Appendf(nil, "; continue with: hread ./-dash.txt %d:900\n", next)) {
		t.Errorf("%q", out.Stderr)
	}
	out = callEnv(dir, nil, "", "hread", "--max-output", "3000", "long.txt", "2:3")
	if string(out.Stderr) != "hread: output incomplete: 3,000-byte output limit reached; line 2 alone is over the limit, continue after it with: hread long.txt 3:3\n" || len(out.Stdout) != 0 {
		t.Errorf("%q %q", out.Stdout, out.Stderr)
	}
	out = callEnv(dir, nil, "", "hread", "--max-output", "3000", "long.txt", "2:2")
	if string(out.Stderr) != "hread: output incomplete: 3,000-byte output limit reached; line 2 alone is over the limit and ends the range\n" {
		t.Errorf("%q", out.Stderr)
	}
	// Followed, it reads on past the long line to the end.
	out = callEnv(dir, nil, "", "hread", "--max-output", "3000", "long.txt")
	if string(out.Stdout) != row(1, "short") || !bytes.HasSuffix(out.Stderr, []byte("; continue with: hread long.txt 2:\n")) {
		t.Errorf("%q %q", out.Stdout, out.Stderr)
	}
	out = callEnv(dir, nil, "", "hread", "--max-output", "3000", "long.txt", "2:")
	if !bytes.HasSuffix(out.Stderr, []byte("continue after it with: hread long.txt 3:\n")) {
		t.Errorf("%q %q", out.Stdout, out.Stderr)
	}
	out = callEnv(dir, nil, "", "hread", "--max-output", "3000", "long.txt", "3:")
	if out.Code != 0 || string(out.Stdout) != row(3, "after") {
		t.Errorf("%q %q", out.Stdout, out.Stderr)
	}
}
