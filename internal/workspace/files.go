package workspace

import (
	"errors"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/rowkit/rowkit/internal/regfile"
)

// StateDir is rowkit's own state directory under the root (the edit
// transaction's journal and lock, internal/txn). No script may touch it.
const StateDir = ".rowkit"

// CodeExists is the code of a path that must be free but is taken.
const CodeExists = "exists"

// CodeReserved reports a path inside rowkit's own state directory, which
// only the transaction writes: an edit there could forge or destroy the
// journal that recovery trusts, or the lock that keeps it to one writer.
const CodeReserved = "reserved"

// reserved refuses a canonical target inside the state directory.
func reserved(target string) error {
	if target == StateDir || strings.HasPrefix(target, StateDir+"/") {
		return errorf(CodeReserved, "%s is rowkit's own state directory; a script cannot edit it", StateDir)
	}
	return nil
}

// File is a workspace file read whole for editing.
type File struct {
	Path   string      // the clean request
	Target string      // the canonical target relative to the root
	Data   []byte      // every byte of the file
	Mode   fs.FileMode // permission and special bits, to keep on rewrite
}

// Load resolves req and reads the regular file it names through the
// workspace's os.Root, returning its bytes and mode.
func (r *Root) Load(req string) (*File, error) {
	clean, target, err := r.Resolve(req)
	if err != nil {
		return nil, err
	}
	root := r.FS()
	if target == "." {
		return nil, errorf(CodeNotRegular, "%s is the workspace root; only regular files are accepted", clean)
	}
	if err := reserved(target); err != nil {
		return nil, err
	}
	f, fi, err := regfile.Open(root.Stat, root.OpenFile, target)
	if err != nil {
		if _, ok := regfile.AsNotRegular(err); !ok {
			err = r.openError(clean, err)
		}
		return nil, notRegular(clean, err)
	}
	defer f.Close()
	data, err := readAll(regfile.Reader(f), fi.Size())
	if err != nil {
		return nil, errorf(CodeRead, "reading %s: %v", clean, regfile.Cause(err))
	}
	return &File{Path: clean, Target: target, Data: data, Mode: fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)}, nil
}

// readAll reads r to its end into a buffer sized for size bytes and one
// more, so that a file read whole is held once, not in the doubling
// buffers of io.ReadAll (a file that grew meanwhile still reads whole).
func readAll(r io.Reader, size int64) ([]byte, error) {
	data := make([]byte, 0, size+1)
	for {
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}

// Free resolves req as a path to create: nothing may exist there (not even
// a dangling symlink), and its canonical location must be inside the root.
// It returns the clean request and the canonical target where the file
// would be created; missing parent directories are allowed.
func (r *Root) Free(req string) (clean, target string, err error) {
	clean, err = Clean(req)
	if err != nil {
		return clean, "", err
	}
	if clean == "." {
		return clean, "", errorf(CodeExists, "%s is the workspace root", req)
	}
	dir, base := path.Split(clean)
	parent := "."
	if dir != "" {
		parent = path.Clean(dir)
	}
	abs, exists, rerr := r.resolve(parent)
	if !Inside(r.dir, abs) {
		return clean, "", errorf(CodeOutside, "%s resolves through a symlink to a place outside the workspace", clean)
	}
	if rerr != nil {
		return clean, "", errorf(CodeRead, "%s: %v", clean, regfile.Cause(rerr))
	}
	rel := "."
	if abs != r.dir {
		rel = abs[len(r.dir)+1:]
	}
	if exists {
		fi, err := r.h.Stat(rel)
		if err != nil || !fi.IsDir() {
			return clean, "", errorf(CodeNotRegular, "%s: %s is not a directory", clean, parent)
		}
	} else if !r.creatable(rel) {
		return clean, "", errorf(CodeNotRegular, "%s: a parent of it is not a directory", clean)
	}
	target = path.Join(rel, base)
	if err := reserved(target); err != nil {
		return clean, "", err
	}
	if _, err := r.h.Lstat(target); err == nil {
		return clean, "", errorf(CodeExists, "%s already exists", clean)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return clean, "", errorf(CodeRead, "%s: %v", clean, regfile.Cause(err))
	}
	return clean, target, nil
}

// creatable reports whether the missing directory rel could be created: its
// deepest existing ancestor is a directory.
func (r *Root) creatable(rel string) bool {
	for rel != "." && rel != "/" {
		fi, err := r.h.Lstat(rel)
		if err == nil {
			return fi.IsDir()
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return false
		}
		rel = path.Dir(rel)
	}
	return true
}

// Symlink says whether the request req names a symbolic link itself (its
// last component; links on the way to it are followed as always). When it
// does, at is the link's canonical location relative to the root (its
// directory resolved, its own name kept) and text what it holds. An edit
// that removes or moves req acts on that link, as rm and mv do, never on
// what it points to.
func (r *Root) Symlink(req string) (clean, at, text string, ok bool, err error) {
	clean, err = Clean(req)
	if err != nil || clean == "." {
		return clean, "", "", false, err
	}
	dir, base := path.Split(clean)
	parent := "."
	if dir != "" {
		parent = path.Clean(dir)
	}
	abs, exists, rerr := r.resolve(parent)
	if rerr != nil || !exists {
		return clean, "", "", false, nil
	}
	rel, in := r.within(abs)
	if !in {
		return clean, "", "", false, nil
	}
	at = path.Join(rel, base)
	fi, err := r.h.Lstat(at)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return clean, "", "", false, nil
	}
	text, err = r.h.Readlink(at)
	if err != nil {
		return clean, "", "", false, errorf(CodeRead, "%s: %v", clean, regfile.Cause(err))
	}
	return clean, at, text, true, nil
}

// LinkTarget resolves the symlink text as it would lead from a link at
// at (a canonical location relative to the root): the canonical target
// relative to the root, and whether it exists. A target outside the root
// is an outside_workspace error.
func (r *Root) LinkTarget(at, text string) (target string, exists bool, err error) {
	from := r.dir
	if d := path.Dir(at); d != "." {
		from = filepath.Join(r.dir, d)
	}
	if strings.HasPrefix(text, "/") {
		from = "/"
	}
	abs, exists, rerr := r.resolveFrom(from, text)
	rel, in := r.within(abs)
	switch {
	case !in:
		return "", false, errorf(CodeOutside, "%s leads outside the workspace", text)
	case rerr != nil:
		return rel, false, errorf(CodeRead, "%s: %v", text, regfile.Cause(rerr))
	}
	return rel, exists, nil
}
