package grep

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/rows"
)

// event is one line of ripgrep's JSON stream. Only the fields hgrep uses
// are decoded.
type event struct {
	Type string `json:"type"`
	Data struct {
		Path       data   `json:"path"`
		Lines      data   `json:"lines"`
		Offset     *int64 `json:"absolute_offset"`
		Submatches []span `json:"submatches"`
	} `json:"data"`
}

// data is ripgrep's arbitrary data: UTF-8 text, or base64 bytes when not.
type data struct {
	Text  *string `json:"text"`
	Bytes *string `json:"bytes"`
}

// value returns the data's bytes and whether they were valid UTF-8.
func (d *data) value() ([]byte, bool, error) {
	switch {
	case d.Text != nil:
		return []byte(*d.Text), true, nil
	case d.Bytes != nil:
		b, err := base64.StdEncoding.DecodeString(*d.Bytes)
		return b, false, err
	}
	return nil, true, nil
}

// span is a byte range of a reported line, from a ripgrep submatch.
type span struct{ Start, End int64 }

type rowKey struct {
	file fileKey
	line int
}

// stream turns ripgrep's events into rows pushed to a sink.
type stream struct {
	open   func(path string) (*os.File, error) // opens a reported path without blocking
	sink   rows.Sink
	keep   int // the longest row text worth keeping (the budget's)
	before int
	after  int

	seen map[rowKey]bool // rows pushed, for first-seen de-duplication
	src  *source         // the file of the current events
	buf  []byte          // the read buffer each source borrows in turn

	ring    []row // up to before rows scanned after the last pushed one
	pending int   // after-context rows still to push

	alias     map[string]string // paths ripgrep reports -> the paths to show (/dev/fd/N of a named file)
	skipped   map[string]bool   // reported paths skipped (not UTF-8)
	skips     []string          // their messages, in order
	full      bool              // the sink refused a row: the result is incomplete
	lastPath  string
	pathValid bool
}

func newStream(open func(string) (*os.File, error), sink rows.Sink, keep, before, after int) *stream {
	return &stream{open: open, sink: sink, keep: keep, before: before, after: after,
		seen: map[rowKey]bool{}, skipped: map[string]bool{}}
}

// errFull stops the stream when the sink is full.
var errFull = errs.New(errs.Incomplete, "the sink is full")

// run consumes events until ripgrep's output ends, the sink is full or a
// row cannot be verified.
func (st *stream) run(r *bufio.Reader) error {
	var line []byte
	for {
		var err error
		line, err = readEvent(r, line[:0])
		if err == io.EOF {
			return st.close()
		}
		if err != nil {
			return err
		}
		var ev event
		switch eventType(line) {
		case "end":
			err = st.close()
		case "begin", "context", "summary":
			// Nothing hgrep uses: not decoded.
		default:
			if err := json.Unmarshal(line, &ev); err != nil {
				return errs.Errorf(CodeRg, "cannot parse ripgrep's output: %v", err)
			}
			switch ev.Type {
			case "match":
				err = st.match(&ev)
			case "end":
				err = st.close()
			}
		}
		if err != nil {
			return err
		}
	}
}

// eventType is the type of a ripgrep event read from its first member,
// where ripgrep always writes it ({"type":"match",...}); "" when the line
// does not start so, and is decoded whole.
func eventType(line []byte) string {
	const prefix = `{"type":"`
	if !bytes.HasPrefix(line, []byte(prefix)) {
		return ""
	}
	rest := line[len(prefix):]
	i := bytes.IndexByte(rest, '"')
	if i < 0 || i+1 >= len(rest) || rest[i+1] != ',' {
		return ""
	}
	switch t := rest[:i]; string(t) {
	case "begin", "end", "context", "summary":
		return string(t)
	}
	return ""
}

