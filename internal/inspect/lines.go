package inspect

import (
	"sort"

	"github.com/rowkit/rowkit/internal/rows"
)

// lineIndex maps byte offsets of a file to its verified rows. The lines are
// the ones rows.Lines produces (LF, CRLF and a lone CR each end a line, as
// for every verified-row tool), so every span agrees with hread and with
// edit targets, whatever line numbering a parser uses internally.
type lineIndex struct {
	src    []byte
	starts []int // byte offset where each line's text begins
	lens   []int // length of each line's text, terminator excluded
}

// indexLines validates src as strict UTF-8 and splits it into lines. An
// invalid byte is reported as a *rows.EncodingError.
func indexLines(src []byte) (*lineIndex, error) {
	x := &lineIndex{src: src}
	err := rows.Lines(src, func(start, n int) {
		x.starts = append(x.starts, start)
		x.lens = append(x.lens, n)
	})
	if err != nil {
		return nil, err
	}
	return x, nil
}

// count returns the number of logical lines.
func (x *lineIndex) count() int { return len(x.starts) }

// lineAt returns the one-based line holding byte offset off; a terminator
// belongs to the line it ends. Offsets past the end fall on the last line.
func (x *lineIndex) lineAt(off int) int {
	return sort.Search(len(x.starts), func(i int) bool { return x.starts[i] > off })
}

// ref returns the identity of a one-based line.
func (x *lineIndex) ref(line int) rows.Ref {
	s := x.starts[line-1]
	return rows.RefOf(line, x.src[s:s+x.lens[line-1]])
}

// place sets the entries' line identities from their byte spans and drops
// any entry that falls on no line (only possible in an empty file). Trailing
// white space and terminators inside a span do not extend it.
func (x *lineIndex) place(entries []Entry) []Entry {
	out := entries[:0]
	if x.count() == 0 {
		return out
	}
	for _, e := range entries {
		start, end := max(e.start, 0), min(e.end, len(x.src))
		for end > start+1 && isSpaceByte(x.src[end-1]) {
			end--
		}
		if end <= start {
			end = start + 1
		}
		a, b := x.lineAt(start), x.lineAt(end-1)
		if a < 1 {
			a = 1
		}
		if b < a {
			b = a
		}
		e.Line, e.LineEnd = x.ref(a), x.ref(b)
		out = append(out, e)
	}
	return out
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
