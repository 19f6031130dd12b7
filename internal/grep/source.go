package grep

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/rows"
)

// Error codes of hgrep for rows it cannot verify.
const (
	CodeNotUTF8    = "not_utf8"
	CodeChanged    = "changed"
	CodeNotRegular = "not_regular"
	CodeRead       = "read"
)

var bom = []byte("\uFEFF")

// keepBytes is the most of one ripgrep line a source keeps: the longest row
// that could be admitted plus a byte order mark and a CRLF.
const keepBytes = rows.MaxRowBytes + 8

// errRowTooLong reports a reported line longer than any admissible row.
var errRowTooLong = errors.New("row too long to admit")

// source re-reads one file the way ripgrep numbers it, with lines ending at
// LF only, and turns the lines ripgrep reports into verified rows.
//
// ripgrep's line numbers count LF. A verified row also ends at a lone CR,
// so a lone CR anywhere before a reported line shifts its row number, and
// ripgrep's events alone cannot reveal that: only the file can. Reading the
// file up to each reported line also gives the row text from the file
// itself (ripgrep drops a UTF-8 byte order mark and may transcode UTF-16),
// and checking it against ripgrep's text catches a file that changed between
// the two reads.
type source struct {
	path  string
	f     *os.File
	r     *bufio.Reader
	lf    int    // ripgrep lines read so far; cur is line lf
	rows  int    // verified rows ending before line lf
	cur   []byte // line lf with its terminator, when full
	full  bool   // cur holds all of line lf
	nrows int    // verified rows in line lf
	utf16 bool   // the file starts with a UTF-16 byte order mark
}

// openSource opens path, relative to dir as ripgrep reported it, which must
// be a regular file. It opens without blocking, so a FIFO cannot hang hgrep.
func openSource(dir, path string) (*source, error) {
	name := path
	if !filepath.IsAbs(path) {
		// Not filepath.Join: cleaning "link/../x" could name another file.
		name = dir + string(filepath.Separator) + path
	}
	f, _, err := regfile.Open(os.Stat, os.OpenFile, name)
	if _, ok := regfile.AsNotRegular(err); ok {
		return nil, errs.Errorf(CodeNotRegular, "%s is not a regular file, so its rows cannot be verified; search regular files only", quote(path))
	}
	if err != nil {
		return nil, errs.Errorf(CodeRead, "cannot reopen %s to verify its rows: %v", quote(path), regfile.Cause(err))
	}
	return &source{path: path, f: f, r: bufio.NewReaderSize(f, 64<<10)}, nil
}

func (s *source) Close() { s.f.Close() }

// seek makes line n (ripgrep's number) the current line. It returns false
// when the file has fewer lines.
func (s *source) seek(n int) (bool, error) {
	for s.lf < n {
		ok, err := s.next(s.lf+1 == n)
		if !ok || err != nil {
			return false, err
		}
	}
	return s.lf == n, nil
}

