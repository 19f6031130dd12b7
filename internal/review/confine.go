package review

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/workspace"
)

// locate turns the repository path into the directory git runs in. Without
// a root that is the path made absolute. With one, the path is resolved
// inside the root, and the work tree git would find from there is found
// the way git finds it (the nearest .git above the directory), without
// running git: its top level, the git directory a .git file names and that
// directory's common directory must all lie inside the root, or the request
// is refused here, before git or any validation runs. expectTop is then the
// canonical top level, which git must confirm.
func locate(o Options) (abs, expectTop string, err error) {
	if o.Root == nil {
		repo := o.Repo
		if o.Dir != "" && !filepath.IsAbs(repo) {
			repo = filepath.Join(o.Dir, repo)
		}
		abs, err := filepath.Abs(repo)
		if err != nil {
			return "", "", errorf(CodeRepoNotFound, fmt.Sprintf("the repository path %q: %v", o.Repo, err), "")
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return "", "", errorf(CodeRepoNotFound, fmt.Sprintf("the repository path %s is not a directory", abs), "pass the path of a git work tree")
		}
		return abs, "", nil
	}
	// git works by path: the root's path must still name the workspace.
	if err := o.Root.Check(); err != nil {
		return "", "", err
	}
	root := o.Root.Dir()
	clean, target, err := o.Root.Resolve(o.Repo)
	if err != nil {
		e, _ := errs.As(err)
		switch {
		case e == nil:
			return "", "", errorf(CodeRepoNotFound, err.Error(), "")
		case e.Code == errs.Outside:
			return "", "", errorf(errs.Outside, "the repository path "+e.Msg, "pass a path inside the root "+root)
		default:
			return "", "", errorf(CodeRepoNotFound, "the repository path "+e.Msg, "")
		}
	}
	abs = filepath.Join(root, target)
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", "", errorf(CodeRepoNotFound, fmt.Sprintf("the repository path %s is not a directory", clean), "pass the path of a git work tree")
	}
	for d := abs; ; d = filepath.Dir(d) {
		dotgit := filepath.Join(d, ".git")
		fi, err := os.Lstat(dotgit)
		if err == nil && (fi.Mode()&fs.ModeSymlink != 0 || gitEntry(dotgit)) {
			// A link is always checked, wherever it leads; an entry
			// git passes by (an empty directory) is passed by here too.
			if err := checkGitDir(root, d, dotgit, fi); err != nil {
				return "", "", err
			}
			return abs, d, nil
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", "", errorf(CodeRepoNotFound, fmt.Sprintf("%s: %v", dotgit, err), "")
		}
		if fi, err := os.Lstat(d); err == nil && looksLikeGitDir(d) {
			// git takes such a directory for a git directory before it
			// looks further up, and reads its entries: they must not lead
			// out either. What git then makes of it (bare, or a
			// core.worktree) is checked against expectTop later.
			if err := checkGitDir(root, d, d, fi); err != nil {
				return "", "", err
			}
		}
		if d == root {
			break
		}
	}
	// No work tree inside the root: either none at all, or one whose top
	// level lies above the root.
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		if gitEntry(filepath.Join(d, ".git")) {
			return "", "", errorf(errs.Outside, fmt.Sprintf("the repository holding %s has its top level %s outside the root %s", clean, d, root), "")
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	return "", "", errorf(CodeNotARepo, fmt.Sprintf("%s is not inside a git work tree", clean), "run git init, or pass the path of a checkout")
}

// gitEntry reports whether p, a .git entry, is one git would
// take: a file (a gitdir: line) or a directory, or a link to one, that
// looks like a git directory. An empty .git directory is none: git passes
// it by, and a repository above the root must not be invented from one.
func gitEntry(p string) bool {
	fi, err := os.Lstat(p)
	if err != nil {
		return false
	}
	return fi.Mode().IsRegular() || looksLikeGitDir(p)
}

// looksLikeGitDir reports whether git could take dir for a git directory:
// it has a HEAD and an objects and a refs directory (or a commondir file
// that supplies them). Erring towards yes costs only a walk.
func looksLikeGitDir(dir string) bool {
	if _, err := os.Lstat(filepath.Join(dir, "HEAD")); err != nil {
		return false
	}
	if _, err := os.Lstat(filepath.Join(dir, "commondir")); err == nil {
		return true
	}
	// Lstat: a link counts, and nothing outside is looked at.
	_, err1 := os.Lstat(filepath.Join(dir, "objects"))
	_, err2 := os.Lstat(filepath.Join(dir, "refs"))
	return err1 == nil && err2 == nil
}

