package txn

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"

	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/workspace"
)

const (
	journalName  = workspace.StateDir + "/journal"
	journalTemp  = workspace.StateDir + "/journal.tmp"
	statePrepare = "prepare"
	stateCommit  = "commit"
	stateRevert  = "rollback"
	maxJournal   = 16 << 20
)

type journal struct {
	ID    string  `json:"id"`
	State string  `json:"state"`
	Ops   []op    `json:"ops"`
	Dirs  []dirOp `json:"dirs,omitempty"` // created by the transaction, parents first
	Self  fileID  `json:"self"`           // the journal file itself
	Home  fileID  `json:"home"`           // the .rowkit directory
}

type op struct {
	Target string `json:"target"`
	Temp   string `json:"temp,omitempty"`   // new content, for a write
	Backup string `json:"backup,omitempty"` // old content (the target's own inode), when the target existed
	Delete bool   `json:"delete,omitempty"`
	// Link: the target is a symbolic link (a delete removes the link, not
	// what it points to), or a write makes one (Temp is a symlink).
	Link     bool    `json:"link,omitempty"`
	TempID   *fileID `json:"temp_id,omitempty"` // recorded once staged (state commit and after)
	BackupID *fileID `json:"backup_id,omitempty"`
	// The old content's SHA-256 and size (of a link: of its text): what
	// the target must still hold right before it is replaced or removed,
	// in a recovery too.
	OldSum  string `json:"old_sum,omitempty"`
	OldSize int64  `json:"old_size,omitempty"`
}

// dirOp is a directory the transaction creates. It is made under a
// staging name (Stage) and renamed into place with RENAME_NOREPLACE when
// the transaction is applied, so that the transaction never creates
// anything at a path before its decision, and never treats as its own a
// directory (or a symlink) another program put there: it removes only the
// directory whose inode it recorded.
type dirOp struct {
	Path  string  `json:"path"`
	Stage string  `json:"stage,omitempty"`
	ID    *fileID `json:"id,omitempty"` // recorded once staged
}

// UnmarshalJSON also reads a journal of an earlier rowkit, which listed
// its directories by path alone (made in place, without a stage or an
// identity): they are removed only if they are empty directories.
func (d *dirOp) UnmarshalJSON(b []byte) error {
	var p string
	if json.Unmarshal(b, &p) == nil {
		*d = dirOp{Path: p}
		return nil
	}
	type plain dirOp
	return json.Unmarshal(b, (*plain)(d))
}

// fileID is a file's device and inode: what tells rowkit's own staging
// files from copies of them, and a target from one swapped in.
type fileID struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
}

func idOf(fi fs.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), uint64(st.Ino)}, true
}

func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// Staging names. In the state directory, whose .gitignore hides it from
// git (and whose only other contents are the lock and the journal), so
// that no reader of the tree (git status, rowkit review, a file watcher)
// ever sees them, and renaming a directory of the tree during a commit
// strands none of them:
//
//	.rowkit/ID.N.new   the new content of op N (a file, or a symlink)
//	.rowkit/ID.N.old   the old content of op N (a hard link to the target)
//	.rowkit/ID.dN      directory N, before it is renamed into place
//
// A target on another file system than .rowkit (a mount inside the tree)
// cannot be renamed or linked across: its staging files are beside it,
// named as rowkit always named them, .BASE.rowkit-ID.tmp and .old (and
// .BASE.rowkit-ID.dir for a directory), in its directory or, when the
// transaction creates that directory, in the nearest one that exists.
func stageName(id string, n int, ext string) string {
	return workspace.StateDir + "/" + id + "." + strconv.Itoa(n) + "." + ext
}

func dirStageName(id string, n int) string {
	return workspace.StateDir + "/" + id + ".d" + strconv.Itoa(n)
}

func besideName(target, id, ext string) string {
	dir, base := path.Split(target)
	return dir + "." + base + ".rowkit-" + id + "." + ext
}

// besideOf reports whether name is target's staging name of the beside
// form: in target's directory or in one of its ancestors (the nearest that
// existed, when the transaction creates the directories below it).
func besideOf(name, target, id, ext string) bool {
	dir, base := path.Split(name)
	want := "." + path.Base(target) + ".rowkit-" + id + "." + ext
	if base != want {
		return false
	}
	tdir := path.Dir(target)
	d := path.Clean(dir)
	return d == tdir || d == "." || strings.HasPrefix(tdir, d+"/")
}

// stagedIn reports whether name is a staging name of transaction id in
// the state directory.
func stagedIn(name, id string) bool {
	rest, ok := strings.CutPrefix(name, workspace.StateDir+"/"+id+".")
	return ok && rest != "" && !strings.Contains(rest, "/")
}

