package shell

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/spool"
)

// MinOutput is the smallest bound Output takes: room for its note and a
// few lines on either side of it.
const MinOutput = 512

// Output is a script's stdout and stderr merged, in the order they were
// written, within a bound of Max bytes: the first lines are written as
// they come (the head), the last lines are held back (the tail), and when
// the whole would not fit, one note between the two says how many bytes
// and lines were left out, and where the whole output is kept. Lines are
// never cut: a line goes whole into the head, whole into the tail, or is
// left out, so no verified row and no UTF-8 sequence is ever split. Writes
// are always accepted, also past the bound and after Close (a refused
// write would stop the copy from a child's pipe, and a child blocked on a
// full pipe would hang the script).
//
// The bound is Max bytes for everything, the note included: the head
// takes at most Max - held - room for the note, where held is
// min(Max/4, 4 KiB), the room held back for the end. Of the lines left
// out, those that name an error or a failure (ErrorLine) are shown after
// the note, numbered as in the kept output, each with the line after it
// when that one says where the error is (WhereLine), in up to half of the
// held room (the first page of a failed build or test run shows its
// errors wherever they were printed); the tail takes the rest of it.
//
// What is left out is not lost: with a store (Keep), the whole output is
// kept there once it passes the bound, and the note names the command
// that reads it on from the first line left out (hread @out/ID N:).
type Output struct {
	mu sync.Mutex
	w  io.Writer

	max, headMax, heldMax, errMax int

	head     int  // bytes written to w as the head
	headOpen bool // no line has missed the head yet
	lines    int  // lines completed so far (the last one's number)
	line     []byte
	dropping bool   // the current line cannot be kept; its bytes are counted
	rest     []byte // whole lines after the head, held back
	restLine int    // the number of rest's first line
	eliding  bool   // the whole will not fit: rest is the tail
	firstOut int    // the first line left out (0: none yet)
	left     int64  // bytes left out
	leftN    int64  // lines left out
	errs     []byte // the lines left out that name an error, as N|TEXT
	prev     []byte // the last line left out, when it is a test's message
	prevLine int    // prev's number (0: none)
	errN     int    // lines in errs
	errMore  int    // lines that name an error but did not fit errMax
	lastErr  int    // the number of the last line in errs

	store   func() (*spool.Store, error)
	early   []byte // everything written while it fits the bound
	kept    *spool.Writer
	keptErr error

	closed bool
	werr   error
}

// NewOutput returns an Output writing to w within bound bytes (at least
// MinOutput).
func NewOutput(w io.Writer, bound int) *Output {
	bound = max(bound, MinOutput)
	held := min(bound/4, 4<<10)
	o := &Output{w: w, max: bound, heldMax: held, errMax: held / 2, headOpen: true, restLine: 1}
	o.headMax = bound - held - noteRoom()
	return o
}

// Keep makes o keep the whole output in the store open returns, once the
// output passes the bound (so a store is opened only for an output that
// needs it), and name it in the note; or say there why it could not. Call
// it before the first Write.
func (o *Output) Keep(open func() (*spool.Store, error)) { o.store = open }

// Write takes p whole, whatever the bound.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.closed {
		o.tee(p)
		o.take(p)
	}
	return len(p), nil
}

// tee keeps a copy of the output: in memory while it fits the bound, then
// in the store, from its first byte.
func (o *Output) tee(p []byte) {
	switch {
	case o.kept != nil:
		o.kept.Write(p)
	case o.keptErr != nil:
	case len(o.early)+len(p) <= o.max:
		o.early = append(o.early, p...)
	case o.store == nil:
		o.keptErr, o.early = errNoStore, nil
	default:
		var st *spool.Store
		if st, o.keptErr = o.store(); o.keptErr == nil {
			o.kept, o.keptErr = st.Create(spool.Text)
		}
		if o.kept != nil {
			o.kept.Write(o.early)
			o.kept.Write(p)
		}
		o.early = nil
	}
}

var errNoStore = errors.New("no store")

