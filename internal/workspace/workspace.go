// Package workspace owns confinement: the canonical root a command works
// in, the rules deciding whether a requested path stays inside it, and the
// safe open of a file found there.
//
// A request is refused when it is absolute, starts with @shell, or leaves
// the root lexically (".." above the root). It is then resolved component
// by component, following symlinks the way the kernel would; the request is
// inside only if the final canonical target is the root or below it, judged
// on whole path components (/srv/root-evil is not inside /srv/root). A
// symlink whose target leaves the root is refused whether or not that
// target exists, so a refusal reveals nothing about the outside.
//
// The file is then opened through an os.Root on the canonical root, at the
// canonical relative target: a symlink swapped in after the check can only
// lead somewhere inside the root. Special files are refused without
// blocking: a FIFO is opened non-blocking and every open file is checked
// with fstat before any read.
//
// The root directory itself is held open from Open on, and every lookup
// inside it goes through that handle: a root directory replaced by a
// symlink afterwards (a long-lived MCP server's) redirects nothing. Callers
// that must work by path (git, a child's working directory) use ProcDir or
// Check.
//
// It also loads the files an edit reads (Load) and resolves the paths an
// edit creates (Free), and reserves rowkit's state directory; the
// transaction that writes the edit is internal/txn, which writes only
// through the Root's FS.
package workspace

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/regfile"
)

// Failure codes, as *errs.Error values. They are the codes of inspect_file
// and of every MCP tool that takes a workspace path.
const (
	CodeOutside    = errs.Outside
	CodeNotFound   = errs.NotFound
	CodeNotRegular = errs.NotRegular
	CodeRead       = errs.Read
)

func errorf(code, format string, args ...any) *errs.Error {
	return errs.Errorf(code, format, args...)
}

// maxLinks bounds symlink resolution, as the kernel's ELOOP limit does.
const maxLinks = 40

// Root is a canonical workspace root.
type Root struct {
	dir string   // canonical absolute path, no trailing slash (except "/")
	h   *os.Root // the directory, held open from Open on
	fd  *os.File // the same directory, for ProcDir
}

// Open returns the workspace rooted at the canonical form of dir, held
// open from now on.
func Open(dir string) (*Root, error) {
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, errorf(CodeRead, "cannot resolve the workspace %s: %v", dir, regfile.Cause(err))
	}
	fi, err := os.Stat(abs)
	if err != nil || !fi.IsDir() {
		return nil, errorf(CodeRead, "the workspace %s is not a directory", abs)
	}
	h, err := os.OpenRoot(abs)
	if err != nil {
		return nil, errorf(CodeRead, "cannot open the workspace %s: %v", abs, regfile.Cause(err))
	}
	fd, err := h.Open(".")
	var held fs.FileInfo
	if err == nil {
		held, err = fd.Stat()
	}
	if err != nil || !os.SameFile(fi, held) {
		h.Close()
		if fd != nil {
			fd.Close()
		}
		if err != nil {
			return nil, errorf(CodeRead, "cannot open the workspace %s: %v", abs, regfile.Cause(err))
		}
		// Replaced between the resolution and the open.
		return nil, errorf(CodeRead, "the workspace %s changed while it was opened", abs)
	}
	// Opening writes nothing: a transaction a crash left pending is settled
	// only by a writer (internal/txn), never by a command that reads.
	return &Root{dir: abs, h: h, fd: fd}, nil
}

// Close releases the held root directory.
func (r *Root) Close() error {
	r.fd.Close()
	return r.h.Close()
}

// Dir returns the canonical root directory, as it was when the workspace
// was opened. What that path names now may differ (see Check).
func (r *Root) Dir() string { return r.dir }

// FS returns the held root directory, through which every path inside the
// workspace is looked up. Callers must not close it.
func (r *Root) FS() *os.Root { return r.h }

// ProcDir names the held root directory as /proc/self/fd/N: in this process
// and in a child before it execs (where the descriptor is still open), a
// path below it reaches the directory held, whatever the root's path names
// now. It is the working directory to give a child.
func (r *Root) ProcDir() string {
	return "/proc/self/fd/" + strconv.Itoa(int(r.fd.Fd()))
}

// Check reports whether the root's path still names the directory held
// open, for callers that must work by path (git, validations): an
// outside_workspace error when the directory was replaced (by a symlink
// leading elsewhere, say) after the workspace was opened.
func (r *Root) Check() error {
	now, err := os.Stat(r.dir)
	held, herr := r.fd.Stat()
	if err == nil && herr == nil && os.SameFile(now, held) {
		return nil
	}
	return errorf(CodeOutside, "the workspace root %s was replaced after it was opened; it no longer names the workspace (restart to serve what is there now)", r.dir)
}

