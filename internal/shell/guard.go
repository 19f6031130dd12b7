package shell

import (
	"bufio"
	"context"
	"io"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/rowkit/rowkit/internal/proc"
)

// The guardian. Every program a script runs gets a process group of its
// own, so that it can be stopped as a whole; but a caller that ends the
// shell by killing the shell's own process group (Codex sends SIGKILL to
// it) reaches none of them, and the shell, killed, cannot stop them. The
// guardian is a process of its own group that outlives the shell: its
// stdin is a pipe whose only writer is the shell, which writes "+PGID"
// after it starts a group and "-PGID" once the group is gone. When the
// pipe ends (the shell exited, however it died), the guardian stops every
// group still listed: SIGTERM, then SIGKILL to what is left after the
// grace period. It is started before the first program, with its output
// on /dev/null, so that it holds no pipe anyone waits on. A group started
// in the instant before the shell could list it can still be missed if the
// shell is killed exactly then.

// guard is the shell's end of the guardian.
type guard struct {
	prog *Program

	mu      sync.Mutex
	started bool
	w       *os.File
	p       *proc.Process
}

// start starts the guardian, once; it returns why it could not.
func (g *guard) start() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.started || g.prog == nil {
		return nil
	}
	g.started = true
	return g.spawn()
}

func (g *guard) spawn() error {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	// Not the script's context: the guardian must outlive its
	// cancellation, and ends when the pipe does; nor the death signal
	// proc gives children: it must outlive the shell.
	p, err := proc.Start(context.Background(), proc.Spec{
		Path: g.prog.Path, Argv0: g.prog.Args[0], Args: g.prog.Args[1:], Dir: "/",
		Stdin: r, Stdout: null, Stderr: null, Outlive: true,
	})
	if err != nil {
		w.Close()
		return err
	}
	g.w, g.p = w, p
	return nil
}

func (g *guard) add(pgid int)    { g.say('+', pgid) }
func (g *guard) remove(pgid int) { g.say('-', pgid) }

func (g *guard) say(op byte, pgid int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.w != nil {
		// A guardian that died takes nothing with it; the write fails
		// and the shell goes on.
		g.w.Write(append(strconv.AppendInt([]byte{op}, int64(pgid), 10), '\n'))
	}
}

// close ends the guardian's pipe: with every group gone, it exits at
// once. It is reaped in the background rather than waited for, so that a
// script does not end later for a guardian still starting up.
func (g *guard) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.w == nil {
		return
	}
	g.w.Close()
	g.w = nil
	go g.p.Wait()
}

// Guard is the guardian's work, in its own process: it reads "+PGID" and
// "-PGID" lines from in until it ends, then stops every group still
// listed (SIGTERM, then SIGKILL after grace to those left) and returns.
func Guard(in io.Reader, grace time.Duration) {
	groups := map[int]bool{}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		line := sc.Text()
		if len(line) < 2 {
			continue
		}
		pgid, err := strconv.Atoi(line[1:])
		if err != nil || pgid <= 1 {
			continue // never -1 (every process) or 1 (init)
		}
		switch line[0] {
		case '+':
			groups[pgid] = true
		case '-':
			delete(groups, pgid)
		}
	}
	for pgid := range groups {
		syscall.Kill(-pgid, syscall.SIGTERM)
	}
	for deadline := time.Now().Add(grace); len(groups) > 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for pgid := range groups {
			if syscall.Kill(-pgid, 0) == syscall.ESRCH {
				delete(groups, pgid)
			}
		}
	}
	for pgid := range groups {
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
}
