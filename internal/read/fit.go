package read

import (
	"crypto/sha256"
	"strconv"
	"unicode/utf8"
)

// Fit bounds a read by the size of its result as the caller shows it (the
// text a client shows, or the result's JSON): a view whose result is
// larger than Max keeps its first rows as if the byte limit had stopped it
// there, with its notes, continuation and observation made for those rows,
// down to one row (whose text is then clamped as a first line longer than
// the view limit is). The file is read once: the rows are cut from the
// view the scan made, the result made again from them and measured.
type Fit struct {
	Max  int
	Size func(*Result) int
}

// finish fills an ok result from a scan, within r.opts.Fit when set.
func (r *reader) finish(sc *scanResult, conv *Conversion) {
	r.finishText(sc, conv)
	f := r.opts.Fit
	if f == nil || f.Size == nil || f.Max <= 0 || len(sc.lines) == 0 {
		return
	}
	n := len(sc.lines)
	sizeN := f.Size(r.res)
	if sizeN <= f.Max {
		return
	}
	size := func(cut *scanResult) int {
		r.finishText(cut, conv)
		return f.Size(r.res)
	}
	size1 := size(sc.cut(1))
	if size1 > f.Max {
		r.clampFirst(sc, conv, size)
		return
	}
	// The size grows with the rows' bytes, nearly in proportion (a row's
	// JSON or its printed form): the first guess is where the line
	// through one row and all of them meets the bound; the most rows
	// that fit is then looked for on either side of it, each try
	// measured. A result is made and measured a few times; the file is
	// read once.
	cum := make([]int, n+1)
	for i, l := range sc.lines {
		cum[i+1] = cum[i] + len(l.Text) + 1
	}
	k := 1
	if span := cum[n] - cum[1]; span > 0 {
		per := float64(sizeN-size1) / float64(span)
		for k < n-1 && float64(size1)+per*float64(cum[k+1]-cum[1]) <= float64(f.Max) {
			k++
		}
	}
	lo, hi := 1, n-1 // lo rows fit; more than hi do not
	probe := func(k int) bool {
		if size(sc.cut(k)) <= f.Max {
			lo = max(lo, k)
			return true
		}
		hi = min(hi, k-1)
		return false
	}
	if k > 1 {
		if probe(k) {
			if k < hi {
				probe(k + 1)
			}
		} else if k-1 > lo {
			probe(k - 1)
		}
	}
	for lo < hi {
		probe((lo + hi + 1) / 2)
	}
	r.finishText(sc.cut(lo), conv)
}

// clampFirst makes the result of the view's first row alone, its text
// clamped to the longest prefix whose result fits, as a first line longer
// than the view limit is; size makes and measures a result.
func (r *reader) clampFirst(sc *scanResult, conv *Conversion, size func(*scanResult) int) {
	text := sc.lines[0].Text
	lo, hi := 1, len(text) // at least a byte, as the view limit is
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if size(sc.clampFirst(mid)) <= r.opts.Fit.Max {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	// The limit the notes name is the one a read stopped there has.
	r.lim.MaxViewBytes = max(len(runePrefix([]byte(text), lo)), 1)
	r.finishText(sc.clampFirst(lo), conv)
}

// cut returns the scan with its view stopped after k lines by the byte
// limit; sc itself is unchanged.
func (sc *scanResult) cut(k int) *scanResult {
	c := *sc
	c.lines = sc.lines[:k]
	c.bytes = k - 1
	for _, l := range c.lines {
		c.bytes += len(l.Text)
	}
	if k < len(sc.lines) {
		c.stop, c.more, c.budgetOver = "bytes", true, false
	}
	last := c.lines[k-1].Number
	c.clamped = nil
	for _, n := range sc.clamped {
		if n <= last {
			c.clamped = append(c.clamped, n)
		}
	}
	c.viewSum = viewSum(c.lines, sc.sums)
	return &c
}

// clampFirst returns the scan with one line, its text clamped to at most
// max bytes.
func (sc *scanResult) clampFirst(max int) *scanResult {
	c := sc.cut(1)
	l := c.lines[0]
	shown := string(runePrefix([]byte(l.Text), max))
	if len(shown) < len(l.Text) {
		if l.SourceChars == nil {
			l.SourceChars = ptr(utf8.RuneCountInString(l.Text))
		}
		l.Text, l.Clamped = shown, true
		c.byteClamped = l.Number
		c.stop = "bytes"
	}
	c.lines = []Line{l}
	c.bytes = len(l.Text)
	c.viewSum = viewSum(c.lines, sc.sums)
	return c
}

// viewSum is the hash of the view's rows as printed, as the scan makes it.
func viewSum(lines []Line, sums []string) []byte {
	h := sha256.New()
	var row []byte
	for i, l := range lines {
		row = strconv.AppendInt(row[:0], int64(l.Number), 10)
		row = append(row, ':')
		row = append(row, sums[i]...)
		row = append(append(append(row, ' '), l.Text...), '\n')
		h.Write(row)
	}
	return h.Sum(nil)
}
