// Package txn owns the edit transaction: several files of a workspace
// changed so that every one ends wholly old or wholly new, all of them the
// same way, even if the process dies at any instant or other processes
// read, commit or recover in the same workspace meanwhile.
//
// Commit stages each new content in a temporary file beside its target and
// keeps the old content as a hard link beside it too (a backup costs no
// copy), then records the whole transaction in a journal, .rowkit/journal
// under the root. The journal's state is the decision:
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
// between the check and our rename) is lost with the replaced file. Every file the transaction opens is opened
// non-blocking and checked regular with fstat before it is read, so a FIFO
// or device swapped in fails the commit at once.
//
// Only its own journal. A repository may ship a .rowkit/journal of its
// own, so a journal is acted on only when it provably belongs to a
// transaction rowkit staged here. The journal records the device and inode
// of its own file and of the .rowkit directory, and, once staged, of every
// temporary file and backup; it must be a regular file (not a symlink)
// owned by the current user with mode 0600, in a real .rowkit directory,
// naming only clean paths inside the root. A copy (a clone, an archive)
// has other inodes. Any other journal is left alone and reported, and
// Commit refuses to write beside it.
package txn

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
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
	Target string      // canonical path relative to the root (workspace Load's Target, Free's target)
	Data   []byte      // the new content (ignored for a delete)
	Mode   fs.FileMode // the mode of the new content
	Delete bool
	// Old is the content the caller based the change on: the file must
	// still hold exactly these bytes when it is staged and when it is
	// replaced, or the commit is rolled back with a *ChangedError. Nil
	// means the target must not exist (a file being created).
	Old []byte
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

// tx is one transaction (or the recovery of one) under the lock.
type tx struct {
	root    *os.Root
	lk      *lock
	j       *journal
	changes []Change // what the caller asked for; nil in a recovery
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
	fi, err := t.root.Lstat(journalName)
	if err != nil {
		return &errLost{"the journal " + journalName + " was removed"}
	}
	if id, ok := idOf(fi); !ok || id != *t.onDisk {
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
	root := ws.FS()
	lk, err := acquire(ctx, root)
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
	rec, err := settle(root, lk)
	if err != nil {
		return err
	}
	if err := rec.Refusal(); err != nil {
		return err
	}
	t := &tx{root: root, lk: lk, changes: changes}
	return t.commit()
}

func (t *tx) commit() error {
	root := t.root
	var id [6]byte
	rand.Read(id[:])
	j := &journal{ID: hex.EncodeToString(id[:]), State: statePrepare}
	seenDir := map[string]bool{}
	for _, c := range t.changes {
		dir, base := path.Split(c.Target)
		o := op{Target: c.Target, Delete: c.Delete}
		if !c.Delete {
			o.Temp = dir + "." + base + ".rowkit-" + j.ID + ".tmp"
		}
		if c.Old != nil {
			o.Backup = dir + "." + base + ".rowkit-" + j.ID + ".old"
			sum := sha256.Sum256(c.Old)
			o.OldSum = hex.EncodeToString(sum[:])
			o.OldSize = int64(len(c.Old))
		}
		j.Ops = append(j.Ops, o)
		for d := path.Dir(c.Target); d != "." && !seenDir[d]; d = path.Dir(d) {
			seenDir[d] = true
			if _, err := root.Lstat(d); errors.Is(err, fs.ErrNotExist) {
				j.Dirs = append(j.Dirs, d)
			}
		}
	}
	sortByDepth(j.Dirs) // parents before children
	t.j = j
	if err := t.writeJournal(); err != nil {
		return t.fail(err, "recording the transaction")
	}
	for _, d := range j.Dirs {
		if err := t.step("mkdir " + d); err != nil {
			return t.fail(err, "creating "+d)
		}
		if err := root.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return t.fail(err, "creating "+d)
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

// stage writes the i-th change's new content beside its target and links
// the old content as its backup, checking that the target still holds what
// the caller read.
func (t *tx) stage(i int, c Change) error {
	root, o := t.root, &t.j.Ops[i]
	if o.Temp != "" {
		if err := t.writeNew(o.Temp, c.Mode, func(*os.File) ([]byte, error) { return c.Data, nil }); err != nil {
			return err
		}
		var err error
		if o.TempID, err = lstatID(root, o.Temp); err != nil {
			return err
		}
	}
	if o.Backup == "" {
		if _, err := root.Lstat(o.Target); !errors.Is(err, fs.ErrNotExist) {
			return changed(root, o.Target, nil)
		}
		return nil
	}
	if err := t.step("link " + o.Target); err != nil {
		return err
	}
	if _, err := lstatTarget(root, o.Target); err != nil {
		return err
	}
	if err := root.Link(o.Target, o.Backup); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return &ChangedError{Target: o.Target, Kind: "missing"}
		}
		return err
	}
	var err error
	if o.BackupID, err = lstatID(root, o.Backup); err != nil {
		return err
	}
	// The backup is the very inode the rename will replace: what it holds
	// now is what the transaction would overwrite.
	same, err := equalRegular(root, o.Backup, o.BackupID, c.Old)
	if err != nil {
		if _, ok := regfile.AsNotRegular(err); ok {
			return changed(root, o.Target, err)
		}
		return err
	}
	if !same {
		now, _ := readRegular(root, o.Backup, o.BackupID, maxShown)
		return &ChangedError{Target: o.Target, Now: now}
	}
	return nil
}

// lstatTarget returns the information of a target that must still be the
// regular file the caller read: a *ChangedError when it is missing or no
// longer a regular file.
func lstatTarget(root *os.Root, target string) (fs.FileInfo, error) {
	fi, err := root.Lstat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &ChangedError{Target: target, Kind: "missing"}
	case err != nil:
		return nil, err
	}
	if err := regfile.Check(fi); err != nil {
		return nil, changed(root, target, err)
	}
	return fi, nil
}

// changed is the *ChangedError of a target found different, with its
// content now when it is a regular file (why, when set, is the reason it
// is not).
func changed(root *os.Root, target string, why error) error {
	ce := &ChangedError{Target: target}
	if e, ok := regfile.AsNotRegular(why); ok {
		ce.Kind = e.Kind()
		return ce
	}
	ce.Now, _ = readRegular(root, target, nil, maxShown)
	return ce
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
	if rerr != nil {
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
		msg += fmt.Sprintf("; nothing more was done: the staging files of transaction %s beside the targets (.NAME.rowkit-%s.tmp new, .old old) are left as they are", t.j.ID, t.j.ID)
	case t.journalKept():
		msg += "; the journal " + journalName + " is kept: the next hpatch or rowkit recover in this workspace settles it"
	}
	return errs.New(CodeCommit, msg).WithExit(ExitCommitFailed)
}

// journalKept reports whether this transaction's journal is still on disk.
func (t *tx) journalKept() bool { return sameID(t.root, journalName, t.onDisk) }

func sortByDepth(ds []string) {
	for i := 1; i < len(ds); i++ {
		for k := i; k > 0 && strings.Count(ds[k], "/") < strings.Count(ds[k-1], "/"); k-- {
			ds[k], ds[k-1] = ds[k-1], ds[k]
		}
	}
}
