package txn

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/rowkit/rowkit/internal/regfile"
)

// writeNew creates name (it must not exist), writes what content returns
// (given the open file, so that the content may name the file's identity),
// sets mode and fsyncs.
func (t *tx) writeNew(name string, mode fs.FileMode, content func(*os.File) ([]byte, error)) error {
	if err := t.step("create " + name); err != nil {
		return err
	}
	f, err := t.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	err = t.step("write " + name)
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
		if err = t.step("fsync " + name); err == nil {
			err = f.Sync()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// openDir opens a directory of the root without blocking: a FIFO swapped
// in for it fails with ENOTDIR instead of waiting for a writer.
func openDir(root *os.Root, dir string) (*os.File, error) {
	return root.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
}

func (t *tx) syncDir(dir string) error {
	if err := t.step("fsync dir " + dir); err != nil {
		return err
	}
	f, err := openDir(t.root, dir)
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
func (t *tx) syncDirs() error {
	seen := map[string]bool{}
	var ds []string
	for _, d := range t.j.Dirs {
		ds = append(ds, path.Dir(d))
	}
	for _, o := range t.j.Ops {
		ds = append(ds, path.Dir(o.Target))
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

// openRegular opens name in root for reading: a regular file (refused
// otherwise without blocking), the very file recorded as id when id is
// set. It returns the file, to close, and the reader to read it through.
func openRegular(root *os.Root, name string, id *fileID) (*os.File, io.Reader, error) {
	f, fi, err := regfile.Open(root.Lstat, root.OpenFile, name)
	if err != nil {
		return nil, nil, err
	}
	if id != nil {
		if got, ok := idOf(fi); !ok || got != *id {
			f.Close()
			return nil, nil, fmt.Errorf("%s is not the file the transaction recorded", name)
		}
	}
	return f, regfile.Reader(f), nil
}

// readRegular reads openRegular's file, at most limit bytes and one more
// (so that a longer file shows as different).
func readRegular(root *os.Root, name string, id *fileID, limit int64) ([]byte, error) {
	f, r, err := openRegular(root, name, id)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(r, limit+1))
}

// sumRegular is readRegular's file hashed as it streams, never held whole:
// its size (counted to limit and one byte more) and the hex SHA-256 of what
// was read. A commit checks files as large as the ones it writes, and
// reading each whole again would multiply the memory it needs.
func sumRegular(root *os.Root, name string, id *fileID, limit int64) (int64, string, error) {
	f, r, err := openRegular(root, name, id)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(r, limit+1))
	if err != nil {
		return 0, "", err
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// equalRegular reports whether openRegular's file holds exactly want,
// compared as it streams.
func equalRegular(root *os.Root, name string, id *fileID, want []byte) (bool, error) {
	f, r, err := openRegular(root, name, id)
	if err != nil {
		return false, err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if n > len(want) || string(buf[:n]) != string(want[:n]) {
				return false, nil
			}
			want = want[n:]
		}
		if err == io.EOF {
			return len(want) == 0, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// forward makes the decided transaction true: every write renamed into
// place, then every delete. Each step is idempotent. Right before each
// rename or removal the target is proven unchanged (verify), and after all
// of them every replaced file once more (through its backup); a change
// stops the transaction with a *ChangedError.
func (t *tx) forward() error {
	root := t.root
	now := make([]bool, len(t.j.Ops)) // replaced or removed by this call
	for i, o := range t.j.Ops {
		if o.Temp == "" {
			continue
		}
		if _, err := root.Lstat(o.Temp); errors.Is(err, fs.ErrNotExist) {
			continue // renamed already
		}
		if !sameID(root, o.Temp, o.TempID) {
			return fmt.Errorf("%s is not the file this transaction staged", o.Temp)
		}
		if err := t.step("rename " + o.Target); err != nil {
			return err
		}
		if o.Backup == "" {
			if err := renameNoReplace(root, o.Temp, o.Target); err != nil {
				return err
			}
			continue
		}
		if err := t.verify(o); err != nil {
			return err
		}
		if err := root.Rename(o.Temp, o.Target); err != nil {
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
		tf, err1 := root.Lstat(o.Target)
		bf, err2 := root.Lstat(o.Backup)
		if err1 != nil || err2 != nil {
			continue // deleted already (the backup goes last, in finish)
		}
		if !os.SameFile(tf, bf) {
			if t.changes == nil {
				// In a recovery this may be a file created after the
				// delete: the transaction may have been acknowledged
				// already and is never undone for it. Left alone.
				continue
			}
			return changed(root, o.Target, regfile.Check(tf))
		}
		if err := t.step("remove " + o.Target); err != nil {
			return err
		}
		if err := t.verify(o); err != nil {
			return err
		}
		if err := root.Remove(o.Target); err != nil && !errors.Is(err, fs.ErrNotExist) {
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
		if !now[i] || o.Backup == "" || o.OldSum == "" || !sameID(root, o.Backup, o.BackupID) {
			continue
		}
		if err := t.step("recheck " + o.Target); err != nil {
			return err
		}
		size, sum, err := sumRegular(root, o.Backup, o.BackupID, o.OldSize)
		if err != nil {
			return err
		}
		if size != o.OldSize || sum != o.OldSum {
			data, _ := readRegular(root, o.Backup, o.BackupID, maxShown)
			return &ChangedError{Target: o.Target, Now: data}
		}
	}
	return t.syncDirs()
}

// verify proves that o's target is still the file the transaction backed
// up, holding the content the change was based on. (A write landing
// between this check and the rename that follows is caught by the recheck
// at the end of forward; see the package comment for what is left.)
func (t *tx) verify(o op) error {
	root := t.root
	fi, err := lstatTarget(root, o.Target)
	if err != nil {
		return err
	}
	if id, ok := idOf(fi); !ok || o.BackupID == nil || id != *o.BackupID {
		return changed(root, o.Target, nil) // replaced by another file
	}
	if o.OldSum == "" {
		return nil // a journal without sums: identity is all it recorded
	}
	if fi.Size() != o.OldSize {
		return changed(root, o.Target, nil)
	}
	size, sum, err := sumRegular(root, o.Target, o.BackupID, o.OldSize)
	if err != nil {
		if _, ok := regfile.AsNotRegular(err); ok {
			return changed(root, o.Target, err)
		}
		return err
	}
	if size != o.OldSize || sum != o.OldSum {
		return changed(root, o.Target, nil)
	}
	return nil
}

// renameNoReplace renames from to to in one directory of root, failing with
// a *ChangedError when to exists: a file another writer created there is
// never replaced.
func renameNoReplace(root *os.Root, from, to string) error {
	dir := path.Dir(to)
	d, err := openDir(root, dir)
	if err != nil {
		return err
	}
	defer d.Close()
	rc, err := d.SyscallConn()
	if err != nil {
		return err
	}
	var rerr error
	if err := rc.Control(func(fd uintptr) {
		rerr = unix.Renameat2(int(fd), path.Base(from), int(fd), path.Base(to), unix.RENAME_NOREPLACE)
	}); err != nil {
		return err
	}
	switch {
	case rerr == nil:
		return nil
	case errors.Is(rerr, syscall.EEXIST):
		return changed(root, to, nil)
	case errors.Is(rerr, syscall.EINVAL), errors.Is(rerr, syscall.ENOSYS):
		// A file system without RENAME_NOREPLACE: check, then rename.
		if _, err := root.Lstat(to); !errors.Is(err, fs.ErrNotExist) {
			return changed(root, to, nil)
		}
		return root.Rename(from, to)
	}
	return &fs.PathError{Op: "renameat2", Path: to, Err: rerr}
}

// finish removes the backups and the journal of a completed transaction.
// A backup is dropped even when the journal is no longer this
// transaction's: the work is done, and the backup is identified by its
// recorded inode.
func (t *tx) finish() error {
	var lost *errLost
	for _, o := range t.j.Ops {
		if o.Backup != "" {
			if err := t.step("drop backup " + o.Target); err != nil && !errors.As(err, &lost) {
				return err
			}
			if sameID(t.root, o.Backup, o.BackupID) {
				t.root.Remove(o.Backup)
			}
		}
	}
	return t.removeJournal()
}

// rollback restores every file as it was: old content back from its
// backup, new files removed, staging removed, created directories removed
// when empty. Each step is idempotent, and a target that is no longer the
// transaction's own (another writer replaced it) is left as it is. Errors
// are returned, not hidden: the journal stays and the next run tries
// again.
func (t *tx) rollback() error {
	root, j := t.root, t.j
	var first error
	keep := func(err error) {
		if err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
			first = err
		}
	}
	// A staging file is removed only when it is the one recorded, or,
	// before the decision (when none is recorded yet), a regular file of
	// ours: the journal itself was proven ours before this runs.
	mine := func(name string, id *fileID) bool {
		if id != nil {
			return sameID(root, name, id)
		}
		fi, err := root.Lstat(name)
		return err == nil && fi.Mode().IsRegular() && ownedByMe(fi)
	}
	for _, o := range j.Ops {
		if err := t.step("restore " + o.Target); err != nil {
			return err
		}
		if j.State != stateRevert {
			// Before the decision no target was touched: the backup is an
			// extra link, and the target may meanwhile be another writer's.
			if o.Backup != "" && mine(o.Backup, o.BackupID) {
				keep(root.Remove(o.Backup))
			}
			if o.Temp != "" && mine(o.Temp, o.TempID) {
				keep(root.Remove(o.Temp))
			}
			continue
		}
		switch {
		case o.Temp != "":
			if _, err := root.Lstat(o.Temp); err == nil {
				// Never renamed: the target is untouched.
				if sameID(root, o.Temp, o.TempID) {
					keep(root.Remove(o.Temp))
				}
			} else if sameID(root, o.Target, o.TempID) {
				// The new content is in place: put the old one back.
				if o.Backup == "" {
					keep(root.Remove(o.Target))
				} else if sameID(root, o.Backup, o.BackupID) {
					keep(root.Rename(o.Backup, o.Target))
				} else {
					keep(fmt.Errorf("cannot restore %s: its backup %s is gone", o.Target, o.Backup))
				}
			}
			// Otherwise the target is not the transaction's: restored
			// already, or another writer's since.
		case o.Delete:
			_, terr := root.Lstat(o.Target)
			if errors.Is(terr, fs.ErrNotExist) && sameID(root, o.Backup, o.BackupID) {
				// Deleted: link the old file back, unless another writer
				// has created one there since.
				if err := root.Link(o.Backup, o.Target); err != nil && !errors.Is(err, fs.ErrExist) {
					keep(err)
					continue
				}
			}
		}
		if o.Backup != "" && sameID(root, o.Backup, o.BackupID) {
			keep(root.Remove(o.Backup))
		}
	}
	for i := len(j.Dirs) - 1; i >= 0; i-- {
		if err := t.step("rmdir " + j.Dirs[i]); err != nil {
			return err
		}
		root.Remove(j.Dirs[i]) // fails, rightly, when not empty
	}
	if first != nil {
		return first
	}
	if err := t.syncDirs(); err != nil {
		return err
	}
	return t.removeJournal()
}
