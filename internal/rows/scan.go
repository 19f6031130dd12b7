// Package rows owns the verified-row identity that every rowkit tool shares:
// logical lines, the LINE:HASH identity of a line, row references, and the
// token admission rule that bounds every verified-row output.
//
// The rules are fixed by REQ-READ-001 (see the README): a line ends at LF,
// CRLF or a lone CR; a terminator at the very end of a file adds no line; text
// must be strict UTF-8; a leading byte order mark belongs to line 1.
package rows

import (
	"context"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// EncodingError reports the first byte that is not part of a valid UTF-8
// sequence.
type EncodingError struct {
	Offset int64 // zero-based byte offset from the start of the input
}

func (e *EncodingError) Error() string {
	return fmt.Sprintf("invalid UTF-8 at byte offset %d", e.Offset)
}

// bufSize is large enough that a read costs little per byte and small enough
// that the scanner's memory stays flat.
const bufSize = 256 << 10

// Scanner splits a stream into logical lines while validating it as UTF-8.
//
// Unlike bufio.Scanner, a caller decides per line how much text to keep: a
// line it does not need costs no memory, however long it is. Memory is
// bounded by the buffer plus the text the caller asks to keep.
type Scanner struct {
	r     io.Reader
	buf   []byte
	pos   int   // next byte to scan
	valid int   // buf[:valid] is validated UTF-8; buf[valid:end] is an incomplete tail
	end   int   // buf[:end] holds data
	base  int64 // input offset of buf[0]
	eof   bool
	err   error
	ctx   context.Context // checked before each read; nil: never cancelled

	// skipLF is set when a line ended in CR at the end of the buffered data:
	// an LF at the start of the next read belongs to the same terminator.
	skipLF bool

	line     int
	text     []byte
	length   int64
	complete bool

	// tap, when set, sees every piece of each line's text as it is
	// scanned, kept or not.
	tap func(text []byte)
}

// NewScanner returns a Scanner reading from r.
func NewScanner(r io.Reader) *Scanner { return NewScannerSize(r, -1) }

// minBufSize is the smallest buffer NewScannerSize gives.
const minBufSize = 512

// NewScannerSize returns a Scanner reading from r, which holds about size
// bytes (a file's size from stat; negative when unknown): its buffer takes
// the whole input in one read when it is smaller than the usual buffer, so
// that reading a small file does not allocate and clear 256 KiB. Input that
// grows past size is still read whole, a buffer at a time.
func NewScannerSize(r io.Reader, size int64) *Scanner {
	n := bufSize
	if size >= 0 && size < bufSize-1 {
		n = max(int(size)+1, minBufSize) // +1: the read that finds the end
	}
	return &Scanner{r: r, buf: make([]byte, n)}
}

// WithContext makes the scanner stop with ctx's error, checked before each
// read of the input (every 256 KiB), so a cancelled caller does not finish
// a large scan. It returns s.
func (s *Scanner) WithContext(ctx context.Context) *Scanner {
	s.ctx = ctx
	return s
}

// Scan advances to the next line, keeping at most keep bytes of its text.
// It returns false at the end of input or on an error (see Err).
func (s *Scanner) Scan(keep int) bool {
	s.text = s.text[:0]
	s.length = 0
	started := false
	for {
		if s.pos == s.valid {
			if !s.fill() {
				if s.err == nil && started {
					// An unterminated last line.
					s.finish(keep)
					return true
				}
				return false
			}
		}
		if s.skipLF {
			s.skipLF = false
			if s.buf[s.pos] == '\n' {
				s.pos++
				continue
			}
		}
		started = true
		chunk := s.buf[s.pos:s.valid]
		i := IndexTerm(chunk)
		if i < 0 {
			s.keep(chunk, keep)
			s.pos = s.valid
			continue
		}
		s.keep(chunk[:i], keep)
		s.pos += i + 1
		if chunk[i] == '\r' {
			if s.pos < s.valid {
				if s.buf[s.pos] == '\n' {
					s.pos++
				}
			} else {
				s.skipLF = true
			}
		}
		s.finish(keep)
		return true
	}
}

// SetTap makes the following calls to Scan pass every piece of each line's
// text (terminators excluded) to fn, in order, whether it is kept or not: a
// caller can hash or measure a line of any length without keeping it. A nil
// fn turns the tap off. The slices are valid only during the call.
func (s *Scanner) SetTap(fn func(text []byte)) { s.tap = fn }

func (s *Scanner) keep(b []byte, keep int) {
	if s.tap != nil && len(b) > 0 {
		s.tap(b)
	}
	if room := keep - len(s.text); room > 0 {
		s.text = append(s.text, b[:min(room, len(b))]...)
	}
	s.length += int64(len(b))
}

func (s *Scanner) finish(keep int) {
	s.line++
	s.complete = s.length == int64(len(s.text))
}

// Line returns the one-based number of the current line.
func (s *Scanner) Line() int { return s.line }

// Text returns the kept text of the current line, without its terminator.
// The slice is reused by the next call to Scan.
func (s *Scanner) Text() []byte { return s.text }

// Len returns the full length in bytes of the current line's text.
func (s *Scanner) Len() int64 { return s.length }

// Complete reports whether Text holds the whole line.
func (s *Scanner) Complete() bool { return s.complete }

// Err returns the first read or encoding error. An *EncodingError reports
// invalid UTF-8.
func (s *Scanner) Err() error { return s.err }

// Drain validates the rest of the input without splitting it into lines,
// and returns Err. Lines after the last scanned one are not counted.
func (s *Scanner) Drain() error {
	for s.err == nil {
		s.pos = s.valid
		if !s.fill() {
			break
		}
	}
	return s.err
}

// fill reads more input and validates it. It returns false at the end of
// input or on error, with any incomplete UTF-8 tail reported as an error.
func (s *Scanner) fill() bool {
	if s.err != nil {
		return false
	}
	for {
		if s.eof {
			if s.end > s.valid {
				s.err = &EncodingError{Offset: s.base + int64(s.valid)}
			}
			return false
		}
		// Keep only the unvalidated tail (at most 3 bytes).
		if s.ctx != nil && s.ctx.Err() != nil {
			s.err = s.ctx.Err()
			return false
		}
		n := copy(s.buf, s.buf[s.pos:s.end])
		s.base += int64(s.pos)
		s.pos, s.valid, s.end = 0, 0, n
		m, err := s.r.Read(s.buf[n:])
		s.end += m
		if err == io.EOF {
			s.eof = true
		} else if err != nil {
			s.err = err
			return false
		}
		if m == 0 {
			continue
		}
		cut := s.end - incompleteTail(s.buf[:s.end])
		if !utf8.Valid(s.buf[:cut]) {
			s.err = &EncodingError{Offset: s.base + int64(FirstInvalid(s.buf[:cut]))}
			return false
		}
		s.valid = cut
		if cut > 0 {
			return true
		}
	}
}

// incompleteTail returns the length of a UTF-8 sequence at the end of b that
// is a valid prefix still waiting for its continuation bytes.
func incompleteTail(b []byte) int {
	for i := 1; i <= 3 && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(b[len(b)-i:]) {
				return 0
			}
			return i
		}
	}
	return 0
}

// FirstInvalid returns the offset of the first byte of b that is not part
// of a valid UTF-8 sequence, or len(b) when b is valid.
func FirstInvalid(b []byte) int {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// IsEncoding reports whether err is an *EncodingError and returns it.
func IsEncoding(err error) (*EncodingError, bool) {
	var e *EncodingError
	ok := errors.As(err, &e)
	return e, ok
}
