// Package proc owns running other programs: the one subprocess runner behind
// ripgrep, git, validation commands and the bash of rowkit shell.
//
// Every process gets argv (never a shell), an explicit working directory,
// an allowlisted environment, standard input at /dev/null unless given, and
// its own process group (or session). Stopping it (context cancelled,
// timeout, or Stop) sends SIGTERM to the whole group, then SIGKILL after a
// grace period; when the leader exits, whatever is left of its group is
// killed too (unless the caller takes that on: Spec.Session), so no
// grandchild outlives the call. Every process but one started to Outlive
// this one gets SIGKILL when this process dies, however it dies
// (Pdeathsig). Output goes to bounded writers (Capture, Limit) or to a pipe
// the caller reads.
package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// DefaultGrace is how long a stopped group has between SIGTERM and SIGKILL.
const DefaultGrace = 2 * time.Second

// Lookup finds one variable of the caller's environment, as os.LookupEnv
// does for the process's own. The runner never reads the process's
// environment itself: a command embedded in a shell has the script's.
type Lookup func(key string) (string, bool)

// Env returns the environment made of the variables in allow that lookup
// finds, followed by extra ("KEY=VALUE" each). Nothing else of the caller's
// environment passes. A nil lookup finds nothing.
func Env(lookup Lookup, allow []string, extra ...string) []string {
	env := make([]string, 0, len(allow)+len(extra))
	for _, k := range allow {
		if lookup == nil {
			break
		}
		if v, ok := lookup(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, extra...)
}

// Spec describes one process.
type Spec struct {
	Path string   // the program; looked up on Env's PATH when it has no slash
	Args []string // arguments after the program name
	Dir  string   // working directory; required
	Env  []string // the whole environment (see Env)

	// Argv0 is the name the program sees as argv[0]; "" is Path. A shell
	// passes the command name as typed, and a program that dispatches on
	// its name (rowkit) is run under the name it must answer to.
	Argv0 string

	// Outlive exempts the process from the SIGKILL every other process
	// gets when this one dies: the shell's guardian, whose work starts
	// then. Timeout, Stop and a cancelled context still stop it.
	Outlive bool
	// Session starts the process as the leader of a session of its own
	// (setsid(2)), rather than of a process group in this one: as the
	// commands of an agent's shell tool run (rowkit shell's bash), or a
	// daemon started on purpose (the symbol broker), which no terminal
	// hang-up or clean-up of its starter's session or group reaches; with
	// Outlive it survives its starter. What remains of its group when it
	// exits is left to the caller, who stops it (rowkit shell names what a
	// script left running, and gives it a grace period). Stop and a
	// cancelled context still signal the whole group.
	Session bool

	Stdin io.Reader // nil: /dev/null
	// Stdout and Stderr receive the streams. A nil Stdout gives the caller
	// a pipe instead (Process.Stdout); a nil Stderr discards. An *os.File
	// is handed to the process itself; any other writer is fed from a
	// pipe, one pipe for both when Stderr is the very writer Stdout is, so
	// that the two streams keep the order the process wrote them in.
	Stdout, Stderr io.Writer

	// ExtraFiles are open files the process inherits as descriptors 3,
	// 4, ...: a caller that checked a file hands over the very file it
	// checked (as /dev/fd/N), so that a file swapped in later is never
	// what the program opens.
	ExtraFiles []*os.File

	// MaxMemory bounds the process's address space (RLIMIT_AS), in bytes;
	// 0: no bound. Allocations past it fail (a Rust program aborts with
	// "memory allocation of N bytes failed"). Go cannot set a limit for
	// the child alone before exec (SysProcAttr has no rlimit field, and
	// setting the parent's own limit around the fork would bind every
	// goroutine of this process too), so it is set with prlimit(2) right
	// after the exec, before the program has read any input: it can grow
	// no further from then on.
	MaxMemory int64

	Timeout time.Duration // 0: none
	Grace   time.Duration // SIGTERM to SIGKILL; 0: DefaultGrace
}

// Result is how a process ended.
type Result struct {
	Exit     int    // exit status; -1 when it did not exit normally
	Signal   string // the signal that ended it, e.g. "SIGKILL"; "" otherwise
	TimedOut bool   // Timeout ran out and the group was stopped
	Stopped  bool   // the context was cancelled or Stop was called
	Duration time.Duration

	signo syscall.Signal
}

// Process is a started process.
type Process struct {
	// Stdout is the read end of the standard output pipe when Spec.Stdout
	// was nil. Read it to EOF (or Stop the process) before Wait.
	Stdout io.ReadCloser

	cmd     *exec.Cmd
	grace   time.Duration
	start   time.Time
	pipes   []*os.File // read ends drained by copy goroutines
	copying sync.WaitGroup

	exited   chan struct{}
	waitErr  error
	stopOnce sync.Once
	mu       sync.Mutex
	stopped  bool
	timedOut bool
	done     chan struct{} // closed when Wait returns
	cancelFn context.CancelFunc
}

// ErrNotFound reports a program that is not on PATH.
var ErrNotFound = exec.ErrNotFound

// Start starts the process. Cancelling ctx stops it as Stop does.
func Start(ctx context.Context, s Spec) (*Process, error) {
	if s.Dir == "" {
		return nil, errors.New("proc: Spec.Dir is required")
	}
	path := s.Path
	if !strings.Contains(path, "/") {
		p, ok := LookPath(path, s.Env)
		if !ok {
			return nil, fmt.Errorf("%s: %w", s.Path, ErrNotFound)
		}
		path = p
	}
	argv0 := s.Path
	if s.Argv0 != "" {
		argv0 = s.Argv0
	}
	cmd := &exec.Cmd{Path: path, Args: append([]string{argv0}, s.Args...), Dir: s.Dir, Env: s.Env}
	if cmd.Env == nil {
		cmd.Env = []string{} // never the caller's environment by accident
	}
	cmd.Stdin = s.Stdin
	cmd.ExtraFiles = s.ExtraFiles
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: !s.Session, Setsid: s.Session, Pdeathsig: syscall.SIGKILL}
	if s.Outlive {
		cmd.SysProcAttr.Pdeathsig = 0
	}
	p := &Process{cmd: cmd, grace: s.Grace, exited: make(chan struct{}), done: make(chan struct{})}
	if p.grace <= 0 {
		p.grace = DefaultGrace
	}
	var parentEnds []*os.File
	closeAll := func() {
		for _, f := range parentEnds {
			f.Close()
		}
		for _, f := range p.pipes {
			f.Close()
		}
	}
	// Pipes are made here rather than by exec, so that the group can be
	// killed as soon as the leader exits, before waiting for the pipes.
	attach := func(w io.Writer, set func(*os.File)) error {
		if f, ok := w.(*os.File); ok {
			set(f)
			return nil
		}
		r, wr, err := os.Pipe()
		if err != nil {
			return err
		}
		set(wr)
		parentEnds = append(parentEnds, wr)
		if w == nil {
			p.Stdout = r
			return nil
		}
		p.pipes = append(p.pipes, r)
		p.copying.Add(1)
		go func() {
			defer p.copying.Done()
			io.Copy(w, r)
			io.Copy(io.Discard, r) // a writer that refused more: keep draining
		}()
		return nil
	}
	if err := attach(s.Stdout, func(f *os.File) { cmd.Stdout = f }); err != nil {
		closeAll()
		return nil, err
	}
	stderr := s.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	if _, isFile := stderr.(*os.File); !isFile && sameWriter(stderr, s.Stdout) {
		cmd.Stderr = cmd.Stdout
	} else if err := attach(stderr, func(f *os.File) { cmd.Stderr = f }); err != nil {
		closeAll()
		return nil, err
	}
	p.start = time.Now()
	if err := startLocked(cmd); err != nil {
		closeAll()
		if p.Stdout != nil {
			p.Stdout.Close()
		}
		return nil, err
	}
	for _, f := range parentEnds {
		f.Close()
	}
	if s.MaxMemory > 0 {
		if err := limitMemory(cmd.Process.Pid, s.MaxMemory); err != nil {
			// An unbounded process is what the caller meant to prevent.
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
			p.copying.Wait()
			closeAll()
			if p.Stdout != nil {
				p.Stdout.Close()
			}
			return nil, fmt.Errorf("proc: limiting the memory of %s: %w", s.Path, err)
		}
	}
	go func() {
		p.waitErr = cmd.Wait()
		if !s.Session {
			// The leader is gone; nothing else of its group may stay
			// behind.
			endGroup(cmd.Process.Pid)
		}
		close(p.exited)
	}()
	ctx, p.cancelFn = context.WithCancel(ctx)
	if s.Timeout > 0 {
		go func() {
			t := time.NewTimer(s.Timeout)
			defer t.Stop()
			select {
			case <-t.C:
				p.mu.Lock()
				p.timedOut = true
				p.mu.Unlock()
				p.Stop()
			case <-p.exited:
			case <-p.done:
			}
		}()
	}
	go func() {
		select {
		case <-ctx.Done():
			select {
			case <-p.exited:
				// Wait cancels ctx after the exit: nothing to stop, and
				// the result must not say it was stopped.
			default:
				p.Stop()
			}
		case <-p.exited:
		}
	}()
	return p, nil
}

