package workspace

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/regfile"
)

// CodeExists is the code of a path that must be free but is taken.
const CodeExists = "exists"

// CodeReserved reports a path inside rowkit's own state directory, which
// only the transaction writes: an edit there could forge or destroy the
// journal that recovery trusts.
const CodeReserved = "reserved"

// reserved refuses a canonical target inside the state directory.
func reserved(target string) error {
	if target == stateDir || strings.HasPrefix(target, stateDir+"/") {
		return errorf(CodeReserved, "%s is rowkit's own state directory; a script cannot edit it", stateDir)
	}
	return nil
}

// writer holds the one os.Root every write goes through, opened on first
// use and kept for the Root's life: each operation is confined by the
// kernel (openat descent) to the directory the Root was opened on, even if
// a component is swapped for a symlink meanwhile.
type writer struct {
	once sync.Once
	root *os.Root
	err  error
}

// fsRoot returns the long-lived os.Root of the workspace.
func (r *Root) fsRoot() (*os.Root, error) {
	r.w.once.Do(func() {
		r.w.root = r.h // held since Open
	})
	return r.w.root, r.w.err
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
	root, err := r.fsRoot()
	if err != nil {
		return nil, err
	}
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
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, errorf(CodeRead, "reading %s: %v", clean, regfile.Cause(err))
	}
	return &File{Path: clean, Target: target, Data: data, Mode: fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)}, nil
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

// The transaction.
//
// Commit changes several files so that, even if the process dies at any
// instant, every file ends up wholly old or wholly new, all of them the
// same way. It stages each new content in a temporary file beside its
// target and keeps the old content as a hard link beside it too (a backup
// costs no copy), then records the whole transaction in a journal,
// .rowkit/journal under the root. The journal's state is the decision:
//
//	prepare   staging: recovery rolls back (temps and backups removed)
//	commit    decided: recovery rolls forward (temps renamed into place,
//	          deleted files unlinked, backups removed)
//	rollback  a failure after the decision: recovery restores the backups
//
// Every state change is a rename of a fsynced file followed by a fsync of
// its directory. Recovery is idempotent, so a crash during recovery is
// recovered by the next one. Each step is one system call that either
// happened or did not.
//
// Recovery runs when any command opens the workspace, so a journal is acted
// on only when it provably belongs to a transaction rowkit staged here: a
// repository may ship a .rowkit/journal of its own, and a read must never
// rename what a repository supplies. The journal records the device and
// inode of its own file and of the .rowkit directory, and, once staged, of
// every temporary file and backup; it must be a regular file (not a
// symlink) owned by the current user with mode 0600, in a real .rowkit
// directory, naming only clean paths inside the root. A copy (a clone, an
// archive) has other inodes. Any other journal is left alone and reported
// (Recovered), and Commit refuses to write beside it.

// Codes of the transaction's failures.
const (
	CodeCommit  = "commit_failed" // a write failed and the transaction was rolled back
	CodeJournal = "journal"       // a pending transaction could not be recovered
)

// stateDir is where the journal lives, relative to the root.
const stateDir = ".rowkit"

const (
	journalName  = stateDir + "/journal"
	journalTemp  = stateDir + "/journal.tmp"
	statePrepare = "prepare"
	stateCommit  = "commit"
	stateRevert  = "rollback"
)

// Change is one file of a transaction: new content at a canonical target,
// or its deletion.
type Change struct {
	Target string      // canonical path relative to the root (Load's Target, Free's target)
	Data   []byte      // the new content (ignored for a delete)
	Mode   fs.FileMode // the mode of the new content
	Delete bool
	// Old is the content the caller based the change on: the file must
	// still hold exactly these bytes when the transaction decides, or the
	// commit is refused with a *ChangedError. Nil means the target must not
	// exist (a file being created).
	Old []byte
}

// ChangedError reports a file that changed on disk between the caller's
// read and the commit: another writer. Nothing was written.
type ChangedError struct {
	Target string
	Now    []byte // the file's content now (nil when it is missing or unreadable)
}

