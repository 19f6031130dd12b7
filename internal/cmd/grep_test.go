package cmd

// The hgrep command line: the shared parser (cli.Parse) with grep's policy
// table (grep.Options) and grep.Planner, as runGrep reads it.

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/grep"
)

// parseGrep is parseGrepLine without --max-output: the plan alone.
func parseGrep(args []string) (*grep.Plan, error) {
	plan, _, err := parseGrepLine(args)
	return plan, err
}

// ownArgs are the options hgrep itself gives ripgrep after the accepted
// ones, and tail the same with the "--" before the positionals.
var (
	ownArgs = []string{"--no-config", "--json", "--encoding=none"}
	tail    = append(ownArgs[:len(ownArgs):len(ownArgs)], "--")
)

// spellings returns every way to write o on a command line, each followed
// by the pattern "pat", with the value "1" for options that take one.
func spellings(o *grep.Option) [][]string {
	var out [][]string
	add := func(a ...string) { out = append(out, append(a, "pat")) }
	if o.Short != 0 {
		s := "-" + string(o.Short)
		if o.Value {
			add(s, "1")
			add(s + "1")
			add(s + "=1")
			add("-i" + string(o.Short) + "1") // clustered after a flag
		} else {
			add(s)
			add("-i" + string(o.Short)) // clustered
		}
	}
	for _, l := range o.Long {
		if o.Value {
			add("--"+l, "1")
			add("--" + l + "=1")
		} else {
			add("--" + l)
		}
	}
	return out
}

// Help is asked for wherever -h or --help stands as an option, whatever
// else the line holds, and never by a value.
func TestParseGrepHelp(t *testing.T) {
	for _, argv := range [][]string{{"-h"}, {"--help"}, {"x", "-h"}, {"-ih", "x"}, {"--json", "-h"}, {"--bogus", "--help"}, {"-A", "1", "-h"}, {"--help=x"}} {
		if _, err := parseGrep(argv); !errors.Is(err, cli.ErrHelp) {
			t.Errorf("%q: %v, want help", argv, err)
		}
	}
}

// TestPolicyEveryRow checks every row of hgrep's table in every spelling,
// read by the shared parser.
func TestPolicyEveryRow(t *testing.T) {
	for i := range grep.Options {
		o := &grep.Options[i]
		for _, argv := range spellings(o) {
			plan, err := parseGrep(argv)
			clustered := strings.HasPrefix(argv[0], "-i") && len(argv[0]) > 2 && argv[0][1] != '-'
			switch o.Action {
			case grep.Reject:
				if errs.ExitCode(err) != errs.ExitUsage {
					t.Errorf("%q: err %v, want a usage error", argv, err)
					continue
				}
				name := strings.SplitN(argv[0], "=", 2)[0]
				if o.Short != 0 && !strings.HasPrefix(name, "--") {
					name = "-" + string(o.Short)
				}
				if !strings.Contains(err.Error(), name+" ") || !strings.Contains(err.Error(), o.Why) {
					t.Errorf("%q: error %q does not name %s and its reason", argv, err, name)
				}
			case grep.Drop:
				want := slices.Concat(tail, []string{"pat"})
				if clustered {
					want = slices.Concat([]string{"--ignore-case"}, want)
				}
				if err != nil || !slices.Equal(plan.Args(), want) {
					t.Errorf("%q: got %v, %v; want %q", argv, plan, err, want)
				}
			case grep.Pass:
				opt := "--" + o.Long[0]
				if o.Value {
					opt += "=1"
				}
				want := slices.Concat([]string{opt}, tail, []string{"pat"})
				if clustered {
					want = slices.Concat([]string{"--ignore-case", opt}, tail, []string{"pat"})
				}
				if o.Group == "context" {
					// hgrep counts context rows itself.
					want = slices.DeleteFunc(want, func(a string) bool { return a == opt })
					if plan != nil && (plan.Before+plan.After == 0) {
						t.Errorf("%q: no context in %+v", argv, plan)
					}
				}
				if o.Short == 'e' || o.Short == 'f' {
					want = slices.Insert(want[:len(want)-1:len(want)-1], len(want)-1, "pat") // "pat" is a path now
				}
				if err != nil || !slices.Equal(plan.Args(), want) {
					t.Errorf("%q: got %v, %v; want %q", argv, plan, err, want)
				}
			}
		}
	}
}

