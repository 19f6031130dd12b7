package patch

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/txn"
	"github.com/rowkit/rowkit/internal/workspace"
)

// newFileMode is the mode of a file the script creates.
const newFileMode fs.FileMode = 0o644

// files is what the planner needs of a workspace.
type files interface {
	Load(req string) (*workspace.File, error)
	Free(req string) (clean, target string, err error)
	Resolve(req string) (clean, target string, err error)
	Symlink(req string) (clean, at, text string, ok bool, err error)
	LinkTarget(at, text string) (target string, exists bool, err error)
}

// fileState is one file the script touches: its baseline (the bytes when
// the script started) and what the script does to it.
type fileState struct {
	origin string // clean path at the start; "" for a file the script creates
	target string // canonical target of origin
	path   string // clean path now (after moves)
	dest   string // canonical target now
	base   []byte
	idx    *rows.Index
	hashes []uint16
	byHash *hashIndex
	rec    *recorder // the baseline's records
	mode   fs.FileMode

	created bool     // by new
	deleted bool     // by rm
	mv      *Command // the last mv of it, if any
	broken  bool     // selecting it failed; its commands are not judged further
	why     string   // a link to nothing selected for rm: why it cannot be edited
	selCmd  int      // the command that selected or created it

	pending []*pending
	edits   []*edit
	eof     *edit // type EOF: the final terminator, applied last

	view    *view     // the new content, as pieces of the baseline and values
	baseSum *txn.Base // the baseline's size and hash, for the commit
	diff    bool      // the new content differs from base

	formatted bool // gofmt rewrote out after the edits (gofmt.go)
}

// pending is a type or add command waiting for its targets to resolve.
type pending struct {
	cmd  *Command
	path string // the file's path as the script named it at that command
}

// edit is one resolved change: replace base[start:end] with value (an
// insertion when insert is set and start == end).
type edit struct {
	cmd        *Command
	path       string
	start, end int
	value      string
	insert     bool
	seq        int
	outStart   int // where value landed in the new content
	outEnd     int
	startLine  int // baseline lines the edit touches, for messages
	endLine    int
	replacedTo int // for rows targets: the last baseline line replaced
	shift      int // how far its stale rows had moved (relocated); 0 when they had not
}

// linkState is a symbolic link the script selected by its own name (in
// PATH, PATH's last component a link). rm and mv act on the link itself,
// as they do in a shell; type and add edit the file it leads to (file).
// Acting on what the link points to would delete or move a file the
// script never named, and leave the link dangling.
type linkState struct {
	origin  string // clean path at the start
	at      string // canonical location at the start
	text    string // what it holds
	path    string // clean path now
	dest    string // canonical location now
	file    *fileState
	selCmd  int
	deleted bool
}

// plan is a resolved script: every file's new content, or the failures.
type plan struct {
	files []*fileState
	links []*linkState
	fails []Failure
}

