package grep

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/workspace"
)

// pseudoFS are the kernel's file systems whose regular files are not data:
// their size says nothing, a read may block for ever (/proc/kmsg) or
// differ from the last.
var pseudoFS = map[int64]string{
	0x9fa0:     "proc",
	0x62656572: "sysfs",
	0x64626720: "debugfs",
	0x74726163: "tracefs",
	0x73636673: "securityfs",
	0x27e0eb:   "cgroup",
	0x63677270: "cgroup2",
	0x62656570: "configfs",
	0xcafe4a11: "bpf",
	0x6165676c: "pstore",
	0xde5e81e4: "efivarfs",
}

// checkPath checks one path argument (isPath) or file-valued option before
// ripgrep starts, and returns the form ripgrep gets. ripgrep would block
// for ever reading a FIFO, a device or a kernel pseudo file named to it,
// so those are refused here, as hread refuses them; a directory is fine
// as a path (ripgrep searches only the regular files it finds there). A
// missing path passes: ripgrep reports it and searches the rest.
//
// With a root the request is resolved inside it (outside_workspace when it
// leads out) and ripgrep gets its clean relative form.
func checkPath(root *workspace.Root, dir, req string, isPath bool) (string, error) {
	name, arg := req, req
	if !filepath.IsAbs(req) {
		name = dir + "/" + req
	}
	if root != nil {
		clean, target, err := root.Resolve(req)
		if errs.Is(err, errs.NotFound) {
			return clean, nil
		}
		if err != nil {
			return "", err
		}
		name, arg = filepath.Join(root.ProcDir(), target), clean
	}
	fi, err := os.Stat(name)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return arg, nil
	}
	if err != nil {
		return arg, nil // ripgrep reports what it cannot read
	}
	what := "a pattern or ignore file must be a regular file"
	if isPath {
		what = "a path must be a regular file or a directory"
	}
	switch {
	case fi.IsDir() && isPath, fi.Mode().IsRegular():
		var st syscall.Statfs_t
		if syscall.Statfs(name, &st) == nil {
			if kind, ok := pseudoFS[int64(st.Type)]; ok {
				return "", errs.Errorf(CodeNotRegular, "%s is on the kernel's %s file system, whose files are not data and may block a search; search regular files only", quote(req), kind)
			}
		}
		return arg, nil
	case fi.IsDir():
		return arg, nil // ripgrep reports a directory given as a file
	}
	kind := "not a regular file"
	if e, ok := regfile.AsNotRegular(regfile.Check(fi)); ok {
		kind = e.Kind()
	}
	return "", errs.Errorf(CodeNotRegular, "%s is %s, which a search would block on; %s", quote(req), kind, what)
}

// pin opens the regular file that checkPath let through as arg (req as the
// caller wrote it, for messages), without blocking, so that ripgrep reads
// that very file (as /dev/fd/N): a FIFO renamed over the path after the
// check held ripgrep in open(2) for ever. It returns nil, and ripgrep gets
// the path, for a directory (ripgrep walks it), a path that is gone or
// cannot be opened (ripgrep reports it). Anything else found there now was
// swapped in since the check and is refused as checkPath refuses it.
func pin(root *os.Root, dir, arg, req string, isPath bool) (*os.File, error) {
	stat, open, name := os.Stat, os.OpenFile, arg
	if root != nil {
		stat, open = root.Stat, root.OpenFile
	} else if !filepath.IsAbs(arg) {
		name = dir + "/" + arg
	}
	f, _, err := regfile.Open(stat, open, name)
	if nr, ok := regfile.AsNotRegular(err); ok && !nr.Mode.IsDir() {
		what := "a pattern or ignore file must be a regular file"
		if isPath {
			what = "a path must be a regular file or a directory"
		}
		return nil, errs.Errorf(CodeNotRegular, "%s is %s, which a search would block on; %s", quote(req), nr.Kind(), what)
	}
	if err != nil {
		return nil, nil
	}
	var st syscall.Statfs_t
	if fstatfs(f, &st) == nil {
		if kind, ok := pseudoFS[int64(st.Type)]; ok {
			f.Close()
			return nil, errs.Errorf(CodeNotRegular, "%s is on the kernel's %s file system, whose files are not data and may block a search; search regular files only", quote(req), kind)
		}
	}
	return f, nil
}

// fstatfs is statfs(2) on an open file, without putting it in blocking
// mode as File.Fd would.
func fstatfs(f *os.File, st *syscall.Statfs_t) error {
	c, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := c.Control(func(fd uintptr) { serr = syscall.Fstatfs(int(fd), st) }); err != nil {
		return err
	}
	return serr
}

// reopen returns a new descriptor of f's open file, for a reader that
// closes what it is given.
func reopen(f *os.File) (*os.File, error) {
	c, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var nfd uintptr
	var errno syscall.Errno
	if err := c.Control(func(fd uintptr) {
		// Close-on-exec from the start: a child forked meanwhile by
		// another goroutine must not inherit it.
		nfd, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return nil, err
	}
	if errno != 0 {
		return nil, errno
	}
	return os.NewFile(nfd, f.Name()), nil
}
