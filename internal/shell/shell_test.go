package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/proc"
)

// The private commands of these tests: this test binary under their names
// (what matters here is how the shell reaches them; the real ones are
// tested in internal/cmd and by the testscripts).
var testCommands = map[string]func(args []string) int{
	// emit N WORD writes N lines "WORD I".
	"emit": func(args []string) int {
		n, _ := strconv.Atoi(args[1])
		for i := range n {
			fmt.Printf("%s %d\n", args[2], i)
		}
		return 0
	},
	// where prints its directory, its argv and T_BOUND.
	"where": func(args []string) int {
		dir, _ := os.Getwd()
		fmt.Printf("%s %q T_BOUND=%s\n", filepath.Base(dir), args[1:], os.Getenv("T_BOUND"))
		return 0
	},
}

// TestMain lets the test binary be the guardian (shell-guardian) and the
// private commands.
func TestMain(m *testing.M) {
	name := filepath.Base(os.Args[0])
	if name == "shell-guardian" {
		Guard(os.Stdin, time.Second)
		os.Exit(0)
	}
	if c, ok := testCommands[name]; ok {
		os.Exit(c(os.Args))
	}
	os.Exit(m.Run())
}

var testGuardian = &Program{Path: "/proc/self/exe", Args: []string{"shell-guardian"}}

// testNames are the private commands' names.
var testNames = []string{"emit", "where"}

// self is this test binary, symbolic links resolved.
func self(t *testing.T) string {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

type ran struct {
	stdout, stderr string
	res            Result
}

// env is an environment for a script in dir: its own home (with an empty
// profile) and temporary directory, this process's PATH.
func env(dir string, more ...string) []string {
	home := filepath.Join(dir, ".home")
	os.MkdirAll(home, 0o755)
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + dir, "T_FROM_CALLER=1"}, more...)
}

// runScript runs src in dir (a new one when empty) with the test commands.
func runScript(t *testing.T, ctx context.Context, dir, src string, bound int, more ...string) ran {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	bash, err := LookBash(env(dir))
	if err != nil {
		t.Fatal(err)
	}
	private, err := Links(dir, self(t), testNames)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	res := Run(ctx, Script{Command: src}, Config{
		Bash: bash, Dir: dir, Environ: env(dir, more...),
		Stdout: &stdout, Stderr: &stderr, MaxOutput: bound, BoundVar: "T_BOUND",
		Private: private, Guardian: testGuardian, Grace: time.Second,
	})
	return ran{stdout.String(), stderr.String(), res}
}

func expect(t *testing.T, got ran, status int, stdout, stderr string) {
	t.Helper()
	if got.res.Status != status || got.stdout != stdout || got.stderr != stderr {
		t.Errorf("status %d, stdout %q, stderr %q; want %d, %q, %q", got.res.Status, got.stdout, got.stderr, status, stdout, stderr)
	}
}

// bashLC runs src with bash -lc itself, as runScript runs it, for what the
// shell must equal.
func bashLC(t *testing.T, dir, src string, more ...string) ran {
	t.Helper()
	var stdout, stderr bytes.Buffer
	c := exec.Command("bash", "-lc", src)
	c.Dir, c.Env, c.Stdout, c.Stderr = dir, env(dir, more...), &stdout, &stderr
	err := c.Run()
	status := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		status = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return ran{stdout.String(), stderr.String(), Result{Status: status}}
}

// The script's streams, words and status are bash's.
func TestStreamsAndStatus(t *testing.T) {
	dir := t.TempDir()
	for _, src := range []string{
		"echo out; echo err >&2; exit 3",
		"nosuch arg",
		"true\n./nosuch",
		"echo \"unterminated",
		"kill -9 $$",
		"printf '%s\\n' \"${PIPESTATUS[@]}\"; false | true; echo \"${PIPESTATUS[*]}\"",
		"echo \"$0 $- $T_FROM_CALLER\"; shopt -q login_shell && echo login",
	} {
		want := bashLC(t, dir, src)
		if src == "kill -9 $$" {
			want.res.Status = 137
		}
		expect(t, runScript(t, context.Background(), dir, src, 0), want.res.Status, want.stdout, want.stderr)
	}
}

