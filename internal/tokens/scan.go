package tokens

// The o200k_base pre-token pattern, in the order its alternatives are tried
// (the first that matches at a position wins, each with backtracking):
//
//	1  [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	2  [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	3  \p{N}{1,3}
//	4   ?[^\s\p{L}\p{N}]+[\r\n/]*
//	5  \s*[\r\n]+
//	6  \s+(?!\S)
//	7  \s+
//
// nextPiece works out, for each, where that backtracking ends, from the runs
// of classes that follow the position. Call the first letter set "head"
// (upper, both, mark) and the second "tail" (lower, both, mark).

const (
	headSet   = 1<<classUpper | 1<<classBoth | 1<<classMark
	tailSet   = 1<<classLower | 1<<classBoth | 1<<classMark
	prefixSet = 1<<classOther | 1<<classMark | 1<<classSpace
	punctSet  = 1<<classOther | 1<<classMark
	spaceSet  = 1<<classSpace | 1<<classNewline
)

func isHead(c uint8) bool   { return headSet>>c&1 != 0 }
func isTail(c uint8) bool   { return tailSet>>c&1 != 0 }
func isPrefix(c uint8) bool { return prefixSet>>c&1 != 0 }
func isPunct(c uint8) bool  { return punctSet>>c&1 != 0 }
func isSpace(c uint8) bool  { return spaceSet>>c&1 != 0 }

// nextPiece returns the end of the pre-token that starts at s[i], i < len(s).
func nextPiece(s string, i int) int {
	c, n := classAt(s, i)
	switch {
	case isHead(c) || c == classLower:
		if e := letters1(s, i); e >= 0 {
			return e
		}
		return letters2(s, i)
	case c == classNumber:
		j := i + n
		for k := 1; k < 3 && j < len(s); k++ {
			c, n := classAt(s, j)
			if c != classNumber {
				break
			}
			j += n
		}
		return j
	}
	if isPrefix(c) && i+n < len(s) {
		// 1 and 2 with the optional first character taken. A mark is
		// also a head, handled above with and without it.
		if e := letters1(s, i+n); e >= 0 {
			return e
		}
		if c2, _ := classAt(s, i+n); isHead(c2) {
			return letters2(s, i+n)
		}
	}
	if isPunct(c) || (s[i] == ' ' && i+1 < len(s) && isPunctAt(s, i+1)) {
		// 4: an optional space, punctuation, then CR, LF and '/'.
		j := i
		if s[i] == ' ' {
			j++
		}
		for j < len(s) {
			c, n := asciiClass[s[j]], 1
			if s[j] >= 0x80 {
				c, n = classAtSlow(s, j)
			}
			if !isPunct(c) {
				break
			}
			j += n
		}
		for j < len(s) && (s[j] == '\r' || s[j] == '\n' || s[j] == '/') {
			j++
		}
		return j
	}
	// c is white space. The run of white space ends at k; last is where
	// its last character starts, nl the end of its last CR or LF.
	k, last, nl := i, i, -1
	for k < len(s) {
		c, n := asciiClass[s[k]], 1
		if s[k] >= 0x80 {
			c, n = classAtSlow(s, k)
		}
		if !isSpace(c) {
			break
		}
		if c == classNewline {
			nl = k + n
		}
		last = k
		k += n
	}
	return spaceEnd(len(s), i, k, last, nl)
}

func isPunctAt(s string, i int) bool {
	c, _ := classAt(s, i)
	return isPunct(c)
}

// letters1 matches heads, then tails, then a contraction, from s[j]: the
// heads run as far as they go; if a lower letter follows, the tails run on
// from it; otherwise the heads give back characters until the last one that
// is also a tail, which becomes the one-character tail. It returns -1 when
// no tail can be had.
func letters1(s string, j int) int {
	k, tailEnd := j, -1
	for k < len(s) {
		c, n := asciiClass[s[k]], 1
		if s[k] >= 0x80 {
			c, n = classAtSlow(s, k)
		}
		if !isHead(c) {
			if c == classLower {
				return contraction(s, tailRun(s, k))
			}
			break
		}
		k += n
		if isTail(c) {
			tailEnd = k
		}
	}
	if tailEnd < 0 {
		return -1
	}
	return contraction(s, tailEnd)
}

// letters2 matches one or more heads from s[j], then tails, then a
// contraction; s[j] must be a head.
func letters2(s string, j int) int {
	k := j
	for k < len(s) {
		c, n := asciiClass[s[k]], 1
		if s[k] >= 0x80 {
			c, n = classAtSlow(s, k)
		}
		if !isHead(c) {
			break
		}
		k += n
	}
	return contraction(s, tailRun(s, k))
}