// Clean normalises a workspace-relative request lexically: "." components
// and repeated slashes go, ".." removes the component before it. It refuses
// absolute paths, @shell paths and any ".." that would climb above the root.
// The result is the path commands report; "." names the root itself.
func Clean(req string) (string, error) {
	switch {
	case req == "":
		return "", errorf(CodeNotFound, "the path is empty; give a path relative to the workspace")
	case strings.IndexByte(req, 0) >= 0:
		return "", errorf(CodeNotFound, "the path contains a NUL byte")
	case strings.HasPrefix(req, "/"):
		return "", errorf(CodeOutside, "%s is absolute; give a path relative to the workspace", req)
	}
	first, _, _ := strings.Cut(req, "/")
	if first == "@shell" || strings.HasPrefix(first, "@shell:") {
		return "", errorf(CodeOutside, "%s is an @shell path; give a path relative to the workspace", req)
	}
	depth := 0
	for _, c := range strings.Split(req, "/") {
		switch c {
		case "", ".":
		case "..":
			if depth == 0 {
				return "", errorf(CodeOutside, "%s climbs above the workspace root", req)
			}
			depth--
		default:
			depth++
		}
	}
	return path.Clean(req), nil
}

// NamesDir reports whether req by its spelling names a directory: it ends
// in "/" or "/.", which Clean drops. open(2) refuses such a path to a file
// (ENOTDIR); a caller that takes files asks NamesDir before it cleans.
func NamesDir(req string) bool {
	return strings.HasSuffix(req, "/") || strings.HasSuffix(req, "/.")
}

// Inside reports whether the absolute clean path p is dir or below it,
// comparing whole components.
func Inside(dir, p string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+"/") && len(p) > len(dir)+1
}

// Resolve cleans req and resolves it to the canonical target below the
// root. It returns the clean request and the target relative to the root
// ("." for the root itself).
func (r *Root) Resolve(req string) (clean, target string, err error) {
	clean, err = Clean(req)
	if err != nil {
		return "", "", err
	}
	abs, exists, rerr := r.resolve(clean)
	if !Inside(r.dir, abs) {
		return clean, "", errorf(CodeOutside, "%s resolves through a symlink to a target outside the workspace", clean)
	}
	switch {
	case errors.Is(rerr, syscall.ELOOP):
		return clean, "", errorf(CodeNotFound, "%s: too many levels of symbolic links", clean)
	case rerr != nil:
		return clean, "", errorf(CodeRead, "%s: %v", clean, regfile.Cause(rerr))
	case !exists:
		return clean, "", errorf(CodeNotFound, "%s: no such file in the workspace", clean)
	}
	if abs == r.dir {
		return clean, ".", nil
	}
	// The root "/" has no separator of its own to skip.
	return clean, strings.TrimPrefix(abs[len(r.dir):], "/"), nil
}

// within returns p (absolute, clean) relative to the root when it lies
// inside it.
func (r *Root) within(p string) (string, bool) {
	switch {
	case p == r.dir:
		return ".", true
	case Inside(r.dir, p):
		return strings.TrimPrefix(p[len(r.dir):], "/"), true
	}
	return "", false
}

// resolve follows rel from the root component by component, as realpath
// does, and returns the canonical absolute target. When a component is
// missing, the rest of the path is appended lexically and exists is false,
// so that a dangling symlink can still be judged inside or outside.
func (r *Root) resolve(rel string) (abs string, exists bool, err error) {
	return r.resolveFrom(r.dir, rel)
}

// resolveFrom is resolve starting at the canonical directory from (a link
// text is resolved from the link's directory). Every component inside the
// root is looked at through a descriptor of the directory holding it,
// each opened from the one before without following a link: the cost is
// linear in the depth (an os.Root lookup per component would walk the
// whole path again each time). A link that leaves the root is followed by
// path, and where the walk comes back the held root takes over again.
func (r *Root) resolveFrom(from, rel string) (abs string, exists bool, err error) {
	w := &walker{r: r, cur: from, fd: -1}
	defer w.close()
	pending := strings.Split(rel, "/")
	links := 0
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			w.move(filepath.Dir(w.cur), -1)
			continue
		}
		next := filepath.Join(w.cur, c)
		fi, lerr := w.lstat(c)
		if lerr != nil {
			if errors.Is(lerr, fs.ErrNotExist) || errors.Is(lerr, syscall.ENOTDIR) {
				return filepath.Clean(filepath.Join(append([]string{next}, pending...)...)), false, nil
			}
			return next, false, lerr
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if !fi.IsDir() && hasComponent(pending) {
				// A file used as a directory: nothing below it exists.
				return filepath.Clean(filepath.Join(append([]string{next}, pending...)...)), false, nil
			}
			w.down(c, next, fi.IsDir() && hasComponent(pending))
			continue
		}
		if links++; links > maxLinks {
			return next, false, syscall.ELOOP
		}
		t, rerr := w.readlink(c)
		if rerr != nil {
			return next, false, rerr
		}
		if strings.HasPrefix(t, "/") {
			w.move("/", -1)
		}
		pending = append(strings.Split(t, "/"), pending...)
	}
	return w.cur, true, nil
}

