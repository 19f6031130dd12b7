package review

import (
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/errs"
)

var tokenizeCases = []struct {
	in   string
	want []string
	err  string // substring of the error
}{
	{in: "go test ./...", want: []string{"go", "test", "./..."}},
	{in: "  npm\trun   build ", want: []string{"npm", "run", "build"}},
	{in: `go test -run 'Test Foo|Bar'`, want: []string{"go", "test", "-run", "Test Foo|Bar"}},
	{in: `echo "a \"b\" c\\d" ''`, want: []string{"echo", `a "b" c\d`, ""}},
	{in: `echo "it's"`, want: []string{"echo", "it's"}},
	{in: `a\ b c`, want: []string{"a b", "c"}},
	{in: `x'y'"z"`, want: []string{"xyz"}},
	{in: `make -j4 VERBOSE=1`, want: []string{"make", "-j4", "VERBOSE=1"}},
	{in: "go test ./... && rm -rf /", err: `shell metacharacter '&' at position 15`},
	{in: "a; b", err: `';' at position 2`},
	{in: "a | b", err: `'|' at position 3`},
	{in: "echo $(id)", err: `'$' at position 6`},
	{in: "echo `id`", err: "'`' at position 6"},
	{in: `echo "$HOME"`, err: `shell expansion character '$' at position 7`},
	{in: "ls *.go", err: `'*' at position 4`},
	{in: "cat < f", err: `'<' at position 5`},
	{in: "a\nb", err: `'\n' at position 2`},
	{in: "echo ~", err: `'~' at position 6`},
	{in: "echo 'open", err: "unterminated quote"},
	{in: `echo "open`, err: "unterminated quote"},
	{in: `echo \`, err: "trailing backslash"},
	{in: "   ", err: "names no command"},
	{in: "'' x", err: "names no command"},
	{in: "a\x01b", err: "control character"},
}

func TestTokenize(t *testing.T) {
	for _, c := range tokenizeCases {
		got, err := Tokenize(c.in)
		if c.err != "" {
			e, ok := errs.As(err)
			if !ok || e.Code != CodeUsage || !strings.Contains(e.Msg, c.err) {
				t.Errorf("Tokenize(%q) = %q, %v; want error %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || strings.Join(got, "\x00") != strings.Join(c.want, "\x00") || len(got) != len(c.want) {
			t.Errorf("Tokenize(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// FuzzTokenize: never panics; a string of plain words splits at spaces
// and tabs; whatever is accepted has no shell metacharacter outside
// quotes, so re-quoting every word in single quotes gives the same argv.
func FuzzTokenize(f *testing.F) {
	for _, c := range tokenizeCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		argv, err := Tokenize(s)
		if err != nil {
			return
		}
		if len(argv) == 0 || argv[0] == "" {
			t.Fatalf("accepted %q as %q", s, argv)
		}
		if !strings.ContainsAny(s, `'"\`) && strings.Join(argv, " ") != strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' }), " ") {
			t.Fatalf("%q split as %q", s, argv)
		}
		var quoted []string
		for _, a := range argv {
			if strings.ContainsRune(a, '\'') {
				return
			}
			quoted = append(quoted, "'"+a+"'")
		}
		again, err := Tokenize(strings.Join(quoted, " "))
		if err != nil || strings.Join(again, "\x00") != strings.Join(argv, "\x00") {
			t.Fatalf("%q: re-quoted %q gave %q, %v", s, argv, again, err)
		}
	})
}
