package proc

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gone waits up to a few seconds for pid to stop running.
func gone(pid int) bool {
	for range 100 {
		if !alive(pid) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// TestHelperParent does nothing as a test. Run by TestChildDiesWithParent
// as a separate process (PROC_HELPER=1), it starts ripgrep through Start
// on a FIFO nobody writes, so ripgrep blocks in open(2) whatever becomes
// of its parent, prints ripgrep's pid and waits to be killed.
func TestHelperParent(t *testing.T) {
	if os.Getenv("PROC_HELPER") != "1" {
		return
	}
	dir := os.Getenv("PROC_HELPER_DIR")
	p, err := Start(context.Background(), Spec{Path: "rg", Args: []string{"--no-config", "x", "fifo"}, Dir: dir, Env: Env(os.LookupEnv, []string{"PATH"}), Stdout: os.Stderr})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println(p.Pid())
	select {}
}

// A parent killed with SIGKILL runs no cleanup; its ripgrep dies with it
// (Pdeathsig) instead of blocking for ever on a pipe nobody reads.
func TestChildDiesWithParent(t *testing.T) {
	if _, err := exec.LookPath("rg"); err != nil {
		t.Fatalf("ripgrep is required: %v", err)
	}
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, rg := startHelper(t, "TestHelperParent", "PROC_HELPER=1", "PROC_HELPER_DIR="+dir)
	time.Sleep(100 * time.Millisecond)
	if !alive(rg) {
		t.Fatalf("ripgrep %d is not running under the helper", rg)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if !gone(rg) {
		syscall.Kill(rg, syscall.SIGKILL)
		t.Fatalf("ripgrep %d outlived its parent", rg)
	}
}

// Pdeathsig fires when the thread that forked the child exits, not the
// process. A goroutine that locks its thread and returns without unlocking
// ends that thread (unless it is the main thread, which Go keeps): a child
// it started must not die of that.
func TestChildOutlivesStartingThread(t *testing.T) {
	runtime.LockOSThread() // keep this goroutine's thread to itself
	defer runtime.UnlockOSThread()
	var p *Process
	for try := 0; p == nil; try++ {
		if try == 100000 {
			t.Fatal("no goroutine ran on a thread other than the main one")
		}
		started := make(chan *Process)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
			if syscall.Gettid() == os.Getpid() {
				runtime.UnlockOSThread() // the main thread: try again elsewhere
				started <- nil
				return
			}
			p, err := Start(context.Background(), Spec{Path: "sleep", Args: []string{"30"}, Dir: "/", Env: Env(os.LookupEnv, []string{"PATH"})})
			if err != nil {
				t.Error(err)
			}
			started <- p
		}()
		p = <-started
		if t.Failed() {
			return
		}
	}
	defer func() { p.Stop(); p.Wait() }()
	time.Sleep(500 * time.Millisecond) // the thread is gone by now
	if !alive(p.Pid()) {
		t.Fatal("the child died with the thread that started it")
	}
}

// TestHelperOutliving does nothing as a test. Run by TestOutliveSurvivesParent
// as a separate process (PROC_HELPER=outlive), it starts sleep through
// Start with Outlive, prints its pid and waits to be killed.
func TestHelperOutliving(t *testing.T) {
	if os.Getenv("PROC_HELPER") != "outlive" {
		return
	}
	p, err := Start(context.Background(), Spec{Path: "sleep", Args: []string{"30"}, Dir: "/", Env: Env(os.LookupEnv, []string{"PATH"}), Outlive: true})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println(p.Pid())
	select {}
}

// Outlive exempts a process from the parent's death: the shell's guardian
// starts its work when the shell is killed.
func TestOutliveSurvivesParent(t *testing.T) {
	cmd, child := startHelper(t, "TestHelperOutliving", "PROC_HELPER=outlive")
	defer syscall.Kill(child, syscall.SIGKILL)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	time.Sleep(200 * time.Millisecond)
	if !alive(child) {
		t.Fatalf("the child %d died with its parent", child)
	}
}

// A program that detaches on purpose leaves its group a moment after its
// parent (the leader) has exited: here a child that calls setsid 50 ms
// late. It gets that moment (it was killed with the group at once, so
// setsid -f lost its child whenever the machine was busy), while what
// stays in the group is still killed.
func TestLeavingTheGroupAfterTheLeader(t *testing.T) {
	dir := t.TempDir()
	script := `( sleep 0.05; exec setsid sh -c 'echo $$ > detached.pid; exec sleep 30' ) >/dev/null 2>&1 & sh -c 'echo $$ > stayed.pid; exec sleep 30' >/dev/null 2>&1 & sleep 0.01`
	res, err := Run(context.Background(), Spec{Path: "sh", Args: []string{"-c", script}, Dir: dir, Env: Env(os.LookupEnv, []string{"PATH"})})
	if err != nil || res.Exit != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	pid := func(name string) int {
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, name))
			if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 {
				return n
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("%s never written", name)
		return 0
	}
	detached := pid("detached.pid")
	defer syscall.Kill(detached, syscall.SIGKILL)
	if !alive(detached) {
		t.Errorf("the child that left the group was killed")
	}
	stayed := pid("stayed.pid")
	deadline := time.Now().Add(5 * time.Second)
	for alive(stayed) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(stayed) {
		syscall.Kill(stayed, syscall.SIGKILL)
		t.Errorf("a member that stayed in the group outlived its leader")
	}
}

// startHelper runs this test binary's helper test name with env added, and
// returns it with the pid it prints on its first line.
func startHelper(t *testing.T, name string, env ...string) (*exec.Cmd, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		cmd.Process.Kill()
		t.Fatalf("helper said %q: %v", line, err)
	}
	return cmd, pid
}
