package cli

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/errs"
)

// testOptions cover every kind of option a command declares.
var testOptions = []Option{
	{Long: []string{"after", "after-context"}, Short: 'A', Value: true, Repeat: true},
	{Long: []string{"ignore-case"}, Short: 'i', Repeat: true},
	{Long: []string{"word"}, Short: 'w'},
	{Long: []string{"root"}, Value: true, Repeat: true},
	{Long: []string{"json"}},
	{Long: []string{"count"}, Short: 'c', Value: true, Refuse: "an output mode"},
}

// parsed renders a parse: each option as SPELLED[=VALUE], then "|" and
// the operands; or "help", or "usage: MESSAGE".
func parsed(argv []string) string {
	var got []string
	ops, err := Parse("t", testOptions, argv, func(a Arg) error {
		s := a.Spelled
		if a.Option.Value {
			s += "=" + a.Value
		}
		got = append(got, s)
		return nil
	})
	switch {
	case errors.Is(err, ErrHelp):
		return "help"
	case err != nil:
		return err.Error()
	}
	return strings.Join(append(got, "|"), " ") + strings.Join(append([]string{""}, ops...), " ")
}

var parseCases = []struct {
	argv []string
	want string
}{
	{nil, "|"},
	{[]string{"a", "b"}, "| a b"},
	{[]string{"--root=x", "--root", "y", "a"}, "--root=x --root=y | a"},
	{[]string{"--root="}, "--root= |"},
	{[]string{"--root", ""}, "--root= |"},
	{[]string{"--after-context=2", "--after", "3"}, "--after-context=2 --after=3 |"},
	{[]string{"-A1", "-A=2", "-A", "3"}, "-A=1 -A=2 -A=3 |"},
	{[]string{"-iwA2", "x"}, "-i -w -A=2 | x"},
	{[]string{"-iA", "-x"}, "-i -A=-x |"},
	{[]string{"x", "-i", "y", "--json"}, "-i --json | x y"},
	{[]string{"--", "--json", "-i", "-h"}, "| --json -i -h"},
	{[]string{"-", "x"}, "| - x"},
	{[]string{"--root", "--json"}, "--root=--json |"},
	{[]string{"--root", "-h"}, "--root=-h |"},
	{[]string{"-A-h"}, "-A=-h |"},
	{[]string{"-h"}, "help"},
	{[]string{"--help"}, "help"},
	{[]string{"--help=yes"}, "help"},
	{[]string{"-ih"}, "help"},
	{[]string{"x", "--bogus", "-h"}, "help"},
	{[]string{"--json", "--json", "--help"}, "help"},
	{[]string{"-c", "-h"}, "help"},
	{[]string{"--json", "--json"}, "usage: --json is given twice"},
	{[]string{"-w", "--word"}, "usage: --word is given twice"},
	{[]string{"--bogus"}, "usage: unknown option --bogus (see 'rowkit help t')"},
	{[]string{"-iq"}, "usage: unknown option -q (in -iq) (see 'rowkit help t')"},
	{[]string{"-\x1b"}, `usage: unknown option "-\x1b" (see 'rowkit help t')`},
	{[]string{"---json"}, "usage: unknown option ---json (see 'rowkit help t')"},
	{[]string{"--json=1"}, `usage: --json takes no value (got "--json=1")`},
	{[]string{"--root"}, "usage: --root needs a value"},
	{[]string{"x", "-iA"}, "usage: -A needs a value"},
	{[]string{"--count"}, "usage: --count (-c/--count) is rejected: an output mode"},
	{[]string{"-ic3"}, "usage: -c (-c/--count) is rejected: an output mode"},
}

func TestParse(t *testing.T) {
	for _, tc := range parseCases {
		if got := parsed(tc.argv); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.argv, got, tc.want)
		}
	}
}

// A command without options takes operands, "--" and help, nothing else.
func TestParseNoOptions(t *testing.T) {
	ops, err := Parse("hread", nil, []string{"--", "-n", "a"}, nil)
	if err != nil || !slices.Equal(ops, []string{"-n", "a"}) {
		t.Errorf("%q, %v", ops, err)
	}
	_, err = Parse("hread", nil, []string{"a", "-n"}, nil)
	if errs.Code(err) != errs.Usage || err.Error() != "usage: unknown option -n: this command takes no options (see 'rowkit help hread')" {
		t.Errorf("%v", err)
	}
	if _, err := Parse("hread", nil, []string{"a", "--help"}, nil); !errors.Is(err, ErrHelp) {
		t.Errorf("%v, want help", err)
	}
}

// An error of the command's own stops the parse and is returned as it is.
func TestParseUseError(t *testing.T) {
	mine := errs.New("mine", "no")
	n := 0
	_, err := Parse("t", testOptions, []string{"-i", "-w", "-i"}, func(a Arg) error {
		if n++; a.Short == 'w' {
			return mine
		}
		return nil
	})
	if err != mine || n != 2 {
		t.Errorf("%v after %d options", err, n)
	}
}

// Canonical is a spelling the parser reads back as the same option and
// value.
func TestCanonical(t *testing.T) {
	for _, argv := range [][]string{{"-A", "="}, {"-iwA2"}, {"--root="}, {"--after-context", "-x"}} {
		var first, again []string
		Parse("t", testOptions, argv, func(a Arg) error { first = append(first, a.Canonical()); return nil })
		Parse("t", testOptions, first, func(a Arg) error { again = append(again, a.Canonical()); return nil })
		if len(first) == 0 || !slices.Equal(first, again) {
			t.Errorf("%q: %q, then %q", argv, first, again)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, tc := range parseCases {
		f.Add(strings.Join(tc.argv, "\x00"))
	}
	f.Fuzz(func(t *testing.T, s string) {
		argv := strings.Split(s, "\x00")
		var args []Arg
		ops, err := Parse("t", testOptions, argv, func(a Arg) error { args = append(args, a); return nil })
		if errors.Is(err, ErrHelp) {
			if !slices.ContainsFunc(argv, func(a string) bool {
				return strings.HasPrefix(a, "--help") || strings.HasPrefix(a, "-") && strings.Contains(a, "h")
			}) {
				t.Fatalf("%q: help, but nothing asked for it", argv)
			}
			return
		}
		if err != nil {
			if errs.Code(err) != errs.Usage || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: %v is not a one-line usage error", argv, err)
			}
			return
		}
		// Every operand is an argument as given, in order.
		rest := argv
		for _, op := range ops {
			i := slices.Index(rest, op)
			if i < 0 {
				t.Fatalf("%q: operand %q was not given", argv, op)
			}
			rest = rest[i+1:]
		}
		// The canonical form reads back as the same options and operands.
		var canon []string
		for _, a := range args {
			if a.Option.Refuse != "" {
				t.Fatalf("%q: the refused %s was taken", argv, a.Spelled)
			}
			canon = append(canon, a.Canonical())
		}
		var again []string
		ops2, err := Parse("t", testOptions, append(append(canon, "--"), ops...), func(a Arg) error { again = append(again, a.Canonical()); return nil })
		if err != nil || !slices.Equal(canon, again) || !slices.Equal(ops, ops2) && len(ops)+len(ops2) > 0 {
			t.Fatalf("%q: %q %q, read back as %q %q, %v", argv, canon, ops, again, ops2, err)
		}
	})
}
