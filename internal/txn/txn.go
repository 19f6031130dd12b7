// Package txn owns the edit transaction: several files of a workspace
// changed so that every one ends wholly old or wholly new, all of them the
// same way, even if the process dies at any instant or other processes
// read, commit or recover in the same workspace meanwhile.
//
// Commit stages each new content in a file of rowkit's state directory
// (.rowkit, hidden from git by its own .gitignore) and keeps the old
// content as a hard link there too (a backup costs no copy), then records
// the whole transaction in a journal, .rowkit/journal. The journal's state
// is the decision:
//
//	prepare   staging: recovery rolls back (staging files removed)
//	commit    decided: recovery rolls forward (new directories and files
//	          renamed into place, deleted files unlinked, backups removed)
//	rollback  a failure after the decision: recovery restores the backups
//
// Every state change is a rename of a fsynced file followed by a fsync of
// its directory. Recovery is idempotent, so a crash during recovery is
// recovered by the next one. Each step is one system call that either
// happened or did not. Nothing appears in the tree before the decision:
// even a new directory is made under a staging name and renamed into
// place with RENAME_NOREPLACE.
//
// One transaction at a time. An exclusive flock on .rowkit/lock is held
// from before the journal's first write until after its removal, by every
// commit and every recovery; flock belongs to an open file description, so
// two goroutines of one process exclude each other as two processes do.
// The kernel drops the lock when its holder dies, so a journal found under
// the lock is one whose writer is gone: only then is it settled. A journal
// whose writer is alive is waited for (up to 10 s) and otherwise reported
// busy. Before each step a commit proves that the lock file and the journal
// on disk are still its own, and stops with an exact account of every file
// if they are not. Commands that only read never settle anything.
//
// Other writers. Under the lock, each target is checked against the
// content the caller based its change on: when it is staged, right before
// its rename or removal (its identity, device and inode, and its content),
// and after all the renames through its backup, which holds the replaced
// file (a write between the check and the rename landed there). A
// difference rolls the transaction back with a *ChangedError. A file
// created by the transaction is renamed into place with RENAME_NOREPLACE,
// so a file another writer created is never replaced. What no check
// without a lock shared with that writer can close: a write through a
// descriptor opened before the rename that lands after the last look (and,
// for a writer that replaces the file by its own rename, the instant
// between the check and our rename) is lost with the replaced file. Every
// file the transaction opens is opened non-blocking and checked regular
// with fstat before it is read, so a FIFO or device swapped in fails the
// commit at once.
//
// Other programs changing the tree. Every name is reached through its
// directory, opened component by component without following a symlink
// (see fsat.go): a directory replaced by a symlink, to anywhere, is never
// entered. A rollback or a recovery acts only on what the transaction
// provably made (the inodes it recorded); whatever else it finds in the
// way it leaves alone, so that it always makes progress; and when the
// system refuses a step (permissions, a read-only file system) it stops
// and says which path, why, and what to do.
//
// Only its own journal. A repository may ship a .rowkit/journal of its
// own, so a journal is acted on only when it provably belongs to a
// transaction rowkit staged here. The journal records the device and inode
// of its own file and of the .rowkit directory, and, once staged, of every
// staged file, backup and directory; it must be a regular file (not a
// symlink) owned by the current user with mode 0600, in a real .rowkit
// directory, naming only clean paths inside the root. A copy (a clone, an
// archive) has other inodes. Any other journal is left alone and reported,
// and Commit refuses to write beside it.
package txn

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/workspace"
)

// Codes of the transaction's failures.
const (
	CodeCommit  = "commit_failed" // a step failed; the message says where every file stands
	CodeJournal = "journal"       // a pending transaction stood in the way, or could not be settled
)

// ExitCommitFailed is the exit status of a commit_failed error.
const ExitCommitFailed = 3

