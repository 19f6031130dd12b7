package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/agenttest"
)

// Issue 28's real-client test of kept output: a long failing go test run
// in rowkit's shell through a real client, whose bound leaves the middle
// of the output out, and a scripted model that reads the left-out part
// with the command the note names, exactly as named, and then each
// command the output it gets names to read on. What the client hands
// back must hold every line left out, whole, as the same go test prints
// it when run directly, the failure line among them.

// failingModule writes a Go module whose one test fails after logging
// lines lines, the failure in the middle: go test prints all of them.
func failingModule(t *testing.T, dir string, lines int) {
	t.Helper()
	write(t, dir, "go.mod", "module example.com/fix\n\ngo 1.21\n")
	write(t, dir, "fix_test.go", fmt.Sprintf(`package fix

import (
	"strings"
	"testing"
)

func TestLong(t *testing.T) {
	for i := 1; i <= %d; i++ {
		if i == %d {
			t.Errorf("step %%d: checksum mismatch: want 42, got 41", i)
		}
		t.Logf("step %%04d: the record is still within range %%s", i, strings.Repeat("=", i%%37))
	}
}
`, lines, lines/2))
}

// goEnv is what the fixture's go needs in a client's login shell, whose
// /etc/profile resets PATH: the go command on PATH, the build and module
// caches of this machine, and no network (the module has no
// dependencies).
func goEnv(t *testing.T) (profile string) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(goBin, "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatal(err)
	}
	v := strings.Split(strings.TrimSpace(string(out)), "\n")
	return fmt.Sprintf("PATH=%s:$PATH\nexport GOCACHE=%s GOMODCACHE=%s GOPATH=%s GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local\n",
		filepath.Dir(goBin), v[0], v[1], v[2])
}

// directGoTest is what go test ./... prints in dir run directly, stdout
// and stderr as one, its lines with their durations blanked.
func directGoTest(t *testing.T, dir, profile string) []string {
	t.Helper()
	cmd := exec.Command("bash", "-c", profile+"go test ./...")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("go test ./... run directly: %v\n%s", err, out)
	}
	return strings.Split(strings.TrimSuffix(noDurations(string(out)), "\n"), "\n")
}

var durationRE = regexp.MustCompile(`[0-9]+\.[0-9]+s\b`)

func noDurations(s string) string { return durationRE.ReplaceAllString(s, "D") }

// keptReader is the scripted model: its first call runs first, and each
// later one runs exactly the command the output before it names to read
// on (the shell's "kept: hread @out/ID N:", then hread's "continue with:
// hread @out/ID N:"), until an output names none.
type keptReader struct {
	first string
	call  func(id, cmd string) agenttest.Item
	body  func(o agenttest.Output) string // what the command printed, of what the client handed back
	mu    sync.Mutex
	cmds  []string
	outs  []agenttest.Output
}

var readOnRE = regexp.MustCompile(`(?:kept|continue with): (hread @out/[0-9a-z]{10} [0-9]+:)`)

func (k *keptReader) step(r *agenttest.Request) agenttest.Turn {
	k.mu.Lock()
	defer k.mu.Unlock()
	cmd := k.first
	if n := len(k.cmds); n > 0 {
		o, ok := r.Output(fmt.Sprintf("k%d", n-1))
		if !ok {
			return agenttest.Turn{Items: []agenttest.Item{agenttest.Message{Text: "no output came back"}}}
		}
		k.outs = append(k.outs, o)
		m := readOnRE.FindStringSubmatch(k.body(o))
		if m == nil || n >= 30 {
			return agenttest.Turn{Items: []agenttest.Item{agenttest.Message{Text: "read it all"}}}
		}
		cmd = m[1]
	}
	k.cmds = append(k.cmds, cmd)
	return agenttest.Turn{Items: []agenttest.Item{k.call(fmt.Sprintf("k%d", len(k.cmds)-1), cmd)}}
}

func (k *keptReader) steps(n int) []agenttest.Step {
	s := make([]agenttest.Step, n)
	for i := range s {
		s[i] = k.step
	}
	return s
}

var shellNoteRE = regexp.MustCompile(`\[rowkit shell: output limit reached: [0-9,]+ bytes \(([0-9,]+) lines\) left out here; kept: hread (@out/[0-9a-z]{10}) ([0-9]+):`)
var numberedRE = regexp.MustCompile(`(?m)^([0-9]+)\|(.*)$`)