func TestParseGrep(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want []string // nil: a usage error containing errWant
		err  string
	}{
		{[]string{"foo"}, []string{"--no-config", "--json", "--encoding=none", "--", "foo"}, ""},
		{[]string{"foo", "src", "-g", "*.go"}, []string{"--glob=*.go", "--no-config", "--json", "--encoding=none", "--", "foo", "src"}, ""},
		{[]string{"-iwA2", "x"}, []string{"--ignore-case", "--word-regexp", "--no-config", "--json", "--encoding=none", "--", "x"}, ""},
		{[]string{"-C", "2", "--context=3", "x"}, []string{"--no-config", "--json", "--encoding=none", "--", "x"}, ""},
		{[]string{"-f", "pats", "--ignore-file=ig", "-w", "src"}, []string{"--word-regexp", "--file=pats", "--ignore-file=ig", "--no-config", "--json", "--encoding=none", "--", "src"}, ""},
		{[]string{"-Ax", "y"}, nil, "-A needs a non-negative number of rows (got \"x\")"},
		{[]string{"--context=-1", "y"}, nil, "--context needs a non-negative number"},
		{[]string{"-B", "65537", "y"}, nil, "the most is 65536 rows"},
		{[]string{"-nR", "-H", "--no-heading", "x", "."}, []string{"--no-config", "--json", "--encoding=none", "--", "x", "."}, ""},
		{[]string{"-e", "-x", "a", "b"}, []string{"--regexp=-x", "--no-config", "--json", "--encoding=none", "--", "a", "b"}, ""},
		{[]string{"-e-x"}, []string{"--regexp=-x", "--no-config", "--json", "--encoding=none", "--"}, ""},
		{[]string{"-ifoo", "."}, []string{"--ignore-case", "--file=oo", "--no-config", "--json", "--encoding=none", "--", "."}, ""},
		{[]string{"-g", "--json", "x"}, []string{"--glob=--json", "--no-config", "--json", "--encoding=none", "--", "x"}, ""},
		{[]string{"--", "--json", "-c"}, []string{"--no-config", "--json", "--encoding=none", "--", "--json", "-c"}, ""},
		{[]string{"x", "--", "-"}, nil, "standard input"},
		{[]string{"-uu", "x"}, []string{"--unrestricted", "--unrestricted", "--no-config", "--json", "--encoding=none", "--", "x"}, ""},
		{[]string{"-u", "--unrestricted", "-u", "x"}, nil, "third -u"},
		{[]string{"-uuu", "x"}, nil, "third -u"},
		// The pattern "=a": ripgrep 13 would drop the '=' of --regexp==a.
		{[]string{"--regexp==a"}, []string{"--regexp", "=a", "--no-config", "--json", "--encoding=none", "--"}, ""},
		{[]string{"-e", ""}, []string{"--regexp=", "--no-config", "--json", "--encoding=none", "--"}, ""},
		{[]string{}, nil, "missing PATTERN"},
		{[]string{"-i"}, nil, "missing PATTERN"},
		{[]string{"-A"}, nil, "-A needs a value"},
		{[]string{"x", "--glob"}, nil, "--glob needs a value"},
		{[]string{"--hidden=yes", "x"}, nil, "takes no value"},
		{[]string{"--include=*.go", "x"}, nil, "unknown option --include (see 'rowkit help grep')"},
		{[]string{"-iK", "x"}, nil, "unknown option -K (in -iK)"},
		{[]string{"-1", "x"}, nil, "unknown option -1"},
		{[]string{"---json", "x"}, nil, "unknown option ---json"},
		{[]string{"--json=x", "x"}, nil, "--json is rejected"},
		{[]string{"-rn", "x"}, nil, "-r (-r/--replace) is rejected"},
		{[]string{"-c"}, nil, "-c (-c/--count) is rejected"},
		{[]string{"x", "-f", "-"}, nil, "standard input"},
		{[]string{"x", ""}, nil, "empty PATH"},
		{[]string{"--passthrough", "x"}, nil, "--passthrough (--passthru) is rejected"},
		// -h and --help are every command's help, wherever an option may
		// stand; a value that looks like them is a value.
		{[]string{"-e", "-h", "x"}, []string{"--regexp=-h", "--no-config", "--json", "--encoding=none", "--", "x"}, ""},
		{[]string{"-g", "--help", "x"}, []string{"--glob=--help", "--no-config", "--json", "--encoding=none", "--", "x"}, ""},
		{[]string{"--", "-h"}, []string{"--no-config", "--json", "--encoding=none", "--", "-h"}, ""},
	} {
		plan, err := parseGrep(tc.argv)
		if tc.want == nil {
			if errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q) = %v, %v; want a usage error containing %q", tc.argv, plan, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(plan.Args(), tc.want) {
			t.Errorf("Parse(%q) = %v, %v; want %q", tc.argv, plan, err, tc.want)
		}
	}
}

