package review

import (
	"fmt"
	"strings"
)

// shellMeta are the characters a shell would act on outside quotes. A
// --validate string that uses one is refused, never passed on as a literal:
// the caller would believe their pipeline or glob ran.
const shellMeta = ";&|<>()$`*?[]{}~!#\n\r"

// Tokenize splits a --validate string into argv the way a shell would split
// a simple command, without ever running one: words are separated by
// spaces and tabs, '...' is literal, "..." allows \" and \\, a backslash
// outside quotes keeps the next character. Any shell metacharacter outside
// single quotes (and $ or ` inside double quotes, which a shell would
// expand) is an error naming the character and its 1-based byte position.
func Tokenize(s string) ([]string, error) {
	var (
		argv []string
		word strings.Builder
		in   bool // inside a word (possibly an empty quoted one)
	)
	bad := func(i int, why string) error {
		return errorf(CodeUsage, fmt.Sprintf("the validation command %q: %s %q at position %d", s, why, s[i], i+1),
			"no shell runs validations: give each command separately, or a named validation with an argv in the config")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if in {
				argv = append(argv, word.String())
				word.Reset()
				in = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, bad(i, "unterminated quote")
			}
			word.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				switch s[i] {
				case '$', '`':
					return nil, bad(i, "shell expansion character")
				case '\\':
					if i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
						i++
					}
				}
				if s[i] < 0x20 && s[i] != '\t' || s[i] == 0x7f {
					return nil, bad(i, "control character")
				}
				word.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, bad(strings.LastIndexByte(s, '"'), "unterminated quote")
			}
			in = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, bad(i, "trailing backslash")
			}
			i++
			if s[i] < 0x20 || s[i] == 0x7f {
				return nil, bad(i, "control character")
			}
			word.WriteByte(s[i])
			in = true
		case strings.IndexByte(shellMeta, c) >= 0:
			return nil, bad(i, "shell metacharacter")
		case c < 0x20 || c == 0x7f:
			return nil, bad(i, "control character")
		default:
			word.WriteByte(c)
			in = true
		}
	}
	if in {
		argv = append(argv, word.String())
	}
	if len(argv) == 0 || argv[0] == "" {
		return nil, errorf(CodeUsage, fmt.Sprintf("the validation command %q names no command", s), "")
	}
	return argv, nil
}