func (o *Output) take(p []byte) {
	for len(p) > 0 {
		chunk, done := p, false
		if i := bytes.IndexByte(p, '\n'); i >= 0 {
			chunk, done = p[:i+1], true
		}
		p = p[len(chunk):]
		if !o.dropping && !o.fits(len(o.line)+len(chunk)) {
			// The line can go neither into the head nor into the tail;
			// the tail is a suffix of the output, so the lines before
			// it go too.
			o.leave(len(o.rest))
			o.left += int64(len(o.line))
			o.line = o.line[:0]
			o.dropping = true
			o.leftOut(o.lines + 1)
		}
		if o.dropping {
			o.left += int64(len(chunk))
			if done {
				o.lines++
				o.leftN++
				o.dropping = false
				o.restLine = o.lines + 1
			}
			continue
		}
		o.line = append(o.line, chunk...)
		if done {
			o.lines++
			o.place(o.line)
			o.line = o.line[:0]
		}
	}
}

// fits reports whether a line of n bytes can still be shown whole: while
// everything so far fits the bound, as part of the whole; after that, in
// the tail.
func (o *Output) fits(n int) bool {
	if !o.eliding && o.head+len(o.rest)+n <= o.max {
		return true
	}
	o.elide()
	return n <= o.heldMax
}

// place puts a whole line in the head, or behind it.
func (o *Output) place(l []byte) {
	if o.headOpen && !o.eliding && o.head+len(l) <= o.headMax {
		if _, err := o.w.Write(l); err != nil && o.werr == nil {
			o.werr = err
		}
		o.head += len(l)
		o.restLine = o.lines + 1
		return
	}
	o.headOpen = false
	o.rest = append(o.rest, l...)
	if o.eliding || o.head+len(o.rest) > o.max {
		o.elide()
	}
}

// elide gives up on showing the whole: rest keeps its last lines within
// the room held for the end, and the lines it drops are left out.
func (o *Output) elide() {
	o.eliding = true
	o.headOpen = false
	o.trim(o.heldMax)
}

// trim drops rest's first lines until it holds at most n bytes.
func (o *Output) trim(n int) {
	if len(o.rest) <= n {
		return
	}
	cut := len(o.rest) - n
	if o.rest[cut-1] != '\n' {
		i := bytes.IndexByte(o.rest[cut:], '\n')
		if i < 0 {
			cut = len(o.rest)
		} else {
			cut += i + 1
		}
	}
	o.leave(cut)
}

// leave takes rest's first n bytes, whole lines, out of the output: each
// is left out, unless it names an error and fits what is left of errMax.
func (o *Output) leave(n int) {
	b := o.rest[:n]
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n') + 1
		if i == 0 {
			i = len(b) // the output's last line, without its newline
		}
		l := b[:i]
		b = b[i:]
		o.leftOut(o.restLine)
		numbered := len(strconv.Itoa(o.restLine)) + 1 + len(l)
		if l[len(l)-1] != '\n' {
			numbered++
		}
		text := bytes.TrimSuffix(l, []byte{'\n'})
		shownBefore := o.lastErr == o.restLine-1
		switch {
		case len(l) > o.heldMax || !ErrorLine(text) && !(shownBefore && WhereLine(text)):
			// A line too long to be shown anywhere is not read.
			o.left += int64(len(l))
			o.leftN++
			o.prevLine = 0
			if len(l) <= o.heldMax && MessageLine(text) {
				o.prev, o.prevLine = append(o.prev[:0], l...), o.restLine
			}
		case len(o.errs)+numbered <= o.errMax:
			if o.prevLine == o.restLine-1 && FailLine(text) {
				// go test -v prints a test's messages before its
				// "--- FAIL" line: the last goes with it.
				pn := len(strconv.Itoa(o.prevLine)) + 1 + len(o.prev)
				if len(o.errs)+pn+numbered <= o.errMax {
					o.errs = strconv.AppendInt(o.errs, int64(o.prevLine), 10)
					o.errs = append(append(o.errs, '|'), o.prev...)
					o.errN++
					o.left -= int64(len(o.prev))
					o.leftN--
				}
			}
			o.prevLine = 0
			o.lastErr = o.restLine
			o.errs = strconv.AppendInt(o.errs, int64(o.restLine), 10)
			o.errs = append(append(o.errs, '|'), l...)
			if l[len(l)-1] != '\n' {
				o.errs = append(o.errs, '\n')
			}
			o.errN++
		default:
			o.errMore++
			o.left += int64(len(l))
			o.leftN++
		}
		o.restLine++
	}
	o.rest = o.rest[:copy(o.rest, o.rest[n:])]
}