func tailRun(s string, k int) int {
	for k < len(s) {
		c, n := asciiClass[s[k]], 1
		if s[k] >= 0x80 {
			c, n = classAtSlow(s, k)
		}
		if !isTail(c) {
			break
		}
		k += n
	}
	return k
}

// contraction returns the end of 's, 't, 're, 've, 'm, 'll or 'd at s[j],
// matched ignoring case as the regex engine does (so 'ſ, long s, counts as
// 's), or j when there is none.
func contraction(s string, j int) int {
	if j+1 >= len(s) || s[j] != '\'' {
		return j
	}
	switch s[j+1] | 0x20 {
	case 's', 't', 'm', 'd': // b|0x20 is one of these only for its two cases
		return j + 2
	case 'r':
		if j+2 < len(s) && s[j+2]|0x20 == 'e' {
			return j + 3
		}
	case 'v':
		if j+2 < len(s) && s[j+2]|0x20 == 'e' {
			return j + 3
		}
	case 'l':
		if j+2 < len(s) && s[j+2]|0x20 == 'l' {
			return j + 3
		}
	}
	if j+2 < len(s) && s[j+1] == 0xC5 && s[j+2] == 0xBF { // U+017F
		return j + 3
	}
	return j
}

// nextPieceASCII is nextPiece for the common case where every byte that
// decides the pre-token is ASCII: the classes come from comparisons and
// asciiClass, nothing is decoded. Where a byte of 0x80 or more could change
// the answer (it may be a letter, mark, digit, white space or punctuation),
// it returns -1 and nextPiece decides. s[i] must be ASCII.
//
// ASCII has no letters of class both and no marks, so alternatives 1 and 2
// are one rule here: [A-Z]*[a-z]*, at least one letter, then a contraction.
func nextPieceASCII(s string, i int) int {
	c := asciiClass[s[i]]
	j := i
	switch c {
	case classUpper, classLower:
		// Letters from i.
	case classNumber:
		j++
		for ; j < len(s) && j-i < 3; j++ {
			if b := s[j]; b-'0' > 9 {
				if b >= 0x80 {
					return -1
				}
				break
			}
		}
		return j
	default:
		if i+1 >= len(s) {
			return i + 1
		}
		b := s[i+1]
		if b >= 0x80 {
			return -1
		}
		if c != classNewline && (b|0x20)-'a' < 26 {
			j = i + 1 // 1 and 2 with the optional first character taken
			break
		}
		if c == classOther || (s[i] == ' ' && asciiClass[b] == classOther) {
			// 4: an optional space, punctuation, then CR, LF and '/'.
			j = i + 1
			for ; j < len(s); j++ {
				if b := s[j]; b >= 0x80 {
					return -1
				} else if asciiClass[b] != classOther {
					break
				}
			}
			for j < len(s) && (s[j] == '\r' || s[j] == '\n' || s[j] == '/') {
				j++
			}
			return j
		}
		return spaceRunASCII(s, i)
	}
	for j < len(s) && s[j]-'A' < 26 {
		j++
	}
	for j < len(s) && s[j]-'a' < 26 {
		j++
	}
	if j < len(s) {
		if s[j] >= 0x80 {
			return -1
		}
		if s[j] == '\'' {
			return contraction(s, j)
		}
	}
	return j
}

// spaceRunASCII is the white space case of nextPiece (5, 6 and 7) for a run
// of ASCII white space, or -1 when a byte of 0x80 or more ends the run.
func spaceRunASCII(s string, i int) int {
	k, last, nl := i, i, -1
	for k < len(s) {
		b := s[k]
		if b >= 0x80 {
			return -1
		}
		c := asciiClass[b]
		if !isSpace(c) {
			break
		}
		if c == classNewline {
			nl = k + 1
		}
		last = k
		k++
	}
	return spaceEnd(len(s), i, k, last, nl)
}

// spaceEnd is where a run of white space that starts at i and stops at k
// (before a byte of another class, or at n, the text's end) ends as a
// pre-token: after its last newline (nl, or -1 when it has none), or
// before its last space (last), which belongs to the next pre-token.
func spaceEnd(n, i, k, last, nl int) int {
	switch {
	case nl >= 0: // 5
		return nl
	case k == n || last == i: // 6 to the end, or 7
		return k
	default: // 6 leaves the last space to the next pre-token
		return last
	}
}
