package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	scriptCmds["spawn"] = cmdSpawn
	scriptCmds["signal"] = cmdSignal
	scriptCmds["reap"] = cmdReap
	scriptCmds["stopped"] = cmdStopped
	scriptCmds["alive"] = cmdAlive
	scriptCmds["killpids"] = cmdKillPids
}

// spawned is a program a script started with spawn. Its output goes to
// files, not pipes: a process it leaves behind must not keep reap waiting.
type spawned struct {
	cmd            *exec.Cmd
	stdout, stderr *os.File
	done           chan error
}

var (
	spawnMu sync.Mutex
	spawns  = map[*testscript.TestScript]map[string]*spawned{}
)

func spawnedAs(ts *testscript.TestScript, name string) *spawned {
	spawnMu.Lock()
	defer spawnMu.Unlock()
	s := spawns[ts][name]
	if s == nil {
		ts.Fatalf("nothing spawned as %s", name)
	}
	return s
}

// spawn NAME PROG [ARGS...] starts PROG (found on the script's PATH) in
// the script's directory as the leader of a process group of its own, so
// that signal can reach the whole group without reaching this test.
func cmdSpawn(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: spawn NAME PROG [ARGS...]")
	}
	prog := onPath(ts, args[1])
	s := &spawned{done: make(chan error, 1)}
	s.cmd = exec.Command(prog, args[2:]...)
	s.cmd.Args[0] = args[1]
	s.cmd.Dir = ts.MkAbs(".")
	s.cmd.Env = []string{"PATH=" + ts.Getenv("PATH"), "HOME=" + ts.Getenv("HOME"), "TMPDIR=" + ts.Getenv("TMPDIR")}
	var err error
	s.stdout, err = os.CreateTemp("", "spawn-stdout")
	ts.Check(err)
	s.stderr, err = os.CreateTemp("", "spawn-stderr")
	ts.Check(err)
	ts.Defer(func() {
		for _, f := range []*os.File{s.stdout, s.stderr} {
			f.Close()
			os.Remove(f.Name())
		}
	})
	s.cmd.Stdout, s.cmd.Stderr = s.stdout, s.stderr
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	ts.Check(s.cmd.Start())
	go func() { s.done <- s.cmd.Wait() }()
	spawnMu.Lock()
	if spawns[ts] == nil {
		spawns[ts] = map[string]*spawned{}
		ts.Defer(func() {
			spawnMu.Lock()
			defer spawnMu.Unlock()
			for _, s := range spawns[ts] {
				syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			}
			delete(spawns, ts)
		})
	}
	spawns[ts][args[0]] = s
	spawnMu.Unlock()
}

var signals = map[string]syscall.Signal{"TERM": syscall.SIGTERM, "INT": syscall.SIGINT, "HUP": syscall.SIGHUP, "KILL": syscall.SIGKILL}

// signal NAME SIG [group] sends SIG (TERM, INT, HUP, KILL) to what spawn
// started as NAME, or with group to its whole process group.
func cmdSignal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 || len(args) == 3 && args[2] != "group" {
		ts.Fatalf("usage: signal NAME SIG [group]")
	}
	sig, ok := signals[args[1]]
	if !ok {
		ts.Fatalf("unknown signal %s", args[1])
	}
	pid := spawnedAs(ts, args[0]).cmd.Process.Pid
	if len(args) == 3 {
		pid = -pid
	}
	ts.Check(syscall.Kill(pid, sig))
}

// reap NAME STATUS waits (at most 20 s) for what spawn started as NAME to
// exit with STATUS (128 + n for a death by signal n); its output becomes
// stdout and stderr.
func cmdReap(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: reap NAME STATUS")
	}
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	s := spawnedAs(ts, args[0])
	var werr error
	select {
	case werr = <-s.done:
	case <-time.After(20 * time.Second):
		ts.Fatalf("%s did not exit within 20s", args[0])
	}
	for _, out := range []struct {
		f *os.File
		w io.Writer
	}{{s.stdout, ts.Stdout()}, {s.stderr, ts.Stderr()}} {
		b, err := os.ReadFile(out.f.Name())
		ts.Check(err)
		out.w.Write(b)
	}
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(werr, &ee):
		got = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			got = 128 + int(ws.Signal())
		}
	case werr != nil:
		ts.Fatalf("%s: %v", args[0], werr)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[0], got, want)
	}
}

