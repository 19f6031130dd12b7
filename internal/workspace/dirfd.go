package workspace

import (
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// dirFlags open a directory to look up, create and remove names in: never
// through a symbolic link, never blocking (a FIFO swapped in fails with
// ENOTDIR), closed on exec.
const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC

// OpenDir opens the directory rel below the held root (a clean relative
// path, "." for the root itself) without following a symbolic link in any
// of its components: each is opened from the one before it with
// O_NOFOLLOW, so the cost is linear in the depth, and a component that is
// now a symlink, a file or missing fails (ELOOP, ENOTDIR, ENOENT) instead of
// leading anywhere. It is how the edit transaction reaches the directories
// it changes: a name it renames, links or removes is then always in the
// directory it checked, whatever is swapped in above it.
func (r *Root) OpenDir(rel string) (*os.File, error) {
	rc, err := r.fd.SyscallConn()
	if err != nil {
		return nil, err
	}
	var fd int
	var oerr error
	if err := rc.Control(func(root uintptr) {
		fd, oerr = openDirAt(int(root), rel)
	}); err != nil {
		return nil, err
	}
	if oerr != nil {
		return nil, &os.PathError{Op: "openat", Path: rel, Err: oerr}
	}
	return os.NewFile(uintptr(fd), rel), nil
}

// openDirAt opens rel below the directory fd root, component by component,
// and returns the new descriptor. The intermediate ones are closed as it
// goes: however deep rel is, it holds at most two.
func openDirAt(root int, rel string) (int, error) {
	fd, err := openat(root, ".")
	if err != nil {
		return -1, err
	}
	if rel == "." || rel == "" {
		return fd, nil
	}
	for c := range strings.SplitSeq(rel, "/") {
		if c == "" || c == "." {
			continue
		}
		if c == ".." {
			unix.Close(fd)
			return -1, syscall.EINVAL // a clean path never climbs
		}
		next, err := openat(fd, c)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

func openat(dir int, name string) (int, error) {
	for {
		fd, err := unix.Openat(dir, name, dirFlags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}
