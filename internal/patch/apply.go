package patch

import (
	"context"
	"errors"
	"fmt"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/txn"
	"github.com/rowkit/rowkit/internal/workspace"
)

// Exit statuses of the hpatch command.
const (
	ExitRejected     = 1
	ExitCommitFailed = 3
)

// Code of the error Apply returns for a rejected script (the Failures say
// why, each with its reason code).
const CodeRejected = "rejected"

// Options tune Apply.
type Options struct {
	DryRun bool    // resolve and check, return the diff, write nothing
	Check  Checker // the syntax check; nil means LangChecker
	// Gofmt formats the Go files the script writes that were gofmt-clean
	// before it (and the ones it creates); Result.Gofmt shows the rows it
	// changed. Off, the engine writes exactly the script's bytes.
	Gofmt bool
}

// Apply runs an HPATCH/2 script in the workspace. It returns a Result
// whatever happened; the error is nil when the script applied (or had
// nothing to do), a rejection with code "rejected" (exit 1; the Result's
// Failures say why), a pending journal in the way (code journal, exit 1),
// a commit failure (exit 3; its message says where every file stands), or
// cancellation.
//
// Unless it is a dry run, a transaction a crash left pending is settled
// first, so that the script reads settled files; Result.Recovery says what
// was done. A dry run writes nothing, that included.
func Apply(ctx context.Context, root *workspace.Root, script string, opts Options) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, errs.New(errs.Cancelled, "cancelled before the script ran")
	}
	var rec *txn.Recovery
	if !opts.DryRun && txn.Pending(root) {
		r, err := txn.Recover(ctx, root)
		if err == nil {
			err = r.Refusal()
		}
		if err != nil {
			return &Result{Status: StatusFailed, Files: []FileAction{}}, err
		}
		if r.Did() {
			rec = &r
		}
	}
	res, err := apply(ctx, root, script, opts)
	if res != nil {
		res.Recovery = rec
	}
	return res, err
}

func apply(ctx context.Context, root *workspace.Root, script string, opts Options) (*Result, error) {
	check := opts.Check
	if check == nil {
		check = LangChecker
	}
	s, fails := Parse(script)
	if len(fails) > 0 {
		return reject(fails)
	}
	pl, err := build(ctx, root, s)
	if err != nil {
		return nil, stopped(err)
	}
	if len(pl.fails) > 0 {
		return reject(pl.fails)
	}
	fails, err = pl.checkSyntax(ctx, check)
	if err != nil {
		return nil, stopped(err)
	}
	if len(fails) > 0 {
		return reject(fails)
	}
	var formatted []FormatRows
	if opts.Gofmt {
		formatted = pl.gofmt()
	}
	res := pl.result()
	res.Gofmt = formatted
	changes := pl.changes()
	if opts.DryRun {
		res.Status = StatusDryRun
		if res.Diff, err = pl.diff(ctx); err != nil {
			return nil, stopped(err)
		}
		return res, nil
	}
	if len(changes) == 0 {
		res.Status = StatusUnchanged
		return res, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, errs.New(errs.Cancelled, "cancelled before anything was written")
	}
	err = txn.Commit(ctx, root, changes)
	var ce *txn.ChangedError
	switch {
	case errors.As(err, &ce):
		return reject([]Failure{pl.changedFailure(ce)})
	case errs.Is(err, txn.CodeJournal), errs.Is(err, errs.Cancelled):
		// A pending journal (foreign, busy, or one that would not settle)
		// stood in the way: nothing of this script was attempted.
		return &Result{Status: StatusFailed, Files: []FileAction{}}, err
	case err != nil:
		res := &Result{Status: StatusFailed, Files: []FileAction{}}
		if e, ok := errs.As(err); ok {
			return res, e.WithExit(ExitCommitFailed)
		}
		return res, errs.Errorf(txn.CodeCommit, "%v", err).WithExit(ExitCommitFailed)
	}
	res.Status = StatusApplied
	return res, nil
}

// stopped is the error of a script that ctx stopped before its commit.
func stopped(err error) error {
	return errs.New(errs.Cancelled, "cancelled before anything was written: "+err.Error())
}

func reject(fails []Failure) (*Result, error) {
	f := fails[0]
	msg := fmt.Sprintf("%d failure(s); first: command %d, reason %s", len(fails), f.Command, f.Reason)
	return &Result{Status: StatusRejected, Files: []FileAction{}, Failures: fails}, errs.New(CodeRejected, msg).WithExit(ExitRejected)
}

