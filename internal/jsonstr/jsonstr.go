// Package jsonstr owns the one JSON string encoding that every rowkit
// serialiser shares, so that a path or a name prints the same in every
// tool's output.
package jsonstr

import "unicode/utf8"

// Append appends s to dst as a JSON string, byte for byte as encoding/json
// writes it with HTML escaping off: quote, backslash and control characters
// escaped, U+2028 and U+2029 escaped, invalid UTF-8 replaced by U+FFFD, all
// else as is. It is the hot path of documents with thousands of strings.
func Append(dst []byte, s string) []byte { return appendString(dst, s) }

// AppendBytes is Append for text held as bytes, without a copy of it as a
// string (the router re-encodes the scripts of a long history).
func AppendBytes(dst, s []byte) []byte { return appendString(dst, s) }

func appendString[S ~string | ~[]byte](dst []byte, s S) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			}
			i++
			start = i
			continue
		}
		// At most 4 bytes: a conversion that stays on the stack.
		r, n := utf8.DecodeRune([]byte(s[i:min(i+utf8.UTFMax, len(s))]))
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&15])
			i += n
			start = i
			continue
		}
		i += n
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