// build resolves a parsed script against the workspace. It stops with
// ctx's error between commands and files: a target's search is linear in
// its file, but a script may hold many.
func build(ctx context.Context, ws files, s *Script) (*plan, error) {
	pl := &plan{}
	byPath := map[string]*fileState{}   // live files by current clean path
	byTarget := map[string]*fileState{} // every file by canonical target at the start
	byLink := map[string]*linkState{}   // every link by canonical location at the start
	linkAt := map[string]*linkState{}   // live links by current clean path
	var cur *fileState
	var curLink *linkState // the link cur was selected by, if any
	fail := func(c *Command, path, reason, msg string, rs []rows.Record) {
		pl.fails = append(pl.fails, Failure{Command: c.N, Op: c.Op(), Path: path, Reason: reason, Message: msg, Rows: rs})
	}
	// taken reports which live file of the script holds canonical target t.
	taken := func(t string) *fileState {
		for _, f := range pl.files {
			if !f.deleted && !f.broken && f.dest == t {
				return f
			}
		}
		return nil
	}
	linkTaken := func(t string) *linkState {
		for _, l := range pl.links {
			if !l.deleted && l.dest == t {
				return l
			}
		}
		return nil
	}
	// unlink re-homes the file l leads to when it was known by l's path:
	// the link goes away from there (removed or moved), the file keeps its
	// own path.
	unlink := func(l *linkState) {
		delete(linkAt, l.path)
		f := l.file
		if !f.broken && f.path == l.path && f.dest == f.target {
			delete(byPath, f.path)
			f.path, f.origin = f.target, f.target
			byPath[f.path] = f
		}
	}
	// free finds where a new or moved file may go: the path must be free
	// on disk, or freed earlier in this script.
	free := func(c *Command) (string, string, bool) {
		clean, target, err := ws.Free(c.Path)
		if err == nil {
			if f := taken(target); f != nil {
				fail(c, c.Path, ReasonFilePath, fmt.Sprintf("%s is taken: command %d put a file there", clean, f.selCmd), nil)
				return "", "", false
			}
			if l := linkTaken(target); l != nil {
				fail(c, c.Path, ReasonFilePath, fmt.Sprintf("%s is taken: command %d moved a symlink there", clean, l.selCmd), nil)
				return "", "", false
			}
			return clean, target, true
		}
		if _, at, _, isLink, _ := ws.Symlink(c.Path); isLink && byLink[at] != nil {
			fail(c, c.Path, ReasonFilePath, fmt.Sprintf("%s is the symlink that command %d selected: a path it leaves is taken until the script is applied; put a file there in another script", clean, byLink[at].selCmd), nil)
			return "", "", false
		}
		if errs.Code(err) == workspace.CodeExists {
			if _, t, rerr := ws.Resolve(c.Path); rerr == nil {
				if f := byTarget[t]; f != nil && taken(t) == nil && (f.deleted || f.dest != t) {
					return clean, t, true // the file there was removed or moved away by this script
				}
			}
		}
		fail(c, c.Path, ReasonFilePath, pathMessage(err), nil)
		return "", "", false
	}
	for i := range s.Commands {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := &s.Commands[i]
		switch c.Kind {
		case kindIn:
			cur, curLink = nil, nil
			if clean, err := workspace.Clean(c.Path); err == nil {
				if l := linkAt[clean]; l != nil {
					cur, curLink = l.file, l
					continue
				}
				if f := byPath[clean]; f != nil {
					cur = f
					continue
				}
			}
			clean, at, text, isLink, _ := ws.Symlink(c.Path)
			if isLink && byLink[at] != nil {
				fail(c, c.Path, ReasonFilePath, fmt.Sprintf("%s is a symlink that was moved or deleted earlier in this script; select it by its new path", clean), nil)
				cur = &fileState{broken: true, path: c.Path}
				continue
			}
			wf, err := ws.Load(c.Path)
			if err != nil && isLink {
				// A link to nothing, or to what is not a file of the
				// workspace: selected all the same, for rm (which acts on
				// the link); an edit or a move of it is refused.
				why := fmt.Sprintf("%s is a symlink to %s, which is not a file of the workspace: %s", clean, quoteClamped(text), pathMessage(err))
				cur = &fileState{broken: true, path: c.Path, why: why}
				curLink = &linkState{origin: clean, at: at, text: text, path: clean, dest: at, file: cur, selCmd: c.N}
				pl.links = append(pl.links, curLink)
				byLink[at] = curLink
				linkAt[clean] = curLink
				continue
			}
			if err != nil {
				fail(c, c.Path, ReasonFilePath, pathMessage(err), nil)
				cur = &fileState{broken: true, path: c.Path}
				continue
			}
			if f := byTarget[wf.Target]; f != nil {
				if f.deleted || f.dest != wf.Target {
					fail(c, c.Path, ReasonFilePath, fmt.Sprintf("%s was moved or deleted earlier in this script; select it by its new path", wf.Path), nil)
					cur = &fileState{broken: true, path: c.Path}
					continue
				}
				cur = f // the same file under another name (a symlink)
			} else {
				idx, err := rows.NewIndex(wf.Data)
				if err != nil {
					fail(c, c.Path, ReasonFilePath, fmt.Sprintf("%s is not UTF-8 text: %v", wf.Path, err), nil)
					cur = &fileState{broken: true, path: c.Path}
					continue
				}
				cur = &fileState{origin: wf.Path, target: wf.Target, path: wf.Path, dest: wf.Target, base: wf.Data, idx: idx, mode: wf.Mode, selCmd: c.N}
				pl.files = append(pl.files, cur)
				byPath[wf.Path] = cur
				byTarget[wf.Target] = cur
			}
			if isLink {
				curLink = &linkState{origin: clean, at: at, text: text, path: clean, dest: at, file: cur, selCmd: c.N}
				pl.links = append(pl.links, curLink)
				byLink[at] = curLink
				linkAt[clean] = curLink
			}
		case kindNew:
			cur, curLink = nil, nil
			clean, target, ok := free(c)
			if !ok {
				cur = &fileState{broken: true, path: c.Path}
				continue
			}
			idx, _ := rows.NewIndex(nil)
			cur = &fileState{path: clean, dest: target, idx: idx, mode: newFileMode, created: true, selCmd: c.N}
			pl.files = append(pl.files, cur)
			byPath[clean] = cur
		case kindMv:
			if cur != nil && cur.why != "" {
				fail(c, c.Path, ReasonFilePath, cur.why+": only rm applies to it", nil)
				continue
			}
			if cur == nil || cur.broken {
				continue
			}
			if curLink != nil {
				moveLink(ws, c, curLink, free, fail, unlink, linkAt)
				continue
			}
			clean, target, ok := free(c)
			if !ok {
				continue
			}
			delete(byPath, cur.path)
			cur.path, cur.dest = clean, target
			cur.mv = c
			byPath[clean] = cur
		case kindRm:
			if curLink != nil {
				// The link goes, as rm(1) removes it; the file it leads to
				// stays, with any edits the script makes to it.
				curLink.deleted = true
				unlink(curLink)
				cur, curLink = nil, nil
				continue
			}
			if cur == nil || cur.broken {
				cur = nil
				continue
			}
			if len(cur.pending) > 0 && !cur.created {
				// Deleting the file would drop the content the script
				// gave it; pending content is never discarded silently.
				// (A file the script creates is not there to keep: rm
				// cancels its creation, content and all, as HPATCH/2
				// says rm deletes the selected file.)
				var ns []int
				for _, p := range cur.pending {
					ns = append(ns, p.cmd.N)
				}
				which := "the edit of command " + joinLines(ns, 5)
				if len(ns) > 1 {
					which = "the edits of commands " + joinLines(ns, 5)
				}
				fail(c, cur.path, ReasonConflict, fmt.Sprintf("rm would discard %s to %s: remove those edits or the rm", which, cur.path), nil)
			}
			cur.deleted = true
			delete(byPath, cur.path)
			cur = nil
		case kindType, kindAdd, kindInit:
			if cur != nil && cur.why != "" {
				fail(c, curLink.path, ReasonFilePath, cur.why+": only rm applies to it", nil)
				continue
			}
			if cur == nil || cur.broken {
				continue
			}
			if cur.created && (c.Target.Kind == TargetRows || c.Target.Kind == TargetText) {
				fail(c, cur.path, ReasonInitialization, fmt.Sprintf("%s is created by this script (command %d) and has no rows or text to target: a new file takes its content from type VALUE, directly after new PATH", cur.path, cur.selCmd), nil)
				continue
			}
			cur.pending = append(cur.pending, &pending{cmd: c, path: cur.path})
		}
	}
	for _, f := range pl.files {
		fails, err := f.resolve(ctx)
		if err != nil {
			return nil, err
		}
		pl.fails = append(pl.fails, fails...)
	}
	sort.SliceStable(pl.fails, func(i, j int) bool { return pl.fails[i].Command < pl.fails[j].Command })
	if len(pl.fails) == 0 {
		for _, f := range pl.files {
			f.render()
		}
	}
	return pl, nil
}