// checkPlan asserts the policy's promise about what reaches ripgrep (grep's
// own tests check the same of a Query's plan): before
// "--" only hgrep's own flags and options the table passes, canonically
// spelled, with -u at most twice; after it the positionals, unchanged.
func checkPlan(t *testing.T, argv []string, plan *grep.Plan) {
	t.Helper()
	args := plan.Args()
	end := slices.Index(args, "--")
	if end < len(ownArgs) || !slices.Equal(args[end-len(ownArgs):end], ownArgs) {
		t.Fatalf("Parse(%q) = %q: no %q -- tail", argv, args, ownArgs)
	}
	u := 0
	for _, a := range args[:end-len(ownArgs)] {
		name, _, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		o := grep.Lookup(name)
		if !strings.HasPrefix(a, "--") || o == nil || o.Action != grep.Pass || o.Long[0] != name || o.Value != hasValue {
			t.Fatalf("Parse(%q) passes %q to rg", argv, a)
		}
		if name == "unrestricted" {
			u++
		}
	}
	if u > 2 {
		t.Fatalf("Parse(%q) passes -u %d times", argv, u)
	}
	if slices.ContainsFunc(args[:end], func(a string) bool { return strings.Contains(a, "context=") }) {
		t.Fatalf("Parse(%q) passes a context option to rg", argv)
	}
	for _, p := range args[end+1:] {
		if argv != nil && !slices.Contains(argv, p) {
			t.Fatalf("Parse(%q) invents the positional %q", argv, p)
		}
	}
}

func FuzzParseGrep(f *testing.F) {
	for i := range grep.Options {
		for _, argv := range spellings(&grep.Options[i]) {
			f.Add(strings.Join(argv, "\x00"))
		}
	}
	for _, s := range []string{"-iwA2\x00x", "--\x00--json", "-e\x00-x\x00a", "-uuu\x00x", "-g\x00--pre\x00x", "x\x00-\x00y", "-f\x00-", "-h", "-e\x00-h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		argv := strings.Split(s, "\x00")
		plan, err := parseGrep(argv)
		if errors.Is(err, cli.ErrHelp) {
			return
		}
		if err != nil {
			if errs.ExitCode(err) != errs.ExitUsage || strings.Contains(err.Error(), "\n") && !strings.Contains(s, "\n") {
				t.Fatalf("Parse(%q): %v is not a one-line usage error", argv, err)
			}
			return
		}
		checkPlan(t, argv, plan)
	})
}