// bash runs as a login shell: the profile sets PATH, and the private
// commands come first on it all the same; the script starts with the $?
// and $_ the profile left, and no trace of rowkit's BASH_ENV; the caller's
// own BASH_ENV is read as bash would have read it.
func TestLoginProfile(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, ".home")
	os.MkdirAll(home, 0o755)
	os.WriteFile(filepath.Join(home, ".profile"), []byte("PATH=/usr/local/bin:/usr/bin:/bin\nexport FROM_PROFILE=yes\nfalse\n"), 0o644)
	src := `echo "[$?] [$_] $FROM_PROFILE ${BASH_ENV-none} ${ROWKIT_BASH_ENV-none}"; declare -F; compgen -v | grep -c rowkit; echo "$PATH"`
	got := runScript(t, context.Background(), dir, src, 0)
	want := bashLC(t, dir, src)
	private, _ := Links(dir, self(t), testNames)
	got.stdout = strings.Replace(got.stdout, "\n"+private+":", "\n", 1)
	expect(t, got, want.res.Status, want.stdout, want.stderr)
	got = runScript(t, context.Background(), dir, `type -P emit where | sed 's|/[^/]*$||' | uniq | wc -l; emit 1 x; PATH=/bin; emit 1 y`, 0)
	expect(t, got, 127, "1\nx 0\n", "bash: line 1: emit: command not found\n")

	os.WriteFile(filepath.Join(dir, "callers_env"), []byte("echo \"caller's BASH_ENV ran\"; CALLER=1\n"), 0o644)
	src = `echo "$CALLER ${BASH_ENV##*/}"; bash -c 'echo child'`
	caller := "BASH_ENV=" + filepath.Join(dir, "callers_env")
	got = runScript(t, context.Background(), dir, src, 0, caller)
	want = bashLC(t, dir, src, caller)
	expect(t, got, want.res.Status, want.stdout, want.stderr)
}

// The private commands are programs on the script's PATH: in pipes, $(...),
// after cd, from programs the script runs; a function of the same name
// wins, command reaches the program. Under a bound they get its room.
func TestPrivateCommands(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	src := `emit 3 a | tail -1; x=$(emit 1 b); echo "[$x]"; (cd sub && where 1); echo q | xargs where
emit() { echo "function $*"; }; emit 1 c; command emit 1 d`
	expect(t, runScript(t, context.Background(), dir, src, 0), 0,
		"a 2\n[b 0]\nsub [\"1\"] T_BOUND=\n"+filepath.Base(dir)+" [\"q\"] T_BOUND=\nfunction 1 c\nd 0\n", "")
	got := runScript(t, context.Background(), dir, "where", 2000)
	if room := NewOutput(nil, 2000).Room(); got.stdout != fmt.Sprintf("%s [] T_BOUND=%d\n", filepath.Base(dir), room) {
		t.Errorf("under a bound: %q, want the room %d", got.stdout, room)
	}
}

// Links makes one directory per user and binary, 0700, with one link a
// name, and every shell that starts at once gets it complete.
func TestLinksConcurrently(t *testing.T) {
	base, bin := t.TempDir(), self(t)
	var wg sync.WaitGroup
	dirs := make([]string, 32)
	errs := make([]error, 32)
	for i := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dirs[i], errs[i] = Links(base, bin, testNames)
		}()
	}
	wg.Wait()
	for i := range dirs {
		if errs[i] != nil || dirs[i] != dirs[0] {
			t.Fatalf("shell %d: %q, %v; shell 0: %q", i, dirs[i], errs[i], dirs[0])
		}
	}
	top := filepath.Join(base, fmt.Sprintf("rowkit-%d", os.Geteuid()))
	if !strings.HasPrefix(dirs[0], top+"/shell-") || !strings.HasSuffix(dirs[0], "/bin") {
		t.Errorf("the directory %s", dirs[0])
	}
	if fi, err := os.Stat(top); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v, %v", top, fi.Mode(), err)
	}
	ents, _ := os.ReadDir(top)
	if len(ents) != 1 {
		t.Errorf("%s holds %d entries, want the one directory (no temporary one left)", top, len(ents))
	}
	for _, name := range testNames {
		if target, err := os.Readlink(filepath.Join(dirs[0], name)); err != nil || target != bin {
			t.Errorf("%s: %q, %v", name, target, err)
		}
	}
	// Another binary or another set of names: another directory.
	other, err := Links(base, bin, []string{"emit"})
	if err != nil || other == dirs[0] {
		t.Errorf("%q, %v", other, err)
	}
}

