package txn

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/rowkit/rowkit/internal/workspace"
)

// Interruption is a transaction pending in a workspace, as a command that
// only reads finds it: without the lock, without acting on it. Such a
// command may show files of the transaction part old, part new (a commit
// killed between two renames), so it says so (Line) instead of staying
// silent; settling is for rowkit recover or the next edit.
type Interruption struct {
	Dir   string   // the workspace's root
	ID    string   // the transaction
	Files []string // its files, relative to Dir
	// Live: a rowkit process holds the workspace lock (it is committing or
	// settling this transaction now), as the lock itself says.
	Live bool
}

// Interrupted looks in the workspace ws for a pending transaction of its
// own (a journal that provably belongs to rowkit, as recovery would act
// on) that changes one of shown (paths relative to ws's root; "." is the
// whole workspace, a directory everything below it). It only reads: one
// lstat when nothing is pending.
func Interrupted(ws *workspace.Root, shown []string) *Interruption {
	if !pending(ws.Dir()) {
		return nil
	}
	j, _ := ownJournal(ws)
	if j == nil {
		return nil
	}
	var files []string
	touches := false
	for _, o := range j.Ops {
		files = append(files, o.Target)
		for _, s := range shown {
			if s == "." || s == o.Target || strings.HasPrefix(o.Target, s+"/") {
				touches = true
			}
		}
	}
	if !touches {
		return nil
	}
	live := lockHeld(ws)
	if !live {
		// The commit that wrote the journal may have removed it and let
		// go of the lock between the two looks: only a journal that is
		// still there with no one holding the lock is an interrupted
		// edit (a read beside a live edit said "interrupted" in the
		// router's tests).
		if j2, _ := ownJournal(ws); j2 == nil || j2.ID != j.ID {
			return nil
		}
		live = lockHeld(ws)
	}
	return &Interruption{Dir: ws.Dir(), ID: j.ID, Files: files, Live: live}
}

// InterruptedAbove is Interrupted for a command that is not confined to a
// workspace (hread, hgrep): the workspaces are the working directory dir
// and each directory above it, and shown are paths as the command was
// given them (relative to dir, or absolute). The directories are walked
// up through descriptors, linear in the depth.
func InterruptedAbove(dir string, shown []string) *Interruption {
	// The paths are resolved only once a journal is found: resolving a
	// path by path costs the square of its depth.
	var abs []string
	resolve := func() []string {
		if abs == nil {
			abs = make([]string, len(shown))
			for i, s := range shown {
				if !filepath.IsAbs(s) {
					s = filepath.Join(dir, s)
				}
				if r, err := filepath.EvalSymlinks(s); err == nil {
					s = r
				}
				abs[i] = filepath.Clean(s)
			}
		}
		return abs
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer func() { unix.Close(fd) }()
	var prev unix.Stat_t
	for at := filepath.Clean(dir); ; at = filepath.Dir(at) {
		var st, here unix.Stat_t
		if unix.Fstat(fd, &here) != nil || here.Dev == prev.Dev && here.Ino == prev.Ino {
			return nil // the top: ".." is the directory itself
		}
		prev = here
		if unix.Fstatat(fd, journalName, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			if in := interruptedAt(at, resolve()); in != nil {
				return in
			}
		}
		up, err := unix.Openat(fd, "..", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil
		}
		unix.Close(fd)
		fd = up
	}
}

// interruptedAt is Interrupted in the workspace at dir, for absolute
// shown paths.
func interruptedAt(dir string, abs []string) *Interruption {
	ws, err := workspace.Open(dir)
	if err != nil {
		return nil
	}
	defer ws.Close()
	var rel []string
	for _, a := range abs {
		switch {
		case a == ws.Dir():
			rel = append(rel, ".")
		case workspace.Inside(ws.Dir(), a):
			rel = append(rel, strings.TrimPrefix(a, ws.Dir()+"/"))
		}
	}
	if len(rel) == 0 {
		return nil
	}
	return Interrupted(ws, rel)
}

// lockHeld reports whether a process holds the flock of ws's lock file.
// It asks the lock itself, for a shared lock without waiting, and lets go
// at once: a writer's try in that instant fails and is retried within
// milliseconds. /proc/locks cannot say: it lists only the locks of
// processes in the reader's PID namespace, and Codex runs every command
// in a namespace of its own (bubblewrap), so a read beside a live edit
// said the edit was interrupted (TestCodexRouter in CI).
func lockHeld(ws *workspace.Root) bool {
	f, err := ws.FS().OpenFile(lockName, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	held := false
	rc.Control(func(fd uintptr) {
		for {
			err := syscall.Flock(int(fd), syscall.LOCK_SH|syscall.LOCK_NB)
			switch {
			case err == syscall.EINTR:
				continue
			case err == nil:
				syscall.Flock(int(fd), syscall.LOCK_UN)
			case errors.Is(err, syscall.EWOULDBLOCK):
				held = true
			}
			return
		}
	})
	return held
}

// MCPLine is Line for an MCP tool's result: the next edit through the
// server settles the transaction too.
func (in *Interruption) MCPLine() string {
	if in.Live {
		return in.Line(in.Dir)
	}
	return fmt.Sprintf("an interrupted edit of %s is pending in this workspace (transaction %s); what is shown may mix old and new content: the next edit settles it (or run `rowkit recover %s`)", in.files(), in.ID, strconv.Quote(in.Dir))
}

func (in *Interruption) files() string {
	names := in.Files
	more := ""
	if len(names) > 5 {
		more = fmt.Sprintf(" and %d more", len(names)-5)
		names = names[:5]
	}
	return strings.Join(names, ", ") + more
}

// Line is the one line a reading command prints about the transaction
// (after "NAME: CODE: "): which files it changes, that what is shown may
// mix old and new content, and the command that completes it.
func (in *Interruption) Line(cwd string) string {
	files := in.files()
	if in.Live {
		return fmt.Sprintf("an edit of %s is being committed in this workspace by another rowkit process (transaction %s); what is shown may mix old and new content: read again when it ends", files, in.ID)
	}
	cmd := "rowkit recover"
	if filepath.Clean(cwd) != in.Dir {
		cmd += " " + strconv.Quote(in.Dir)
	}
	return fmt.Sprintf("an interrupted edit of %s is pending in this workspace (transaction %s); what is shown may mix old and new content: run `%s` to complete it", files, in.ID, cmd)
}
