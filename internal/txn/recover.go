package txn

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/workspace"
)

// Action is what a recovery found and did.
type Action string

// Recovery actions.
const (
	None       Action = "none"        // no transaction was pending
	Completed  Action = "completed"   // a decided transaction was rolled forward
	RolledBack Action = "rolled_back" // an undecided (or failed) transaction was rolled back
	Ignored    Action = "ignored"     // a journal that is not provably rowkit's own was left alone
	Busy       Action = "busy"        // another process held the transaction for the whole wait
)

// Recovery is the result of settling a workspace's pending transaction.
type Recovery struct {
	Action Action `json:"action" jsonschema:"none, completed, rolled_back, ignored (a journal that is not rowkit's own, left alone) or busy (another rowkit process is committing)"`
	ID     string `json:"id,omitempty" jsonschema:"the settled transaction's id"`
	Files  int    `json:"files,omitempty" jsonschema:"how many files the settled transaction changes"`
	Reason string `json:"reason,omitempty" jsonschema:"ignored: why the journal is not provably rowkit's own; rolled_back after the decision: what changed"`
	// StaleTemp is set when a .rowkit/journal.tmp that an interrupted
	// run left (it never decided anything) was removed.
	StaleTemp bool `json:"stale_temp_removed,omitempty" jsonschema:"a .rowkit/journal.tmp an interrupted run left was removed"`
}

// Did reports whether the recovery changed anything on disk.
func (r Recovery) Did() bool {
	return r.Action == Completed || r.Action == RolledBack || r.StaleTemp
}

func (r Recovery) String() string {
	switch r.Action {
	case Completed:
		return fmt.Sprintf("completed the interrupted transaction %s (%d files)", r.ID, r.Files)
	case RolledBack:
		s := fmt.Sprintf("rolled back the interrupted transaction %s (%d files)", r.ID, r.Files)
		if r.Reason != "" {
			s += ": " + r.Reason
		}
		return s
	case Ignored:
		return fmt.Sprintf("ignored %s: not a transaction rowkit staged here (%s)", journalName, r.Reason)
	case Busy:
		return errBusy.Error()
	}
	if r.StaleTemp {
		return "removed " + journalTemp + ", which an interrupted run left (it had decided nothing)"
	}
	return "nothing to recover"
}

// Err is the error of rowkit recover for a journal it could not settle:
// nil unless the recovery was ignored or busy.
func (r Recovery) Err() error { return r.refuse("it was left alone", "nothing was done") }

// Refusal is the error of a writer that this recovery leaves a journal in
// the way of: nil unless it was ignored or busy.
func (r Recovery) Refusal() error {
	return r.refuse("nothing was written: remove it to edit in this workspace", "nothing was written")
}

// refuse is Err's and Refusal's error, ending with what was (not) done
// about an ignored journal and about a busy one.
func (r Recovery) refuse(ignored, busy string) error {
	switch r.Action {
	case Ignored:
		return errs.New(CodeJournal, r.String()+"; "+ignored)
	case Busy:
		return errs.Errorf(CodeJournal, "%s (it held the workspace for %v); %s, try again", r, lockWait, busy)
	}
	return nil
}

// Pending reports whether a journal is pending in the workspace: one
// Lstat, for a writer deciding whether to settle before it reads, or a
// reader that wants to say so (a reader never settles).
func Pending(ws *workspace.Root) bool { return pending(ws.Dir()) }

// Recover completes or rolls back a transaction a crash left in the
// workspace, under the workspace lock: a transaction whose writer is alive
// is waited for (up to 10 s, or until ctx ends) and never touched; if it
// outlasts the wait the result is Busy. A journal that is not provably
// rowkit's own is left alone (Ignored). The error reports a journal that
// could not be settled (code journal) or cancellation.
func Recover(ctx context.Context, ws *workspace.Root) (Recovery, error) {
	root := ws.FS()
	if _, err := root.Lstat(workspace.StateDir); errors.Is(err, fs.ErrNotExist) {
		return Recovery{Action: None}, nil // no state: no transaction was ever staged here
	}
	lk, err := acquire(ctx, ws)
	if err != nil {
		if rec, ok := lockRecovery(err); ok {
			return rec, nil
		}
		if errs.Is(err, errs.Cancelled) {
			return Recovery{}, err
		}
		if j, why := ownJournal(ws); j == nil && why == "" && !pending(ws.Dir()) {
			// A state directory this user cannot lock (read-only, say)
			// with nothing in it to settle.
			return Recovery{Action: None}, nil
		}
		return Recovery{}, errs.Errorf(CodeJournal, "cannot take the workspace lock: %v", regfile.Cause(err))
	}
	defer lk.release()
	return settle(ws, lk)
}