// Change is one file of a transaction: new content at a canonical target,
// or its deletion.
type Change struct {
	Target string // canonical path relative to the root (workspace Load's Target, Free's target)
	// The new content (ignored for a delete): Data, or what Render writes
	// when it is set. Render gets the content being replaced as it is on
	// disk (nil for a file being created), to copy the parts it keeps
	// from: a caller that edits a few lines of a large file holds neither
	// the old nor the new content whole. Whatever Render leaves unread of
	// old is read after it, to prove old was the content the change was
	// based on; if it was not, the commit is rolled back with a
	// *ChangedError.
	Data   []byte
	Render func(w io.Writer, old io.Reader) error
	Mode   fs.FileMode // the mode of the new content
	Delete bool
	// From, for a write with a Render, names the target of another change
	// of the transaction (the delete of a file moved with edits, or the
	// write in its place) whose old content Render gets as old, instead of
	// its own target's.
	From string
	// Link makes the change about a symbolic link: a delete removes the
	// link Target itself (Old is its text), a write creates one whose
	// text is Data.
	Link bool
	// Old is the content the caller based the change on: the file must
	// still hold exactly these bytes when it is staged and when it is
	// replaced, or the commit is rolled back with a *ChangedError. Base
	// says the same by size and hash, for a caller that does not hold
	// the bytes. Both nil means the target must not exist (a file being
	// created).
	Old  []byte
	Base *Base
}

// Base identifies the content a change is based on.
type Base struct {
	Size int64
	Sum  [sha256.Size]byte
}

// BaseOf is the Base of data.
func BaseOf(data []byte) *Base { return &Base{Size: int64(len(data)), Sum: sha256.Sum256(data)} }

func (c *Change) base() *Base {
	if c.Base == nil && c.Old != nil {
		c.Base = BaseOf(c.Old)
	}
	return c.Base
}

// ChangedError reports a file that changed on disk between the caller's
// read and the commit: another writer. Nothing of the transaction was
// written.
type ChangedError struct {
	Target string
	Now    []byte // the file's content now (nil when it is missing, unreadable or not a regular file)
	Kind   string // set when the target is no longer a regular file: "a FIFO", "a device", "missing", ...
}

func (e *ChangedError) Error() string {
	if e.Kind != "" {
		return fmt.Sprintf("%s changed on disk since it was read (it is %s now); nothing was written", e.Target, e.Kind)
	}
	return fmt.Sprintf("%s changed on disk since it was read; nothing was written", e.Target)
}

// faultHook, when set (by tests), runs before every step of a transaction
// or a recovery; an error it returns is the step's error.
var faultHook func(step string) error

// SetFaultHook installs f to run before every step of every transaction
// and recovery of this process (nil removes it), for tests, in this
// package and others (a test binary that kills its own commit at a chosen
// step to leave a real pending journal). Nothing in rowkit's commands
// calls it.
func SetFaultHook(f func(step string) error) { faultHook = f }

// tx is one transaction (or the recovery of one) under the lock.
type tx struct {
	ws      *workspace.Root
	root    *os.Root
	lk      *lock
	j       *journal
	changes []Change // what the caller asked for; nil in a recovery
	// newSums hash each staged new content, to say after a failure which
	// target holds it (in this process only: the seed is random).
	newSums []uint64
	seed    maphash.Seed
	bw      *bufio.Writer // writer and buffer of read, reused file after file
	rbuf    []byte
	br      *bufio.Reader
	// dirParent[n] is the index of the directory of j.Dirs holding
	// directory n, or -1 (computed on first use).
	dirParent []int
	// keptOld says which old contents a rollback could not put back, and
	// where they are kept.
	keptOld []string
	// onDisk is the journal file this transaction last wrote (or, in a
	// recovery, read); nil while it has none on disk.
	onDisk *fileID
}

// errLost is the error of a step that found the lock or the journal no
// longer this transaction's own.
type errLost struct{ why string }

func (e *errLost) Error() string { return e.why }

// step runs the fault hook, then proves that the transaction is still this
// process's alone: the lock file is the one it locked and the journal on
// disk the one it wrote. Something outside the protocol (a removed .rowkit,
// a rowkit too old to lock) is the only way either changes.
func (t *tx) step(name string) error {
	if faultHook != nil {
		if err := faultHook(name); err != nil {
			return err
		}
	}
	if !t.lk.current() {
		return &errLost{"the workspace lock " + lockName + " was removed or replaced"}
	}
	if t.onDisk == nil {
		return nil
	}
	st, err := t.lstat(journalName)
	if err != nil {
		return &errLost{"the journal " + journalName + " was removed"}
	}
	if st.id != *t.onDisk {
		return &errLost{"the journal " + journalName + " was replaced"}
	}
	return nil
}

