package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	scriptCmds["readdenied"] = cmdReadDenied
	scriptCmds["midscan"] = cmdMidscan
}

// readdenied FILE runs rowkit read on a copy of FILE that its user may not
// read (mode 000; as the user nobody when the test runs as root) and
// checks the exit code 1, PERMISSION_DENIED on stderr and the json result
// on stdout.
func cmdReadDenied(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: readdenied FILE")
	}
	bin, err := exec.LookPath("rowkit")
	ts.Check(err)
	dir, err := os.MkdirTemp("", "rowkit-readdenied")
	ts.Check(err)
	ts.Defer(func() { os.RemoveAll(dir) })
	ts.Check(os.Chmod(dir, 0o755))
	exe := filepath.Join(dir, "rowkit")
	ts.Check(os.Link(bin, exe)) // a link, not a copy: see cmdDenied
	ts.Check(os.Chmod(exe, 0o755))
	ts.Check(os.WriteFile(filepath.Join(dir, "secret.txt"), []byte(ts.ReadFile(args[0])), 0o000))
	cmd := exec.Command(exe, "read", "--root", dir, "--format", "json", "secret.txt")
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	ee, ok := err.(*exec.ExitError)
	want := `{"tool":"read","status":"error","error":{"code":"PERMISSION_DENIED","phase":"open","message":"secret.txt: permission denied"},"request":{"path":"secret.txt","offset":1,"limit":2000,"ranged":false},"file":null,"notes":[{"code":"permission-denied","severity":"warning","message":"secret.txt: permission denied"}]}` + "\n"
	if !ok || ee.ExitCode() != 1 || stdout.String() != want || stderr.String() != "rowkit read: permission_denied: secret.txt: permission denied\n" {
		ts.Fatalf("want exit 1 and PERMISSION_DENIED; got %v, stdout %q, stderr %q", err, stdout.String(), stderr.String())
	}
}

// midscan STATUS SIG FILE PROG [ARGS...] runs PROG from PATH as a real
// process and sends it SIG while it is reading FILE, then waits (at most
// 20 s) for it to exit with STATUS; its output becomes stdout and stderr.
// To be sure the signal lands mid-read, the process is stopped while it
// has FILE open, its offset in FILE checked to be past the first MiB and
// before the end, and only then signalled and continued; a run whose read
// was over before such a stop is not a test and is started again (at most
// 20 times).
func cmdMidscan(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 4 {
		ts.Fatalf("usage: midscan STATUS SIG FILE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	sig, ok := signals[args[1]]
	if !ok {
		ts.Fatalf("unknown signal %s", args[1])
	}
	file := ts.MkAbs(args[2])
	fi, err := os.Stat(file)
	ts.Check(err)
	end := min(fi.Size(), 64<<20) // rowkit read scans at most 64 MiB
	for attempt := 1; attempt <= 20; attempt++ {
		cmd := exec.Command(onPath(ts, args[3]), args[4:]...)
		cmd.Args[0] = args[3]
		cmd.Dir = ts.MkAbs(".")
		cmd.Env = []string{"PATH=" + ts.Getenv("PATH"), "HOME=" + ts.Getenv("HOME")}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		ts.Check(cmd.Start())
		pid := cmd.Process.Pid
		caught := false
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
			fd := openFd(pid, file)
			if fd == "" {
				if proc, err := os.Stat(fmt.Sprintf("/proc/%d/fd", pid)); err != nil || !proc.IsDir() {
					break // it exited
				}
				continue
			}
			syscall.Kill(pid, syscall.SIGSTOP)
			pos, ok := fdPos(pid, fd)
			if ok && pos < 1<<20 {
				// Still sampling or just started: let it read on.
				syscall.Kill(pid, syscall.SIGCONT)
				continue
			}
			if ok && pos < end {
				ts.Logf("attempt %d: stopped at byte %d of %d", attempt, pos, end)
				caught = true
				ts.Check(syscall.Kill(pid, sig))
			}
			syscall.Kill(pid, syscall.SIGCONT)
			break
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
			ts.Fatalf("%s did not exit within 20s", args[3])
		}
		if !caught {
			continue
		}
		ts.Stdout().Write(stdout.Bytes())
		ts.Stderr().Write(stderr.Bytes())
		got := 0
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee) && ee.ExitCode() >= 0:
			got = ee.ExitCode()
		case errors.As(err, &ee):
			got = 128 + int(ee.Sys().(syscall.WaitStatus).Signal())
		case err != nil:
			ts.Fatalf("%s: %v", args[3], err)
		}
		if got != want {
			ts.Fatalf("%s exited %d, want %d", args[3], got, want)
		}
		return
	}
	ts.Fatalf("the read of %s was never caught before its end", args[2])
}

// openFd is the descriptor under which process pid has file open, or "".
func openFd(pid int, file string) string {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if t, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && t == file {
			return e.Name()
		}
	}
	return ""
}

// fdPos is the offset of descriptor fd of process pid.
func fdPos(pid int, fd string) (int64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, fd))
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "pos:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