// pidsOf reads the process ids listed in FILE.
func pidsOf(ts *testscript.TestScript, file string) []int {
	var pids []int
	for _, f := range strings.Fields(ts.ReadFile(file)) {
		pid, err := strconv.Atoi(f)
		if err != nil || pid <= 1 {
			ts.Fatalf("%s: %q is not a process id", file, f)
		}
		pids = append(pids, pid)
	}
	if len(pids) == 0 {
		ts.Fatalf("%s lists no process", file)
	}
	return pids
}

// processRuns reports whether pid runs: a zombie has stopped and only
// waits to be reaped (the container's init may never reap it).
func processRuns(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}

// stopped SECONDS PIDFILE checks that every process listed in PIDFILE has
// stopped within SECONDS (and kills those that have not).
func cmdStopped(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: stopped SECONDS PIDFILE")
	}
	secs, err := strconv.Atoi(args[0])
	ts.Check(err)
	pids := pidsOf(ts, args[1])
	for deadline := time.Now().Add(time.Duration(secs) * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var left []int
		for _, p := range pids {
			if processRuns(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range left {
				syscall.Kill(p, syscall.SIGKILL)
			}
			ts.Fatalf("still running after %ds: %v", secs, left)
		}
	}
}

// alive PIDFILE checks that every process listed in PIDFILE runs.
func cmdAlive(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: alive PIDFILE")
	}
	for _, p := range pidsOf(ts, args[0]) {
		if !processRuns(p) {
			ts.Fatalf("process %d is not running", p)
		}
	}
}

// killpids PIDFILE kills every process listed in PIDFILE.
func cmdKillPids(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: killpids PIDFILE")
	}
	for _, p := range pidsOf(ts, args[0]) {
		syscall.Kill(p, syscall.SIGKILL)
	}
}

// The suites of the private commands run a second time with every hread,
// hgrep, inspect_file, hpatch and rowkit SUBCOMMAND they call running
// inside rowkit shell: a wrapper of that name first on PATH hands its
// command line, quoted by bash's printf %q, to rowkit shell -c, whose bash
// runs it with rowkit's own command of that name, in the script's
// directory and environment. The login profile sets PATH anew, so the
// script puts the caller's PATH back behind rowkit's directory (a suite's
// fake rg, or no rg at all, must stay what the command finds); and bash
// itself is found in a directory of its own at the end of the shell's
// PATH, for the suites that take the directories holding rg (and bash)
// off it. The scripts are the same files, unchanged.
func TestScriptsThroughShell(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash is required for the wrappers: %v", err)
	}
	// A directory every user can enter: the suites run some commands as
	// the user nobody.
	top, err := os.MkdirTemp("", "rowkit-through-shell")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	real, wrap, bashDir := filepath.Join(top, "real"), filepath.Join(top, "wrap"), filepath.Join(top, "bash")
	for _, d := range []string{top, real, wrap, bashDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		os.Chmod(d, 0o755)
	}
	if err := os.Symlink(bash, filepath.Join(bashDir, "bash")); err != nil {
		t.Fatal(err)
	}
	// This test binary under the name rowkit: testscript.Main runs main.
	rowkit := filepath.Join(real, "rowkit")
	if err := os.Link(self, rowkit); err != nil {
		b, err := os.ReadFile(self)
		if err == nil {
			err = os.WriteFile(rowkit, b, 0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	through := func(name string) string {
		return `PATH=$PATH:` + bashDir + ` exec ` + rowkit + ` shell -c "PATH=\"\${PATH%%:*}\":$(printf %q "$PATH"); $(printf '%q ' ` + name + ` "$@")"`
	}
	wrappers := map[string]string{
		"rowkit": `case "$1" in hread|grep|inspect|patch) ` + through("rowkit") + `;; esac
exec -a rowkit ` + rowkit + ` "$@"`,
	}
	for _, name := range []string{"hread", "hgrep", "inspect_file", "hpatch"} {
		wrappers[name] = through(name)
	}
	for name, body := range wrappers {
		if err := os.WriteFile(filepath.Join(wrap, name), []byte("#!"+bash+"\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var files []string
	for _, pat := range []string{"hread_*.txtar", "hgrep_*.txtar", "inspect_*.txtar", "hpatch_*.txtar"} {
		m, _ := filepath.Glob(filepath.Join("../../testdata/script", pat))
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("only %d scripts found", len(files))
	}
	testscript.Run(t, testscript.Params{
		Files: files,
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", wrap+string(filepath.ListSeparator)+env.Getenv("PATH"))
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "throughshell" {
				return true, nil
			}
			if f, ok := scriptConds[cond]; ok {
				return f(), nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: scriptCmds,
	})
}