func (e *ChangedError) Error() string {
	return fmt.Sprintf("%s changed on disk since it was read; nothing was written", e.Target)
}

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
}

// fileID is a file's device and inode: what tells rowkit's own staging
// files from copies of them.
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

// Recovered says what Open did to settle a transaction a crash left
// pending ("" when there was none).
func (r *Root) Recovered() string { return r.recovered }

// pendingJournal reports whether the workspace at dir holds a journal: one
// Lstat, the cost of every Open. (A journal.tmp alone never decided
// anything; the next transaction replaces it.)
func pendingJournal(dir string) bool {
	_, err := os.Lstat(path.Join(dir, journalName))
	return err == nil
}

// faultHook, when set (by tests), runs before every step of a transaction
// or a recovery; an error it returns is the step's error.
var faultHook func(step string) error

func step(name string) error {
	if faultHook != nil {
		return faultHook(name)
	}
	return nil
}

// Commit applies changes as one transaction. A pending transaction left by
// a crash is recovered first. When a file changed since the caller read it
// the result is a *ChangedError and nothing is written; when a step fails
// the transaction is rolled back and the error has code commit_failed.
func (r *Root) Commit(changes []Change) error {
	root, err := r.fsRoot()
	if err != nil {
		return err
	}
	if _, foreign, err := r.recover(root); err != nil {
		return err
	} else if foreign != "" {
		return errorf(CodeJournal, "%s; nothing was written: remove it to edit in this workspace", foreign)
	}
	var id [6]byte
	rand.Read(id[:])
	j := &journal{ID: hex.EncodeToString(id[:]), State: statePrepare}
	seenDir := map[string]bool{}
	for _, c := range changes {
		dir, base := path.Split(c.Target)
		o := op{Target: c.Target, Delete: c.Delete}
		if !c.Delete {
			o.Temp = dir + "." + base + ".rowkit-" + j.ID + ".tmp"
		}
		if c.Old != nil {
			o.Backup = dir + "." + base + ".rowkit-" + j.ID + ".old"
		}
		j.Ops = append(j.Ops, o)
		for d := path.Dir(c.Target); d != "." && !seenDir[d]; d = path.Dir(d) {
			seenDir[d] = true
			if _, err := root.Lstat(d); errors.Is(err, fs.ErrNotExist) {
				j.Dirs = append(j.Dirs, d)
			}
		}
	}
	// Parents before children.
	sortByDepth(j.Dirs)
	fail := func(err error, what string) error {
		r.rollback(root, j)
		return commitError(err, what)
	}
	if err := r.writeJournal(root, j); err != nil {
		return fail(err, "recording the transaction")
	}
	for _, d := range j.Dirs {
		if err := step("mkdir " + d); err != nil {
			return fail(err, "creating "+d)
		}
		if err := root.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fail(err, "creating "+d)
		}
	}
	for i, c := range changes {
		o := j.Ops[i]
		if o.Temp != "" {
			if err := writeTemp(root, o.Temp, c.Data, c.Mode); err != nil {
				return fail(err, "staging "+c.Target)
			}
			if j.Ops[i].TempID, err = lstatID(root, o.Temp); err != nil {
				return fail(err, "staging "+c.Target)
			}
		}
		if o.Backup != "" {
			if err := step("link " + o.Target); err != nil {
				return fail(err, "keeping the old "+c.Target)
			}
			if err := root.Link(o.Target, o.Backup); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					r.rollback(root, j)
					return &ChangedError{Target: c.Target}
				}
				return fail(err, "keeping the old "+c.Target)
			}
			if j.Ops[i].BackupID, err = lstatID(root, o.Backup); err != nil {
				return fail(err, "keeping the old "+c.Target)
			}
			// The backup is the very inode the rename will replace: what
			// it holds now is what we would overwrite.
			now, err := root.ReadFile(o.Backup)
			if err != nil {
				return fail(err, "checking "+c.Target)
			}
			if !bytes.Equal(now, c.Old) {
				r.rollback(root, j)
				return &ChangedError{Target: c.Target, Now: now}
			}
		} else if _, err := root.Lstat(o.Target); !errors.Is(err, fs.ErrNotExist) {
			r.rollback(root, j)
			now, _ := root.ReadFile(o.Target)
			return &ChangedError{Target: c.Target, Now: now}
		}
	}
	if err := syncDirs(root, j); err != nil {
		return fail(err, "syncing directories")
	}
	j.State = stateCommit
	if err := r.writeJournal(root, j); err != nil {
		return fail(err, "deciding the transaction")
	}
	if err := forward(root, j); err != nil {
		j.State = stateRevert
		if jerr := r.writeJournal(root, j); jerr != nil {
			// The journal still says commit: the next invocation finishes
			// the transaction forward instead.
			return commitError(err, "applying (the next rowkit run in this workspace completes it)")
		}
		r.rollback(root, j)
		return commitError(err, "applying")
	}
	r.finish(root, j)
	return nil
}

