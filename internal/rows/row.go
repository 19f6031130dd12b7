package rows

import (
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"
)

const hexDigits = "0123456789abcdef"

// Hash returns the four lowercase hex digits of the first two bytes of the
// SHA-256 of text.
func Hash(text []byte) string {
	return string(AppendHash(nil, text))
}

// AppendHash appends Hash(text) to dst.
func AppendHash(dst, text []byte) []byte {
	sum := sha256.Sum256(text)
	return append(dst, hexDigits[sum[0]>>4], hexDigits[sum[0]&15], hexDigits[sum[1]>>4], hexDigits[sum[1]&15])
}

// AppendRow appends the printed row "LINE:HASH TEXT\n" to dst.
func AppendRow(dst []byte, line int, text []byte) []byte {
	dst = strconv.AppendInt(dst, int64(line), 10)
	dst = append(dst, ':')
	dst = AppendHash(dst, text)
	dst = append(dst, ' ')
	dst = append(dst, text...)
	return append(dst, '\n')
}

// Ref is a row reference, LINE:HASH.
type Ref struct {
	Line int
	Hash string
}

// RefOf returns the reference of a line with the given number and text.
func RefOf(line int, text []byte) Ref { return Ref{Line: line, Hash: Hash(text)} }

func (r Ref) String() string { return strconv.Itoa(r.Line) + ":" + r.Hash }

// Span is an inclusive range of rows, printed ROW..ROW. A single row is a
// span whose ends are equal.
type Span struct {
	Start, End Ref
}

func (s Span) String() string {
	if s.Start == s.End {
		return s.Start.String()
	}
	return s.Start.String() + ".." + s.End.String()
}

// RefError explains why a row reference is malformed.
type RefError struct {
	Input  string
	Reason string
}

func (e *RefError) Error() string {
	return fmt.Sprintf("malformed row reference %q: %s", e.Input, e.Reason)
}

// ParseRef parses LINE:HASH, where LINE is a positive decimal number without
// leading zeros and HASH is four lowercase hex digits.
func ParseRef(s string) (Ref, error) {
	line, hash, ok := strings.Cut(s, ":")
	if !ok {
		return Ref{}, &RefError{s, "want LINE:HASH, e.g. 12:8ed3"}
	}
	if reason := checkLine(line); reason != "" {
		return Ref{}, &RefError{s, reason}
	}
	if len(hash) != 4 {
		return Ref{}, &RefError{s, "HASH must be exactly four lowercase hex digits"}
	}
	for i := 0; i < len(hash); i++ {
		if !strings.ContainsRune(hexDigits, rune(hash[i])) {
			return Ref{}, &RefError{s, "HASH must be exactly four lowercase hex digits"}
		}
	}
	n, err := strconv.Atoi(line)
	if err != nil {
		return Ref{}, &RefError{s, "LINE is too large"}
	}
	return Ref{Line: n, Hash: hash}, nil
}

func checkLine(line string) string {
	switch {
	case line == "":
		return "LINE is missing"
	case line[0] == '0':
		return "LINE must be a positive number without leading zeros"
	}
	for i := 0; i < len(line); i++ {
		if line[i] < '0' || line[i] > '9' {
			return "LINE must be a decimal number"
		}
	}
	return ""
}

// ParseSpan parses ROW or ROW..ROW. The end row must not come before the
// start row.
func ParseSpan(s string) (Span, error) {
	a, b, ok := strings.Cut(s, "..")
	if !ok {
		r, err := ParseRef(s)
		return Span{r, r}, err
	}
	start, err := ParseRef(a)
	if err != nil {
		return Span{}, err
	}
	end, err := ParseRef(b)
	if err != nil {
		return Span{}, err
	}
	if end.Line < start.Line {
		return Span{}, &RefError{s, "the range ends before it starts"}
	}
	if end.Line == start.Line && end.Hash != start.Hash {
		return Span{}, &RefError{s, "both ends name the same line with different hashes"}
	}
	return Span{start, end}, nil
}
