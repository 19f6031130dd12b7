package shell

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/proc"
)

// TestMain lets the test binary be the guardian: /proc/self/exe run under
// the name shell-guardian.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "shell-guardian" {
		Guard(os.Stdin, time.Second)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var testGuardian = &Program{Path: "/proc/self/exe", Args: []string{"shell-guardian"}}

// The private commands of these tests: small Go functions, so that what is
// tested is the shell's handling of them (the real ones are tested in
// internal/cmd and by the testscripts).
var testCommands = map[string]Command{
	// emit N WORD writes N lines "WORD I".
	"emit": func(ctx context.Context, c *Call) int {
		n, _ := strconv.Atoi(c.Args[1])
		w := bufio.NewWriter(c.Stdout)
		for i := range n {
			fmt.Fprintf(w, "%s %d\n", c.Args[2], i)
		}
		if w.Flush() != nil {
			return 1
		}
		return 0
	},
	// upper copies stdin to stdout in capitals.
	"upper": func(ctx context.Context, c *Call) int {
		b, err := io.ReadAll(c.Stdin)
		if err != nil {
			return 1
		}
		if _, err := c.Stdout.Write(bytes.ToUpper(b)); err != nil {
			return 1
		}
		return 0
	},
	// count prints the number of lines on stdin.
	"count": func(ctx context.Context, c *Call) int {
		b, _ := io.ReadAll(c.Stdin)
		fmt.Fprintln(c.Stdout, bytes.Count(b, []byte("\n")))
		return 0
	},
	// room prints its OutputBytes.
	"room": func(ctx context.Context, c *Call) int {
		fmt.Fprintln(c.Stdout, c.OutputBytes)
		return 0
	},
	// where prints its directory and the variables it was given, sorted.
	"where": func(ctx context.Context, c *Call) int {
		fmt.Fprintln(c.Stdout, c.Dir)
		var vars []string
		for _, kv := range c.Environ {
			if strings.HasPrefix(kv, "T_") {
				vars = append(vars, kv)
			}
		}
		slices.Sort(vars)
		for _, kv := range vars {
			fmt.Fprintln(c.Stdout, kv)
		}
		return 0
	},
	// fail N exits N, saying so on stderr.
	"fail": func(ctx context.Context, c *Call) int {
		n, _ := strconv.Atoi(c.Args[1])
		fmt.Fprintf(c.Stderr, "fail: %d\n", n)
		return n
	},
	// boom panics.
	"boom": func(ctx context.Context, c *Call) int {
		var m map[string]int
		m["x"]++
		return 0
	},
	// block waits for ctx.
	"block": func(ctx context.Context, c *Call) int {
		<-ctx.Done()
		return 1
	},
}

func testPrivate(args []string) Command { return testCommands[args[0]] }

type ran struct {
	stdout, stderr string
	res            Result
}

// runScript runs src in dir (a new one when empty) with the test commands.
func runScript(t *testing.T, ctx context.Context, dir, src string, bound int) ran {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	s, err := Parse([]byte(src), "script")
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	res := Run(ctx, s, Config{
		Dir: dir, Environ: []string{"PATH=" + os.Getenv("PATH"), "T_FROM_CALLER=1", "TMPDIR=" + dir},
		Stdout: &stdout, Stderr: &stderr, MaxOutput: bound,
		Private: testPrivate, Guardian: testGuardian, Grace: time.Second,
	})
	return ran{stdout.String(), stderr.String(), res}
}

func expect(t *testing.T, got ran, status int, stdout, stderr string) {
	t.Helper()
	if got.res.Status != status || got.stdout != stdout || got.stderr != stderr {
		t.Errorf("status %d, stdout %q, stderr %q; want %d, %q, %q", got.res.Status, got.stdout, got.stderr, status, stdout, stderr)
	}
}

