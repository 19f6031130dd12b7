package tokens

import (
	_ "embed"
	"unicode/utf8"
)

// The classes of the pre-token pattern, one per code point. The pattern's
// character sets are unions of these: \p{L} is upper, lower and both; the
// pattern's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] is upper, both and mark, its
// [\p{Ll}\p{Lm}\p{Lo}\p{M}] lower, both and mark; \s is space and newline.
const (
	classOther   = iota // none of the below
	classUpper          // Lu, Lt
	classLower          // Ll
	classBoth           // Lm, Lo
	classMark           // M (not a letter: \p{L} leaves it out)
	classNumber         // N
	classSpace          // White_Space but CR and LF
	classNewline        // CR, LF
)

const blockBits = 7 // code points per block of classes.bin: 1<<blockBits

// classTable is stage1 (a uint16 block number per block of code points)
// followed by the distinct blocks; see internal/gen.
//
//go:embed classes.bin
var classTable string

const stage1Len = 2 * (0x110000 >> blockBits)

// asciiClass holds the classes of ASCII; 256 entries so that indexing by a
// byte needs no bounds check.
var asciiClass = func() (t [256]uint8) {
	for c := range utf8.RuneSelf {
		t[c] = classOfRune(rune(c))
	}
	return t
}()

func classOfRune(r rune) uint8 {
	i := 2 * int(r>>blockBits)
	block := int(classTable[i]) | int(classTable[i+1])<<8
	return classTable[stage1Len+block<<blockBits+int(r&(1<<blockBits-1))]
}

// classAt returns the class of the character at s[i] and its length in
// bytes. An invalid byte is a one-byte character of classOther.
func classAt(s string, i int) (uint8, int) {
	c := s[i]
	if c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	return classAtSlow(s, i)
}

func classAtSlow(s string, i int) (uint8, int) {
	r, n := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && n == 1 {
		return classOther, 1
	}
	return classOfRune(r), n
}
