package grep

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/rows"
)

// Error codes of hgrep for rows it cannot verify.
const (
	CodeNotUTF8    = errs.NotUTF8
	CodeChanged    = errs.Changed
	CodeNotRegular = errs.NotRegular
	CodeRead       = errs.Read
)

// fileKey identifies a file whatever path names it: one file named twice
// (n.txt and ./n.txt, a hard link, a symlink) is one file.
type fileKey struct{ dev, ino uint64 }

// row is one verified row of a source: bytes [start, next) of the file,
// its text (without the terminator) at [start, start+length).
type row struct {
	line        int
	start, next int64
	length      int64
	fits        bool   // at most the longest row worth keeping
	text        []byte // the whole text when held; nil otherwise (see load)
}

// bufSize is the read buffer of a source.
const bufSize = 64 << 10

// source reads one file forward as verified rows (ending at LF, CRLF or a
// lone CR), knowing each row's byte offsets, so that the byte ranges
// ripgrep reports (absolute_offset and the length of the line) map to the
// rows that hold them whatever ripgrep counts as a line: ripgrep ends lines
// at LF only, and in some modes turns a NUL into a line break. The offsets
// are exact because ripgrep runs with --encoding=none.
//
// Reading the file also gives the row text from the file itself, and
// checking ripgrep's text against the bytes at its offset catches a file
// that changed between the two reads.
type source struct {
	path  string // as ripgrep reported it
	key   fileKey
	f     *os.File
	utf16 bool // the file starts with a UTF-16 byte order mark

	buf     []byte
	r, w    int   // buf[r:w] is unread
	base    int64 // file offset of buf[0]
	eof     bool
	line    int   // rows scanned so far
	last    int64 // where the last row scanned starts (pos after skipTo)
	keep    int   // the most text kept for one row
	scratch []byte
	check   []byte // the file's bytes that verify compares
}

// openSource opens path with open (which must not block on a FIFO); path
// is the name ripgrep reported, for messages. buf is its read buffer,
// bufSize bytes, which a stream lends to one source after another: a
// search that reports a thousand files allocates one.
func openSource(path string, open func() (*os.File, error), keep int, buf []byte) (*source, error) {
	f, err := open()
	if err != nil {
		return nil, err
	}
	s := &source{path: path, f: f, buf: buf, keep: keep}
	if fi, err := f.Stat(); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			s.key = fileKey{uint64(st.Dev), uint64(st.Ino)}
		}
	}
	// The rows are read from the start: the first read also shows a
	// UTF-16 byte order mark.
	if _, err := s.fill(); err != nil {
		f.Close()
		return nil, err
	}
	if s.w >= 2 && (s.buf[0] == 0xff && s.buf[1] == 0xfe || s.buf[0] == 0xfe && s.buf[1] == 0xff) {
		s.utf16 = true
	}
	return s, nil
}

// openError turns a failed open of a reported file into hgrep's error.
func openError(path string, err error) error {
	if _, ok := regfile.AsNotRegular(err); ok {
		return errs.Errorf(CodeNotRegular, "%s is not a regular file, so its rows cannot be verified; search regular files only", quote(path))
	}
	return errs.Errorf(CodeRead, "cannot reopen %s to verify its rows: %v", quote(path), regfile.Cause(err))
}

func (s *source) Close() { s.f.Close() }

// pos is the file offset of the next unread byte.
func (s *source) pos() int64 { return s.base + int64(s.r) }

// fill reads more of the file, keeping buf[r:w]. It returns false at the
// end of the file.
func (s *source) fill() (bool, error) {
	if s.eof {
		return false, nil
	}
	if s.r > 0 {
		n := copy(s.buf, s.buf[s.r:s.w])
		s.base += int64(s.r)
		s.r, s.w = 0, n
	}
	for {
		n, err := s.f.Read(s.buf[s.w:])
		s.w += n
		if err == io.EOF {
			s.eof = true
			return n > 0, nil
		}
		if err != nil {
			return false, errs.Errorf(CodeRead, "reading %s: %v", quote(s.path), regfile.Cause(err))
		}
		if n > 0 {
			return true, nil
		}
	}
}