// match pushes the rows a matched line touches, with their context.
func (st *stream) match(ev *event) error {
	raw, ok, err := ev.Data.Path.value()
	if err != nil {
		return errs.Errorf(CodeRg, "cannot parse ripgrep's output: path: %v", err)
	}
	path := string(raw)
	if a, ok := st.alias[path]; ok {
		path = a
	}
	if !ok {
		if !st.skipped[path] {
			st.skipped[path] = true
			st.skips = append(st.skips, quote(path)+" (not valid UTF-8, so it cannot be printed as a JSON string)")
		}
		return nil
	}
	text, _, err := ev.Data.Lines.value()
	if err != nil {
		return errs.Errorf(CodeRg, "cannot parse ripgrep's output: lines: %v", err)
	}
	if ev.Data.Offset == nil || *ev.Data.Offset < 0 {
		return errs.Errorf(CodeRg, "ripgrep reported a line of %s without its offset", quote(path))
	}
	off := *ev.Data.Offset
	// A line starting inside the last row read (ripgrep split the row at
	// a NUL) continues from there; one starting before it means the file
	// is reported again, and is read again from the start.
	if st.src == nil || st.src.path != path || off < st.src.last {
		if err := st.close(); err != nil {
			return err
		}
		f, err := st.open(path)
		if e, ok := errs.As(err); ok {
			return e
		}
		if err != nil {
			return openError(path, err)
		}
		if st.buf == nil {
			st.buf = make([]byte, bufSize)
		}
		if st.src, err = openSource(path, func() (*os.File, error) { return f, nil }, st.keep, st.buf); err != nil {
			return err
		}
	}
	src := st.src
	if src.utf16 {
		return errs.Errorf(CodeNotUTF8, "%s starts with a UTF-16 byte order mark; verified rows need UTF-8 files", quote(path))
	}
	if err := src.verify(off, text); err != nil {
		return err
	}
	// The byte ranges of the file the match touches, inclusive. A line
	// without submatches (an inverted match) touches all of it; an empty
	// match touches the row holding its position.
	end := off + int64(len(text)) - 1
	if end < off {
		end = off
	}
	var spans []span
	for _, m := range ev.Data.Submatches {
		a, b := off+m.Start, off+m.End-1
		if m.End <= m.Start {
			b = a
		}
		a, b = min(max(a, off), end), min(max(b, off), end)
		spans = append(spans, span{a, b})
	}
	if len(spans) == 0 {
		spans = []span{{off, end}}
	}
	for _, sp := range spans {
		if err := st.reach(sp); err != nil {
			return err
		}
	}
	return nil
}

// reach reads src forward to the last row that overlaps sp, pushing every
// row that does, and context on the way.
func (st *stream) reach(sp span) error {
	src := st.src
	// The rows wholly before the span cannot be touched; with no context
	// due they need not even be looked at.
	if st.before == 0 && st.pending == 0 {
		if err := src.skipTo(sp.Start); err != nil {
			return err
		}
	}
	for src.pos() <= sp.End {
		r, ok, err := src.next(true)
		if err != nil || !ok {
			return err
		}
		if r.next <= sp.Start {
			if err := st.passed(&r); err != nil {
				return err
			}
			continue
		}
		if err := st.touched(&r); err != nil {
			return err
		}
	}
	return nil
}

// passed handles a row that no match touches: after-context, or a
// candidate for the before-context of a later match.
func (st *stream) passed(r *row) error {
	if st.pending > 0 {
		st.pending--
		return st.push(r)
	}
	if st.before == 0 {
		return nil
	}
	if len(st.ring) == st.before {
		copy(st.ring, st.ring[1:])
		st.ring = st.ring[:len(st.ring)-1]
	}
	c := *r
	c.text = nil // read again if it is pushed: the ring holds offsets only
	st.ring = append(st.ring, c)
	return nil
}

// touched pushes a matched row after its before-context.
func (st *stream) touched(r *row) error {
	for i := range st.ring {
		if err := st.push(&st.ring[i]); err != nil {
			return err
		}
	}
	st.ring = st.ring[:0]
	if err := st.push(r); err != nil {
		return err
	}
	st.pending = st.after
	return nil
}

// push offers one row to the sink, once.
func (st *stream) push(r *row) error {
	k := rowKey{st.src.key, r.line}
	if st.seen[k] {
		return nil
	}
	if !r.fits {
		// Longer than any row the budget could admit.
		st.sink.Omit()
		st.full = true
		return errFull
	}
	if err := st.src.load(r); err != nil {
		return err
	}
	if err := st.src.checkText(r); err != nil {
		return err
	}
	ok, err := st.sink.Put(rows.Row{Path: st.src.path, Line: r.line, Text: r.text})
	if err != nil {
		return errs.Errorf(errs.Write, "writing output: %v", err)
	}
	if !ok {
		st.full = true
		return errFull
	}
	st.seen[k] = true
	return nil
}

// close finishes the current file: the after-context still due, then the
// file is closed.
func (st *stream) close() error {
	src := st.src
	if src == nil {
		return nil
	}
	for st.pending > 0 {
		r, ok, err := src.next(true)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		st.pending--
		if err := st.push(&r); err != nil {
			return err
		}
	}
	st.pending = 0
	st.ring = st.ring[:0]
	src.Close()
	st.src = nil
	return nil
}

// maxEvent bounds one JSON line from ripgrep. A line that needs more
// describes a source line far longer than any admissible row.
const maxEvent = 64 << 20

// readEvent appends the next LF-terminated line of r to buf.
func readEvent(r *bufio.Reader, buf []byte) ([]byte, error) {
	for {
		chunk, err := r.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxEvent {
			return nil, errs.Errorf(CodeTooLarge, "ripgrep reported one line with over %d MiB of match data; narrow the search", maxEvent>>20)
		}
		switch err {
		case nil:
			return buf, nil
		case bufio.ErrBufferFull:
			continue
		case io.EOF:
			if len(buf) > 0 {
				return buf, nil
			}
			return nil, io.EOF
		default:
			return nil, errs.Errorf(CodeRg, "reading ripgrep's output: %v", err)
		}
	}
}