// checkSyntax parses every changed file that parsed before the script.
// A done ctx stops it (the checker's answer is then not trusted).
func (pl *plan) checkSyntax(ctx context.Context, check Checker) ([]Failure, error) {
	var fails []Failure
	for _, f := range pl.files {
		if f.deleted || !f.diff {
			continue
		}
		line, msg, bad := check(ctx, f.dest, f.out)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !bad {
			continue
		}
		if !f.created {
			_, _, wasBad := check(ctx, f.target, f.base)
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if wasBad {
				continue // already broken: not held to it
			}
		}
		e := f.culprit(line)
		x, _ := rows.NewIndex(f.out)
		var prop []rows.Record
		for l := max(1, line-2); x != nil && l <= min(x.Count(), line+2); l++ {
			prop = append(prop, rows.ClampedRecord(l, x.Text(l)))
		}
		fail := Failure{Op: "type", Path: f.path, Reason: ReasonLanguageSyntax,
			Message: fmt.Sprintf("the new content does not parse: line %d: %s", line, msg), Proposed: prop}
		if e != nil {
			fail.Command, fail.Op, fail.Path = e.cmd.N, e.cmd.Op(), e.path
			if x != nil {
				fail.Message = f.syntaxMessage(e, x, line, msg)
			}
			if !f.created {
				// The file's rows as they are around what the edit
				// targeted: the targets of a retry, without a read.
				fail.Rows = f.editContext(e)
			}
		}
		fails = append(fails, fail)
	}
	return fails, nil
}

// syntaxMessage says where the parser stopped relative to the text edit e
// wrote, in the new content x: a parser often reports an unclosed block
// where the next declaration starts, lines after the edit that opened it.
func (f *fileState) syntaxMessage(e *edit, x *rows.Index, l int, msg string) string {
	a := x.LineAt(e.outStart)
	b := x.LineAt(max(e.outStart, e.outEnd-1))
	what := fmt.Sprintf("rows %d-%d", e.startLine, e.endLine)
	switch {
	case f.created:
		what = "the new file"
	case e.insert:
		what = fmt.Sprintf("an insertion before row %d", e.startLine)
	case e.startLine == e.endLine:
		what = fmt.Sprintf("row %d", e.startLine)
	}
	lines := fmt.Sprintf("new lines %d-%d", a, b)
	if a == b {
		lines = fmt.Sprintf("new line %d", a)
	}
	wrote := fmt.Sprintf("the text command %d wrote in place of %s (%s)", e.cmd.N, what, lines)
	if e.insert || f.created {
		wrote = fmt.Sprintf("the text command %d wrote, %s (%s)", e.cmd.N, what, lines)
	}
	switch {
	case l >= a && l <= b:
		return fmt.Sprintf("the new content does not parse at line %d, line %d of %s: %s", l, l-a+1, wrote, msg)
	case l > b:
		return fmt.Sprintf("the new content does not parse: the parser stopped at line %d, %d line(s) after %s: %s", l, l-b, wrote, msg)
	}
	return fmt.Sprintf("the new content does not parse at line %d, %d line(s) before %s: %s", l, a-l, wrote, msg)
}

// editContext is the file's current rows around what e targeted, at most
// maxContextRows: both ends of a long span, so that a retry can name it.
func (f *fileState) editContext(e *edit) []rows.Record {
	a, b := e.startLine, max(e.endLine, e.startLine)
	n := f.idx.Count()
	if half := maxContextRows/2 - contextRadius; b-a+1 > 2*half {
		return f.records(append(lineRange(a-contextRadius, a+half-1, n), lineRange(b-half+1, b+contextRadius, n)...))
	}
	return f.context(a, b, contextRadius)
}

// culprit is the edit that most plausibly broke line l of the new content:
// the one whose new text covers it, else the nearest before it, else the
// first.
func (f *fileState) culprit(l int) *edit {
	x, err := rows.NewIndex(f.out)
	if err != nil || len(f.edits) == 0 && f.eof == nil {
		return nil
	}
	var best *edit
	bestLine := -1
	all := append(append([]*edit(nil), f.edits...), f.eof)
	for _, e := range all {
		if e == nil {
			continue
		}
		a := x.LineAt(e.outStart)
		b := x.LineAt(max(e.outStart, e.outEnd-1))
		if a <= l && l <= b {
			return e
		}
		if a <= l && a > bestLine {
			best, bestLine = e, a
		}
	}
	if best == nil {
		for _, e := range all {
			if e != nil {
				return e
			}
		}
	}
	return best
}

