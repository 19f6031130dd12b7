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
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperParent$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PROC_HELPER=1", "PROC_HELPER_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	rg, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		cmd.Process.Kill()
		t.Fatalf("helper said %q: %v", line, err)
	}
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
