package rows

import "unicode/utf8"

// Lines splits src, a whole file in memory, into the same logical lines
// as Scanner, without Scanner's buffer: it calls fn with the byte offset
// where each line's text begins and the text's length (terminator
// excluded). src is validated as strict UTF-8 first; an invalid byte is
// reported as an *EncodingError with the offset Scanner would give, and
// then fn is never called.
func Lines(src []byte, fn func(start, n int)) error {
	if !utf8.Valid(src) {
		return &EncodingError{Offset: int64(FirstInvalid(src))}
	}
	off := 0
	for off < len(src) {
		rest := src[off:]
		i := IndexTerm(rest)
		if i < 0 {
			fn(off, len(rest))
			return nil
		}
		fn(off, i)
		off += i + 1
		if rest[i] == '\r' && off < len(src) && src[off] == '\n' {
			off++
		}
	}
	return nil
}