// changes are the plan's net file actions for the workspace transaction.
func (pl *plan) changes() []txn.Change {
	var out []txn.Change
	at := map[string]int{} // target -> index in out
	put := func(c txn.Change) {
		if i, ok := at[c.Target]; ok {
			// A file deleted or moved away and another written in its
			// place: one write over the old content.
			prev := out[i]
			if prev.Delete {
				c.Old = prev.Old
			} else {
				c.Old = prev.Old
				c.Data, c.Mode = prev.Data, prev.Mode
			}
			c.Delete = false
			out[i] = c
			return
		}
		at[c.Target] = len(out)
		out = append(out, c)
	}
	for _, f := range pl.files {
		switch {
		case f.deleted && f.created:
		case f.deleted:
			put(txn.Change{Target: f.target, Delete: true, Old: f.base})
		case f.created:
			put(txn.Change{Target: f.dest, Data: f.out, Mode: f.mode})
		case f.dest != f.target:
			put(txn.Change{Target: f.dest, Data: f.out, Mode: f.mode})
			put(txn.Change{Target: f.target, Delete: true, Old: f.base})
		case f.diff:
			put(txn.Change{Target: f.target, Data: f.out, Mode: f.mode, Old: f.base})
		}
	}
	return out
}

// result reports the net file actions and the rows at every edit's edges.
func (pl *plan) result() *Result {
	res := &Result{Files: []FileAction{}}
	for _, f := range pl.files {
		switch {
		case f.deleted && f.created:
			continue
		case f.deleted:
			res.Files = append(res.Files, FileAction{Action: "deleted", Path: f.origin})
			continue
		case f.created:
			res.Files = append(res.Files, FileAction{Action: "created", Path: f.path})
		case f.dest != f.target:
			res.Files = append(res.Files, FileAction{Action: "moved", Path: f.path, From: f.origin})
		case f.diff:
			res.Files = append(res.Files, FileAction{Action: "modified", Path: f.path})
		default:
			continue
		}
		x, err := rows.NewIndex(f.out)
		if err != nil {
			continue
		}
		rec := &recorder{x: x}
		all := append([]*edit(nil), f.edits...)
		if f.eof != nil {
			all = append(all, f.eof)
		}
		for _, e := range all {
			if e.outEnd == e.outStart && e.start == e.end && e != f.eof {
				continue // an empty insertion
			}
			res.Edits = append(res.Edits, EditRows{Command: e.cmd.N, Op: e.cmd.Op(), Path: f.path, Rows: edgeRows(rec, e)})
		}
	}
	return res
}

// edgeRows are the rows before and after an edit's new text and its first
// and last rows.
func edgeRows(rec *recorder, e *edit) []rows.Record {
	x := rec.x
	n := x.Count()
	if n == 0 {
		return []rows.Record{}
	}
	var lines []int
	src := x.Src()
	if e.outEnd > e.outStart {
		a, b := x.LineAt(e.outStart), x.LineAt(e.outEnd-1)
		lines = []int{a - 1, a, b, b + 1}
	} else {
		p := e.outStart
		l := x.LineAt(min(p, len(src)-1))
		if p >= len(src) {
			lines = []int{n}
		} else if p == x.Start(l) {
			lines = []int{l - 1, l} // deleted between two lines
		} else {
			lines = []int{l - 1, l, l + 1}
		}
	}
	out := []rows.Record{}
	last := 0
	for _, l := range lines {
		if l < 1 || l > n || l <= last {
			continue
		}
		last = l
		out = append(out, rec.record(l))
	}
	return out
}

// changedFailure reports a file another writer changed between the
// baseline and the commit, with its fresh rows around the script's edits.
func (pl *plan) changedFailure(ce *txn.ChangedError) Failure {
	for _, f := range pl.files {
		if f.target != ce.Target && f.dest != ce.Target {
			continue
		}
		fl := Failure{Command: f.selCmd, Op: "in", Path: f.path, Reason: ReasonRowStale,
			Message: fmt.Sprintf("%s changed on disk while the script ran (another writer); nothing was written, rerun against the rows below", f.path)}
		if f.created || f.dest == ce.Target && f.target != ce.Target {
			fl.Op = "new"
			fl.Message = fmt.Sprintf("%s was created by another writer while the script ran; nothing was written", f.path)
		}
		if ce.Kind != "" {
			fl.Message = fmt.Sprintf("%s changed on disk while the script ran (it is %s now); nothing was written", f.path, ce.Kind)
		}
		x, err := rows.NewIndex(ce.Now)
		if err != nil {
			return fl
		}
		var lines []int
		for _, e := range f.edits {
			lines = append(lines, lineRange(e.startLine-1, e.endLine+1, x.Count())...)
		}
		now := &fileState{idx: x}
		fl.Rows = now.records(lines)
		for i := range fl.Rows {
			fl.Rows[i].Path = ""
		}
		return fl
	}
	return Failure{Reason: ReasonRowStale, Path: ce.Target, Op: "in", Message: ce.Error()}
}