// Links refuses a directory that is not the user's own, or a symbolic link
// in its place; closes its own that others could write to; makes again one
// that lost a link.
func TestLinksSafety(t *testing.T) {
	bin := self(t)
	base := t.TempDir()
	top := filepath.Join(base, fmt.Sprintf("rowkit-%d", os.Geteuid()))
	os.Symlink(t.TempDir(), top)
	if _, err := Links(base, bin, testNames); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("a symbolic link in its place: %v", err)
	}
	os.Remove(top)
	os.Mkdir(top, 0o777)
	os.Chmod(top, 0o777)
	dir, err := Links(base, bin, testNames)
	if fi, _ := os.Stat(top); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("open to others: %v, mode %v", err, fi.Mode())
	}
	os.Remove(filepath.Join(dir, "emit"))
	if again, err := Links(base, bin, testNames); err != nil || again != dir {
		t.Errorf("%q, %v", again, err)
	}
	if _, err := os.Readlink(filepath.Join(dir, "emit")); err != nil {
		t.Errorf("the lost link was not made again: %v", err)
	}
	if os.Geteuid() == 0 {
		os.Chown(top, 65534, 65534)
		if _, err := Links(base, bin, testNames); err == nil || !strings.Contains(err.Error(), "belongs to user 65534") {
			t.Errorf("another user's: %v", err)
		}
	}
}

// Without bash on PATH there is no shell.
func TestNoBash(t *testing.T) {
	if _, err := LookBash([]string{"PATH=" + t.TempDir() + ":/nonexistent"}); !errors.Is(err, ErrNoBash) {
		t.Errorf("%v", err)
	}
}

// Under a bound stdout and stderr are one stream, in the order written,
// and the whole stays within it with the note; the status is the
// script's.
func TestBoundMergesAndBounds(t *testing.T) {
	got := runScript(t, context.Background(), "", "echo out1; echo err1 >&2; emit 1 x; echo out2", 512)
	expect(t, got, 0, "out1\nerr1\nx 0\nout2\n", "")
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

// What the script leaves running in its process group is stopped and
// named, the outermost process of each tree (a subshell by what it runs);
// the status stays the script's; what setsid -f detached is left alone.
func TestLeftRunningStopped(t *testing.T) {
	dir := t.TempDir()
	src := `sleep 30 & echo $! >> pids
sh -c 'sleep 31 & echo $! >> pids'
(trap 'exit 0' TERM; sleep 32 & echo $! >> pids; wait) &
setsid -f sh -c 'echo $$ > detached; exec sleep 33' > /dev/null 2>&1
until [ -s detached ] && [ $(wc -l < pids) = 3 ]; do sleep 0.01; done
echo started; exit 4`
	got := runScript(t, context.Background(), dir, src, 0)
	want := "[rowkit shell: stopped 3 background commands still running at the end of the script: sleep 30; sleep 31; (sleep 32)]\n"
	expect(t, got, 4, "started\n", want)
	if !slices.Equal(got.res.Stopped, []string{"sleep 30", "sleep 31", "(sleep 32)"}) {
		t.Errorf("%q", got.res.Stopped)
	}
	goneWithin(t, time.Second, pidsIn(t, waitFile(t, filepath.Join(dir, "pids")))...)
	detached := pidsIn(t, waitFile(t, filepath.Join(dir, "detached")))
	if !running(detached[0]) {
		t.Errorf("setsid -f's process was stopped")
	}
	syscall.Kill(detached[0], syscall.SIGKILL)
	// A server a helper starts, stopped by the script with kill $PID:
	// nothing is left, no note.
	src = `start() { sleep 30 & echo $! > server.pid; }
start; kill "$(cat server.pid)"; wait "$(cat server.pid)"; echo "stopped $?"`
	expect(t, runScript(t, context.Background(), dir, src, 0), 0, "stopped 143\n", "")
}

// A process that ignores SIGTERM gets SIGKILL after the grace period.
func TestLeftIgnoringTerm(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	got := runScript(t, context.Background(), dir, `sh -c 'trap "" TERM; echo $$ > pid; while :; do sleep 0.05; done' & until [ -s pid ]; do sleep 0.01; done`, 0)
	if d := time.Since(start); d < time.Second || !strings.Contains(got.stderr, "stopped 1 background command") {
		t.Errorf("after %v: %+v", d, got)
	}
	goneWithin(t, time.Second, pidsIn(t, waitFile(t, filepath.Join(dir, "pid")))...)
}

// Cancelling the context stops the script's group at once (SIGTERM), and
// what the script left, and ends the script.
func TestCancel(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan ran)
	go func() {
		done <- runScript(t, ctx, dir, "sleep 30 & echo $! > pids; sh -c 'echo $$ >> pids; exec sleep 31'; echo not", 0)
	}()
	var pids []int
	for deadline := time.Now().Add(10 * time.Second); len(pids) < 2 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(dir, "pids"))
		if bytes.Count(b, []byte("\n")) == 2 {
			pids = pidsIn(t, string(b))
		}
	}
	start := time.Now()
	cancel()
	got := <-done
	if !errors.Is(got.res.Err, context.Canceled) || got.res.Status != StatusStopped || got.stdout != "" || time.Since(start) > 900*time.Millisecond {
		t.Errorf("%+v after %v", got, time.Since(start))
	}
	goneWithin(t, time.Second, pids...)
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