// Commit applies changes as one transaction in the workspace ws. It waits
// (up to 10 s, or until ctx ends) for another process's transaction there
// to end, and settles one a crash left pending first. When a file changed
// since the caller read it, the result is a *ChangedError and nothing is
// written; when a step fails the transaction is rolled back and the error
// has code commit_failed (exit 3) and says where every file stands.
func Commit(ctx context.Context, ws *workspace.Root, changes []Change) error {
	lk, err := acquire(ctx, ws)
	if err != nil {
		if rec, ok := lockRecovery(err); ok {
			return rec.Refusal()
		}
		if errs.Is(err, errs.Cancelled) {
			return err
		}
		return errs.Errorf(CodeCommit, "taking the workspace lock failed: %v; every file is as it was", regfile.Cause(err)).WithExit(ExitCommitFailed)
	}
	defer lk.release()
	rec, err := settle(ws, lk)
	if err != nil {
		return err
	}
	if err := rec.Refusal(); err != nil {
		return err
	}
	t := &tx{ws: ws, root: ws.FS(), lk: lk, changes: changes, seed: maphash.MakeSeed()}
	return t.commit()
}

func (t *tx) commit() error {
	var id [6]byte
	rand.Read(id[:])
	j := &journal{ID: hex.EncodeToString(id[:]), State: statePrepare}
	t.j = j
	home, err := t.lstat(workspace.StateDir)
	if err != nil {
		return t.failure(err, "opening "+workspace.StateDir, "")
	}
	seenDir := map[string]bool{}
	for i := range t.changes {
		c := &t.changes[i]
		o := op{Target: c.Target, Delete: c.Delete, Link: c.Link}
		// Staged in .rowkit, unless the target's directory is on another
		// file system (a mount inside the tree): then beside it.
		// (In its directory, or, when the script creates that
		// directory, in the nearest one that exists, on the same file
		// system: a rename into the new directory is then one rename.)
		at, dev := t.existing(path.Dir(c.Target))
		beside := dev != home.id.Dev
		name := func(ext, besideExt string) string {
			if beside {
				return besideName(path.Join(at, path.Base(c.Target)), j.ID, besideExt)
			}
			return stageName(j.ID, i, ext)
		}
		if !c.Delete {
			o.Temp = name("new", "tmp")
		}
		if b := c.base(); b != nil {
			o.Backup = name("old", "old")
			o.OldSum = hex.EncodeToString(b.Sum[:])
			o.OldSize = b.Size
		}
		j.Ops = append(j.Ops, o)
		// The directories to create: the missing ancestors (an existing
		// one ends the walk, so the cost is linear in the depth).
		for d := path.Dir(c.Target); d != "." && !seenDir[d]; d = path.Dir(d) {
			seenDir[d] = true
			if !t.missing(d) {
				break
			}
			j.Dirs = append(j.Dirs, dirOp{Path: d})
		}
	}
	sortDirs(j.Dirs)
	for n := range j.Dirs {
		d := &j.Dirs[n]
		if t.parentDir(n) >= 0 {
			continue // made inside its parent's stage
		}
		if t.deviceOf(path.Dir(d.Path)) != home.id.Dev {
			d.Stage = besideName(d.Path, j.ID, "dir")
		} else {
			d.Stage = dirStageName(j.ID, n)
		}
	}
	t.newSums = make([]uint64, len(t.changes))
	if err := t.writeJournal(); err != nil {
		return t.fail(err, "recording the transaction")
	}
	if err := t.stageDirs(); err != nil {
		return t.fail(err, "creating directories")
	}
	// The backups first, then the new contents: a file moved with edits
	// renders its new content from its source's backup.
	for i, c := range t.changes {
		if err := t.backup(i); err != nil {
			return t.fail(err, "staging "+c.Target)
		}
	}
	for i, c := range t.changes {
		if err := t.stage(i, c); err != nil {
			return t.fail(err, "staging "+c.Target)
		}
	}
	if err := t.syncDirs(); err != nil {
		return t.fail(err, "syncing directories")
	}
	j.State = stateCommit
	if err := t.writeJournal(); err != nil {
		return t.fail(err, "deciding the transaction")
	}
	if err := t.forward(); err != nil {
		return t.undo(err)
	}
	// Every file is in place and durable. A failure to clean up leaves the
	// journal deciding commit, which the next writer completes again
	// (every step is idempotent): the edit stands.
	t.finish()
	return nil
}

