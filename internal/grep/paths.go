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
		name, arg = filepath.Join(root.Dir(), target), clean
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
