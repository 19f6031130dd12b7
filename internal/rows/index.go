package rows

import "sort"

// Term is a line terminator.
type Term uint8

// The terminators a logical line can end with.
const (
	TermNone Term = iota // the last line of a file without a final terminator
	TermLF
	TermCRLF
	TermCR
)

// String returns the terminator's bytes.
func (t Term) String() string {
	switch t {
	case TermLF:
		return "\n"
	case TermCRLF:
		return "\r\n"
	case TermCR:
		return "\r"
	}
	return ""
}

// Name returns the terminator's name: LF, CRLF, CR or none.
func (t Term) Name() string {
	switch t {
	case TermLF:
		return "LF"
	case TermCRLF:
		return "CRLF"
	case TermCR:
		return "CR"
	}
	return "none"
}

// Index is a whole file in memory split into logical lines, with each
// line's terminator: what an engine needs to map byte offsets to verified
// rows (inspect) or to replace lines byte for byte (the edit engine).
// Lines are numbered from 1.
type Index struct {
	src    []byte
	starts []int // offset where each line's text begins
	ends   []int // offset where each line's text ends (its terminator begins)
}

// NewIndex validates src as strict UTF-8 and splits it into lines. An
// invalid byte is reported as an *EncodingError.
func NewIndex(src []byte) (*Index, error) {
	x := &Index{src: src}
	err := Lines(src, func(start, n int) {
		x.starts = append(x.starts, start)
		x.ends = append(x.ends, start+n)
	})
	if err != nil {
		return nil, err
	}
	return x, nil
}

// Src returns the indexed bytes.
func (x *Index) Src() []byte { return x.src }

// Count returns the number of lines.
func (x *Index) Count() int { return len(x.starts) }

// Text returns line n's text without its terminator.
func (x *Index) Text(n int) []byte { return x.src[x.starts[n-1]:x.ends[n-1]] }

// Start returns the offset where line n's text begins.
func (x *Index) Start(n int) int { return x.starts[n-1] }

// End returns the offset just past line n's terminator: the start of line
// n+1, or len(src) for the last line.
func (x *Index) End(n int) int {
	if n < len(x.starts) {
		return x.starts[n]
	}
	return len(x.src)
}

// Term returns line n's terminator.
func (x *Index) Term(n int) Term {
	switch x.End(n) - x.ends[n-1] {
	case 0:
		return TermNone
	case 2:
		return TermCRLF
	}
	if x.src[x.ends[n-1]] == '\r' {
		return TermCR
	}
	return TermLF
}

// LineAt returns the line holding byte offset off; a terminator belongs to
// the line it ends. Offsets past the end fall on the last line, offsets
// before the start on line 0.
func (x *Index) LineAt(off int) int {
	return sort.Search(len(x.starts), func(i int) bool { return x.starts[i] > off })
}

// Ref returns line n's identity.
func (x *Index) Ref(n int) Ref { return RefOf(n, x.Text(n)) }