// existing returns the directory rel, or its nearest ancestor that
// exists, and its device (0 when none can be reached).
func (t *tx) existing(rel string) (string, uint64) {
	for {
		if st, err := t.lstat(rel); err == nil {
			return rel, st.id.Dev
		}
		if rel == "." {
			return rel, 0
		}
		rel = path.Dir(rel)
	}
}

// deviceOf is the device of the directory rel, or of its nearest existing
// ancestor (0 when none can be reached).
func (t *tx) deviceOf(rel string) uint64 {
	_, dev := t.existing(rel)
	return dev
}

// parentDir is the index of the directory the transaction creates that
// holds directory n, or -1.
func (t *tx) parentDir(n int) int {
	if t.dirParent == nil {
		at := make(map[string]int, len(t.j.Dirs))
		t.dirParent = make([]int, len(t.j.Dirs))
		for k, d := range t.j.Dirs {
			at[d.Path] = k
			t.dirParent[k] = -1
			if p, ok := at[path.Dir(d.Path)]; ok && p < k {
				t.dirParent[k] = p
			}
		}
	}
	return t.dirParent[n]
}

// dirStaged is where directory n is made: its stage, or inside the stage
// of the directory that holds it (which carries it into place).
func (t *tx) dirStaged(n int) string {
	var below []string
	for {
		d := t.j.Dirs[n]
		k := t.parentDir(n)
		if k < 0 {
			top := d.Stage
			if top == "" {
				top = d.Path // a journal of an earlier rowkit: made in place
			}
			for i := len(below) - 1; i >= 0; i-- {
				top += "/" + below[i]
			}
			return top
		}
		below = append(below, path.Base(d.Path))
		n = k
	}
}

// stageDirs makes every directory the transaction creates under its
// stage, recording each one's identity. A chain of new directories is
// made each from the one before it, held open: linear in its depth.
func (t *tx) stageDirs() error {
	var prev *os.File
	prevAt := ""
	defer func() {
		if prev != nil {
			prev.Close()
		}
	}()
	for n := range t.j.Dirs {
		d := &t.j.Dirs[n]
		at := t.dirStaged(n)
		if err := t.step("mkdir " + d.Path); err != nil {
			return err
		}
		var f *os.File
		var err error
		if prev != nil && path.Dir(at) == prevAt {
			f, err = mkdirIn(prev, path.Base(at))
		} else {
			if err = t.mkdir(at); err == nil {
				f, err = t.ws.OpenDir(at)
			}
		}
		if err != nil {
			return t.changedDir(n, err)
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return err
		}
		id, _ := idOf(fi)
		d.ID = &id
		if prev != nil {
			prev.Close()
		}
		prev, prevAt = f, at
	}
	return nil
}

// backup links the i-th change's old content as its backup (the very
// inode the rename or removal will replace) and, for a delete, proves it
// holds what the caller read.
func (t *tx) backup(i int) error {
	o := &t.j.Ops[i]
	if o.Backup == "" {
		return nil
	}
	if err := t.step("link " + o.Target); err != nil {
		return err
	}
	if _, err := t.lstatTarget(*o); err != nil {
		return err
	}
	if err := t.link(o.Target, o.Backup); err != nil {
		if unreachable(err) {
			return t.changed(o.Target, err)
		}
		return err
	}
	var err error
	if o.BackupID, err = t.idOfPath(o.Backup); err != nil {
		return err
	}
	if o.Temp == "" {
		return t.checkBackup(*o)
	}
	return nil
}

// stage writes the i-th change's new content into its staging file (from
// the backup, for a Render: its own, or its From's), checking that the
// target, and the file it renders from, still hold what the caller read.
func (t *tx) stage(i int, c Change) error {
	o := &t.j.Ops[i]
	if o.Temp == "" {
		return nil
	}
	src := -1 // the op whose backup a Render reads
	switch {
	case c.From != "":
		for k, other := range t.j.Ops {
			if other.Target == c.From && other.Backup != "" {
				src = k
			}
		}
		if src < 0 {
			return fmt.Errorf("%s renders from %s, which the transaction does not back up", c.Target, c.From)
		}
		if o.Backup != "" {
			// Its own old content is replaced, not read: proven all the
			// same.
			if err := t.checkBackup(*o); err != nil {
				return err
			}
		}
	case o.Backup != "":
		src = i
	}
	if c.Link {
		if err := t.step("create " + o.Temp); err != nil {
			return err
		}
		if err := t.symlink(string(c.Data), o.Temp); err != nil {
			return err
		}
		t.newSums[i] = maphash.Bytes(t.seed, c.Data)
	} else {
		err := t.writeNew(o.Temp, c.Mode, func(_ *os.File, w io.Writer) error {
			h := maphash.Hash{}
			h.SetSeed(t.seed)
			w = io.MultiWriter(w, &h)
			var err error
			if src < 0 {
				err = t.render(c, w, nil)
			} else {
				err = t.renderFromBackup(t.j.Ops[src], c, w)
			}
			t.newSums[i] = h.Sum64()
			return err
		})
		if err != nil {
			return err
		}
	}
	var err error
	if o.TempID, err = t.idOfPath(o.Temp); err != nil {
		return err
	}
	if o.Backup == "" && !t.missing(o.Target) {
		return t.changed(o.Target, nil) // created meanwhile by another writer
	}
	return nil
}

