package patch

import (
	"bytes"
	"io"
	"math"
	"sort"
	"sync"
)

// A view is a file's new content as a list of pieces, each a range of its
// baseline or the value of an edit, never joined into one buffer: a script
// that changes a line of a large file holds the file once (its baseline),
// not twice, and the commit writes the new content by copying the
// baseline's ranges from the file being replaced (Render), so that the
// content the script does not change is streamed, not held.
//
// While the script is planned (the baseline in memory) a view also answers
// the questions the result asks of the new content, as a rows.Index does
// of bytes in memory: how many lines, which line holds an offset, a line's
// text. It indexes where each line begins, 4 bytes a line.
type view struct {
	base   []byte // the baseline, while planning; nil after
	pieces []piece
	size   int
	starts []uint32 // where each line begins (or wide, past 4 GiB)
	wide   []int
	lined  bool  // indexed
	at     []int // where each piece begins
}

// piece is a range [a, b) of the baseline, or val when isVal.
type piece struct {
	a, b  int
	val   string
	isVal bool
}

func (p piece) len() int {
	if p.isVal {
		return len(p.val)
	}
	return p.b - p.a
}

// bytesOf returns the piece's bytes (the baseline must be held).
func (v *view) bytesOf(p piece) []byte {
	if p.isVal {
		return []byte(p.val)
	}
	return v.base[p.a:p.b]
}

// addBase appends the baseline range [a, b).
func (v *view) addBase(a, b int) {
	if a >= b {
		return
	}
	if n := len(v.pieces); n > 0 && !v.pieces[n-1].isVal && v.pieces[n-1].b == a {
		v.pieces[n-1].b = b
	} else {
		v.pieces = append(v.pieces, piece{a: a, b: b})
	}
	v.size += b - a
}

// addVal appends an edit's value.
func (v *view) addVal(s string) {
	if s == "" {
		return
	}
	v.pieces = append(v.pieces, piece{val: s, isVal: true})
	v.size += len(s)
}

// lastBytes returns up to the last n bytes of the view.
func (v *view) lastBytes(n int) []byte {
	var out []byte
	for i := len(v.pieces) - 1; i >= 0 && len(out) < n; i-- {
		b := v.bytesOf(v.pieces[i])
		take := min(n-len(out), len(b))
		out = append(append([]byte(nil), b[len(b)-take:]...), out...)
	}
	return out
}

// trimEnd drops the last n bytes of the view.
func (v *view) trimEnd(n int) {
	for n > 0 && len(v.pieces) > 0 {
		p := &v.pieces[len(v.pieces)-1]
		l := p.len()
		if l <= n {
			v.pieces = v.pieces[:len(v.pieces)-1]
			v.size -= l
			n -= l
			continue
		}
		if p.isVal {
			p.val = p.val[:l-n]
		} else {
			p.b -= n
		}
		v.size -= n
		n = 0
	}
}

// Bytes joins the view into one buffer: for what must have the new
// content whole (the syntax check of a Go, Python, TS/JS or JSON file,
// gofmt, a dry run's diff).
func (v *view) Bytes() []byte {
	out := make([]byte, 0, v.size)
	for _, p := range v.pieces {
		out = append(out, v.bytesOf(p)...)
	}
	return out
}

// equalsBase reports whether the view holds exactly the baseline.
func (v *view) equalsBase() bool {
	if v.size != len(v.base) {
		return false
	}
	off := 0
	for _, p := range v.pieces {
		if p.isVal || p.a != off {
			if !bytes.Equal(v.bytesOf(p), v.base[off:off+p.len()]) {
				return false
			}
		}
		off += p.len()
	}
	return true
}

// render writes the view to w, copying the baseline's ranges from old,
// which streams the baseline from its start: what the commit calls with
// the file being replaced. It reads old only as far as the last range it
// needs; the caller reads the rest (to prove it was the baseline).
func (v *view) render(w io.Writer, old io.Reader) error {
	buf := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(buf)
	pos := 0
	for _, p := range v.pieces {
		if p.isVal {
			if _, err := io.WriteString(w, p.val); err != nil {
				return err
			}
			continue
		}
		if p.a > pos {
			if _, err := io.CopyN(io.Discard, old, int64(p.a-pos)); err != nil {
				return unexpected(err)
			}
		}
		n, err := io.CopyBuffer(w, io.LimitReader(old, int64(p.b-p.a)), *buf)
		if err != nil {
			return err
		}
		if n < int64(p.b-p.a) {
			return io.ErrUnexpectedEOF
		}
		pos = p.b
	}
	return nil
}