// moveLink moves the symlink l to the path command c names, as mv(1)
// does: the link itself, its text unchanged. The move is refused when,
// from the new place, that text would no longer lead to the same file: a
// dangling or redirected link is never made silently.
func moveLink(ws files, c *Command, l *linkState, free func(*Command) (string, string, bool),
	fail func(*Command, string, string, string, []rows.Record), unlink func(*linkState), linkAt map[string]*linkState) {
	clean, target, ok := free(c)
	if !ok {
		return
	}
	if path.Dir(target) == path.Dir(l.dest) {
		// The same directory: the text leads where it led.
	} else if to, exists, err := ws.LinkTarget(target, l.text); err != nil || !exists || to != l.file.target {
		where := "nowhere"
		switch {
		case err != nil && errs.Code(err) == workspace.CodeOutside:
			where = "outside the workspace"
		case exists:
			where = quoteClamped(to)
		}
		fail(c, c.Path, ReasonFilePath, fmt.Sprintf("%s is a symlink holding %s; mv moves the link itself, as mv(1) does, and at %s that text would lead %s, not to %s: move the file instead (in %s), or remake the link in a shell",
			l.path, quoteClamped(l.text), clean, where, quoteClamped(l.file.target), l.file.target), nil)
		return
	}
	unlink(l)
	l.path, l.dest = clean, target
	linkAt[clean] = l
}