// leftOut notes that line n is not in the head: the first such line is
// where the kept output is read on.
func (o *Output) leftOut(n int) {
	if o.firstOut == 0 {
		o.firstOut = n
	}
}

// Room is the byte budget for a command whose output starts now and goes
// straight here: what is left of the head, so that its result is shown
// whole and in place whatever follows; or, once the head is (nearly)
// full, the room held for the end, so that it is shown whole if nothing
// follows.
func (o *Output) Room() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.headOpen && !o.eliding && !o.dropping {
		return max(o.headMax-o.head-len(o.line), o.heldMax)
	}
	return o.heldMax
}

// Line writes s as a line of its own: after a newline when the output so
// far ends inside a line.
func (o *Output) Line(s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	if len(o.line) > 0 || o.dropping {
		o.tee([]byte{'\n'})
		o.take([]byte{'\n'})
	}
	o.tee([]byte(s + "\n"))
	o.take([]byte(s + "\n"))
}

// Close writes what was held back: the rest of the output when the whole
// fits, else the note, the lines left out that name an error, and the
// tail. Later writes are dropped. It returns the first error writing to
// w.
func (o *Output) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return o.werr
	}
	o.closed = true
	if o.dropping {
		o.lines++
		o.leftN++
	} else if len(o.line) > 0 {
		o.lines++
		o.place(o.line) // the last line, without its newline
	}
	out := o.rest
	if !o.eliding && o.kept != nil {
		o.kept.Abort()
	}
	if o.eliding {
		// The errors shown take their room from the tail's.
		for {
			n := o.errN
			o.trim(o.heldMax - len(o.errs))
			if o.errN == n {
				break
			}
		}
		ref := ""
		if o.kept != nil {
			id, err := o.kept.Commit()
			if err == nil {
				ref = spool.Prefix + id + " " + strconv.Itoa(o.firstOut) + ":"
			}
			o.keptErr = err
		}
		out = append([]byte(note(o.left, o.leftN, ref, o.keptErr, o.errN, o.errMore, len(o.rest))), o.errs...)
		out = append(out, o.rest...)
	}
	if _, err := o.w.Write(out); err != nil && o.werr == nil {
		o.werr = err
	}
	return o.werr
}

// noteRoom is the most a note takes: counts of up to 2^48 bytes and
// lines, a reason the output was not kept of up to noteWhy bytes.
// (Computed once, when first needed: not at start-up, which every rowkit
// command pays.)
var noteRoom = sync.OnceValue(func() int {
	return max(
		len(note(1<<48, 1<<48, spool.Prefix+"0123456789 281474976710656:", nil, 1<<20, 1<<20, 1<<20)),
		len(note(1<<48, 1<<48, "", fmt.Errorf("%0*d", noteWhy, 0), 1<<20, 1<<20, 1<<20)))
})

// noteWhy is the most of the reason an output was not kept that a note
// shows.
const noteWhy = 120

// note is the line that stands for what was left out: how much, where it
// is kept (ref: hread's argument) or why not (keptErr), how many of its
// lines that name an error follow and how many more there were, and the
// tail's size.
func note(bytes, lines int64, ref string, keptErr error, errN, errMore, tail int) string {
	s := fmt.Sprintf("[rowkit shell: output limit reached: %s bytes (%s lines) left out here", errs.Thousands(int(bytes)), errs.Thousands(int(lines)))
	switch {
	case ref != "":
		s += "; kept: hread " + ref
	case keptErr == errNoStore:
	case keptErr != nil:
		why := keptErr.Error()
		if e, ok := errs.As(keptErr); ok {
			why = e.Msg
		}
		if len(why) > noteWhy {
			why = why[:noteWhy-3] + "..."
		}
		s += "; not kept: " + why
	}
	then := "; the last %s bytes follow"
	if errN > 0 {
		s += fmt.Sprintf("; %d %s among them %s an error", errN+errMore, plural(errN+errMore, "line", "lines"), plural(errN+errMore, "names", "name"))
		if errMore > 0 {
			s += fmt.Sprintf(": the first %d follow as N|TEXT", errN)
		} else {
			s += fmt.Sprintf(": %s as N|TEXT", plural(errN, "it follows", "they follow"))
		}
		then = ", then the last %s bytes"
	}
	if tail > 0 {
		s += fmt.Sprintf(then, errs.Thousands(tail))
	}
	return s + "]\n"
}