// settle acts on the pending journal, the lock held: its writer is gone.
func settle(ws *workspace.Root, lk *lock) (Recovery, error) {
	root := ws.FS()
	j, why := ownJournal(ws)
	if j == nil {
		if why != "" {
			return Recovery{Action: Ignored, Reason: why}, nil
		}
		return Recovery{Action: None, StaleTemp: removeStaleTemp(root)}, nil
	}
	self := j.Self
	t := &tx{ws: ws, root: root, lk: lk, j: j, onDisk: &self}
	rec := Recovery{ID: j.ID, Files: len(j.Ops)}
	fail := func(what string, err error) (Recovery, error) {
		return Recovery{}, blocked(what, j.ID, err)
	}
	if j.State == stateCommit {
		err := t.forward()
		if err == nil {
			if err := t.finish(); err != nil {
				return fail("complete", err)
			}
			rec.Action = Completed
			return rec, nil
		}
		var ce *ChangedError
		if !errors.As(err, &ce) {
			return fail("complete", err)
		}
		// A target changed after the decision: completing would overwrite
		// another writer. The transaction was never acknowledged (its
		// writer died before the end), so it is rolled back instead.
		rec.Reason = ce.Target + " changed on disk after the transaction was decided"
		j.State = stateRevert
		if err := t.writeJournal(); err != nil {
			return fail("roll back", err)
		}
	}
	err := t.rollback()
	var kept *keptError
	if errors.As(err, &kept) {
		rec.Reason = strings.TrimPrefix(rec.Reason+"; "+kept.Error(), "; ")
		err = nil
	}
	if err != nil {
		return fail("roll back", err)
	}
	rec.Action = RolledBack
	return rec, nil
}

// blocked is the error of a recovery that could not get to its end: what
// stopped it, on which path, and what to do. Whatever the transaction
// does not own it leaves alone and goes on, so only the system refusing a
// step on one of its own files (permissions, a read-only or full file
// system, an I/O error) or the lock or journal taken from under it stops
// it.
func blocked(what, id string, err error) error {
	var lost *errLost
	if errors.As(err, &lost) {
		return errs.Errorf(CodeJournal, "cannot %s the pending transaction %s: %v", what, id, lost).
			WithHint("another program changed " + workspace.StateDir + " meanwhile; run `rowkit recover` again")
	}
	where := ""
	var be *blockedError
	var pe *fs.PathError
	switch {
	case errors.As(err, &be):
		where = be.path
	case errors.As(err, &pe):
		where = pe.Path
	}
	e := errs.Errorf(CodeJournal, "cannot %s the pending transaction %s: %v", what, id, err)
	if where == "" {
		return e.WithHint("run `rowkit recover` again; until the transaction is settled, hpatch and the MCP edit tool refuse to write in this workspace")
	}
	return e.WithHint(fmt.Sprintf("the system refused a step on %s: make it and its directory writable again (or the file system), then run `rowkit recover`; until then hpatch and the MCP edit tool refuse to write in this workspace", where))
}

// removeStaleTemp removes a journal.tmp that a run killed while writing the
// journal left behind, when it is rowkit's (regular, owned by this user,
// mode 0600). Only under the lock: a live writer's is never touched.
func removeStaleTemp(root *os.Root) bool {
	fi, err := root.Lstat(journalTemp)
	if err != nil || !fi.Mode().IsRegular() || !ownedByMe(fi) || fi.Mode().Perm() != 0o600 {
		return false
	}
	return root.Remove(journalTemp) == nil
}
