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
