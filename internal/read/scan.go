package read

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/rowkit/rowkit/internal/rows"
)

// scanResult is what one pass over a text found: the view, and the count
// and hash of everything up to the scan limit.
type scanResult struct {
	lines       []Line
	bytes       int      // view bytes: shown text plus one separator per line after the first
	stop        string   // what closed the view before the text ended: lines, bytes or budget
	more        bool     // a complete line follows the view
	byteClamped int      // the first line, clamped to the view's byte limit
	budgetOver  bool     // the first line was shown although the budget refused it
	clamped     []int    // lines clamped to maxCharsPerLine (at most 20 kept)
	sums        []string // the lines' hashes, as their rows show them
	nClamped    int

	count      int   // complete lines scanned
	reachedEnd bool  // the scan saw the whole text
	limited    bool  // the scan limit stopped it
	scanned    int64 // bytes scanned
	contentSum []byte
	viewSum    []byte
	encoding   *rows.EncodingError
}

// scan reads src, of about size bytes, as lines. rowIDs gives each shown
// line its verified-row hash (a file scanned as is); converted text has none.
func (r *reader) scan(src io.Reader, size int64, rowIDs bool) (*scanResult, error) {
	req := r.res.Request
	h := newAsyncHash()
	defer h.close()
	lr := &limitReader{r: src, ctx: r.ctx, max: r.lim.MaxScanBytes, h: h}
	sc := rows.NewScannerSize(lr, min(size, r.lim.MaxScanBytes))
	out := &scanResult{}
	var budget ViewBudget
	if r.opts.Budget != nil {
		budget = r.opts.Budget()
	}
	maxChars, maxView := r.lim.MaxCharsPerLine, r.lim.MaxViewBytes
	// Enough text to clamp either way; a longer line is hashed and
	// measured through the tap without being kept.
	keep := min(maxChars*utf8.UTFMax, maxView+utf8.UTFMax)
	lineHash := sha256.New()
	chars := 0
	tap := func(b []byte) {
		lineHash.Write(b)
		chars += utf8.RuneCount(b)
	}
	viewHash := sha256.New()
	// What the view's lines keep follows the view's size: the lines at
	// an estimate of 16 bytes each, their texts and hashes in one arena.
	view := max(min(size, int64(maxView)), 0)
	out.lines = make([]Line, 0, max(min(view/16+1, int64(req.Limit)), 0))
	texts := arena{buf: make([]byte, 0, view+view/4)}
	var row []byte
	var sum [sha256.Size]byte
	open, full := true, false
	for {
		n := sc.Line() + 1
		inView := open && n >= req.Offset
		k := 0
		if inView {
			k = keep
			lineHash.Reset()
			chars = 0
			sc.SetTap(tap)
		} else {
			sc.SetTap(nil)
		}
		if !sc.Scan(k) {
			break
		}
		if lr.limited && lr.exhausted {
			break // the line the scan limit cut: not a line we know
		}
		out.count = n
		if !inView {
			if !open {
				out.more = true
			}
			continue
		}
		text, complete := sc.Text(), sc.Complete()
		shown := text
		charClamp := chars > maxChars
		if charClamp {
			shown = firstRunes(text, maxChars)
		}
		sep := 0
		if len(out.lines) > 0 {
			sep = 1
		}
		// A line longer than keep and not clamped by characters is longer
		// than the whole view.
		if (!complete && !charClamp) || out.bytes+sep+len(shown) > maxView {
			if len(out.lines) > 0 {
				out.stop, open, out.more = "bytes", false, true
				continue
			}
			shown = runePrefix(shown, maxView)
			out.byteClamped = n
		}
		lineHash.Sum(sum[:0])
		row = strconv.AppendInt(row[:0], int64(n), 10)
		row = append(row, ':')
		row = hex.AppendEncode(row, sum[:2])
		hashHex := texts.str(row[len(row)-4:])
		row = append(append(append(row, ' '), shown...), '\n')
		if budget != nil && !budget.Admit(row) {
			if len(out.lines) > 0 {
				out.stop, open, out.more = "budget", false, true
				continue
			}
			out.budgetOver = true
		}
		viewHash.Write(row)
		line := Line{Number: n, Text: texts.str(shown), Clamped: int64(len(shown)) < sc.Len()}
		if rowIDs {
			line.Hash = hashHex
		}
		if line.Clamped {
			line.SourceChars = ptr(chars)
		}
		if charClamp {
			out.nClamped++
			if len(out.clamped) < 20 {
				out.clamped = append(out.clamped, n)
			}
		}
		out.lines = append(out.lines, line)
		out.sums = append(out.sums, hashHex)
		out.bytes += sep + len(shown)
		switch {
		case out.byteClamped != 0:
			out.stop, open = "bytes", false
		case out.budgetOver:
			out.stop, open = "budget", false
		case len(out.lines) == req.Limit:
			open, full = false, true
		}
	}
	if err := sc.Err(); err != nil {
		enc, ok := rows.IsEncoding(err)
		switch {
		case ok && lr.limited && enc.Offset >= lr.n-utf8.UTFMax:
			// The limit cut a character in two.
		case ok:
			out.encoding = enc
			return out, nil
		case r.ctx.Err() != nil:
			return nil, r.aborted()
		default:
			return nil, r.ioError(err)
		}
	}
	if full && out.more && out.stop == "" {
		out.stop = "lines"
	}
	if !out.more {
		out.stop = "" // nothing after the view: nothing to continue to
		if out.byteClamped != 0 {
			out.stop = "bytes"
		}
	}
	out.limited, out.reachedEnd, out.scanned = lr.limited, !lr.limited, lr.n
	if out.reachedEnd {
		out.contentSum = h.sum()
	}
	out.viewSum = viewHash.Sum(nil)
	return out, nil
}

