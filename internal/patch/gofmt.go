package patch

import (
	"bytes"
	"go/format"
	"strings"

	"github.com/rowkit/rowkit/internal/diff"
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
		src := f.view.Bytes()
		got, err := format.Source(src)
		if err != nil || bytes.Equal(got, src) {
			continue
		}
		pre, post := splitLines(src), splitLines(got)
		cs := lineDiff(pre, post)
		move := offsetMap(pre, post, cs)
		for _, e := range append(append([]*edit(nil), f.edits...), f.eof) {
			if e != nil {
				e.outStart, e.outEnd = move(e.outStart, false), move(e.outEnd, true)
			}
		}
		f.setContent(got)
		f.formatted = true
		x, err := rows.NewIndex(got)
		if err != nil {
			continue
		}
		fr := FormatRows{Path: f.path, Rows: []rows.Record{}}
		for _, c := range cs {
			for l := c.na + 1; l <= c.na+c.nn; l++ {
				fr.Rows = append(fr.Rows, rows.ClampedRecord(l, x.Text(l)))
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

// lineDiff is a shortest line diff of a and b.
func lineDiff(a, b [][]byte) []change {
	var cs []change
	for _, c := range diff.Func(len(a), len(b), func(i, j int) bool { return bytes.Equal(a[i], b[j]) }, maxDiffCost) {
		cs = append(cs, change{c.Old, c.OldN, c.New, c.NewN})
	}
	return cs
}
