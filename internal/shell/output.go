package shell

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/rowkit/rowkit/internal/errs"
)

// MinOutput is the smallest bound Output takes: room for its note and a
// few lines on either side of it.
const MinOutput = 512

// Output is a script's stdout and stderr merged, in the order they were
// written, within a bound of Max bytes: the first lines are written as
// they come (the head), the last lines are held back (the tail), and when
// the whole would not fit, one note between the two says how many bytes
// and lines were left out. Lines are never cut: a line goes whole into the
// head, whole into the tail, or is left out, so no verified row and no
// UTF-8 sequence is ever split. Writes are always accepted, also past the
// bound and after Close (a refused write would stop the copy from a
// child's pipe, and a child blocked on a full pipe would hang the script).
//
// The bound is Max bytes for everything, the note included: the head
// takes at most Max - tail - room for the note, the tail at most
// min(Max/4, 2 KiB).
type Output struct {
	mu sync.Mutex
	w  io.Writer

	max, headMax, tailMax int

	head     int  // bytes written to w as the head
	headOpen bool // no line has missed the head yet
	line     []byte
	dropping bool   // the current line cannot be kept; its bytes are counted
	rest     []byte // whole lines after the head, held back
	eliding  bool   // the whole will not fit: rest is the tail
	left     int64  // bytes left out
	leftN    int64  // lines left out
	closed   bool
	werr     error
}

// NewOutput returns an Output writing to w within bound bytes (at least
// MinOutput).
func NewOutput(w io.Writer, bound int) *Output {
	bound = max(bound, MinOutput)
	tail := min(bound/4, 2<<10)
	o := &Output{w: w, max: bound, tailMax: tail, headOpen: true}
	o.headMax = bound - tail - len(note(1<<62, 1<<62, tail))
	return o
}

// Write takes p whole, whatever the bound.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.closed {
		o.take(p)
	}
	return len(p), nil
}

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
			o.left += int64(len(o.line) + len(o.rest))
			o.leftN += int64(bytes.Count(o.rest, []byte{'\n'}))
			o.line, o.rest = o.line[:0], o.rest[:0]
			o.dropping = true
		}
		if o.dropping {
			o.left += int64(len(chunk))
			if done {
				o.leftN++
				o.dropping = false
			}
			continue
		}
		o.line = append(o.line, chunk...)
		if done {
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
	return n <= o.tailMax
}

// place puts a whole line in the head, or behind it.
func (o *Output) place(l []byte) {
	if o.headOpen && !o.eliding && o.head+len(l) <= o.headMax {
		if _, err := o.w.Write(l); err != nil && o.werr == nil {
			o.werr = err
		}
		o.head += len(l)
		return
	}
	o.headOpen = false
	o.rest = append(o.rest, l...)
	if o.eliding || o.head+len(o.rest) > o.max {
		o.elide()
	}
}

// elide gives up on showing the whole: rest keeps its last lines within
// the tail's size, and what it drops is counted.
func (o *Output) elide() {
	o.eliding = true
	o.headOpen = false
	if len(o.rest) <= o.tailMax {
		return
	}
	cut := len(o.rest) - o.tailMax
	if o.rest[cut-1] != '\n' {
		i := bytes.IndexByte(o.rest[cut:], '\n')
		if i < 0 {
			cut = len(o.rest)
		} else {
			cut += i + 1
		}
	}
	o.left += int64(cut)
	o.leftN += int64(bytes.Count(o.rest[:cut], []byte{'\n'}))
	o.rest = o.rest[:copy(o.rest, o.rest[cut:])]
}

// Room is the byte budget for a command whose output starts now and goes
// straight here: what is left of the head, so that its result is shown
// whole and in place whatever follows; or, once the head is (nearly)
// full, the tail's size, so that it is shown whole if nothing follows.
func (o *Output) Room() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.headOpen && !o.eliding && !o.dropping {
		return max(o.headMax-o.head-len(o.line), o.tailMax)
	}
	return o.tailMax
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
		o.take([]byte{'\n'})
	}
	o.take([]byte(s + "\n"))
}

// Close writes what was held back: the rest of the output when the whole
// fits, else the note and the tail. Later writes are dropped. It returns
// the first error writing to w.
func (o *Output) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return o.werr
	}
	o.closed = true
	if o.dropping {
		o.leftN++
	} else if len(o.line) > 0 {
		o.place(o.line) // the last line, without its newline
	}
	out := o.rest
	if o.eliding {
		out = append([]byte(note(o.left, o.leftN, len(o.rest))), o.rest...)
	}
	if _, err := o.w.Write(out); err != nil && o.werr == nil {
		o.werr = err
	}
	return o.werr
}

// note is the line that stands for what was left out.
func note(bytes, lines int64, tail int) string {
	s := fmt.Sprintf("[rowkit shell: output limit reached: %s bytes (%s lines) left out here", errs.Thousands(int(bytes)), errs.Thousands(int(lines)))
	if tail > 0 {
		s += fmt.Sprintf("; the last %s bytes follow", errs.Thousands(tail))
	}
	return s + "]\n"
}