func commitError(err error, what string) error {
	if e, ok := errs.As(err); ok && e.Code == CodeCommit {
		return e
	}
	return errorf(CodeCommit, "%s failed: %v; every file is as it was", what, regfile.Cause(err)).WithExit(3)
}

func sortByDepth(ds []string) {
	for i := 1; i < len(ds); i++ {
		for k := i; k > 0 && strings.Count(ds[k], "/") < strings.Count(ds[k-1], "/"); k-- {
			ds[k], ds[k-1] = ds[k-1], ds[k]
		}
	}
}

func writeTemp(root *os.Root, name string, data []byte, mode fs.FileMode) error {
	return writeNew(root, name, mode, func(*os.File) ([]byte, error) { return data, nil })
}

// writeNew creates name (it must not exist), writes what content returns
// (given the open file, so that the content may name the file's identity),
// sets mode and fsyncs.
func writeNew(root *os.Root, name string, mode fs.FileMode, content func(*os.File) ([]byte, error)) error {
	if err := step("create " + name); err != nil {
		return err
	}
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	err = step("write " + name)
	var data []byte
	if err == nil {
		data, err = content(f)
	}
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		if err = step("fsync " + name); err == nil {
			err = f.Sync()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeJournal replaces the journal atomically.
func (r *Root) writeJournal(root *os.Root, j *journal) error {
	if err := step("journal " + j.State); err != nil {
		return err
	}
	if err := root.Mkdir(stateDir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	// The state directory is rowkit's own: keep it out of version control.
	if _, err := root.Lstat(stateDir + "/.gitignore"); errors.Is(err, fs.ErrNotExist) {
		root.WriteFile(stateDir+"/.gitignore", []byte("*\n"), 0o644)
	}
	home, err := root.Lstat(stateDir)
	if err != nil {
		return err
	}
	if !home.IsDir() {
		return fmt.Errorf("%s is not a directory", stateDir)
	}
	j.Home, _ = idOf(home)
	root.Remove(journalTemp)
	err = writeNew(root, journalTemp, 0o600, func(f *os.File) ([]byte, error) {
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
	if err := step("rename journal"); err != nil {
		return err
	}
	if err := root.Rename(journalTemp, journalName); err != nil {
		return err
	}
	return syncDir(root, stateDir)
}

func syncDir(root *os.Root, dir string) error {
	if err := step("fsync dir " + dir); err != nil {
		return err
	}
	f, err := root.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // removed by a rollback: nothing of it to make durable
	}
	if err != nil {
		return err
	}
	err = f.Sync()
	f.Close()
	return err
}

// syncDirs fsyncs every directory the transaction touches.
func syncDirs(root *os.Root, j *journal) error {
	seen := map[string]bool{}
	var ds []string
	for _, d := range j.Dirs {
		ds = append(ds, path.Dir(d))
	}
	for _, o := range j.Ops {
		ds = append(ds, path.Dir(o.Target))
	}
	for _, d := range ds {
		if seen[d] {
			continue
		}
		seen[d] = true
		if err := syncDir(root, d); err != nil {
			return err
		}
	}
	return nil
}

// forward makes the decided transaction true: every write renamed into
// place, then every delete. Each step is idempotent.
func forward(root *os.Root, j *journal) error {
	for _, o := range j.Ops {
		if o.Temp == "" {
			continue
		}
		if _, err := root.Lstat(o.Temp); errors.Is(err, fs.ErrNotExist) {
			continue // renamed already
		}
		if !sameID(root, o.Temp, o.TempID) {
			return fmt.Errorf("%s is not the file this transaction staged", o.Temp)
		}
		if err := step("rename " + o.Target); err != nil {
			return err
		}
		if err := root.Rename(o.Temp, o.Target); err != nil {
			return err
		}
	}
	for _, o := range j.Ops {
		if !o.Delete {
			continue
		}
		// Delete only the file the backup still holds: a journal is no
		// licence to delete anything else.
		tf, err1 := root.Lstat(o.Target)
		bf, err2 := root.Lstat(o.Backup)
		if err1 != nil || err2 != nil || !os.SameFile(tf, bf) {
			continue
		}
		if err := step("remove " + o.Target); err != nil {
			return err
		}
		if err := root.Remove(o.Target); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return syncDirs(root, j)
}

// finish removes the backups and the journal of a completed transaction.
func (r *Root) finish(root *os.Root, j *journal) error {
	for _, o := range j.Ops {
		if o.Backup != "" {
			if err := step("drop backup " + o.Target); err != nil {
				return err
			}
			root.Remove(o.Backup)
		}
	}
	return removeJournal(root)
}

func removeJournal(root *os.Root) error {
	if err := step("remove journal"); err != nil {
		return err
	}
	if err := root.Remove(journalName); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	root.Remove(journalTemp)
	return syncDir(root, stateDir)
}

// rollback restores every file as it was: old content back from its
// backup, new files removed, staging removed, created directories removed
// when empty. Each step is idempotent. Errors are returned, not hidden:
// the journal stays and the next run tries again.
func (r *Root) rollback(root *os.Root, j *journal) error {
	var first error
	keep := func(err error) {
		if err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
			first = err
		}
	}
	for _, o := range j.Ops {
		if err := step("restore " + o.Target); err != nil {
			return err
		}
		tempGone := false
		if o.Temp != "" {
			_, err := root.Lstat(o.Temp)
			tempGone = errors.Is(err, fs.ErrNotExist)
		}
		// A staging file is removed only when it is the one recorded, or,
		// before the decision (when none is recorded yet), a regular file
		// of ours: the journal itself was proven ours before this runs.
		mine := func(name string, id *fileID) bool {
			if id != nil {
				return sameID(root, name, id)
			}
			fi, err := root.Lstat(name)
			return err == nil && fi.Mode().IsRegular() && ownedByMe(fi)
		}
		switch {
		case o.Backup != "" && j.State != stateRevert:
			// Before the decision no target was touched: the backup is an
			// extra link, and the target may meanwhile be another writer's.
			if mine(o.Backup, o.BackupID) {
				keep(root.Remove(o.Backup))
			}
		case o.Backup != "":
			if sameID(root, o.Backup, o.BackupID) {
				// When target and backup are links of one inode, rename
				// leaves both; the backup is then dropped below.
				keep(root.Rename(o.Backup, o.Target))
				keep(root.Remove(o.Backup))
			}
		case o.Temp != "" && tempGone && j.State == stateRevert:
			if sameID(root, o.Target, o.TempID) {
				keep(root.Remove(o.Target)) // created by the rename, undone
			}
		}
		if o.Temp != "" && mine(o.Temp, o.TempID) {
			keep(root.Remove(o.Temp))
		}
	}
	for i := len(j.Dirs) - 1; i >= 0; i-- {
		if err := step("rmdir " + j.Dirs[i]); err != nil {
			return err
		}
		root.Remove(j.Dirs[i]) // fails, rightly, when not empty
	}
	if first != nil {
		return first
	}
	if err := syncDirs(root, j); err != nil {
		return err
	}
	return removeJournal(root)
}

// JournalIgnored reports whether Open found a journal that it left alone
// because it is not provably rowkit's own (Recovered says why).
func (r *Root) JournalIgnored() bool { return strings.HasPrefix(r.recovered, ignoredPrefix) }

const ignoredPrefix = "ignored " + journalName + ": "

// Recover completes or rolls back a transaction a crash left in the
// workspace. It reports what it did ("" when there was nothing to do); a
// journal that is not provably rowkit's own is left alone and the report
// says so.
func (r *Root) Recover() (string, error) {
	root, err := r.fsRoot()
	if err != nil {
		return "", err
	}
	msg, foreign, err := r.recover(root)
	if foreign != "" {
		return foreign + "; it was left alone", err
	}
	return msg, err
}

// recover settles a pending transaction. foreign is set, and nothing done,
// when the journal is not one rowkit staged in this workspace.
func (r *Root) recover(root *os.Root) (msg, foreign string, err error) {
	j, why := r.ownJournal(root)
	if j == nil {
		if why != "" {
			foreign = fmt.Sprintf("%snot a transaction rowkit staged here (%s)", ignoredPrefix, why)
		}
		return "", foreign, nil
	}
	if j.State == stateCommit {
		if err := forward(root, j); err != nil {
			return "", "", errorf(CodeJournal, "completing the pending transaction %s: %v", j.ID, regfile.Cause(err))
		}
		if err := r.finish(root, j); err != nil {
			return "", "", errorf(CodeJournal, "completing the pending transaction %s: %v", j.ID, regfile.Cause(err))
		}
		return fmt.Sprintf("completed the interrupted transaction %s (%d files)", j.ID, len(j.Ops)), "", nil
	}
	if err := r.rollback(root, j); err != nil {
		return "", "", errorf(CodeJournal, "rolling back the pending transaction %s: %v", j.ID, regfile.Cause(err))
	}
	return fmt.Sprintf("rolled back the interrupted transaction %s (%d files)", j.ID, len(j.Ops)), "", nil
}

// ownJournal reads the pending journal when it provably belongs to a
// transaction rowkit staged in this workspace. Otherwise it returns nil and
// why ("" when there is no journal at all).
func (r *Root) ownJournal(root *os.Root) (*journal, string) {
	home, err := root.Lstat(stateDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ""
	}
	if err != nil || !home.IsDir() {
		return nil, stateDir + " is not a directory"
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
	case fi.Size() > 16<<20:
		return nil, "it is too large"
	}
	data, err := root.ReadFile(journalName)
	if err != nil {
		return nil, regfile.Cause(err).Error()
	}
	var j journal
	if err := json.Unmarshal(data, &j); err != nil || !j.valid() {
		return nil, "it is malformed or names paths outside rowkit's staging files in the workspace"
	}
	if id, ok := idOf(fi); !ok || id != j.Self {
		return nil, "it is a copy: its inode is not the one it recorded"
	}
	if id, ok := idOf(home); !ok || id != j.Home {
		return nil, stateDir + " is not the directory it was written in"
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
		c, err := Clean(p)
		return err == nil && c == p && p != "." && !strings.HasPrefix(p, "../")
	}
	for _, o := range j.Ops {
		dir, base := path.Split(o.Target)
		prefix := dir + "." + base + ".rowkit-" + j.ID
		if !ok(o.Target) || o.Temp != "" && o.Temp != prefix+".tmp" || o.Backup != "" && o.Backup != prefix+".old" || o.Delete && (o.Temp != "" || o.Backup == "") {
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