// lookups, when set (by tests), is told how many path components each
// lookup of the resolution makes the kernel walk: one for a lookup
// relative to a held directory, the whole path for one by path.
var lookups func(components int)

func looked(p string) {
	if lookups != nil {
		lookups(strings.Count(p, "/") + 1)
	}
}

// walker is resolve's position: the canonical directory cur and, when cur
// is inside the root, a descriptor of it (-1 until one is needed).
type walker struct {
	r   *Root
	cur string
	fd  int
}

func (w *walker) close() {
	if w.fd >= 0 {
		unix.Close(w.fd)
		w.fd = -1
	}
}

// move goes to the directory p, with descriptor fd (-1: opened when
// needed).
func (w *walker) move(p string, fd int) {
	w.close()
	w.cur, w.fd = p, fd
}

// dir returns the descriptor of cur when cur is inside the root, opening
// it from the root the first time (-1 outside the root, or when it cannot
// be opened: the walk then looks by path).
func (w *walker) dir() int {
	if w.fd >= 0 {
		return w.fd
	}
	in, ok := w.r.within(w.cur)
	if !ok {
		return -1
	}
	looked(in)
	f, err := w.r.OpenDir(in)
	if err != nil {
		return -1
	}
	fd, err := unix.Dup(int(f.Fd()))
	f.Close()
	if err != nil {
		return -1
	}
	w.fd = fd
	return fd
}

func (w *walker) lstat(name string) (fs.FileInfo, error) {
	if d := w.dir(); d >= 0 {
		looked(name)
		var st unix.Stat_t
		if err := unix.Fstatat(d, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return nil, &fs.PathError{Op: "lstat", Path: name, Err: err}
		}
		return statInfo{name: name, st: st}, nil
	}
	p := filepath.Join(w.cur, name)
	looked(p)
	if in, ok := w.r.within(p); ok {
		return w.r.h.Lstat(in)
	}
	return os.Lstat(p)
}

func (w *walker) readlink(name string) (string, error) {
	if d := w.dir(); d >= 0 {
		looked(name)
		buf := make([]byte, 256)
		for {
			n, err := unix.Readlinkat(d, name, buf)
			if err != nil {
				return "", &fs.PathError{Op: "readlink", Path: name, Err: err}
			}
			if n < len(buf) {
				return string(buf[:n]), nil
			}
			buf = make([]byte, 2*len(buf))
		}
	}
	p := filepath.Join(w.cur, name)
	looked(p)
	if in, ok := w.r.within(p); ok {
		return w.r.h.Readlink(in)
	}
	return os.Readlink(p)
}

// down enters the directory name of cur (next is its path); open says a
// descriptor of it will be wanted (more components follow).
func (w *walker) down(name, next string, open bool) {
	if !open || w.fd < 0 {
		w.move(next, -1)
		return
	}
	looked(name)
	fd, err := unix.Openat(w.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		fd = -1 // swapped meanwhile: looked up again from the root
	}
	w.move(next, fd)
}

// statInfo is an fs.FileInfo of an fstatat.
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (s statInfo) Name() string       { return s.name }
func (s statInfo) Size() int64        { return s.st.Size }
func (s statInfo) ModTime() time.Time { return time.Unix(s.st.Mtim.Unix()) }
func (s statInfo) IsDir() bool        { return s.Mode().IsDir() }
func (s statInfo) Sys() any           { return &s.st }
func (s statInfo) Mode() fs.FileMode {
	m := fs.FileMode(s.st.Mode & 0o777)
	switch s.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	return m
}

func hasComponent(cs []string) bool {
	for _, c := range cs {
		if c != "" && c != "." {
			return true
		}
	}
	return false
}

