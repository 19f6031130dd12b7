package grep

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/cli"
)

// parse reads an hgrep command line as the hgrep command does (the shared
// parser with this table, each option applied by a Planner; its own tests
// are internal/cmd's), for the tests here that start from a command line.
func parse(argv []string) (*Plan, error) {
	opts := make([]cli.Option, len(Options))
	for i, o := range Options {
		opts[i] = cli.Option{Long: o.Long, Short: o.Short, Value: o.Value, Repeat: true}
	}
	var b Planner
	pos, err := cli.Parse("grep", opts, argv, func(a cli.Arg) error {
		for i := range opts {
			if a.Option == &opts[i] {
				return b.Use(&Options[i], a.Spelled, a.Value)
			}
		}
		panic("an option not in the table")
	})
	if err != nil {
		return nil, err
	}
	return b.Finish(pos)
}

// Every name of the table names one option.
func TestOptionsUnique(t *testing.T) {
	long, short := map[string]bool{}, map[byte]bool{}
	for _, o := range Options {
		for _, l := range o.Long {
			if long[l] {
				t.Errorf("--%s twice", l)
			}
			long[l] = true
		}
		if o.Short != 0 && short[o.Short] || o.Short == 'h' {
			t.Errorf("-%c twice (or help's -h)", o.Short)
		}
		short[o.Short] = true
	}
}

// TestHelpDocumentsEveryRow checks that 'rowkit help grep' names every
// option of the table.
func TestHelpDocumentsEveryRow(t *testing.T) {
	for i := range Options {
		if name := Options[i].Name(); !strings.Contains(PolicyHelp(), name) {
			t.Errorf("help does not mention %s", name)
		}
	}
}

// TestReadmeDocumentsEveryRow checks that hgrep's reference (docs/hgrep.md)
// names every option of the table in the row of its action.
func TestReadmeDocumentsEveryRow(t *testing.T) {
	b, err := os.ReadFile("../../docs/hgrep.md")
	if err != nil {
		t.Fatal(err)
	}
	sec := string(b)
	label := map[Action]string{Pass: "| accepted: ", Drop: "| removed", Reject: "| rejected: "}
	for i := range Options {
		o := &Options[i]
		found := false
		for _, line := range strings.Split(sec, "\n") {
			if strings.HasPrefix(line, label[o.Action]) && strings.Contains(line, "`"+o.Name()+"`") {
				found = true
			}
		}
		if !found {
			t.Errorf("docs/hgrep.md's option table does not list `%s` as %s", o.Name(), o.Action)
		}
	}
}

// checkPlan asserts the policy's promise about what reaches ripgrep: before
// "--" only hgrep's own flags and options the table passes, canonically
// spelled, with -u at most twice; after it the positionals, unchanged.
func checkPlan(t *testing.T, argv []string, plan *Plan) {
	t.Helper()
	args := plan.Args()
	end := slices.Index(args, "--")
	if end < len(ownArgs) || !slices.Equal(args[end-len(ownArgs):end], ownArgs) {
		t.Fatalf("Parse(%q) = %q: no %q -- tail", argv, args, ownArgs)
	}
	u := 0
	for _, a := range args[:end-len(ownArgs)] {
		name, _, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		o := Lookup(name)
		if !strings.HasPrefix(a, "--") || o == nil || o.Action != Pass || o.Long[0] != name || o.Value != hasValue {
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