// LookPath finds name on the PATH of env, the process's environment to be,
// not on this process's own PATH. Entries that are not absolute are
// skipped, as exec.LookPath refuses what they find: a program from the
// directory being searched must never run by accident.
func LookPath(name string, env []string) (string, bool) {
	var path string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v // the last one wins, as execve's caller sees it
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// Pdeathsig is sent when the thread that forked the child exits, not the
// process: Go may fork from any thread, and a thread exits when a
// goroutine that locked it returns without unlocking, which would kill
// children that should live on. So every child is forked from one
// goroutine locked to its thread for the life of the process.
var (
	starts    = make(chan startRequest)
	startOnce sync.Once
)

type startRequest struct {
	cmd  *exec.Cmd
	done chan error
}

func startLocked(cmd *exec.Cmd) error {
	startOnce.Do(func() { go starter() })
	r := startRequest{cmd, make(chan error, 1)}
	starts <- r
	return <-r.done
}

func starter() {
	runtime.LockOSThread() // never unlocked: the thread lives as long as the process
	for r := range starts {
		r.done <- r.cmd.Start()
	}
}

// limitMemory sets pid's RLIMIT_AS, soft and hard, to n bytes.
func limitMemory(pid int, n int64) error {
	lim := syscall.Rlimit{Cur: uint64(n), Max: uint64(n)}
	_, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), uintptr(syscall.RLIMIT_AS), uintptr(unsafe.Pointer(&lim)), 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// leaveGrace is how long the members of a group whose leader has exited
// get to leave it before they are killed. A program that detaches on
// purpose forks a child that calls setsid(2) once the parent has exited
// (setsid -f, a daemon's double fork): killed at once, that child dies in
// the instant before it leaves, the more often the busier the machine.
const leaveGrace = 500 * time.Millisecond

// endGroup kills what is left of the group pgid once its leader has
// exited: at once when nothing is, otherwise when the members still there
// have had leaveGrace to go. A group emptied by its leader's exit (the
// usual case) costs one kill(2).
func endGroup(pgid int) {
	deadline := time.Now().Add(leaveGrace)
	for syscall.Kill(-pgid, 0) == nil {
		if time.Now().After(deadline) {
			syscall.Kill(-pgid, syscall.SIGKILL)
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Pid returns the process id, which is also its group id (and its
// session id, with Spec.Session).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Stop ends the process group: SIGTERM now, SIGKILL after the grace period
// unless the leader has exited by then. It does not wait; call Wait.
func (p *Process) Stop() {
	p.stopOnce.Do(func() {
		p.mu.Lock()
		if !p.timedOut {
			p.stopped = true
		}
		p.mu.Unlock()
		pgid := p.cmd.Process.Pid
		syscall.Kill(-pgid, syscall.SIGTERM)
		go func() {
			select {
			case <-p.exited:
			case <-time.After(p.grace):
				syscall.Kill(-pgid, syscall.SIGKILL)
			}
		}()
	})
}

// Wait waits for the process and for its output to be copied, and returns
// how it ended. A copy still blocked a grace period after the leader exited
// (a process that left the group holds the pipe) is abandoned: its pipe is
// closed.
func (p *Process) Wait() Result {
	<-p.exited
	copied := make(chan struct{})
	go func() { p.copying.Wait(); close(copied) }()
	select {
	case <-copied:
	case <-time.After(p.grace):
		for _, f := range p.pipes {
			f.Close()
		}
		<-copied
	}
	for _, f := range p.pipes {
		f.Close()
	}
	if p.Stdout != nil {
		p.Stdout.Close()
	}
	p.cancelFn()
	close(p.done)
	p.mu.Lock()
	defer p.mu.Unlock()
	r := Result{Exit: -1, TimedOut: p.timedOut, Stopped: p.stopped && !p.timedOut, Duration: time.Since(p.start)}
	if ps := p.cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
			switch {
			case ws.Exited():
				r.Exit = ws.ExitStatus()
			case ws.Signaled():
				r.Signal = SignalName(ws.Signal())
				r.signo = ws.Signal()
			}
		}
	}
	return r
}

// Code is the status a shell gives the process: its exit status, or
// 128 + n when signal n ended it.
func (r Result) Code() int {
	if r.signo != 0 {
		return 128 + int(r.signo)
	}
	return r.Exit
}

// sameWriter reports whether a and b are the same writer; writers of a
// type that cannot be compared are never the same.
func sameWriter(a, b io.Writer) bool {
	if a == nil || b == nil {
		return false
	}
	t := reflect.TypeOf(a)
	return t == reflect.TypeOf(b) && t.Comparable() && a == b
}

// Run starts the process and waits for it.
func Run(ctx context.Context, s Spec) (Result, error) {
	if s.Stdout == nil {
		s.Stdout = io.Discard
	}
	p, err := Start(ctx, s)
	if err != nil {
		return Result{Exit: -1}, err
	}
	return p.Wait(), nil
}

// SignalName names the common signals the way a person reads them.
func SignalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	}
	return fmt.Sprintf("signal %d", int(s))
}

// Limit keeps everything written to it up to Max bytes. Past that it
// refuses the write, so that a reader copying into it stops, and records
// that the limit was passed: for output that must be whole or not at all
// (git's -z listings), where a head and tail would be wrong.
type Limit struct {
	Max  int
	buf  []byte
	over bool
}

func (l *Limit) Write(p []byte) (int, error) {
	if len(l.buf)+len(p) > l.Max {
		l.over = true
		return 0, errors.New("proc: output limit reached")
	}
	l.buf = append(l.buf, p...)
	return len(p), nil
}

// Bytes returns what was kept.
func (l *Limit) Bytes() []byte { return l.buf }

// Over reports whether more than Max bytes were offered.
func (l *Limit) Over() bool { return l.over }