// checkKeptRead checks what the model got: the first output's note names
// the lines left out, and the outputs of the commands it named hold each
// of them whole, as go test printed them, the failure line among them.
func checkKeptRead(t *testing.T, k *keptReader, whole []string, bound int) {
	t.Helper()
	if len(k.outs) < 2 {
		t.Fatalf("the model made %d calls (%q): the first output named no command to read on", len(k.outs), k.cmds)
	}
	first := k.body(k.outs[0])
	m := shellNoteRE.FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("go test's output reached the model without the shell's note: %q ... %q", head(first), tail(first))
	}
	leftOut, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
	start, _ := strconv.Atoi(m[3])
	if k.cmds[1] != "hread "+m[2]+" "+m[3]+":" {
		t.Fatalf("the second call ran %q, not the command the note names", k.cmds[1])
	}
	fail := -1
	for i, l := range whole {
		if strings.Contains(l, "checksum mismatch") {
			fail = i + 1
		}
	}
	if fail < start || fail >= start+leftOut {
		t.Fatalf("the failure line %d is not among the %d lines left out from %d: the fixture does not test what it means to", fail, leftOut, start)
	}
	got := map[int]string{}
	for i, o := range k.outs {
		body := k.body(o)
		if len(body) > bound || strings.Contains(o.Text, "truncated") || strings.Contains(o.Text, "<persisted-output>") {
			t.Errorf("output %d (%s): %d bytes, or cut by the client: %q", i, k.cmds[i], len(body), tail(body))
		}
		if i == 0 {
			continue
		}
		for _, l := range numberedRE.FindAllStringSubmatch(body, -1) {
			n, _ := strconv.Atoi(l[1])
			got[n] = noDurations(l[2])
		}
	}
	for n := start; n < start+leftOut; n++ {
		if n > len(whole) || got[n] != whole[n-1] {
			t.Fatalf("line %d left out reached the model as %q, go test printed %q (%d calls: %q)", n, got[n], whole[min(n, len(whole))-1], len(k.cmds), k.cmds)
		}
	}
	t.Logf("%d lines of %d left out from line %d, read whole in %d calls; the failure line %d among them: %q",
		leftOut, len(whole), start, len(k.cmds)-1, fail, got[fail])
}

// TestCodexRouterKeptOutput: through rowkit router and the real Codex
// CLI, the model's shell call runs a failing go test ./... whose output is
// twice the carrier's bound; the note names hread @out/ID N:, which the
// model runs next, exactly, in the same shell.
func TestCodexRouterKeptOutput(t *testing.T) {
	t.Parallel()
	bin := rowkitBin(t)
	ws := t.TempDir()
	failingModule(t, ws, 1000)
	profile := goEnv(t)
	whole := directGoTest(t, ws, profile)
	k := &keptReader{
		first: "go test ./...",
		call: func(id, cmd string) agenttest.Item {
			return agenttest.CustomCall{ID: id, Name: "shell", Input: cmd}
		},
		body: func(o agenttest.Output) string { return outputBody(o.Text) },
	}
	srv := agenttest.NewServer(k.steps(32)...)
	defer srv.Close()
	rt := startRouter(t, bin, "--upstream", srv.URL+"/v1", "--frontend", bin)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	codex := codexThrough(t, rt.URL, "", "")
	codex.HomeFiles = map[string]string{".profile": profile}
	run, err := codex.Run(ctx, rt.URL, ws, "run the tests")
	if err != nil {
		t.Fatal(err)
	}
	if run.Exit != 0 || !strings.Contains(string(run.Stdout), "read it all") {
		t.Fatalf("codex exec: exit %d\nstdout %s\nstderr %.3000s", run.Exit, run.Stdout, run.Stderr)
	}
	if len(k.outs) > 0 && exited(k.outs[0].Text) != 1 {
		t.Errorf("go test ./... exited %d through the shell, want 1", exited(k.outs[0].Text))
	}
	checkKeptRead(t, k, whole, codexBound)
}

// TestClaudeBashKeptOutput: the same through Claude Code's Bash, which
// runs the user's shell, not rowkit's: the model runs the tests in
// rowkit shell, with Claude Code's bound for a command that fails, and
// reads on with the command its note names, hread being on Bash's PATH
// (rowkit link, as docs/clients.md says).
func TestClaudeBashKeptOutput(t *testing.T) {
	t.Parallel()
	bin := rowkitBin(t)
	ws := t.TempDir()
	failingModule(t, ws, 700)
	profile := goEnv(t)
	whole := directGoTest(t, ws, profile)
	links := t.TempDir()
	if out, err := exec.Command(bin, "link", links).CombinedOutput(); err != nil {
		t.Fatalf("rowkit link: %v\n%s", err, out)
	}
	const bound = 10_500 // Claude Code's Bash shows 11,012 characters of a command that fails
	exitRE := regexp.MustCompile(`\AExit code [0-9]+\n`)
	k := &keptReader{
		first: fmt.Sprintf("rowkit shell --max-output %d -c 'go test ./...'", bound),
		call: func(id, cmd string) agenttest.Item {
			return agenttest.Call{ID: id, Name: "Bash", Args: map[string]any{"command": cmd, "description": "run"}}
		},
		body: func(o agenttest.Output) string { return exitRE.ReplaceAllString(o.Body(), "") },
	}
	srv := agenttest.NewServer(k.steps(32)...)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	claude := &agenttest.Claude{
		HomeFiles: map[string]string{".profile": profile},
		Env:       []string{"PATH=" + links + ":" + os.Getenv("PATH")},
	}
	run, err := claude.Run(ctx, srv.URL, ws, "run the tests")
	if err != nil {
		t.Fatal(err)
	}
	if run.Exit != 0 || !strings.Contains(string(run.Stdout), "read it all") {
		t.Fatalf("claude -p: exit %d\nstdout %s\nstderr %.3000s", run.Exit, run.Stdout, run.Stderr)
	}
	if len(k.outs) > 0 && !k.outs[0].IsError {
		t.Errorf("go test ./... through rowkit shell did not fail in Claude Code's Bash")
	}
	checkKeptRead(t, k, whole, 28_800)
}
