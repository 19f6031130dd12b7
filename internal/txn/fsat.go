package txn

import (
	"errors"
	"io/fs"
	"os"
	"path"

	"golang.org/x/sys/unix"

	"github.com/rowkit/rowkit/internal/regfile"
)

// The transaction reaches every name it looks at, creates, renames, links
// or removes through the directory that holds it, opened from the root one
// component at a time without following a symbolic link
// (workspace.OpenDir). A directory on the way that another program
// replaced by a symlink (to anywhere) or removed makes the name
// unreachable: the transaction then never acts through it, and treats what
// it wanted there as not its own.

// place is a name in a directory held open.
type place struct {
	dir  *os.File
	fd   int
	name string
}

// at opens the directory of rel (a clean path relative to the root).
func (t *tx) at(rel string) (*place, error) {
	d, err := t.ws.OpenDir(path.Dir(rel))
	if err != nil {
		return nil, err
	}
	return &place{dir: d, fd: int(d.Fd()), name: path.Base(rel)}, nil
}

func (p *place) close() { p.dir.Close() }

// unreachable reports an error that says the name, or a directory on the
// way to it, is not there as a path of the workspace: missing, or replaced
// by a file or a symlink.
func unreachable(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP)
}

// stat is what the transaction needs of an lstat.
type stat struct {
	id    fileID
	mode  uint32 // S_IFMT bits and permissions
	uid   uint32
	size  int64
	nlink uint64
}

func (s stat) isReg() bool  { return s.mode&unix.S_IFMT == unix.S_IFREG }
func (s stat) isLink() bool { return s.mode&unix.S_IFMT == unix.S_IFLNK }
func (s stat) isDir() bool  { return s.mode&unix.S_IFMT == unix.S_IFDIR }
func (s stat) perm() fs.FileMode {
	return fs.FileMode(s.mode & 0o777)
}

// fileMode is the stat's type as an fs.FileMode, for regfile's names.
func (s stat) fileMode() fs.FileMode {
	switch s.mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return 0
}

// notRegular is the *regfile.NotRegularError of a stat that is not a
// regular file (nil when it is one).
func (s stat) notRegular() error {
	if s.isReg() {
		return nil
	}
	return &regfile.NotRegularError{Mode: s.fileMode()}
}

func statOf(st *unix.Stat_t) stat {
	return stat{id: fileID{Dev: uint64(st.Dev), Ino: st.Ino}, mode: st.Mode, uid: st.Uid, size: st.Size, nlink: uint64(st.Nlink)}
}

// lstat looks at rel without following it.
func (t *tx) lstat(rel string) (stat, error) {
	p, err := t.at(rel)
	if err != nil {
		return stat{}, err
	}
	defer p.close()
	return p.lstat()
}

func (p *place) lstat() (stat, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(p.fd, p.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return stat{}, &fs.PathError{Op: "lstat", Path: p.name, Err: err}
	}
	return statOf(&st), nil
}

// exists reports whether rel is there (of any type); false also when it
// cannot be reached.
func (t *tx) exists(rel string) bool {
	_, err := t.lstat(rel)
	return err == nil
}

// missing reports whether rel is provably absent: its directory is there
// and holds no such name.
func (t *tx) missing(rel string) bool {
	_, err := t.lstat(rel)
	return errors.Is(err, fs.ErrNotExist)
}

// reachable reports whether the directory of rel can be reached (as a
// path of the workspace, without a symlink on the way).
func (t *tx) reachable(rel string) bool {
	d, err := t.ws.OpenDir(path.Dir(rel))
	if err != nil {
		return false
	}
	d.Close()
	return true
}

// sameID reports whether rel is the file recorded as id.
func (t *tx) sameID(rel string, id *fileID) bool {
	if id == nil {
		return false
	}
	st, err := t.lstat(rel)
	return err == nil && st.id == *id
}

// idOfPath returns the identity of rel.
func (t *tx) idOfPath(rel string) (*fileID, error) {
	st, err := t.lstat(rel)
	if err != nil {
		return nil, err
	}
	return &st.id, nil
}

// twoPlaces opens the directories of a and b.
func (t *tx) twoPlaces(a, b string) (*place, *place, error) {
	pa, err := t.at(a)
	if err != nil {
		return nil, nil, err
	}
	pb, err := t.at(b)
	if err != nil {
		pa.close()
		return nil, nil, err
	}
	return pa, pb, nil
}