// Private commands take part in pipes, redirections, $(...), heredocs,
// &&, ||, set -e and functions like programs do.
func TestPrivateCommandsAreCommands(t *testing.T) {
	ctx := context.Background()
	expect(t, runScript(t, ctx, "", "emit 3 a | upper", 0), 0, "A 0\nA 1\nA 2\n", "")
	expect(t, runScript(t, ctx, "", "emit 2 b > f; upper < f; x=$(emit 1 c | upper); echo \"[$x]\"", 0), 0, "B 0\nB 1\n[C 0]\n", "")
	expect(t, runScript(t, ctx, "", "upper <<'EOF'\nq $x `y` \\\\ z\nEOF\n", 0), 0, "Q $X `Y` \\\\ Z\n", "")
	expect(t, runScript(t, ctx, "", "fail 3 || echo \"st=$?\"; fail 0 && echo ok; set -e; fail 4; echo not", 0), 4, "st=3\nok\n", "fail: 3\nfail: 0\nfail: 4\n")
	// A function of the same name wins; command reaches the private one;
	// ./upper is a path, not the private command.
	expect(t, runScript(t, ctx, "", "upper() { echo fn \"$@\"; }; echo x | upper 1; echo y | command upper; ./upper", 0), 127,
		"fn 1\nY\n", "shell: line 1: ./upper: No such file or directory\n")
	// Exec of a private command: the shell ends with its status.
	expect(t, runScript(t, ctx, "", "exec fail 5; echo not", 0), 5, "", "fail: 5\n")
}

// Pipeline stages are goroutines: private commands run at once in one
// pipeline and beside each other in background pipelines, with programs
// between them. Run with -race.
func TestPrivateCommandsRunConcurrently(t *testing.T) {
	src := `for i in 1 2 3 4 5 6; do
  emit 3000 w$i | upper | tr W V | upper | count > c$i &
  emit 500 x$i | cat | upper > u$i &
done
emit 2000 a | upper | count
wait
cat c1 c2 c3 c4 c5 c6
for i in 1 2 3 4 5 6; do emit 500 X$i | cmp - u$i; done`
	got := runScript(t, context.Background(), "", src, 0)
	expect(t, got, 0, "2000\n3000\n3000\n3000\n3000\n3000\n3000\n", "")
}

// The working directory and the exported variables are the script's.
func TestPrivateCommandsSeeTheScriptsDirAndEnv(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	got := runScript(t, context.Background(), dir, "cd sub && where; cd ..; export T_EXP=2; T_UNEXP=3; T_PREFIX=4 where; unset T_FROM_CALLER; where", 0)
	want := filepath.Join(dir, "sub") + "\nT_FROM_CALLER=1\n" + dir + "\nT_EXP=2\nT_FROM_CALLER=1\nT_PREFIX=4\n" + dir + "\nT_EXP=2\n"
	expect(t, got, 0, want, "")
}

// A panic is status 70 with one line, and the script goes on.
func TestPrivateCommandPanic(t *testing.T) {
	got := runScript(t, context.Background(), "", "boom; echo \"after $?\"", 0)
	expect(t, got, 0, "after 70\n", "boom: internal error: panic: assignment to entry in nil map\n")
}

// Under a bound, a private command writing straight to the shell's output
// gets the room left there; in a pipe or a file it gets none (its own
// token rule applies).
func TestPrivateCommandRoom(t *testing.T) {
	o := NewOutput(io.Discard, 9600)
	got := runScript(t, context.Background(), "", "room; room | cat; room > f; cat f; emit 200 line; room", 9600)
	lines := strings.Split(got.stdout, "\n")
	first, _ := strconv.Atoi(lines[0])
	last, _ := strconv.Atoi(lines[len(lines)-2])
	if first != o.headMax-0 || lines[1] != "0" || lines[2] != "0" || last >= first || last < o.tailMax {
		t.Errorf("rooms %q (head %d, tail %d)", lines, o.headMax, o.tailMax)
	}
	if got := runScript(t, context.Background(), "", "room", 0); got.stdout != "0\n" {
		t.Errorf("without a bound: %q", got.stdout)
	}
}

