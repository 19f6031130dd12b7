package proc

import (
	"bufio"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// alive reports whether pid runs: a zombie waiting for a reaper that is not
// its parent (the container's init may never reap) does not count.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}

// groupAlive reports whether any running process is in group pgid.
func groupAlive(pgid int) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !alive(pid) {
			continue
		}
		if g, err := syscall.Getpgid(pid); err == nil && g == pgid {
			return true
		}
	}
	return false
}

func TestRunExitAndEnv(t *testing.T) {
	t.Setenv("PROC_KEEP", "kept")
	t.Setenv("PROC_SECRET", "leaked")
	out := NewCapture(1 << 10)
	res, err := Run(context.Background(), Spec{
		Path: "sh", Args: []string{"-c", `echo "$PROC_KEEP:$PROC_SECRET:$EXTRA"; pwd; exit 3`},
		Dir: "/tmp", Env: Env(os.LookupEnv, []string{"PATH", "PROC_KEEP"}, "EXTRA=x"), Stdout: out,
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := out.Result()
	if res.Exit != 3 || got != "kept::x\n/tmp\n" {
		t.Errorf("exit %d, output %q", res.Exit, got)
	}
}

func TestStdinIsNull(t *testing.T) {
	out := NewCapture(100)
	res, err := Run(context.Background(), Spec{Path: "cat", Dir: "/", Env: Env(os.LookupEnv, []string{"PATH"}), Stdout: out})
	if err != nil || res.Exit != 0 {
		t.Fatalf("cat: %v %+v", err, res)
	}
	if got, _ := out.Result(); got != "" {
		t.Errorf("cat read %q from stdin", got)
	}
}

func TestNotFound(t *testing.T) {
	_, err := Run(context.Background(), Spec{Path: "rowkit-no-such-program", Dir: "/", Env: Env(os.LookupEnv, []string{"PATH"})})
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("err = %v, want ErrNotFound", err)
	}
}

// A timeout stops the whole group, including a grandchild that ignores
// SIGTERM and holds the output pipe open.
func TestTimeoutKillsGroup(t *testing.T) {
	pidFile := t.TempDir() + "/pid"
	start := time.Now()
	res, err := Run(context.Background(), Spec{
		Path: "sh", Args: []string{"-c", `sh -c 'trap "" TERM; echo $$ > ` + pidFile + `; while :; do sleep 0.05; done' & wait`},
		Dir: "/", Env: Env(os.LookupEnv, []string{"PATH"}), Stdout: NewCapture(100),
		Timeout: 200 * time.Millisecond, Grace: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Stopped || res.Exit != -1 {
		t.Errorf("result %+v, want timed out", res)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v", d)
	}
	b, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid == 0 {
		t.Fatal("the grandchild never started")
	}
	time.Sleep(50 * time.Millisecond)
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("grandchild %d outlived the call", pid)
	}
}

// Cancelling the context stops a process that streams to a pipe, and a
// leftover of the group is killed when the leader exits.
func TestCancelStreaming(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p, err := Start(ctx, Spec{Path: "sh", Args: []string{"-c", `(sleep 30) & while :; do echo line; done`}, Dir: "/", Env: Env(os.LookupEnv, []string{"PATH"})})
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(p.Stdout)
	for i := 0; i < 100; i++ {
		if l, err := r.ReadString('\n'); err != nil || l != "line\n" {
			t.Fatalf("read %q %v", l, err)
		}
	}
	cancel()
	res := p.Wait()
	if !res.Stopped || res.TimedOut || res.Signal == "" {
		t.Errorf("result %+v, want stopped by a signal", res)
	}
	time.Sleep(50 * time.Millisecond)
	if groupAlive(p.Pid()) {
		t.Errorf("process group %d still has members", p.Pid())
	}
}

func TestLimit(t *testing.T) {
	l := &Limit{Max: 10}
	res, err := Run(context.Background(), Spec{Path: "sh", Args: []string{"-c", "printf 0123456789abc"}, Dir: "/", Env: Env(os.LookupEnv, []string{"PATH"}), Stdout: l})
	if err != nil || res.Exit != 0 {
		t.Fatalf("%v %+v", err, res)
	}
	if !l.Over() || len(l.Bytes()) > 10 {
		t.Errorf("over=%v kept %q", l.Over(), l.Bytes())
	}
	l = &Limit{Max: 10}
	Run(context.Background(), Spec{Path: "sh", Args: []string{"-c", "printf '0\\0001'"}, Dir: "/", Env: Env(os.LookupEnv, []string{"PATH"}), Stdout: l})
	if l.Over() || string(l.Bytes()) != "0\x001" {
		t.Errorf("exact bytes: over=%v kept %q", l.Over(), l.Bytes())
	}
}

// A process that exits by itself is never reported stopped, although Wait
// cancels the process's context after the exit.
func TestExitIsNotStopped(t *testing.T) {
	for i := 0; i < 200; i++ {
		res, err := Run(context.Background(), Spec{Path: "true", Dir: "/", Env: Env(os.LookupEnv, []string{"PATH"})})
		if err != nil || res.Exit != 0 || res.Stopped || res.TimedOut {
			t.Fatalf("run %d: %+v %v", i, res, err)
		}
	}
}

// A program is looked up on the PATH of the environment the process gets,
// never on this process's own: a shell script's PATH decides what an
// embedded command runs. Relative entries are skipped.
func TestLookPathUsesSpecEnv(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(bin+"/rowkit-probe", []byte("#!/bin/sh\necho probe\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := NewCapture(100)
	res, err := Run(context.Background(), Spec{Path: "rowkit-probe", Dir: "/", Env: []string{"PATH=/nonexistent:" + bin}, Stdout: out})
	if got, _ := out.Result(); err != nil || res.Exit != 0 || got != "probe\n" {
		t.Errorf("on the spec's PATH: %v %+v %q", err, res, got)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	for _, env := range [][]string{nil, {"PATH=/usr/bin"}, {"PATH=."}} {
		dir := "/"
		if len(env) > 0 && env[0] == "PATH=." {
			dir = bin // the program is in the working directory
		}
		if _, err := Run(context.Background(), Spec{Path: "rowkit-probe", Dir: dir, Env: env}); !errors.Is(err, ErrNotFound) {
			t.Errorf("env %q: err = %v, want ErrNotFound (the process's PATH must not count)", env, err)
		}
	}
}

func TestEnvLookup(t *testing.T) {
	vars := map[string]string{"PATH": "/bin", "HOME": "/h", "SECRET": "s"}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	got := Env(lookup, []string{"PATH", "HOME", "MISSING"}, "X=1")
	if strings.Join(got, " ") != "PATH=/bin HOME=/h X=1" {
		t.Errorf("Env = %q", got)
	}
	if got := Env(nil, []string{"PATH"}, "X=1"); strings.Join(got, " ") != "X=1" {
		t.Errorf("Env(nil) = %q", got)
	}
}

// MaxMemory binds the started program: the limit is in its own
// /proc/PID/limits, an allocation past it fails in the program while the
// same allocation succeeds without it, and this process's limit is
// untouched.
func TestMaxMemory(t *testing.T) {
	const limit = 256 << 20
	alloc := `import sys
print(open("/proc/self/limits").read(), flush=True)
try:
    b = bytearray(512 << 20)
    print("allocated")
except MemoryError:
    print("MemoryError")
`
	run := func(max int64) string {
		out := NewCapture(1 << 16)
		res, err := Run(context.Background(), Spec{Path: "python3", Args: []string{"-c", alloc}, Dir: "/", Env: Env(os.LookupEnv, []string{"PATH"}), Stdout: out, MaxMemory: max})
		if err != nil || res.Exit != 0 {
			t.Fatalf("%+v %v", res, err)
		}
		s, _ := out.Result()
		return s
	}
	limited := run(limit)
	if !strings.Contains(limited, "MemoryError") || !strings.Contains(limited, "Max address space         268435456            268435456") {
		t.Errorf("limited:\n%s", limited)
	}
	if free := run(0); !strings.Contains(free, "allocated") {
		t.Errorf("unlimited:\n%s", free)
	}
	var own syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &own); err != nil || own.Cur == limit {
		t.Errorf("this process's limit changed: %+v %v", own, err)
	}
}
