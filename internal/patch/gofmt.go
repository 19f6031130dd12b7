package patch

import (
	"bytes"
	"go/format"
	"strings"

	"github.com/rowkit/rowkit/internal/rows"
)

// FormatRows are the rows of one Go file that the gofmt option changed.
type FormatRows struct {
	Path string        `json:"path" jsonschema:"the Go file's path after the script"`
	Rows []rows.Record `json:"rows" jsonschema:"verified rows of the new content that gofmt wrote differently from the script's text"`
}

// gofmt formats, in memory, every Go file the script writes that was
// gofmt-clean before it (or that it creates), and reports the rows gofmt
// changed. A file that was not gofmt-clean keeps exactly the script's bytes:
// formatting it would rewrite lines nobody asked to touch. The edges of
// each edit are carried over to the formatted content, so the report's rows
// stay current.
func (pl *plan) gofmt() []FormatRows {
	var out []FormatRows
	for _, f := range pl.files {
		if f.deleted || !f.diff || !strings.HasSuffix(f.path, ".go") {
			continue
		}
		if !f.created {
			if clean, err := format.Source(f.base); err != nil || !bytes.Equal(clean, f.base) {
				continue
			}
		}
		got, err := format.Source(f.out)
		if err != nil || bytes.Equal(got, f.out) {
			continue
		}
		pre, post := splitLines(f.out), splitLines(got)
		cs := lineDiff(pre, post)
		move := offsetMap(pre, post, cs)
		for _, e := range append(append([]*edit(nil), f.edits...), f.eof) {
			if e != nil {
				e.outStart, e.outEnd = move(e.outStart, false), move(e.outEnd, true)
			}
		}
		f.out = got
		f.formatted = true
		f.diff = !bytes.Equal(f.out, f.base) || f.created || f.dest != f.target
		x, err := rows.NewIndex(got)
		if err != nil {
			continue
		}
		fr := FormatRows{Path: f.path, Rows: []rows.Record{}}
		for _, c := range cs {
			for l := c.na + 1; l <= c.na+c.nn; l++ {
				fr.Rows = append(fr.Rows, rows.Record{Line: l, Hash: rows.Hash(x.Text(l)), Text: string(x.Text(l))})
			}
		}
		out = append(out, fr)
	}
	return out
}

// offsetMap maps a byte offset of the content before formatting to the
// content after: exactly within an unchanged line, to the same line of a
// change that rewrote lines one for one, and otherwise to the start (or,
// for an end, the end) of the lines a change became.
func offsetMap(pre, post [][]byte, cs []change) func(off int, end bool) int {
	preStart := starts(pre)
	postStart := starts(post)
	return func(off int, end bool) int {
		line := 0 // 0-based line of pre holding off
		for line+1 < len(preStart) && preStart[line+1] <= off {
			line++
		}
		shift := 0 // new line index minus old, from the changes before line
		for _, c := range cs {
			if c.on > 0 && c.oa <= line && line < c.oa+c.on {
				if c.on == c.nn {
					// Lines rewritten one for one (realigned, respaced):
					// the same line, the column kept within it.
					nl := c.na + line - c.oa
					return postStart[nl] + min(off-preStart[line], len(post[nl]))
				}
				if end {
					return postStart[c.na+c.nn]
				}
				return postStart[c.na]
			}
			if line < c.oa+c.on {
				break
			}
			shift += c.nn - c.on
		}
		nl := line + shift
		if line >= len(pre) || nl >= len(post) {
			return postStart[len(post)]
		}
		return postStart[nl] + off - preStart[line]
	}
}

// starts returns each line's offset and, last, the total length.
func starts(ls [][]byte) []int {
	out := make([]int, len(ls)+1)
	for i, l := range ls {
		out[i+1] = out[i] + len(l)
	}
	return out
}

// maxDiffCost bounds the line diff's work; past it the differing middle is
// one change, which is still a correct diff.
const maxDiffCost = 4000

// lineDiff is a shortest line diff (Myers' greedy algorithm) after trimming
// the common prefix and suffix.
func lineDiff(a, b [][]byte) []change {
	pre := 0
	for pre < len(a) && pre < len(b) && bytes.Equal(a[pre], b[pre]) {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && bytes.Equal(a[len(a)-1-suf], b[len(b)-1-suf]) {
		suf++
	}
	a, b = a[pre:len(a)-suf], b[pre:len(b)-suf]
	n, m := len(a), len(b)
	if n == 0 && m == 0 {
		return nil
	}
	whole := []change{{pre, n, pre, m}}
	if n == 0 || m == 0 {
		return whole
	}
	maxD := min(n+m, maxDiffCost)
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int
	for d := 0; d <= maxD; d++ {
		trace = append(trace, append([]int(nil), v...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && bytes.Equal(a[x], b[y]) {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				return shiftChanges(backtrack(trace, off, n, m, d), pre)
			}
		}
	}
	return whole
}

func shiftChanges(cs []change, by int) []change {
	for i := range cs {
		cs[i].oa += by
		cs[i].na += by
	}
	return cs
}

// backtrack walks Myers' trace back from (n, m) and groups the steps into
// changes, in order.
func backtrack(trace [][]int, off, n, m, d int) []change {
	var cs []change
	x, y := n, m
	for dd := d; dd > 0; dd-- {
		v := trace[dd]
		k := x - y
		var pk int
		if k == -dd || k != dd && v[off+k-1] < v[off+k+1] {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := v[off+pk]
		py := px - pk
		for x > px && y > py {
			x, y = x-1, y-1
		}
		c := change{oa: px, na: py}
		if x == px {
			c.nn = 1 // b[py] inserted
		} else {
			c.on = 1 // a[px] deleted
		}
		cs = append(cs, c)
		x, y = px, py
	}
	// Reverse, then merge the steps that touch.
	for i, j := 0, len(cs)-1; i < j; i, j = i+1, j-1 {
		cs[i], cs[j] = cs[j], cs[i]
	}
	var out []change
	for _, c := range cs {
		if k := len(out); k > 0 && out[k-1].oa+out[k-1].on == c.oa && out[k-1].na+out[k-1].nn == c.na {
			out[k-1].on += c.on
			out[k-1].nn += c.nn
			continue
		}
		out = append(out, c)
	}
	return out
}