// Under a bound stdout and stderr are one stream, in the order written,
// and the whole stays within it with the note; the status is the
// script's.
func TestBoundMergesAndBounds(t *testing.T) {
	got := runScript(t, context.Background(), "", "echo out1; echo err1 >&2; fail 0; echo out2", 512)
	expect(t, got, 0, "out1\nerr1\nfail: 0\nout2\n", "")
	got = runScript(t, context.Background(), "", "seq 1 100000; echo last >&2; exit 3", 2000)
	if got.res.Status != 3 || len(got.stdout) > 2000 || !strings.HasPrefix(got.stdout, "1\n2\n") || !strings.HasSuffix(got.stdout, "\n100000\nlast\n") ||
		!regexp.MustCompile(`\n\[rowkit shell: output limit reached: [0-9,]+ bytes \([0-9,]+ lines\) left out here; the last [0-9,]+ bytes follow\]\n`).MatchString(got.stdout) {
		t.Errorf("status %d, %d bytes:\n%s", got.res.Status, len(got.stdout), got.stdout)
	}
}

// waitFile waits for path to hold a line.
func waitFile(t *testing.T, path string) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			return string(b)
		}
	}
	t.Fatalf("%s did not appear", path)
	return ""
}

// running reports whether pid runs (a zombie does not).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}

// goneWithin waits for every pid to stop running.
func goneWithin(t *testing.T, d time.Duration, pids ...int) {
	t.Helper()
	for deadline := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		left := 0
		for _, p := range pids {
			if running(p) {
				left++
			}
		}
		if left == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range pids {
				syscall.Kill(p, syscall.SIGKILL)
			}
			t.Fatalf("%d of %v still running after %v", left, pids, d)
		}
	}
}

func pidsIn(t *testing.T, s string) []int {
	var pids []int
	for _, f := range strings.Fields(s) {
		p, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("not a pid: %q", f)
		}
		pids = append(pids, p)
	}
	return pids
}

// Background commands still running at the end are stopped and named,
// a grandchild in their group too; the status stays the script's.
func TestBackgroundStoppedAtTheEnd(t *testing.T) {
	dir := t.TempDir()
	src := `sh -c 'sleep 30 & echo $! >> pids; echo $$ >> pids; wait' &
block &
until [ -s pids ] && [ $(wc -l < pids) = 2 ]; do sleep 0.01; done
echo started; exit 4`
	got := runScript(t, context.Background(), dir, src, 0)
	// In the order they started, which the script does not decide.
	sh := "sh -c 'sleep 30 & echo $! >> pids; echo $$ >> pids; wait'"
	want := "[rowkit shell: stopped 2 background commands still running at the end of the script: " + sh + "; block]\n"
	if strings.Contains(got.stderr, ": block; sh") {
		want = "[rowkit shell: stopped 2 background commands still running at the end of the script: block; " + sh + "]\n"
	}
	expect(t, got, 4, "started\n", want)
	goneWithin(t, time.Second, pidsIn(t, waitFile(t, filepath.Join(dir, "pids")))...)
}

// Cancelling the context stops the running program's group at once
// (SIGTERM) and ends the script.
func TestCancelStopsPrograms(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan ran)
	go func() {
		done <- runScript(t, ctx, dir, "sh -c 'sleep 30 & echo $! > pids; echo $$ >> pids; wait'; echo not", 0)
	}()
	pids := pidsIn(t, waitFile(t, filepath.Join(dir, "pids")))
	start := time.Now()
	cancel()
	got := <-done
	if !errors.Is(got.res.Err, context.Canceled) || got.res.Status != 143 || got.stdout != "" || time.Since(start) > 900*time.Millisecond {
		t.Errorf("%+v after %v", got, time.Since(start))
	}
	goneWithin(t, time.Second, pids...)
}