// next reads the next line, keeping its bytes when keep is set.
func (s *source) next(keep bool) (bool, error) {
	s.rows += s.nrows
	s.cur, s.full, s.nrows = s.cur[:0], true, 0
	var n, lone int
	pendingCR := false
	for {
		chunk, err := s.r.ReadSlice('\n')
		if len(chunk) > 0 {
			if pendingCR && chunk[0] != '\n' {
				lone++
			}
			pendingCR = false
			for i := 0; ; {
				j := bytes.IndexByte(chunk[i:], '\r')
				if j < 0 {
					break
				}
				i += j + 1
				if i == len(chunk) {
					pendingCR = true
				} else if chunk[i] != '\n' {
					lone++
				}
			}
			if n == 0 && s.lf == 0 && len(chunk) >= 2 &&
				(chunk[0] == 0xff && chunk[1] == 0xfe || chunk[0] == 0xfe && chunk[1] == 0xff) {
				s.utf16 = true
			}
			n += len(chunk)
			if keep && s.full {
				if len(s.cur)+len(chunk) <= keepBytes {
					s.cur = append(s.cur, chunk...)
				} else {
					s.full = false
				}
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			return false, errs.Errorf(CodeRead, "reading %s: %v", quote(s.path), regfile.Cause(err))
		}
		break
	}
	if n == 0 {
		return false, nil
	}
	s.lf++
	// Every lone CR ends a row and starts another; a CR that ends the file
	// ends the last row (pendingCR) and starts none, so it adds nothing.
	s.nrows = 1 + lone
	return true, nil
}

// segment is one verified row inside the current line.
type segment struct {
	line       int
	start, end int // text is cur[start:end]; a CR or the terminator is at end
}

// segments splits the current line into its verified rows.
func (s *source) segments() []segment {
	content := s.cur
	switch {
	case bytes.HasSuffix(content, []byte("\r\n")):
		content = content[:len(content)-2]
	case bytes.HasSuffix(content, []byte("\n")):
		content = content[:len(content)-1]
	case bytes.HasSuffix(content, []byte("\r")):
		content = content[:len(content)-1]
	}
	segs := make([]segment, 0, s.nrows)
	start := 0
	for {
		j := bytes.IndexByte(content[start:], '\r')
		if j < 0 {
			segs = append(segs, segment{line: s.rows + len(segs) + 1, start: start, end: len(content)})
			return segs
		}
		segs = append(segs, segment{line: s.rows + len(segs) + 1, start: start, end: start + j})
		start += j + 1
	}
}

// span is a byte range of a reported line, from a ripgrep submatch.
type span struct{ Start, End int }

// rowsOf returns the verified rows of ripgrep's line n, whose text ripgrep
// reported as rgText, that hold what ripgrep reported: the rows touched by
// a submatch, or every row of the line when there are none (context lines,
// inverted matches). A line without lone CRs is exactly one row.
func (s *source) rowsOf(n int, rgText []byte, subs []span) ([]segment, error) {
	ok, err := s.seek(n)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errs.Errorf(CodeChanged, "%s changed during the search: it no longer has the line %d that ripgrep reported", quote(s.path), n)
	}
	if !s.full {
		return nil, errRowTooLong
	}
	shift := 0
	if n == 1 && bytes.HasPrefix(s.cur, bom) && !bytes.HasPrefix(rgText, bom) {
		shift = len(bom) // ripgrep strips a UTF-8 byte order mark; the row keeps it
	}
	if !bytes.Equal(s.cur[shift:], rgText) {
		if s.utf16 {
			return nil, errs.Errorf(CodeNotUTF8, "%s is UTF-16 (ripgrep transcodes it); verified rows need UTF-8 files", quote(s.path))
		}
		return nil, errs.Errorf(CodeChanged, "%s changed during the search: line %d differs from the text ripgrep matched", quote(s.path), n)
	}
	segs := s.segments()
	if len(segs) > 1 && len(subs) > 0 {
		var picked []segment
		for i, sg := range segs {
			end := sg.end
			if i == len(segs)-1 {
				end = int(^uint(0) >> 1) // the line's terminator belongs to its last row
			}
			for _, m := range subs {
				a, b := m.Start+shift, m.End+shift
				last := b - 1
				if b <= a {
					last = a
				}
				if sg.start <= last && a <= end {
					picked = append(picked, sg)
					break
				}
			}
		}
		if len(picked) > 0 {
			segs = picked
		}
	}
	for _, sg := range segs {
		if text := s.cur[sg.start:sg.end]; !utf8.Valid(text) {
			return nil, errs.Errorf(CodeNotUTF8, "%s: row %d is not valid UTF-8 (invalid byte at offset %d of the line); verified rows need UTF-8 text",
				quote(s.path), sg.line, rows.FirstInvalid(text))
		}
	}
	return segs, nil
}

// quote renders a path for a diagnostic, escaping what a terminal would
// misread.
func quote(path string) string { return fmt.Sprintf("%q", path) }
