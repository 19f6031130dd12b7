package proc

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Capture keeps what an agent needs of a command's stream in bounded
// memory: ANSI escapes removed, carriage-return overwrites resolved (a
// progress bar leaves its last state), then the first and the last max/2
// bytes of the result, with the middle elided. Failures are usually at the
// end, so the tail matters as much as the head.
type Capture struct {
	max     int // bound of Result, elision marker included
	half    int // kept of the head, and at least of the tail
	head    []byte
	tail    []byte // the last bytes seen after head filled; trimmed lazily
	total   int64  // raw bytes written to the stream
	cleaned int64  // bytes after cleaning

	state   int
	line    []byte // the current line, which a CR may still overwrite
	pending bool   // a CR was seen; the next byte decides CRLF or overwrite
}

const (
	stNormal = iota
	stEsc    // after ESC
	stEscInt // ESC followed by intermediate bytes (ESC ( B)
	stCSI    // ESC [
	stOSC    // ESC ]
	stOSCEsc // ESC inside OSC: ESC \ ends it
)

// maxLine bounds the line a CR may still overwrite; a longer line is
// committed as it is.
const maxLine = 64 << 10

// NewCapture returns a Capture whose Result is at most max bytes.
func NewCapture(bound int) *Capture {
	bound = max(bound, 0)
	return &Capture{max: bound, half: max(bound/2, 1)}
}

func (c *Capture) Write(p []byte) (int, error) {
	c.total += int64(len(p))
	for _, b := range p {
		if b >= 0x80 && c.state != stNormal && c.state != stOSC && c.state != stOSCEsc {
			// Not part of an escape sequence: end it, and keep the byte,
			// which may start a UTF-8 sequence.
			c.state = stNormal
		}
		switch c.state {
		case stEsc:
			switch {
			case b == '[':
				c.state = stCSI
			case b == ']':
				c.state = stOSC
			case b >= 0x20 && b <= 0x2f:
				c.state = stEscInt
			default:
				c.state = stNormal
			}
			continue
		case stEscInt:
			if b < 0x20 || b > 0x2f {
				c.state = stNormal
			}
			continue
		case stCSI:
			if b >= 0x40 && b <= 0x7e {
				c.state = stNormal
			}
			continue
		case stOSC:
			if b == 0x07 {
				c.state = stNormal
			} else if b == 0x1b {
				c.state = stOSCEsc
			}
			continue
		case stOSCEsc:
			c.state = stOSC
			if b == '\\' {
				c.state = stNormal
			}
			continue
		}
		switch {
		case b == 0x1b:
			c.state = stEsc
		case b == '\r':
			c.pending = true
		case b == '\n':
			c.pending = false
			c.line = append(c.line, '\n')
			c.commit()
		case b < 0x20 && b != '\t' || b == 0x7f:
			// other control characters (BEL, backspace) carry no text
		default:
			if c.pending {
				c.line = c.line[:0]
				c.pending = false
			}
			c.line = append(c.line, b)
			if len(c.line) >= maxLine {
				c.commit()
			}
		}
	}
	return len(p), nil
}

func (c *Capture) commit() {
	p := c.line
	c.line = c.line[:0]
	c.cleaned += int64(len(p))
	if n := min(c.half-len(c.head), len(p)); n > 0 {
		c.head = append(c.head, p[:n]...)
		p = p[n:]
	}
	c.tail = append(c.tail, p...)
	if len(c.tail) > 2*c.half+maxLine {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-c.half:]...)
	}
}

// Result returns the kept text and the cleaned bytes left out of it. The
// text, elision marker included, is at most the bound given to NewCapture
// (a bound too small for the marker keeps nothing). The cut never splits a
// UTF-8 sequence: a partial one at the end of the head or the start of the
// tail is dropped and counted; any other invalid byte becomes U+FFFD.
func (c *Capture) Result() (string, int64) { return c.ResultWithin(c.max) }

// ResultWithin is Result under a bound of its own, at most the bound given
// to NewCapture, for a caller that shares one total among several streams
// once it knows how much each one wrote: what is kept for the larger bound
// holds whatever a smaller one keeps.
func (c *Capture) ResultWithin(bound int) (string, int64) {
	bound = max(min(bound, c.max), 0)
	c.commit()
	whole := c.cleaned == int64(len(c.head)+len(c.tail))
	pre, suf := c.head, c.tail
	if whole {
		s := strings.ToValidUTF8(string(c.head)+string(c.tail), "\uFFFD")
		if len(s) <= bound {
			return s, 0
		}
		// Replacement characters made it longer than the bound: cut it
		// as if it had been elided.
		pre = append(append([]byte{}, c.head...), c.tail...)
		suf = pre
	}
	// The marker can only get shorter than this as more is kept.
	budget := bound - len(elision(c.cleaned))
	for budget > 0 {
		hn := min(budget/2, len(pre))
		tn := min(budget-hn, len(suf))
		if whole {
			tn = min(tn, len(suf)-hn)
		}
		head, tail := trimPartialEnd(pre[:hn]), trimPartialStart(suf[len(suf)-tn:])
		dropped := c.cleaned - int64(len(head)) - int64(len(tail))
		text := strings.ToValidUTF8(string(head), "\uFFFD") + elision(dropped) + strings.ToValidUTF8(string(tail), "\uFFFD")
		if len(text) <= bound {
			return text, dropped
		}
		budget -= len(text) - bound
	}
	return "", c.cleaned
}

func elision(n int64) string { return fmt.Sprintf("\n[... %d bytes elided ...]\n", n) }

// trimPartialEnd drops a UTF-8 sequence cut short at the end of b.
func trimPartialEnd(b []byte) []byte {
	for k := 1; k <= 3 && k <= len(b); k++ {
		if x := b[len(b)-k]; x >= 0xc0 { // a lead byte: is its sequence whole?
			if !utf8.FullRune(b[len(b)-k:]) {
				return b[:len(b)-k]
			}
			return b
		} else if x < 0x80 {
			return b
		}
	}
	return b
}

// trimPartialStart drops continuation bytes at the start of b, the rest of
// a sequence whose lead byte was cut off.
func trimPartialStart(b []byte) []byte {
	for k := 0; k < 3 && len(b) > 0 && b[0]&0xc0 == 0x80; k++ {
		b = b[1:]
	}
	return b
}

// Total returns the raw bytes written to the stream.
func (c *Capture) Total() int64 { return c.total }