// Stat resolves req and returns its clean form and the file's metadata,
// refusing anything but a regular file. It never opens the file.
func (r *Root) Stat(req string) (string, fs.FileInfo, error) {
	clean, target, root, err := r.locate(req)
	if err != nil {
		return clean, nil, err
	}
	fi, err := root.Stat(target)
	if err != nil {
		return clean, nil, r.openError(clean, err)
	}
	return clean, fi, notRegular(clean, regfile.Check(fi))
}

// OpenFile opens req as Open does, refusing a directory: only a regular
// file is opened. Read it through regfile.Reader, which never waits on a
// kernel stream.
func (r *Root) OpenFile(req string) (string, *os.File, fs.FileInfo, error) {
	clean, f, fi, err := r.Open(req)
	if err == nil && fi.IsDir() {
		f.Close()
		return clean, nil, nil, notRegular(clean, regfile.Check(fi))
	}
	return clean, f, fi, err
}

// ReadFile resolves req, opens it as OpenFile does and reads all of it.
func (r *Root) ReadFile(req string) (string, []byte, error) {
	clean, f, fi, err := r.OpenFile(req)
	if e, ok := errs.As(err); ok && e.Code == errs.PermissionDenied {
		// inspect_file's contract reports an unreadable file as read.
		return clean, nil, errorf(CodeRead, "%s", e.Msg)
	}
	if err != nil {
		return clean, nil, err
	}
	defer f.Close()
	rd := regfile.Reader(f)
	data := make([]byte, 0, fi.Size()+1)
	for {
		n, err := rd.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return clean, data, nil
		}
		if err != nil {
			return clean, nil, errorf(CodeRead, "reading %s: %v", clean, regfile.Cause(err))
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // grow: the file is longer than stat said
		}
	}
}

// Open resolves req and opens it for reading through the root without
// blocking: a regular file (as ReadFile does) or a directory, which
// callers that want only files must refuse themselves by fi.IsDir(). A
// FIFO, socket or device is refused (not_regular) without being opened for
// reading; a file the operating system refuses is permission_denied.
func (r *Root) Open(req string) (clean string, f *os.File, fi fs.FileInfo, err error) {
	clean, target, root, err := r.locate(req)
	if err != nil {
		return clean, nil, nil, err
	}
	if st, serr := root.Stat(target); serr == nil && st.IsDir() {
		// O_DIRECTORY: a FIFO swapped in after the stat fails to open.
		f, err = root.OpenFile(target, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
		if err == nil {
			if fi, err = f.Stat(); err == nil && !fi.IsDir() {
				err = regfile.Check(fi)
			}
			if err != nil {
				f.Close()
			}
		}
	} else {
		f, fi, err = regfile.Open(root.Stat, root.OpenFile, target)
	}
	switch {
	case err == nil:
		return clean, f, fi, nil
	case errors.Is(err, fs.ErrPermission):
		return clean, nil, nil, errorf(errs.PermissionDenied, "%s: permission denied", clean)
	}
	if _, ok := regfile.AsNotRegular(err); !ok {
		err = r.openError(clean, err)
	}
	return clean, nil, nil, notRegular(clean, err)
}

// locate resolves req and returns the held root the target must be
// reached through.
func (r *Root) locate(req string) (clean, target string, root *os.Root, err error) {
	clean, target, err = r.Resolve(req)
	if err != nil {
		return clean, "", nil, err
	}
	return clean, target, r.h, nil
}

// openError classifies an error of an open through os.Root. The path was
// inside a moment ago; if os.Root refused it, it was swapped for something
// that leads outside.
func (r *Root) openError(clean string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return errorf(CodeNotFound, "%s: no such file in the workspace", clean)
	case errors.Is(err, fs.ErrPermission):
		return errorf(CodeRead, "%s: permission denied", clean)
	case errors.Is(err, syscall.ELOOP):
		return errorf(CodeNotFound, "%s: too many levels of symbolic links", clean)
	}
	if _, _, rerr := r.Resolve(clean); rerr != nil {
		return rerr
	}
	if strings.Contains(err.Error(), "escapes") {
		return errorf(CodeOutside, "%s changed to lead outside the workspace while it was opened", clean)
	}
	return errorf(CodeRead, "%s: %v", clean, regfile.Cause(err))
}

// notRegular turns a *regfile.NotRegularError into this package's error,
// naming the request; other errors pass through.
func notRegular(clean string, err error) error {
	if e, ok := regfile.AsNotRegular(err); ok {
		return errorf(CodeNotRegular, "%s is %s; only regular files are accepted", clean, e.Kind())
	}
	return err
}