// pathMessage is the one-line explanation of a workspace error.
func pathMessage(err error) string {
	if e, ok := errs.As(err); ok {
		return e.Msg + " (" + e.Code + ")"
	}
	return err.Error()
}

func (f *fileState) hashIndex() *hashIndex {
	if f.byHash == nil {
		f.byHash = newHashIndex(f.lineHashes())
	}
	return f.byHash
}

func (f *fileState) lineHashes() []uint16 {
	if f.hashes == nil {
		f.hashes = make([]uint16, f.idx.Count())
		for i := range f.hashes {
			f.hashes[i] = parseHash(rows.Hash(f.idx.Text(i + 1)))
		}
	}
	return f.hashes
}

// refsCurrent reports whether every row reference is current: its line
// still has its hash.
func (f *fileState) refsCurrent(refs [][]refUse) bool {
	for _, rs := range refs {
		for _, r := range rs {
			if r.line > f.idx.Count() || parseHash(rows.Hash(f.idx.Text(r.line))) != r.hash {
				return false
			}
		}
	}
	return true
}

// refsOf returns the row references a command's target depends on.
func refsOf(t *Target) []refUse {
	switch {
	case t.Kind == TargetRows && t.Span.Start == t.Span.End:
		return []refUse{{t.Span.Start.Line, parseHash(t.Span.Start.Hash)}}
	case t.Kind == TargetRows:
		return []refUse{{t.Span.Start.Line, parseHash(t.Span.Start.Hash)}, {t.Span.End.Line, parseHash(t.Span.End.Hash)}}
	case t.Kind == TargetText && t.Anchored:
		return []refUse{{t.Anchor.Line, parseHash(t.Anchor.Hash)}}
	}
	return nil
}