// copyBuffers are render's copy buffers, shared by the files of a
// transaction rendered one after another.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// unexpected turns the EOF of a file shorter than its baseline into an
// error (the commit then finds the file changed).
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// lines returns the view indexed by line (indexing it the first time).
func (v *view) lines() *view {
	if !v.lined {
		v.index()
	}
	return v
}

// unindex drops the line index (lines makes it again if asked).
func (v *view) unindex() { v.starts, v.wide, v.at, v.lined = nil, nil, nil, false }

// index finds where each line of the view begins, as rows.Lines splits
// lines (LF, CRLF, lone CR), across pieces.
func (v *view) index() {
	v.lined = true
	v.at = make([]int, len(v.pieces))
	o := 0
	for i, p := range v.pieces {
		v.at[i] = o
		o += p.len()
	}
	n := 1
	for _, p := range v.pieces {
		b := v.bytesOf(p)
		n += bytes.Count(b, []byte{'\n'}) + bytes.Count(b, []byte{'\r'})
	}
	wide := v.size > math.MaxUint32
	if wide {
		v.wide = make([]int, 0, n)
	} else {
		v.starts = make([]uint32, 0, n)
	}
	add := func(off int) {
		if wide {
			v.wide = append(v.wide, off)
		} else {
			v.starts = append(v.starts, uint32(off))
		}
	}
	off := 0
	lineOpen := false // a line has begun and not ended
	cr := false       // the last byte seen was a CR ending a line
	for _, p := range v.pieces {
		b := v.bytesOf(p)
		for i := 0; i < len(b); {
			if cr {
				cr = false
				if b[i] == '\n' {
					i++ // the LF of a CRLF split between pieces
					continue
				}
			}
			if !lineOpen {
				add(off + i)
				lineOpen = true
			}
			j := bytes.IndexAny(b[i:], "\r\n")
			if j < 0 {
				break
			}
			i += j
			lineOpen = false
			if b[i] == '\r' {
				if i+1 < len(b) {
					if b[i+1] == '\n' {
						i++
					}
				} else {
					cr = true
				}
			}
			i++
		}
		off += len(b)
	}
}

// Count returns the number of lines.
func (v *view) Count() int {
	if v.wide != nil {
		return len(v.wide)
	}
	return len(v.starts)
}

func (v *view) start(i int) int {
	if v.wide != nil {
		return v.wide[i]
	}
	return int(v.starts[i])
}

// Start returns the offset where line n begins.
func (v *view) Start(n int) int { return v.start(n - 1) }

// Len returns the view's size in bytes.
func (v *view) Len() int { return v.size }

// LineAt returns the line holding offset off, as rows.Index.LineAt does.
func (v *view) LineAt(off int) int {
	return sort.Search(v.Count(), func(i int) bool { return v.start(i) > off })
}

// Text returns line n's text without its terminator, copied out of the
// pieces it spans.
func (v *view) Text(n int) []byte {
	a, e := v.Start(n), v.size
	if n < v.Count() {
		e = v.Start(n + 1)
	}
	t := v.slice(a, e)
	switch {
	case bytes.HasSuffix(t, []byte("\r\n")):
		t = t[:len(t)-2]
	case len(t) > 0 && (t[len(t)-1] == '\n' || t[len(t)-1] == '\r'):
		t = t[:len(t)-1]
	}
	return t
}

// slice returns the bytes [a, e) of the view (indexed).
func (v *view) slice(a, e int) []byte {
	var out []byte
	i := max(sort.Search(len(v.at), func(i int) bool { return v.at[i] > a })-1, 0)
	for ; i < len(v.pieces) && v.at[i] < e; i++ {
		p, off := v.pieces[i], v.at[i]
		l := p.len()
		if off+l > a {
			b := v.bytesOf(p)
			out = append(out, b[max(a-off, 0):min(e-off, l)]...)
		}
	}
	return out
}