// render writes c's new content to w.
func (t *tx) render(c Change, w io.Writer, old io.Reader) error {
	if c.Render != nil {
		return c.Render(w, old)
	}
	_, err := w.Write(c.Data)
	return err
}

// renderFromBackup renders c's new content from its backup, the very
// inode the rename will replace, hashing every byte of it: when the backup
// does not hold the content the change was based on, the result is a
// *ChangedError with what it holds now.
func (t *tx) renderFromBackup(o op, c Change, w io.Writer) error {
	if o.Link {
		return t.render(c, w, nil)
	}
	f, err := t.openRegular(o.Backup, o.BackupID)
	if err != nil {
		if _, ok := regfile.AsNotRegular(err); ok {
			return t.changed(o.Target, err)
		}
		return err
	}
	defer f.Close()
	h := sha256.New()
	if t.br == nil {
		t.br = bufio.NewReaderSize(regfile.Reader(f), 64<<10)
	} else {
		t.br.Reset(regfile.Reader(f))
	}
	counted := &countingReader{r: io.TeeReader(t.br, h)}
	if err := t.render(c, w, counted); err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, counted); err != nil {
		return err
	}
	if counted.n != o.OldSize || hex.EncodeToString(h.Sum(nil)) != o.OldSum {
		now, _ := t.readRegular(o.Backup, o.BackupID, maxShown)
		return &ChangedError{Target: o.Target, Now: now}
	}
	return nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// checkBackup proves that o's backup holds the content the change was
// based on (a *ChangedError otherwise).
func (t *tx) checkBackup(o op) error {
	same, err := t.holdsOld(o, o.Backup, o.BackupID)
	if err != nil {
		if _, ok := regfile.AsNotRegular(err); ok {
			return t.changed(o.Target, err)
		}
		return err
	}
	if !same {
		return t.changedNow(o)
	}
	return nil
}

// holdsOld reports whether name (the file recorded as id) holds o's old
// content: its size and SHA-256, or for a link its text.
func (t *tx) holdsOld(o op, name string, id *fileID) (bool, error) {
	if o.OldSum == "" {
		return true, nil // a journal without sums: identity is all it recorded
	}
	if o.Link {
		text, err := t.readlink(name)
		if err != nil {
			return false, err
		}
		sum := sha256.Sum256([]byte(text))
		return int64(len(text)) == o.OldSize && hex.EncodeToString(sum[:]) == o.OldSum, nil
	}
	size, sum, err := t.sumRegular(name, id, o.OldSize)
	if err != nil {
		return false, err
	}
	return size == o.OldSize && sum == o.OldSum, nil
}

// changedNow is the *ChangedError of o's target, with what its backup
// (the inode the transaction would replace) holds now.
func (t *tx) changedNow(o op) error {
	now, _ := t.readRegular(o.Backup, o.BackupID, maxShown)
	return &ChangedError{Target: o.Target, Now: now}
}

// lstatTarget returns the information of a target that must still be what
// the caller read: a regular file (a symlink for a Link op), or a
// *ChangedError when it is missing, unreachable or of another type.
func (t *tx) lstatTarget(o op) (stat, error) {
	st, err := t.lstat(o.Target)
	switch {
	case unreachable(err):
		return stat{}, t.changed(o.Target, err)
	case err != nil:
		return stat{}, err
	case o.Link && !st.isLink():
		return stat{}, &ChangedError{Target: o.Target, Kind: "no longer a symlink"}
	case o.Link:
		return st, nil
	}
	if err := st.notRegular(); err != nil {
		return stat{}, t.changed(o.Target, err)
	}
	return st, nil
}