// resolve turns the file's pending commands into edits against its
// baseline, and checks that the edits do not conflict.
func (f *fileState) resolve(ctx context.Context) ([]Failure, error) {
	var fails []Failure
	fail := func(p *pending, reason, msg string, rs []rows.Record) {
		fails = append(fails, Failure{Command: p.cmd.N, Op: p.cmd.Op(), Path: p.path, Reason: reason, Message: msg, Rows: rs})
	}
	var withRefs []*pending
	var refs [][]refUse
	for _, p := range f.pending {
		if r := refsOf(&p.cmd.Target); r != nil {
			withRefs = append(withRefs, p)
			refs = append(refs, r)
		}
	}
	shift := map[*pending]int{}
	if f.refsCurrent(refs) {
		// Every row is where it was read: no line's hash but theirs is
		// needed (hashing every line of a large file was most of the
		// cost of a one-line edit).
		for _, p := range withRefs {
			shift[p] = 0
		}
	} else if len(refs) > 0 {
		for i, r := range relocate(f.lineHashes(), refs) {
			p := withRefs[i]
			if r.ok {
				shift[p] = r.shift
				continue
			}
			reason, msg, rs := f.staleReport(p, refs[i])
			fail(p, reason, msg, rs)
		}
	}
	for seq, p := range f.pending {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := p.cmd
		d, ok := shift[p]
		if refsOf(&c.Target) != nil && !ok {
			continue
		}
		x := f.idx
		switch {
		case c.Kind == kindInit:
			f.edits = append(f.edits, &edit{cmd: c, path: p.path, value: c.Value, insert: true, seq: seq})
		case c.Target.Kind == TargetEOF && c.Kind == kindAdd:
			n := len(f.base)
			f.edits = append(f.edits, &edit{cmd: c, path: p.path, start: n, end: n, value: c.Value, insert: true, seq: seq, startLine: x.Count() + 1})
		case c.Target.Kind == TargetEOF:
			if f.eof != nil {
				fail(p, ReasonConflict, fmt.Sprintf("command %d already sets the final terminator", f.eof.cmd.N), nil)
				continue
			}
			f.eof = &edit{cmd: c, path: p.path, value: c.Value, seq: seq}
		case c.Target.Kind == TargetRows:
			a, b := c.Target.Span.Start.Line+d, c.Target.Span.End.Line+d
			if b < a {
				fail(p, ReasonTargetOrder, fmt.Sprintf("the range %s ends before it starts: its rows are lines %d and %d", c.Target.Span, a, b), f.context(b, a, 0))
				continue
			}
			if c.Kind == kindAdd {
				f.edits = append(f.edits, &edit{cmd: c, path: p.path, start: x.Start(a), end: x.Start(a), value: addValue(c.Value, x, a), insert: true, seq: seq, startLine: a, endLine: a, shift: d})
				continue
			}
			f.edits = append(f.edits, &edit{cmd: c, path: p.path, start: x.Start(a), end: x.End(b), value: typeValue(c.Value, x.Term(b)), seq: seq, startLine: a, endLine: b, shift: d})
		case c.Target.Kind == TargetText:
			from := 0
			if c.Target.Anchored {
				from = x.Start(c.Target.Anchor.Line + d)
			}
			found := findAll(f.base, c.Target.Needle, from, c.Target.Count)
			if len(found) < c.Target.Count {
				fail(p, ReasonOccurrence, f.occurrenceMessage(c, len(found), d), f.occurrenceRows(c, found, d))
				continue
			}
			for _, at := range found {
				e := &edit{cmd: c, path: p.path, start: at, end: at + len(c.Target.Needle), value: c.Value, seq: seq, startLine: x.LineAt(at), endLine: x.LineAt(at + len(c.Target.Needle) - 1), shift: d}
				if c.Kind == kindAdd {
					e.end, e.insert, e.endLine = at, true, e.startLine
				}
				f.edits = append(f.edits, e)
			}
		}
	}
	if len(fails) == 0 {
		fails = append(fails, f.conflicts()...)
	}
	return fails, nil
}

// typeValue applies the terminator rule of a row replacement: a value that
// does not end in a terminator takes the target's last terminator, so an
// unterminated last line stays unterminated and a CRLF line stays CRLF.
func typeValue(v string, last rows.Term) string {
	if v == "" || endsWithTerm(v) {
		return v
	}
	return v + last.String()
}

// addValue applies the terminator rule of an insertion before row a: the
// inserted text becomes whole lines, ending in the value's own terminator
// or else in the style of the row it precedes (of the line before it when
// that row is an unterminated last line; LF when there is none).
func addValue(v string, x *rows.Index, a int) string {
	if v == "" || endsWithTerm(v) {
		return v
	}
	t := x.Term(a)
	if t == rows.TermNone && a > 1 {
		t = x.Term(a - 1)
	}
	if t == rows.TermNone {
		t = rows.TermLF
	}
	return v + t.String()
}

func endsWithTerm(v string) bool {
	return strings.HasSuffix(v, "\n") || strings.HasSuffix(v, "\r")
}