// next scans the next row, keeping its text when keep is set and it is at
// most s.keep bytes long. It returns false at the end of the file.
func (s *source) next(keep bool) (row, bool, error) {
	r := row{start: s.pos()}
	text := s.scratch[:0]
	started := false
	for {
		if s.r == s.w {
			more, err := s.fill()
			if err != nil {
				return r, false, err
			}
			if !more {
				if !started {
					return r, false, nil
				}
				break // an unterminated last row
			}
		}
		started = true
		chunk := s.buf[s.r:s.w]
		i := rows.IndexTerm(chunk)
		if i < 0 {
			text = s.add(text, chunk, r.length, keep)
			r.length += int64(len(chunk))
			s.r = s.w
			continue
		}
		text = s.add(text, chunk[:i], r.length, keep)
		r.length += int64(i)
		s.r += i + 1
		if chunk[i] == '\r' {
			if s.r == s.w {
				if _, err := s.fill(); err != nil {
					return r, false, err
				}
			}
			if s.r < s.w && s.buf[s.r] == '\n' {
				s.r++
			}
		}
		break
	}
	s.scratch = text
	s.last = r.start
	s.line++
	r.line = s.line
	r.next = s.pos()
	r.fits = r.length <= int64(s.keep)
	if keep && r.fits {
		r.text = text
	}
	return r, true, nil
}

// load reads the text of a row that fits but was not held.
func (s *source) load(r *row) error {
	if r.text != nil || !r.fits {
		return nil
	}
	buf := make([]byte, r.length)
	if n, err := s.f.ReadAt(buf, r.start); n < len(buf) {
		if err != nil && err != io.EOF {
			return errs.Errorf(CodeRead, "reading %s: %v", quote(s.path), regfile.Cause(err))
		}
		return s.changed(r.start)
	}
	r.text = buf
	return nil
}

func (s *source) add(text, b []byte, have int64, keep bool) []byte {
	if keep && have+int64(len(b)) <= int64(s.keep) {
		return append(text, b...)
	}
	return text
}

// skipTo passes quickly over the whole rows that end before offset limit,
// counting them without looking at their text. It stops at a row boundary
// at or before limit.
func (s *source) skipTo(limit int64) error {
	for s.pos() < limit {
		if s.r == s.w {
			more, err := s.fill()
			if err != nil || !more {
				return err
			}
		}
		region := s.buf[s.r:s.w]
		if room := limit - s.pos(); int64(len(region)) > room {
			region = region[:room]
		}
		cut := bytes.LastIndexByte(region, '\n') + 1
		if cut == 0 {
			return nil // the row in progress reaches limit: scan it
		}
		region = region[:cut]
		n := bytes.Count(region, []byte{'\n'})
		for i := 0; ; {
			j := bytes.IndexByte(region[i:], '\r')
			if j < 0 {
				break
			}
			i += j + 1
			if region[i] != '\n' { // region ends in LF, so i is in range
				n++
			}
		}
		s.line += n
		s.r += cut
		s.last = s.pos()
	}
	return nil
}

// verify checks that the file holds text at offset off: ripgrep's report
// of a line is the file's own bytes, except that ripgrep may have turned a
// NUL ending it into a line break.
func (s *source) verify(off int64, text []byte) error {
	if cap(s.check) < min(len(text), bufSize) {
		s.check = make([]byte, min(max(len(text), 256), bufSize))
	}
	buf := s.check[:cap(s.check)]
	for done := 0; done < len(text); {
		want := text[done:min(len(text), done+len(buf))]
		n, err := s.f.ReadAt(buf[:len(want)], off+int64(done))
		if n < len(want) {
			if err != nil && err != io.EOF {
				return errs.Errorf(CodeRead, "reading %s: %v", quote(s.path), regfile.Cause(err))
			}
			return s.changed(off)
		}
		if !bytes.Equal(buf[:n], want) {
			last := done+n == len(text)
			if !last || !bytes.Equal(buf[:n-1], want[:n-1]) || buf[n-1] != 0 || want[n-1] != '\n' {
				return s.changed(off)
			}
		}
		done += n
	}
	return nil
}

func (s *source) changed(off int64) error {
	return errs.Errorf(CodeChanged, "%s changed during the search: its bytes at offset %d differ from the line ripgrep matched", quote(s.path), off)
}

// checkText refuses a row that is not valid UTF-8.
func (s *source) checkText(r *row) error {
	if !utf8.Valid(r.text) {
		return errs.Errorf(CodeNotUTF8, "%s: row %d is not valid UTF-8 (invalid byte at offset %d of the row); verified rows need UTF-8 text",
			quote(s.path), r.line, firstInvalid(r.text))
	}
	return nil
}

func firstInvalid(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// quote renders a path for a diagnostic as a Go string literal: control
// characters and bytes that are not UTF-8 are escaped, so that a file name
// can never reach a terminal as an escape sequence.
func quote(path string) string { return strconv.Quote(path) }

// printable escapes the control characters and invalid UTF-8 in a message
// that is not ours (ripgrep's diagnostics name files as they are), and
// leaves everything else as it is.
func printable(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b []byte
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = fmt.Appendf(b, `\x%02x`, s[i])
		case unicode.IsControl(r) || r == utf8.RuneError:
			q := strconv.QuoteRune(r)
			b = append(b, q[1:len(q)-1]...)
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(b)
}
