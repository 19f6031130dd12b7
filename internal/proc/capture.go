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
	half    int
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

// NewCapture returns a Capture keeping at most about max bytes.
func NewCapture(max int) *Capture {
	if max < 2 {
		max = 2
	}
	return &Capture{half: max / 2}
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
// cut never splits a UTF-8 sequence: a partial one at the end of the head
// or the start of the tail is dropped and counted.
func (c *Capture) Result() (string, int64) {
	c.commit()
	tail := c.tail
	if len(tail) > c.half {
		tail = tail[len(tail)-c.half:]
	}
	dropped := c.cleaned - int64(len(c.head)) - int64(len(tail))
	if dropped == 0 {
		return strings.ToValidUTF8(string(c.head)+string(tail), "\uFFFD"), 0
	}
	head := c.head
	for k := 1; k <= 3 && k <= len(head); k++ {
		if b := head[len(head)-k]; b >= 0xc0 { // a lead byte: is its sequence whole?
			if !utf8.FullRune(head[len(head)-k:]) {
				head = head[:len(head)-k]
			}
			break
		} else if b < 0x80 {
			break
		}
	}
	for k := 0; k < 3 && len(tail) > 0 && tail[0]&0xc0 == 0x80; k++ {
		tail = tail[1:]
	}
	dropped = c.cleaned - int64(len(head)) - int64(len(tail))
	text := string(head) + fmt.Sprintf("\n[... %d bytes elided ...]\n", dropped) + string(tail)
	return strings.ToValidUTF8(text, "\uFFFD"), dropped
}

// Total returns the raw bytes written to the stream.
func (c *Capture) Total() int64 { return c.total }