// findAll returns the offsets of the first n non-overlapping matches of
// needle in src at or after from.
func findAll(src []byte, needle string, from, n int) []int {
	var out []int
	nb := []byte(needle)
	for len(out) < n {
		i := bytes.Index(src[from:], nb)
		if i < 0 {
			break
		}
		out = append(out, from+i)
		from += i + len(nb)
	}
	return out
}

// conflicts finds overlapping replacements and insertions strictly inside
// a replacement.
func (f *fileState) conflicts() []Failure {
	var fails []Failure
	reps := make([]*edit, 0, len(f.edits))
	for _, e := range f.edits {
		if !e.insert {
			reps = append(reps, e)
		}
	}
	sort.SliceStable(reps, func(i, j int) bool { return reps[i].start < reps[j].start })
	report := func(later, earlier *edit, what string) {
		if later.cmd.N < earlier.cmd.N || later.cmd.N == earlier.cmd.N && later.start < earlier.start {
			later, earlier = earlier, later
		}
		msg := fmt.Sprintf("%s %s", what, f.describe(earlier))
		if later.cmd == earlier.cmd {
			msg = fmt.Sprintf("two of its own matches overlap (%s)", f.describe(earlier))
		}
		fails = append(fails, Failure{Command: later.cmd.N, Op: later.cmd.Op(), Path: later.path, Reason: ReasonConflict,
			Message: msg, Rows: f.context(min(earlier.startLine, later.startLine), max(earlier.endLine, later.endLine), 1)})
	}
	for i := 1; i < len(reps); i++ {
		if reps[i].start < reps[i-1].end {
			report(reps[i], reps[i-1], "its target overlaps the target of")
		}
	}
	for _, e := range f.edits {
		if !e.insert {
			continue
		}
		k := sort.Search(len(reps), func(i int) bool { return reps[i].end > e.start })
		if k < len(reps) && reps[k].start < e.start {
			report(e, reps[k], "it inserts inside the span replaced by")
		}
	}
	return fails
}

// describe names an edit for a conflict message.
func (f *fileState) describe(e *edit) string {
	if e.startLine == e.endLine {
		return fmt.Sprintf("command %d (line %d)", e.cmd.N, e.startLine)
	}
	return fmt.Sprintf("command %d (lines %d-%d)", e.cmd.N, e.startLine, e.endLine)
}

// render builds the new content, as a view: edits in baseline order,
// insertions at one point in script order before a replacement starting
// there, and the final terminator last.
func (f *fileState) render() {
	es := append([]*edit(nil), f.edits...)
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.start != b.start {
			return a.start < b.start
		}
		if a.insert != b.insert {
			return a.insert
		}
		return a.seq < b.seq
	})
	v := &view{base: f.base}
	at := 0
	for _, e := range es {
		v.addBase(at, e.start)
		e.outStart = v.size
		v.addVal(e.value)
		e.outEnd = v.size
		at = e.end
	}
	v.addBase(at, len(f.base))
	if f.eof != nil && v.size > 0 {
		t := v.lastBytes(2)
		n := 0
		switch {
		case bytes.HasSuffix(t, []byte("\r\n")):
			n = 2
		case t[len(t)-1] == '\n' || t[len(t)-1] == '\r':
			n = 1
		}
		v.trimEnd(n)
		f.eof.outStart = v.size
		v.addVal(f.eof.value)
		f.eof.outEnd = v.size
	}
	f.view = v
	f.diff = !v.equalsBase() || f.created || f.deleted || f.dest != f.target
}

// setContent replaces the new content by data (gofmt's output).
func (f *fileState) setContent(data []byte) {
	v := &view{base: f.base}
	v.addVal(string(data))
	v.index()
	f.view = v
	f.diff = !v.equalsBase() || f.created || f.deleted || f.dest != f.target
}

// release drops what only planning needed (the baseline, its index and
// hashes): the commit streams the unchanged content from the file itself.
func (f *fileState) release() {
	f.base, f.idx, f.hashes, f.byHash, f.rec = nil, nil, nil, nil, nil
	if f.view != nil {
		f.view.base = nil
	}
}