// 126 and 127 as bash gives them, with its words; a program killed by a
// signal is 128+n; a file without #! runs as a script of this shell, the
// private commands available; one with a NUL in its first line does not.
func TestProgramStatuses(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	os.WriteFile(filepath.Join(dir, "plain"), []byte("echo x\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "noshebang"), []byte("emit 2 \"$1\" | upper\nexit 6\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "binary"), []byte("\x00\x01\x02\n"), 0o755)
	os.Mkdir(filepath.Join(dir, "p"), 0o755)
	os.WriteFile(filepath.Join(dir, "p", "onpath"), []byte("echo x\n"), 0o644)
	ctx := context.Background()
	for _, c := range []struct {
		src, stdout, stderr string
		status              int
	}{
		{"nosuch", "", "shell: line 1: nosuch: command not found\n", 127},
		{"true\n./nosuch", "", "shell: line 2: ./nosuch: No such file or directory\n", 127},
		{"./d", "", "shell: line 1: ./d: Is a directory\n", 126},
		{"./plain", "", "shell: line 1: ./plain: Permission denied\n", 126},
		{"PATH=$PWD/p; onpath", "", "shell: line 1: " + dir + "/p/onpath: Permission denied\n", 126},
		{"''", "", "shell: line 1: : command not found\n", 127},
		{"./noshebang arg", "ARG 0\nARG 1\n", "", 6},
		{"./binary", "", "shell: line 1: ./binary: cannot execute binary file\n", 126},
		{"sh -c 'kill -9 $$'", "", "", 137},
		{"sh -c 'exit 300'", "", "", 44},
	} {
		expect(t, runScript(t, ctx, dir, c.src, 0), c.status, c.stdout, c.stderr)
	}
}

// kill is the kill program, unless the script has a kill function.
func TestKill(t *testing.T) {
	dir := t.TempDir()
	src := `sh -c 'echo $$ > pid; exec sleep 30' &
until [ -s pid ]; do sleep 0.01; done
kill -TERM $(cat pid); wait; echo killed`
	expect(t, runScript(t, context.Background(), dir, src, 0), 0, "killed\n", "")
	expect(t, runScript(t, context.Background(), dir, "kill() { echo mine \"$@\"; }; kill 1", 0), 0, "mine 1\n", "")
}

// A syntax error is NAME:LINE:COL: MESSAGE, as the parser words it.
func TestSyntaxError(t *testing.T) {
	_, err := Parse([]byte("echo ok\nif then fi"), "script")
	var se *SyntaxError
	if !errors.As(err, &se) || !regexp.MustCompile(`^script:2:[0-9]+: .+`).MatchString(err.Error()) {
		t.Errorf("%v", err)
	}
}

// The guardian, in a process of its own, stops every group still listed
// when its pipe ends without their removal (the shell died), SIGTERM
// first, and leaves alone a group that was removed.
func TestGuardianStopsListedGroups(t *testing.T) {
	dir := t.TempDir()
	var g guard
	g.prog = testGuardian
	if err := g.start(); err != nil {
		t.Fatal(err)
	}
	start := func(name string) (*proc.Process, []int) {
		p, err := proc.Start(context.Background(), proc.Spec{
			Path: "sh", Args: []string{"-c", "trap 'echo term >> " + name + ".log; exit 0' TERM; sleep 30 & echo $! > " + name + "; wait"},
			Dir: dir, Env: proc.Env(os.LookupEnv, []string{"PATH"}),
		})
		if err != nil {
			t.Fatal(err)
		}
		return p, append(pidsIn(t, waitFile(t, filepath.Join(dir, name))), p.Pid())
	}
	listed, pids := start("listed")
	removed, keep := start("removed")
	defer func() {
		removed.Stop()
		removed.Wait()
	}()
	g.add(listed.Pid())
	g.add(removed.Pid())
	g.remove(removed.Pid())
	g.add(1) // never acted on
	// The shell "dies": its end of the pipe closes with the group listed.
	var exited atomic.Bool
	go func() { listed.Wait(); exited.Store(true) }()
	g.close()
	goneWithin(t, 2*time.Second, pids...)
	if b, _ := os.ReadFile(filepath.Join(dir, "listed.log")); string(b) != "term\n" {
		t.Errorf("the group did not get SIGTERM first: %q", b)
	}
	for _, p := range keep {
		if !running(p) {
			t.Errorf("%d of a removed group was stopped", p)
		}
	}
}