// checkGitDir refuses a .git entry of the work tree top that leads out of
// root: a symlink, or a .git file ("gitdir: PATH", as linked work trees and
// submodules have) naming a directory outside, or a git directory whose
// commondir file points outside.
func checkGitDir(root, top, dotgit string, fi fs.FileInfo) error {
	outside := func(what, where string) error {
		return errorf(errs.Outside, fmt.Sprintf("the repository at %s has its %s %s outside the root %s", top, what, where, root), "")
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		canon, err := filepath.EvalSymlinks(dotgit)
		if err != nil {
			return errorf(CodeNotARepo, fmt.Sprintf("%s: %v", dotgit, unwrapPath(err)), "")
		}
		if !workspace.Inside(root, canon) {
			return outside(".git link target", canon)
		}
		if fi, err = os.Stat(canon); err != nil {
			return errorf(CodeNotARepo, fmt.Sprintf("%s: %v", dotgit, unwrapPath(err)), "")
		}
		dotgit = canon
	}
	dir := dotgit
	if fi.Mode().IsRegular() {
		b, err := readSmall(dotgit)
		if err != nil {
			return errorf(CodeNotARepo, fmt.Sprintf("reading %s: %v", dotgit, err), "")
		}
		p, ok := bytes.CutPrefix(b, []byte("gitdir: "))
		if !ok {
			return errorf(CodeNotARepo, fmt.Sprintf("%s is a file without a gitdir line", dotgit), "")
		}
		dir = strings.TrimRight(string(p), "\r\n")
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(top, dir)
		}
	}
	canon, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return errorf(CodeNotARepo, fmt.Sprintf("the git directory of %s: %v", top, unwrapPath(err)), "")
	}
	if !workspace.Inside(root, canon) {
		return outside("git directory", canon)
	}
	if err := gitDirInside(root, canon, outside); err != nil {
		return err
	}
	// Read only once the walk has shown it is no link out.
	if b, err := readSmall(filepath.Join(canon, "commondir")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return errorf(CodeNotARepo, fmt.Sprintf("reading %s: %v", filepath.Join(canon, "commondir"), unwrapPath(err)), "")
	} else if err == nil {
		common := strings.TrimRight(string(b), "\r\n")
		if !filepath.IsAbs(common) {
			common = filepath.Join(canon, common)
		}
		c, err := filepath.EvalSymlinks(common)
		if err != nil {
			return errorf(CodeNotARepo, fmt.Sprintf("the common git directory of %s: %v", top, unwrapPath(err)), "")
		}
		if !workspace.Inside(root, c) {
			return outside("common git directory", c)
		}
		if c != canon {
			return gitDirInside(root, c, outside)
		}
	}
	return nil
}

// gitDirInside refuses a git directory that leads git out of root although
// it lies inside: git opens its entries (HEAD, refs, objects, config, the
// index) through symlinks, and borrows the objects of every directory
// objects/info/alternates names. Every symlink in it must resolve inside
// root, and so must every alternate. The walk reads directory entries only
// (their types come with them), so a large object store costs little.
func gitDirInside(root, dir string, outside func(what, where string) error) error {
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		canon, err := filepath.EvalSymlinks(p)
		if err != nil {
			// A dangling link is judged by where it points.
			t, rerr := os.Readlink(p)
			if rerr != nil {
				return rerr
			}
			if !filepath.IsAbs(t) {
				t = filepath.Join(filepath.Dir(p), t)
			}
			canon = filepath.Clean(t)
		}
		if !workspace.Inside(root, canon) {
			return outside("git directory entry "+p+" leading to", canon)
		}
		return nil
	})
	if e, ok := errs.As(err); ok {
		return e
	}
	if err != nil {
		return errorf(CodeNotARepo, fmt.Sprintf("the git directory %s: %v", dir, unwrapPath(err)), "")
	}
	return alternatesInside(root, filepath.Join(dir, "objects"), 0, outside)
}

// alternatesInside checks the alternates of the object directory objects,
// and theirs in turn, as git follows them (to a depth of five).
func alternatesInside(root, objects string, depth int, outside func(what, where string) error) error {
	b, err := os.ReadFile(filepath.Join(objects, "info", "alternates"))
	if err != nil || depth > 5 {
		return nil // git stops following at that depth too
	}
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimRight(l, "\r")
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if strings.HasPrefix(l, `"`) {
			// git reads a C-quoted path; one we cannot read is refused.
			u, err := strconv.Unquote(l)
			if err != nil {
				return outside("alternate object directory", l)
			}
			l = u
		}
		if !filepath.IsAbs(l) {
			l = filepath.Join(objects, l)
		}
		canon, err := filepath.EvalSymlinks(l)
		if err != nil {
			canon = filepath.Clean(l)
		}
		if !workspace.Inside(root, canon) {
			return outside("alternate object directory", canon)
		}
		if err := alternatesInside(root, canon, depth+1, outside); err != nil {
			return err
		}
	}
	return nil
}

// readSmall reads a file of git's own layout that the repository controls:
// a FIFO or device there would block the inspection, so only a regular file
// is read, and no more than git would ever write there.
func readSmall(name string) ([]byte, error) {
	f, _, err := regfile.Open(os.Stat, os.OpenFile, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(regfile.Reader(f), 64<<10))
}
