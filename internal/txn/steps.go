package txn

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/workspace"
)

// writeNew creates name (it must not exist), writes what content writes
// to w (given the open file, so that the content may name the file's
// identity), sets mode and fsyncs.
func (t *tx) writeNew(name string, mode fs.FileMode, content func(f *os.File, w io.Writer) error) error {
	if err := t.step("create " + name); err != nil {
		return err
	}
	f, err := t.create(name)
	if err != nil {
		return err
	}
	err = t.step("write " + name)
	if err == nil {
		bw := t.writer(f)
		if err = content(f, bw); err == nil {
			err = bw.Flush()
		}
	}
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		if err = t.step("fsync " + name); err == nil {
			err = f.Sync()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writer returns the transaction's one write buffer, reset to f: a
// transaction of a thousand files allocates it once.
func (t *tx) writer(f io.Writer) *bufio.Writer {
	if t.bw == nil {
		t.bw = bufio.NewWriterSize(f, 256<<10)
	} else {
		t.bw.Reset(f)
	}
	return t.bw
}

// buffer returns the transaction's one read buffer.
func (t *tx) buffer() []byte {
	if t.rbuf == nil {
		t.rbuf = make([]byte, 64<<10)
	}
	return t.rbuf
}

func (t *tx) syncDir(dir string) error {
	if err := t.step("fsync dir " + dir); err != nil {
		return err
	}
	err := t.syncDirAt(dir)
	if unreachable(err) {
		// Removed by a rollback, or replaced by another program: nothing
		// of the transaction's is there to make durable.
		return nil
	}
	return err
}

// syncDirs fsyncs every directory the transaction touches: the state
// directory and those of its targets, staging files and directories.
func (t *tx) syncDirs() error {
	seen := map[string]bool{}
	ds := []string{workspace.StateDir}
	for _, d := range t.j.Dirs {
		ds = append(ds, path.Dir(d.Path))
		if d.Stage != "" {
			ds = append(ds, path.Dir(d.Stage))
		}
	}
	for _, o := range t.j.Ops {
		ds = append(ds, path.Dir(o.Target))
		for _, s := range []string{o.Temp, o.Backup} {
			if s != "" {
				ds = append(ds, path.Dir(s))
			}
		}
	}
	for _, d := range ds {
		if seen[d] {
			continue
		}
		seen[d] = true
		if err := t.syncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// readRegular reads the regular file name (the file recorded as id when
// id is set), at most limit bytes and one more (so that a longer file
// shows as different).
func (t *tx) readRegular(name string, id *fileID, limit int64) ([]byte, error) {
	f, err := t.openRegular(name, id)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(regfile.Reader(f), limit+1))
}

// sumRegular is readRegular's file hashed as it streams, never held whole:
// its size (counted to limit and one byte more) and the hex SHA-256 of what
// was read. A commit checks files as large as the ones it writes, and
// reading each whole again would multiply the memory it needs.
func (t *tx) sumRegular(name string, id *fileID, limit int64) (int64, string, error) {
	f, err := t.openRegular(name, id)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.CopyBuffer(h, io.LimitReader(regfile.Reader(f), limit+1), t.buffer())
	if err != nil {
		return 0, "", err
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// placeDirs renames each new directory the transaction made from its
// stage into place, parents first, never over anything another program
// put there (RENAME_NOREPLACE). Directories made inside a stage travel
// with it.
func (t *tx) placeDirs() error {
	for n, d := range t.j.Dirs {
		if d.Stage == "" || t.parentDir(n) >= 0 {
			continue
		}
		if !t.exists(d.Stage) {
			continue // placed already
		}
		if !t.sameID(d.Stage, d.ID) {
			return fmt.Errorf("%s is not the directory this transaction staged", d.Stage)
		}
		if err := t.step("place " + d.Path); err != nil {
			return err
		}
		if err := t.rename(d.Stage, d.Path, true); err != nil {
			return t.changedDir(n, err)
		}
	}
	return nil
}

// forward makes the decided transaction true: every new directory and
// every write renamed into place, then every delete. Each step is
// idempotent. Right before each rename or removal the target is proven
// unchanged (verify), and after all of them every replaced file once more
// (through its backup); a change stops the transaction with a
// *ChangedError. A target that can no longer be reached (a directory on
// its way replaced by another program) is a *ChangedError too.
func (t *tx) forward() error {
	if err := t.placeDirs(); err != nil {
		return err
	}
	now := make([]bool, len(t.j.Ops)) // replaced or removed by this call
	for i, o := range t.j.Ops {
		if o.Temp == "" {
			continue
		}
		if !t.exists(o.Temp) {
			continue // renamed already
		}
		if !t.sameID(o.Temp, o.TempID) {
			return fmt.Errorf("%s is not the file this transaction staged", o.Temp)
		}
		if err := t.step("rename " + o.Target); err != nil {
			return err
		}
		if o.Backup == "" {
			if err := t.rename(o.Temp, o.Target, true); err != nil {
				if errors.Is(err, fs.ErrExist) || unreachable(err) {
					return t.changed(o.Target, err)
				}
				return err
			}
			continue
		}
		if err := t.verify(o); err != nil {
			return err
		}
		if err := t.rename(o.Temp, o.Target, false); err != nil {
			if unreachable(err) {
				return t.changed(o.Target, err)
			}
			return err
		}
		now[i] = true
	}
	for i, o := range t.j.Ops {
		if !o.Delete {
			continue
		}
		// Delete only the file the backup still holds: a journal is no
		// licence to delete anything else.
		tf, err1 := t.lstat(o.Target)
		bf, err2 := t.lstat(o.Backup)
		if err1 != nil || err2 != nil {
			continue // deleted already (the backup goes last, in finish)
		}
		if tf.id != bf.id {
			if t.changes == nil {
				// In a recovery this may be a file created after the
				// delete: the transaction may have been acknowledged
				// already and is never undone for it. Left alone.
				continue
			}
			return t.changed(o.Target, tf.notRegular())
		}
		if err := t.step("remove " + o.Target); err != nil {
			return err
		}
		if err := t.verify(o); err != nil {
			return err
		}
		if err := t.unlink(o.Target); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		now[i] = true
	}
	// A write that landed between a check and its rename went to the
	// replaced file, which the backup still holds: look once more, after
	// every rename, and undo the transaction if one did. Only the files
	// this call replaced: in a recovery, one replaced by the run that
	// crashed may belong to an edit already acknowledged.
	for i, o := range t.j.Ops {
		if !now[i] || o.Backup == "" || o.OldSum == "" || !t.sameID(o.Backup, o.BackupID) {
			continue
		}
		if err := t.step("recheck " + o.Target); err != nil {
			return err
		}
		same, err := t.holdsOld(o, o.Backup, o.BackupID)
		if err != nil {
			return err
		}
		if !same {
			return t.changedNow(o)
		}
	}
	return t.syncDirs()
}

// verify proves that o's target is still the file the transaction backed
// up, holding the content the change was based on. (A write landing
// between this check and the rename that follows is caught by the recheck
// at the end of forward; see the package comment for what is left.)
func (t *tx) verify(o op) error {
	st, err := t.lstatTarget(o)
	if err != nil {
		return err
	}
	if o.BackupID == nil || st.id != *o.BackupID {
		return t.changed(o.Target, nil) // replaced by another file
	}
	if o.OldSum == "" {
		return nil
	}
	if !o.Link && st.size != o.OldSize {
		return t.changed(o.Target, nil)
	}
	same, err := t.holdsOld(o, o.Target, o.BackupID)
	if err != nil {
		if _, ok := regfile.AsNotRegular(err); ok || unreachable(err) {
			return t.changed(o.Target, err)
		}
		return err
	}
	if !same {
		return t.changed(o.Target, nil)
	}
	return nil
}

// finish removes the backups, what is left of the stages and the journal
// of a completed transaction. A backup is dropped even when the journal is
// no longer this transaction's: the work is done, and the backup is
// identified by its recorded inode.
func (t *tx) finish() error {
	var lost *errLost
	for _, o := range t.j.Ops {
		if o.Backup != "" {
			if err := t.step("drop backup " + o.Target); err != nil && !errors.As(err, &lost) {
				return err
			}
			if t.sameID(o.Backup, o.BackupID) {
				t.unlink(o.Backup)
			}
		}
	}
	return t.removeJournal()
}

// blockedError is a step of a rollback that the system refused on a path
// the transaction made: the journal stays until it can be done.
type blockedError struct {
	path string
	err  error
}

func (e *blockedError) Error() string {
	return fmt.Sprintf("%s: %v", e.path, regfile.Cause(e.err))
}

// rollback restores every file as it was: old content back from its
// backup, new files removed, staging removed, created directories removed
// when empty. Each step is idempotent. It acts only on what the
// transaction provably made (a staging name of its own before the
// decision; a recorded inode after it): a target that is no longer the
// transaction's (another writer replaced it), or that can no longer be
// reached (a directory on its way replaced), is left as it is, so that the
// rollback always gets to its end. A step the system refuses is returned
// (a *blockedError naming the path): the journal stays and the next run
// tries again.
func (t *tx) rollback() error {
	j := t.j
	var first error
	keep := func(name string, err error) {
		if err != nil && !unreachable(err) && first == nil {
			first = &blockedError{name, err}
		}
	}
	// A staging file is removed only when it is the one recorded, or,
	// before the decision (when none is recorded yet), a regular file or
	// symlink of ours under a staging name of this transaction: the
	// journal itself was proven ours before this runs.
	mine := func(name string, id *fileID) bool {
		if id != nil {
			return t.sameID(name, id)
		}
		st, err := t.lstat(name)
		return err == nil && (st.isReg() || st.isLink()) && int(st.uid) == os.Geteuid()
	}
	for _, o := range j.Ops {
		if err := t.step("restore " + o.Target); err != nil {
			return err
		}
		if j.State != stateRevert {
			// Before the decision no target was touched: the backup is an
			// extra link, and the target may meanwhile be another writer's.
			if o.Backup != "" && mine(o.Backup, o.BackupID) {
				keep(o.Backup, t.unlink(o.Backup))
			}
			if o.Temp != "" && mine(o.Temp, o.TempID) {
				keep(o.Temp, t.unlink(o.Temp))
			}
			continue
		}
		switch {
		case o.Temp != "":
			if t.exists(o.Temp) {
				// Never renamed: the target is untouched.
				if t.sameID(o.Temp, o.TempID) {
					keep(o.Temp, t.unlink(o.Temp))
				}
			} else if t.sameID(o.Target, o.TempID) {
				// The new content is in place: put the old one back.
				if o.Backup == "" {
					keep(o.Target, t.unlink(o.Target))
				} else if t.sameID(o.Backup, o.BackupID) {
					keep(o.Target, t.rename(o.Backup, o.Target, false))
				} else {
					keep(o.Target, fmt.Errorf("its backup %s is gone", o.Backup))
				}
			}
			// Otherwise the target is not the transaction's: restored
			// already, or another writer's since.
		case o.Delete:
			if t.missing(o.Target) && t.sameID(o.Backup, o.BackupID) {
				// Deleted: link the old file back, unless another writer
				// has created one there since.
				if err := t.link(o.Backup, o.Target); err != nil && !errors.Is(err, fs.ErrExist) {
					keep(o.Target, err)
					if !unreachable(err) {
						continue
					}
				}
			}
		}
		if o.Backup == "" || !t.sameID(o.Backup, o.BackupID) {
			continue
		}
		if st, err := t.lstat(o.Backup); err == nil && st.nlink == 1 && !t.reachable(o.Target) {
			// The old content is nowhere else, and its place cannot be
			// reached: another program moved or replaced a directory on
			// the way. Kept, and said.
			t.keptOld = append(t.keptOld, fmt.Sprintf("the old content of %s is kept at %s: another program moved or replaced its directory", o.Target, o.Backup))
			continue
		}
		keep(o.Backup, t.unlink(o.Backup))
	}
	for n := len(j.Dirs) - 1; n >= 0; n-- {
		d := j.Dirs[n]
		if err := t.step("rmdir " + d.Path); err != nil {
			return err
		}
		for _, at := range t.dirPlaces(n) {
			// rmdir: never a file or a symlink, never a directory that
			// holds something (another program's files stay, and it).
			err := t.rmdir(at)
			if errors.Is(err, fs.ErrExist) || isNotEmpty(err) {
				err = nil
			}
			keep(at, err)
		}
	}
	if first != nil {
		return first
	}
	if err := t.syncDirs(); err != nil {
		return err
	}
	if err := t.removeJournal(); err != nil {
		return err
	}
	if len(t.keptOld) > 0 {
		return &keptError{t.keptOld}
	}
	return nil
}

// keptError is a rollback that got to its end but could not put some old
// content back: where it is instead.
type keptError struct{ notes []string }

func (e *keptError) Error() string { return strings.Join(e.notes, "; ") }

// dirPlaces are the names of directory n that are provably the
// transaction's: where it was staged and where it was placed, each only
// when it is the inode recorded, or, before any was recorded, a directory
// under a staging name of the transaction (or, for a journal of an earlier
// rowkit that made it in place, an empty directory at its path).
func (t *tx) dirPlaces(n int) []string {
	d := t.j.Dirs[n]
	var out []string
	staged := t.dirStaged(n)
	for _, at := range []string{staged, d.Path} {
		if at == d.Path && staged != d.Path && d.ID == nil {
			continue // never placed before it was recorded
		}
		st, err := t.lstat(at)
		if err != nil || !st.isDir() {
			continue
		}
		if d.ID != nil && st.id != *d.ID {
			continue
		}
		out = append(out, at)
		if staged == d.Path {
			break
		}
	}
	return out
}
