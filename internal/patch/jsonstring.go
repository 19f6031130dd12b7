package patch

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// scanString decodes the JSON string starting at s[0] == '"'. It accepts
// every JSON escape and, unlike strict JSON, a literal TAB, which agents
// paste from source files. It returns the decoded value, the number of
// bytes consumed (closing quote included) and a reason when the string is
// malformed or unterminated.
func scanString(s string) (val string, n int, reason string) {
	buf := make([]byte, 0, len(s))
	i := 1
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			return string(buf), i + 1, ""
		case c == '\\':
			if i+1 >= len(s) {
				return "", i, "unterminated escape"
			}
			e := s[i+1]
			i += 2
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := hex4(s, i)
				if !ok {
					return "", i, `\u needs four hex digits`
				}
				i += 4
				if utf16.IsSurrogate(r) {
					r2, ok2 := rune(0), false
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						r2, ok2 = hex4(s, i+2)
					}
					dec := utf16.DecodeRune(r, r2)
					if !ok2 || dec == utf8.RuneError {
						return "", i, "unpaired UTF-16 surrogate in \\u escape"
					}
					i += 6
					r = dec
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return "", i, "unknown escape \\" + printable(e)
			}
		case c == '\t':
			buf = append(buf, c)
			i++
		case c < 0x20:
			return "", i, "control character " + strconv.QuoteRune(rune(c)) + " in a string; write it as an escape"
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				return "", i, "invalid UTF-8 in a string"
			}
			buf = append(buf, s[i:i+size]...)
			i += size
		}
	}
	return "", len(s), "unterminated string (a quoted value must close on its own line)"
}

func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	v, err := strconv.ParseUint(s[i:i+4], 16, 32)
	if err != nil {
		return 0, false
	}
	return rune(v), true
}

func printable(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return string(c)
	}
	return strconv.QuoteRune(rune(c))
}
