package txn

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
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
	ID    string   `json:"id"`
	State string   `json:"state"`
	Ops   []op     `json:"ops"`
	Dirs  []string `json:"dirs,omitempty"` // created by the transaction, parents first
	Self  fileID   `json:"self"`           // the journal file itself
	Home  fileID   `json:"home"`           // the .rowkit directory
}

type op struct {
	Target   string  `json:"target"`
	Temp     string  `json:"temp,omitempty"`   // new content, for a write
	Backup   string  `json:"backup,omitempty"` // old content, when the target existed
	Delete   bool    `json:"delete,omitempty"`
	TempID   *fileID `json:"temp_id,omitempty"` // recorded once staged (state commit and after)
	BackupID *fileID `json:"backup_id,omitempty"`
	// The old content's SHA-256 and size: what the target must still hold
	// right before it is replaced or removed, in a recovery too.
	OldSum  string `json:"old_sum,omitempty"`
	OldSize int64  `json:"old_size,omitempty"`
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

// sameID reports whether name in root is the file recorded as id.
func sameID(root *os.Root, name string, id *fileID) bool {
	fi, err := root.Lstat(name)
	if err != nil || id == nil {
		return false
	}
	got, ok := idOf(fi)
	return ok && got == *id
}

// lstatID returns the identity of name in root.
func lstatID(root *os.Root, name string) (*fileID, error) {
	fi, err := root.Lstat(name)
	if err != nil {
		return nil, err
	}
	id, ok := idOf(fi)
	if !ok {
		return nil, errors.New("the file system gives no inode numbers")
	}
	return &id, nil
}

// writeJournal replaces the journal atomically with t.j.
func (t *tx) writeJournal() error {
	root, j := t.root, t.j
	if err := t.step("journal " + j.State); err != nil {
		return err
	}
	home, err := root.Lstat(workspace.StateDir)
	if err != nil {
		return err
	}
	if !home.IsDir() {
		return fmt.Errorf("%s is not a directory", workspace.StateDir)
	}
	j.Home, _ = idOf(home)
	root.Remove(journalTemp)
	err = t.writeNew(journalTemp, 0o600, func(f *os.File) ([]byte, error) {
		fi, err := f.Stat()
		if err != nil {
			return nil, err
		}
		j.Self, _ = idOf(fi)
		return json.Marshal(j)
	})
	if err != nil {
		return err
	}
	if err := t.step("rename journal"); err != nil {
		return err
	}
	if err := root.Rename(journalTemp, journalName); err != nil {
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
	if err := t.root.Remove(journalName); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	t.onDisk = nil
	t.root.Remove(journalTemp)
	return t.syncDir(workspace.StateDir)
}

// pending reports whether the workspace at dir holds a journal: one Lstat.
func pending(dir string) bool {
	_, err := os.Lstat(path.Join(dir, journalName))
	return err == nil
}

// ownJournal reads the pending journal when it provably belongs to a
// transaction rowkit staged in this workspace. Otherwise it returns nil and
// why ("" when there is no journal at all).
func ownJournal(root *os.Root) (*journal, string) {
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
	data, err := readRegular(root, journalName, &id, maxJournal)
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
		for _, o := range j.Ops {
			if o.Temp != "" && o.TempID == nil || o.Backup != "" && o.BackupID == nil {
				return nil, "a staging file is not recorded"
			}
			for _, f := range []struct {
				name string
				id   *fileID
			}{{o.Temp, o.TempID}, {o.Backup, o.BackupID}} {
				if f.name == "" {
					continue
				}
				if _, err := root.Lstat(f.name); err == nil && !sameID(root, f.name, f.id) {
					return nil, f.name + " is not the file the transaction staged"
				}
			}
		}
	}
	return &j, ""
}

// valid checks that a journal names only rowkit's own staging files beside
// clean targets inside the root.
func (j *journal) valid() bool {
	switch j.State {
	case statePrepare, stateCommit, stateRevert:
	default:
		return false
	}
	if len(j.ID) != 12 {
		return false
	}
	ok := func(p string) bool {
		c, err := workspace.Clean(p)
		return err == nil && c == p && p != "." && !strings.HasPrefix(p, "../")
	}
	for _, o := range j.Ops {
		dir, base := path.Split(o.Target)
		prefix := dir + "." + base + ".rowkit-" + j.ID
		if !ok(o.Target) || o.Temp != "" && o.Temp != prefix+".tmp" || o.Backup != "" && o.Backup != prefix+".old" || o.Delete && (o.Temp != "" || o.Backup == "") {
			return false
		}
		if o.OldSum != "" && (len(o.OldSum) != 64 || strings.Trim(o.OldSum, "0123456789abcdef") != "") || o.OldSize < 0 {
			return false
		}
	}
	for _, d := range j.Dirs {
		if !ok(d) {
			return false
		}
	}
	return true
}