// rename renames from to to; with noReplace it fails with EEXIST when to
// exists (RENAME_NOREPLACE: a file another writer created is never
// replaced).
func (t *tx) rename(from, to string, noReplace bool) error {
	pf, pt, err := t.twoPlaces(from, to)
	if err != nil {
		return err
	}
	defer pf.close()
	defer pt.close()
	if !noReplace {
		return pathErr("rename", to, unix.Renameat(pf.fd, pf.name, pt.fd, pt.name))
	}
	err = unix.Renameat2(pf.fd, pf.name, pt.fd, pt.name, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		// A file system without RENAME_NOREPLACE: check, then rename.
		var st unix.Stat_t
		if serr := unix.Fstatat(pt.fd, pt.name, &st, unix.AT_SYMLINK_NOFOLLOW); !errors.Is(serr, unix.ENOENT) {
			return pathErr("rename", to, unix.EEXIST)
		}
		err = unix.Renameat(pf.fd, pf.name, pt.fd, pt.name)
	}
	return pathErr("rename", to, err)
}

// link makes to a new name of from (a symlink itself, never followed).
func (t *tx) link(from, to string) error {
	pf, pt, err := t.twoPlaces(from, to)
	if err != nil {
		return err
	}
	defer pf.close()
	defer pt.close()
	return pathErr("link", to, unix.Linkat(pf.fd, pf.name, pt.fd, pt.name, 0))
}

// unlink removes the name rel (a file or a symlink, never a directory).
func (t *tx) unlink(rel string) error {
	p, err := t.at(rel)
	if err != nil {
		return err
	}
	defer p.close()
	return pathErr("unlink", rel, unix.Unlinkat(p.fd, p.name, 0))
}

// rmdir removes rel when it is an empty directory: never a file, never a
// symlink (ENOTDIR), never a directory that holds anything (ENOTEMPTY).
func (t *tx) rmdir(rel string) error {
	p, err := t.at(rel)
	if err != nil {
		return err
	}
	defer p.close()
	return pathErr("rmdir", rel, unix.Unlinkat(p.fd, p.name, unix.AT_REMOVEDIR))
}

func (t *tx) mkdir(rel string) error {
	p, err := t.at(rel)
	if err != nil {
		return err
	}
	defer p.close()
	return pathErr("mkdir", rel, unix.Mkdirat(p.fd, p.name, 0o755))
}

func (t *tx) symlink(text, rel string) error {
	p, err := t.at(rel)
	if err != nil {
		return err
	}
	defer p.close()
	return pathErr("symlink", rel, unix.Symlinkat(text, p.fd, p.name))
}

// readlink returns the text of the symlink rel.
func (t *tx) readlink(rel string) (string, error) {
	p, err := t.at(rel)
	if err != nil {
		return "", err
	}
	defer p.close()
	buf := make([]byte, 256)
	for {
		n, err := unix.Readlinkat(p.fd, p.name, buf)
		if err != nil {
			return "", pathErr("readlink", rel, err)
		}
		if n < len(buf) {
			return string(buf[:n]), nil
		}
		buf = make([]byte, 2*len(buf))
	}
}

// create creates the regular file rel, which must not exist, for writing.
func (t *tx) create(rel string) (*os.File, error) {
	p, err := t.at(rel)
	if err != nil {
		return nil, err
	}
	defer p.close()
	fd, err := unix.Openat(p.fd, p.name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, pathErr("create", rel, err)
	}
	return os.NewFile(uintptr(fd), rel), nil
}

// openRegular opens rel for reading: a regular file (refused otherwise,
// without blocking and without opening a device), the very file recorded
// as id when id is set.
func (t *tx) openRegular(rel string, id *fileID) (*os.File, error) {
	p, err := t.at(rel)
	if err != nil {
		return nil, err
	}
	defer p.close()
	st, err := p.lstat()
	if err != nil {
		return nil, err
	}
	if err := st.notRegular(); err != nil {
		return nil, err
	}
	fd, err := unix.Openat(p.fd, p.name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, pathErr("open", rel, err)
	}
	f := os.NewFile(uintptr(fd), rel)
	var now unix.Stat_t
	err = unix.Fstat(fd, &now)
	if err == nil {
		s := statOf(&now)
		err = s.notRegular()
		if err == nil && id != nil && s.id != *id {
			err = errors.New(rel + " is not the file the transaction recorded")
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// syncDirOf fsyncs the directory rel.
func (t *tx) syncDirAt(rel string) error {
	d, err := t.ws.OpenDir(rel)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func pathErr(op, rel string, err error) error {
	if err == nil {
		return nil
	}
	return &fs.PathError{Op: op, Path: rel, Err: err}
}

// mkdirIn makes the directory name in dir and opens it.
func mkdirIn(dir *os.File, name string) (*os.File, error) {
	fd := int(dir.Fd())
	if err := unix.Mkdirat(fd, name, 0o755); err != nil {
		return nil, pathErr("mkdir", name, err)
	}
	nfd, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	return os.NewFile(uintptr(nfd), name), nil
}

func isNotEmpty(err error) bool { return errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) }
