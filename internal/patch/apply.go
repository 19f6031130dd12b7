package patch

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/lang"
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
	// The default check has nothing to say of a file in no language it
	// parses: its new content is then never joined into one buffer.
	checks := func(path string) bool {
		f := lang.Lookup(path)
		return opts.Check != nil || f != nil && f != lang.Markdown
	}
	s, fails := Parse(script)
	if len(fails) > 0 {
		return reject(fails)
	}
	// An empty script is almost always a caller's mistake (a heredoc that
	// lost its body, a file that was not written): reporting "unchanged"
	// would read as success.
	if len(s.Commands) == 0 {
		return nil, errs.Usagef("the script is empty: it has no commands (a script selects a file with in PATH or new PATH, then edits it)")
	}
	pl, err := build(ctx, root, s)
	if err != nil {
		return nil, stopped(err)
	}
	if len(pl.fails) > 0 {
		return reject(pl.fails)
	}
	fails, err = pl.checkSyntax(ctx, check, checks)
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
	if opts.DryRun {
		res.Status = StatusDryRun
		if res.Diff, err = pl.diff(ctx); err != nil {
			return nil, stopped(err)
		}
		return res, nil
	}
	held := 0
	for _, f := range pl.files {
		if f.base != nil || !f.created {
			f.baseSum = txn.BaseOf(f.base)
		}
		held += len(f.base)
		f.release()
	}
	if held >= 16<<20 {
		// The baselines are dropped: collect them now, so that the
		// commit, which streams each file's unchanged content from the
		// file itself, reuses their memory instead of growing the heap.
		runtime.GC()
	}
	changes := pl.changes()
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
func (pl *plan) checkSyntax(ctx context.Context, check Checker, checks func(path string) bool) ([]Failure, error) {
	var fails []Failure
	for _, f := range pl.files {
		if f.deleted || !f.diff || !checks(f.dest) {
			continue
		}
		out := f.view.Bytes()
		line, msg, bad := check(ctx, f.dest, out)
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
		x, _ := rows.NewIndex(out)
		var prop []rows.Record
		for l := max(1, line-2); x != nil && l <= min(x.Count(), line+2); l++ {
			prop = append(prop, rows.ClampedRecord(l, x.Text(l)))
		}
		fail := Failure{Op: "type", Path: f.path, Reason: ReasonLanguageSyntax,
			Message: fmt.Sprintf("the new content does not parse: line %d: %s", line, msg), Proposed: prop}
		var err error
		var e *edit
		if fail.Op, fail.Command, fail.Path, e, err = f.blame(ctx, check, line); err != nil {
			return nil, err
		}
		if e != nil {
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

// blame is the command a language failure at line l of the new content is
// reported against: the mv that gave the file a language its content (as
// it was) does not parse in; else the edit that most plausibly broke the
// line; else, for a file the script creates without content that parses
// (an empty Go file has no package clause), its new; else its last mv.
func (f *fileState) blame(ctx context.Context, check Checker, l int) (op string, n int, path string, e *edit, err error) {
	if f.mv != nil && !f.created {
		_, _, bad := check(ctx, f.dest, f.base)
		if err := ctx.Err(); err != nil {
			return "", 0, "", nil, err
		}
		if bad {
			return "mv", f.mv.N, f.mv.Path, nil, nil
		}
	}
	if e := f.culprit(l); e != nil {
		return e.cmd.Op(), e.cmd.N, e.path, e, nil
	}
	if f.created {
		return "new", f.selCmd, f.path, nil, nil
	}
	if f.mv != nil {
		return "mv", f.mv.N, f.mv.Path, nil, nil
	}
	return "type", 0, f.path, nil, nil
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
	x := f.view.lines()
	if len(f.edits) == 0 && f.eof == nil {
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
// A new content is rendered at commit time from its view: the baseline's
// ranges are copied from the file being replaced (or, for a file moved
// with edits, from its source, From), never held whole.
func (pl *plan) changes() []txn.Change {
	var out []txn.Change
	at := map[string]int{} // target -> index in out
	put := func(c txn.Change) {
		if i, ok := at[c.Target]; ok {
			// A file deleted or moved away and another written in its
			// place: one write over the old content.
			// The delete says what was there; the write, what goes
			// there (whichever file of the script came first).
			del, write := out[i], c
			if !del.Delete {
				del, write = write, del
			}
			write.Base = del.Base
			out[i] = write
			return
		}
		at[c.Target] = len(out)
		out = append(out, c)
	}
	for _, f := range pl.files {
		render := f.view.render
		switch {
		case f.deleted && f.created:
		case f.deleted:
			put(txn.Change{Target: f.target, Delete: true, Base: f.baseSum})
		case f.created:
			put(txn.Change{Target: f.dest, Render: render, Mode: f.mode})
		case f.dest != f.target:
			put(txn.Change{Target: f.dest, Render: render, From: f.target, Mode: f.mode})
			put(txn.Change{Target: f.target, Delete: true, Base: f.baseSum})
		case f.diff:
			put(txn.Change{Target: f.target, Render: render, Mode: f.mode, Base: f.baseSum})
		}
	}
	for _, l := range pl.links {
		switch {
		case l.deleted:
			out = append(out, txn.Change{Target: l.at, Delete: true, Link: true, Old: []byte(l.text)})
		case l.dest != l.at:
			out = append(out, txn.Change{Target: l.dest, Link: true, Data: []byte(l.text)},
				txn.Change{Target: l.at, Delete: true, Link: true, Old: []byte(l.text)})
		}
	}
	return out
}

// linkActions are the net actions on the symlinks the script removed or
// moved, each with the command that selected it.
func (pl *plan) linkActions() ([]FileAction, []int) {
	var acts []FileAction
	var at []int
	for _, l := range pl.links {
		switch {
		case l.deleted:
			acts = append(acts, FileAction{Action: "deleted", Path: l.origin, Symlink: true, LinkTo: l.text})
		case l.dest != l.at:
			acts = append(acts, FileAction{Action: "moved", Path: l.path, From: l.origin, Symlink: true, LinkTo: l.text})
		default:
			continue
		}
		at = append(at, l.selCmd)
	}
	return acts, at
}

// result reports the net file actions and the rows at every edit's edges.
func (pl *plan) result() *Result {
	res := &Result{Files: []FileAction{}}
	links, linkCmds := pl.linkActions()
	// The actions come in script order: a link's where its selection is.
	addLinks := func(before int) {
		for len(links) > 0 && linkCmds[0] < before {
			res.Files = append(res.Files, links[0])
			links, linkCmds = links[1:], linkCmds[1:]
		}
	}
	defer func() { addLinks(int(^uint(0) >> 1)) }()
	for _, f := range pl.files {
		addLinks(f.selCmd)
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
		rec := &recorder{x: f.view.lines()}
		all := append([]*edit(nil), f.edits...)
		if f.eof != nil {
			all = append(all, f.eof)
		}
		for _, e := range all {
			if e.outEnd == e.outStart && e.start == e.end && e != f.eof {
				continue // an empty insertion
			}
			res.Edits = append(res.Edits, EditRows{Command: e.cmd.N, Op: e.cmd.Op(), Path: f.path, Rows: edgeRows(rec, e), Moved: e.shift})
		}
		f.view.unindex() // what the result needed of it is taken
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
	size := x.Len()
	if e.outEnd > e.outStart {
		a, b := x.LineAt(e.outStart), x.LineAt(e.outEnd-1)
		lines = []int{a - 1, a, b, b + 1}
	} else {
		p := e.outStart
		l := x.LineAt(min(p, size-1))
		if p >= size {
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