// writeJournal replaces the journal atomically with t.j.
func (t *tx) writeJournal() error {
	j := t.j
	if err := t.step("journal " + j.State); err != nil {
		return err
	}
	home, err := t.lstat(workspace.StateDir)
	if err != nil {
		return err
	}
	if !home.isDir() {
		return fmt.Errorf("%s is not a directory", workspace.StateDir)
	}
	j.Home = home.id
	t.unlink(journalTemp)
	err = t.writeNew(journalTemp, 0o600, func(f *os.File, w io.Writer) error {
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		j.Self, _ = idOf(fi)
		data, err := json.Marshal(j)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	})
	if err != nil {
		return err
	}
	if err := t.step("rename journal"); err != nil {
		return err
	}
	if err := t.rename(journalTemp, journalName, false); err != nil {
		return err
	}
	self := j.Self
	t.onDisk = &self
	return t.syncDir(workspace.StateDir)
}

// removeJournal ends the transaction: the journal goes, and with it any
// journal.tmp.
func (t *tx) removeJournal() error {
	if err := t.step("remove journal"); err != nil {
		return err
	}
	if err := t.unlink(journalName); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	t.onDisk = nil
	t.unlink(journalTemp)
	return t.syncDir(workspace.StateDir)
}

// pending reports whether the workspace at dir holds a journal: one Lstat.
func pending(dir string) bool {
	_, err := os.Lstat(path.Join(dir, journalName))
	return err == nil
}

// ownJournal reads the pending journal when it provably belongs to a
// transaction rowkit staged in this workspace. Otherwise it returns nil and
// why ("" when there is no journal at all). It only looks: a reader may
// call it without the lock.
func ownJournal(ws *workspace.Root) (*journal, string) {
	t := &tx{ws: ws, root: ws.FS()}
	root := t.root
	home, err := root.Lstat(workspace.StateDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ""
	}
	if err != nil || !home.IsDir() {
		return nil, workspace.StateDir + " is not a directory"
	}
	fi, err := root.Lstat(journalName)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, ""
	case err != nil:
		return nil, regfile.Cause(err).Error()
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, "it is a symlink"
	case !fi.Mode().IsRegular():
		return nil, "it is not a regular file"
	case !ownedByMe(fi):
		return nil, "it is owned by another user"
	case fi.Mode().Perm() != 0o600:
		return nil, fmt.Sprintf("its mode is %04o, not 0600", fi.Mode().Perm())
	case fi.Size() > maxJournal:
		return nil, "it is too large"
	}
	id, _ := idOf(fi)
	data, err := t.readRegular(journalName, &id, maxJournal)
	if err != nil {
		return nil, regfile.Cause(err).Error()
	}
	var j journal
	if err := json.Unmarshal(data, &j); err != nil || !j.valid() {
		return nil, "it is malformed or names paths outside rowkit's staging files in the workspace"
	}
	if id != j.Self {
		return nil, "it is a copy: its inode is not the one it recorded"
	}
	if id, ok := idOf(home); !ok || id != j.Home {
		return nil, workspace.StateDir + " is not the directory it was written in"
	}
	if j.State != statePrepare {
		// Once decided, every staging file is recorded; one that exists
		// must be that very file.
		type staged struct {
			name string
			id   *fileID
		}
		var all []staged
		for _, o := range j.Ops {
			if o.Temp != "" && o.TempID == nil || o.Backup != "" && o.BackupID == nil {
				return nil, "a staging file is not recorded"
			}
			all = append(all, staged{o.Temp, o.TempID}, staged{o.Backup, o.BackupID})
		}
		for _, d := range j.Dirs {
			if d.Stage != "" && d.ID == nil {
				return nil, "a staged directory is not recorded"
			}
			all = append(all, staged{d.Stage, d.ID})
		}
		for _, f := range all {
			if f.name == "" {
				continue
			}
			if t.exists(f.name) && !t.sameID(f.name, f.id) {
				return nil, f.name + " is not the file the transaction staged"
			}
		}
	}
	return &j, ""
}

// valid checks that a journal names only rowkit's own staging files, in
// the state directory or beside clean targets inside the root.
func (j *journal) valid() bool {
	switch j.State {
	case statePrepare, stateCommit, stateRevert:
	default:
		return false
	}
	if len(j.ID) != 12 || strings.Trim(j.ID, "0123456789abcdef") != "" {
		return false
	}
	ok := func(p string) bool {
		c, err := workspace.Clean(p)
		return err == nil && c == p && p != "." && !strings.HasPrefix(p, "../") &&
			p != workspace.StateDir && !strings.HasPrefix(p, workspace.StateDir+"/")
	}
	staged := func(name, target string, n int, ext, besideExt string) bool {
		return name == "" || name == stageName(j.ID, n, ext) || besideOf(name, target, j.ID, besideExt)
	}
	for n, o := range j.Ops {
		if !ok(o.Target) || !staged(o.Temp, o.Target, n, "new", "tmp") || !staged(o.Backup, o.Target, n, "old", "old") ||
			o.Delete && (o.Temp != "" || o.Backup == "") {
			return false
		}
		if o.OldSum != "" && (len(o.OldSum) != 64 || strings.Trim(o.OldSum, "0123456789abcdef") != "") || o.OldSize < 0 {
			return false
		}
	}
	for n, d := range j.Dirs {
		if !ok(d.Path) || d.Stage != "" && d.Stage != dirStageName(j.ID, n) && d.Stage != besideName(d.Path, j.ID, "dir") {
			return false
		}
	}
	return true
}
