package txn

import (
	"context"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"syscall"
	"time"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/workspace"
)

// lockName is the file whose flock is the right to write a journal.
const lockName = workspace.StateDir + "/lock"

// lockWait bounds how long a commit or a recovery waits for the
// transaction of another process (or goroutine) to end. A commit holds the
// lock for milliseconds; ten seconds is a writer that is stuck or stopped.
var lockWait = 10 * time.Second

// lock is a held flock on lockName. It is released by closing its file,
// and by the kernel when the process dies.
type lock struct {
	root *os.Root
	f    *os.File
	id   fileID
}

// errBusy is the failure to get the lock within lockWait.
var errBusy = errors.New("another rowkit process is committing here")

// errForeignState is a .rowkit that is not rowkit's own directory.
type errForeignState struct{ why string }

func (e *errForeignState) Error() string { return e.why }

// lockRecovery maps an acquire error that is a finding about the workspace
// (busy, a foreign state directory) to the recovery result that reports
// it.
func lockRecovery(err error) (Recovery, bool) {
	var fe *errForeignState
	switch {
	case errors.Is(err, errBusy):
		return Recovery{Action: Busy}, true
	case errors.As(err, &fe):
		return Recovery{Action: Ignored, Reason: fe.why}, true
	}
	return Recovery{}, false
}

// acquire takes the workspace lock, creating .rowkit and the lock file when
// missing. It polls rather than blocks so that ctx and lockWait are
// honoured; a holder keeps it for milliseconds.
func acquire(ctx context.Context, ws *workspace.Root) (*lock, error) {
	root := ws.FS()
	if j, why := ownJournal(ws); j == nil && why != "" {
		// A journal that is not rowkit's own, in a state directory where
		// no rowkit ever locked (a repository shipped it): reported
		// without creating anything there. (Where the lock exists, the
		// journal is looked at again under it: a live writer's may have
		// been caught between two renames.)
		if _, err := root.Lstat(lockName); errors.Is(err, fs.ErrNotExist) {
			return nil, &errForeignState{why}
		}
	}
	deadline := time.Now().Add(lockWait)
	delay := 500 * time.Microsecond
	var l *lock
	defer func() {
		if l != nil {
			l.f.Close()
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return nil, errs.New(errs.Cancelled, "cancelled while waiting for another rowkit process to finish its transaction; nothing was done")
		}
		if l == nil {
			var err error
			if l, err = openLock(root); err != nil {
				return nil, err
			}
		}
		got, err := l.try()
		if err != nil {
			return nil, err
		}
		if got {
			if l.current() {
				held := l
				l = nil
				return held, nil
			}
			// The file was removed or replaced while this process waited:
			// a lock on the old inode excludes nobody. Lock the new one.
			l.f.Close()
			l = nil
			continue
		}
		if time.Now().After(deadline) {
			return nil, errBusy
		}
		// Jittered, so that waiters do not retry in step.
		d := delay/2 + rand.N(delay)
		select {
		case <-ctx.Done():
		case <-time.After(d):
		}
		delay = min(delay*2, 8*time.Millisecond)
	}
}

// openLock opens (creating) the lock file inside a real .rowkit directory.
func openLock(root *os.Root) (*lock, error) {
	if err := root.Mkdir(workspace.StateDir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	home, err := root.Lstat(workspace.StateDir)
	if err != nil {
		return nil, err
	}
	if !home.IsDir() {
		return nil, &errForeignState{workspace.StateDir + " is not a directory"}
	}
	// The state directory is rowkit's own: keep it out of version control.
	if f, err := root.OpenFile(workspace.StateDir+"/.gitignore", os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NONBLOCK, 0o644); err == nil {
		f.WriteString("*\n")
		f.Close()
	}
	// Non-blocking: a FIFO planted here must not hang the open.
	f, err := root.OpenFile(lockName, os.O_RDWR|os.O_CREATE|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0o600)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = regfile.Check(fi)
	}
	var lfi fs.FileInfo
	if err == nil {
		// os.Root follows a symlink in the last component (inside the
		// root): refuse one, as a link could point two writers at two
		// files.
		if lfi, err = root.Lstat(lockName); err == nil && lfi.Mode()&fs.ModeSymlink != 0 {
			err = errors.New("is a symlink")
		}
	}
	if err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: lockName, Err: err}
	}
	id, ok := idOf(fi)
	if !ok {
		f.Close()
		return nil, errors.New("the file system gives no inode numbers")
	}
	return &lock{root: root, f: f, id: id}, nil
}

// try takes the flock without waiting; false when another holds it.
func (l *lock) try() (bool, error) {
	rc, err := l.f.SyscallConn()
	if err != nil {
		return false, err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			if ferr = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB); ferr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return false, err
	}
	switch {
	case ferr == nil:
		return true, nil
	case errors.Is(ferr, syscall.EWOULDBLOCK):
		return false, nil
	}
	return false, &fs.PathError{Op: "flock", Path: lockName, Err: ferr}
}

// current reports whether lockName still names the locked file.
func (l *lock) current() bool {
	fi, err := l.root.Lstat(lockName)
	if err != nil {
		return false
	}
	id, ok := idOf(fi)
	return ok && id == l.id
}

// release drops the lock. The file stays: removing it would let a waiter
// lock an inode that a newcomer no longer finds.
func (l *lock) release() { l.f.Close() }