// changed is the *ChangedError of a target found different, with its
// content now when it is a regular file (why, when set, is the reason it
// is not: not a regular file, or unreachable).
func (t *tx) changed(target string, why error) error {
	ce := &ChangedError{Target: target}
	if e, ok := regfile.AsNotRegular(why); ok {
		ce.Kind = e.Kind()
		return ce
	}
	if why != nil && unreachable(why) {
		if errors.Is(why, fs.ErrNotExist) {
			ce.Kind = "missing"
		} else {
			ce.Kind = "behind a symlink or a file that replaced one of its directories"
		}
		return ce
	}
	ce.Now, _ = t.readRegular(target, nil, maxShown)
	return ce
}

// changedDir is the error of a failure to make directory n's stage; a
// stage of the beside form whose parent another program replaced is a
// *ChangedError of the first target under it.
func (t *tx) changedDir(n int, err error) error {
	if !unreachable(err) && !errors.Is(err, fs.ErrExist) {
		return err
	}
	d := t.j.Dirs[n].Path
	for _, o := range t.j.Ops {
		if strings.HasPrefix(o.Target, d+"/") {
			return &ChangedError{Target: o.Target, Kind: "in a directory " + d + " that another program created or replaced"}
		}
	}
	return err
}

// maxShown bounds the content a *ChangedError carries for a file that
// changed in size: the caller shows rows near its edits.
const maxShown = 64 << 20

// fail rolls back a transaction that has not been decided, or was decided
// and then failed, and reports exactly where every file stands. A
// *ChangedError found while staging comes back as it is once the rollback
// succeeded.
func (t *tx) fail(err error, what string) error {
	var lost *errLost
	if errors.As(err, &lost) {
		return t.failure(err, what, "")
	}
	rerr := t.rollback()
	var ce *ChangedError
	if errors.As(err, &ce) && rerr == nil {
		return ce
	}
	note := ""
	var kept *keptError
	switch {
	case errors.As(rerr, &kept):
		note = "rolled back, but " + kept.Error()
	case rerr != nil:
		note = fmt.Sprintf("rolling back failed too (%v)", regfile.Cause(rerr))
	}
	return t.failure(err, what, note)
}

// undo handles a failure after the decision: the journal is turned to
// rollback first, so that a crash during the rollback is rolled back too.
func (t *tx) undo(err error) error {
	var lost *errLost
	if errors.As(err, &lost) {
		return t.failure(err, "applying", "")
	}
	t.j.State = stateRevert
	if jerr := t.writeJournal(); jerr != nil {
		return t.failure(err, "applying", fmt.Sprintf("recording the rollback failed too (%v)", regfile.Cause(jerr)))
	}
	return t.fail(err, "applying")
}

// failure is the commit_failed error for err: what failed, and where every
// file stands, read from disk.
func (t *tx) failure(err error, what, note string) error {
	var ce *ChangedError
	cause := regfile.Cause(err)
	if errors.As(err, &ce) {
		cause = ce
	}
	msg := fmt.Sprintf("%s failed: %v; %s", what, cause, t.statement())
	if note != "" {
		msg += "; " + note
	}
	var lost *errLost
	switch {
	case errors.As(err, &lost):
		msg += fmt.Sprintf("; nothing more was done: the staging files of transaction %s (%s/%s.*) are left as they are", t.j.ID, workspace.StateDir, t.j.ID)
	case t.journalKept():
		msg += "; the journal " + journalName + " is kept: the next hpatch or rowkit recover in this workspace settles it"
	}
	return errs.New(CodeCommit, msg).WithExit(ExitCommitFailed)
}

// journalKept reports whether this transaction's journal is still on disk.
func (t *tx) journalKept() bool { return t.sameID(journalName, t.onDisk) }

// sortDirs orders directories as a walk of the tree would: each after
// its parent, and a chain of new directories one after another.
func sortDirs(ds []dirOp) {
	parts := make(map[string][]string, len(ds))
	for _, d := range ds {
		parts[d.Path] = strings.Split(d.Path, "/")
	}
	sort.SliceStable(ds, func(i, j int) bool { return slices.Compare(parts[ds[i].Path], parts[ds[j].Path]) < 0 })
}