// firstRunes returns the first n characters of b, or the longest prefix of
// whole characters when b has fewer (b may end in a cut character).
func firstRunes(b []byte, n int) []byte {
	i := 0
	for ; n > 0 && i < len(b); n-- {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		i += size
	}
	return b[:i]
}

// runePrefix returns the longest prefix of b of at most max bytes that ends
// on a character boundary.
func runePrefix(b []byte, max int) []byte {
	if len(b) <= max {
		return firstRunes(b, len(b))
	}
	b = b[:max]
	if i := lastStart(b); !utf8.FullRune(b[i:]) {
		b = b[:i]
	}
	return b
}

func lastStart(b []byte) int {
	i := len(b) - 1
	for i > 0 && !utf8.RuneStart(b[i]) {
		i--
	}
	return max(i, 0)
}

// limitReader passes at most max bytes of r, hashing them, and finds out
// whether r had more (limited). After it has returned EOF, exhausted is
// set: a line the scanner ends only then was cut by the limit if limited.
type limitReader struct {
	r         io.Reader
	ctx       context.Context
	max, n    int64
	h         *asyncHash
	limited   bool
	exhausted bool
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.exhausted {
		return 0, io.EOF
	}
	if err := l.ctx.Err(); err != nil {
		return 0, err
	}
	room := l.max - l.n
	if room == 0 {
		var probe [1]byte
		for {
			m, err := l.r.Read(probe[:])
			if m > 0 {
				l.limited = true
				break
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return 0, err
			}
		}
		l.exhausted = true
		return 0, io.EOF
	}
	if int64(len(p)) > room {
		p = p[:room]
	}
	m, err := l.r.Read(p)
	l.n += int64(m)
	l.h.write(p[:m])
	if err == io.EOF {
		l.exhausted = true
	}
	return m, err
}

// asyncHash computes SHA-256 in its own goroutine, on copies of what it is
// given, so that hashing the content overlaps splitting it into lines
// (two cores make the scan about as fast as the slower of the two).
type asyncHash struct {
	h    hash.Hash
	in   chan []byte
	free chan []byte
	done chan struct{}
	made int
	shut bool
}

const hashChunk = 256 << 10

func newAsyncHash() *asyncHash {
	a := &asyncHash{h: sha256.New(), in: make(chan []byte, 2), free: make(chan []byte, 2), done: make(chan struct{})}
	go func() {
		defer close(a.done)
		for b := range a.in {
			a.h.Write(b)
			a.free <- b[:cap(b)]
		}
	}()
	return a
}

func (a *asyncHash) write(p []byte) {
	for len(p) > 0 {
		b := a.buffer(len(p))
		n := copy(b, p)
		a.in <- b[:n]
		p = p[n:]
	}
}

// buffer returns a free buffer, allocating at most two in all (a small
// input gets small ones).
func (a *asyncHash) buffer(want int) []byte {
	select {
	case b := <-a.free:
		return b
	default:
	}
	if a.made < 2 {
		a.made++
		return make([]byte, min(want, hashChunk))
	}
	return <-a.free
}

// sum waits for the hash of everything written.
func (a *asyncHash) sum() []byte {
	a.close()
	<-a.done
	return a.h.Sum(nil)
}

func (a *asyncHash) close() {
	if !a.shut {
		a.shut = true
		close(a.in)
	}
}

// arena backs strings with few allocations: bytes appended to it are never
// written again, and a full buffer is left to the strings that use it.
type arena struct{ buf []byte }

// arenaChunk is the least an arena allocates when its buffer is full.
const arenaChunk = 4 << 10

// str returns b as a string held by the arena.
func (a *arena) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if cap(a.buf)-len(a.buf) < len(b) {
		a.buf = make([]byte, 0, max(len(b), arenaChunk))
	}
	at := len(a.buf)
	a.buf = append(a.buf, b...)
	return unsafe.String(&a.buf[at], len(b))
}
