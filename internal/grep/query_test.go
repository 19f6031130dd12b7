package grep

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/workspace"
)

func TestQueryPlan(t *testing.T) {
	for _, tc := range []struct {
		q    Query
		want []string // rg's arguments; nil: a usage error containing err
		err  string
	}{
		{Query{Patterns: []string{"a"}}, []string{"--regexp=a", "--case-sensitive", "--no-config", "--json", "--encoding=none", "--"}, ""},
		{Query{Patterns: []string{"-x", "b|c"}, Paths: []string{"src", "-odd"}, Globs: []string{"*.go", "!vendor/**"}, Types: []string{"go"},
			Case: "smart", Fixed: true, Word: true, Context: 2, MaxCount: 3},
			[]string{"--regexp=-x", "--regexp=b|c", "--glob=*.go", "--glob=!vendor/**", "--type=go", "--smart-case", "--fixed-strings", "--word-regexp",
				"--max-count=3", "--no-config", "--json", "--encoding=none", "--", "src", "-odd"}, ""},
		{Query{Patterns: []string{"a"}, Case: "insensitive"}, []string{"--regexp=a", "--ignore-case", "--no-config", "--json", "--encoding=none", "--"}, ""},
		{Query{}, nil, "at least one pattern"},
		{Query{Patterns: []string{"a"}, Case: "upper"}, nil, `case "upper" is not`},
		{Query{Patterns: []string{"a"}, Context: -1}, nil, "must not be negative"},
		{Query{Patterns: []string{"a"}, Context: MaxContext + 1}, nil, "the most is 65536 rows"},
		{Query{Patterns: []string{"a"}, Paths: []string{"-"}}, nil, "standard input"},
		{Query{Patterns: []string{"a"}, Paths: []string{""}}, nil, "empty PATH"},
	} {
		plan, err := tc.q.Plan()
		if tc.want == nil {
			if errs.Code(err) != errs.Usage || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%+v: %v, want a usage error containing %q", tc.q, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(plan.Args(), tc.want) {
			t.Errorf("%+v: %v, %v; want %q", tc.q, plan, err, tc.want)
			continue
		}
		checkPlan(t, nil, plan)
		if plan.Before != tc.q.Context || plan.After != tc.q.Context {
			t.Errorf("%+v: context %d/%d", tc.q, plan.Before, plan.After)
		}
	}
}

// A query runs on real ripgrep under a root; its rows are the rows the
// same search prints.
func TestQuerySearch(t *testing.T) {
	dir := files(t, map[string]string{
		"a.go":        "package a\n\nfunc Needle() {}\n// needle\n",
		"b.txt":       "NEEDLE\nneedles\n",
		"vendor/v.go": "needle\n",
	})
	root, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q    Query
		want []string
	}{
		{Query{Patterns: []string{"needle"}, Case: "insensitive", Word: true, Globs: []string{"!vendor/**"}},
			[]string{"a.go:3 func Needle() {}", "a.go:4 // needle", "b.txt:1 NEEDLE"}},
		{Query{Patterns: []string{"needle"}, Types: []string{"go"}, Paths: []string{"vendor", "a.go"}},
			[]string{"vendor/v.go:1 needle", "a.go:4 // needle"}}, // the paths in the order given
		{Query{Patterns: []string{"Needle()"}, Fixed: true, Context: 1}, []string{"a.go:2 ", "a.go:3 func Needle() {}", "a.go:4 // needle"}},
		{Query{Patterns: []string{"needle"}, Case: "smart", MaxCount: 1, Paths: []string{"b.txt"}}, []string{"b.txt:1 NEEDLE"}},
	} {
		if got := queryRows(t, root, tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: rows %q, want %q", tc.q, got, tc.want)
		}
	}
}

// queryRows runs q under root sorted by path and returns its rows as
// PATH:LINE TEXT, checking each row's hash.
func queryRows(t *testing.T, root *workspace.Root, q Query) []string {
	t.Helper()
	plan, err := q.Plan()
	if err != nil {
		t.Fatal(err)
	}
	plan.Options = append(plan.Options, "--sort=path")
	res, err := Collect(context.Background(), plan, Config{Root: root, LookupEnv: os.LookupEnv})
	if err != nil || !res.Complete {
		t.Fatalf("%+v: %+v, %v", q, res, err)
	}
	var got []string
	for _, r := range res.Rows {
		got = append(got, r.Path+":"+itoa(r.Line)+" "+r.Text)
		if r.Hash != rows.Hash([]byte(r.Text)) {
			t.Errorf("%+v: row %+v has the wrong hash", q, r)
		}
	}
	return got
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// The Collector keeps exactly the rows the Printer prints, and the result
// says the same, for a complete and an incomplete search.
func TestCollectorMatchesPrinter(t *testing.T) {
	dir := t.TempDir()
	var big strings.Builder
	for i := range 20000 {
		big.WriteString("needle " + itoa(i) + " \u5024 \"q\" <&>\r")
	}
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(big.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "small.txt"), []byte("a needle\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, argv := range [][]string{{"needle", "small.txt"}, {"-C1", "needle \\d*0 ", "big.txt"}, {"-j1", "needle", "."}} {
		plan, err := parse(argv)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Collect(context.Background(), plan, Config{Dir: dir, LookupEnv: os.LookupEnv})
		if err != nil {
			t.Fatal(err)
		}
		printed, perr := search(t, dir, argv...)
		var fromRecords []byte
		for _, r := range res.Rows {
			fromRecords = rows.AppendPrinted(fromRecords, rows.Row{Path: r.Path, Line: r.Line, Text: []byte(r.Text)})
		}
		if string(fromRecords) != printed || res.Complete != (perr == nil) || errs.Code(res.Err()) != errs.Code(perr) {
			t.Errorf("%q: collector %d bytes complete %v, printer %d bytes err %v", argv, len(fromRecords), res.Complete, len(printed), perr)
		}
		if wantComplete := i == 0; res.Complete != wantComplete {
			t.Errorf("%q: complete %v, want %v", argv, res.Complete, wantComplete)
		}
		b, err := json.Marshal(res)
		if err != nil || !strings.HasPrefix(string(b), `{"rows":[`) {
			t.Errorf("%q: JSON %.80s, %v", argv, b, err)
		}
	}
}

// A value that starts with '=' reaches ripgrep whole: ripgrep 13 drops the
// leading '=' of --regexp===, which then matched every line. The rows are
// real ripgrep's for the same pattern (rg -n -e).
func TestQueryValueStartsWithEquals(t *testing.T) {
	dir := files(t, map[string]string{
		"a.py":   "a == 'AS'\nb = x('AS')\n'AS': k\n",
		"=g.txt": "== 'AS'\n",
	})
	root, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q    Query
		want []string
	}{
		{Query{Patterns: []string{"=="}, Paths: []string{"a.py"}}, []string{"a.py:1 a == 'AS'"}},
		{Query{Patterns: []string{"== 'AS'"}}, []string{"=g.txt:1 == 'AS'", "a.py:1 a == 'AS'"}},
		{Query{Patterns: []string{"AS"}, Globs: []string{"=*"}}, []string{"=g.txt:1 == 'AS'"}},
	} {
		if got := queryRows(t, root, tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: rows %q, want %q", tc.q, got, tc.want)
		}
		// The same search by real ripgrep.
		args := []string{"-n", "--no-config", "--sort=path"}
		for _, g := range tc.q.Globs {
			args = append(args, "-g", g)
		}
		args = append(args, "-e", tc.q.Patterns[0], "--")
		args = append(args, tc.q.Paths...)
		cmd := exec.Command("rg", args...)
		cmd.Dir = dir
		out, _ := cmd.Output()
		var rg []string
		for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
			if l == "" {
				continue
			}
			if len(tc.q.Paths) == 1 {
				l = tc.q.Paths[0] + ":" + l
			}
			f, rest, _ := strings.Cut(l, ":")
			n, text, _ := strings.Cut(rest, ":")
			rg = append(rg, f+":"+n+" "+text)
		}
		if !slices.Equal(rg, tc.want) {
			t.Errorf("%+v: real ripgrep gives %q, the test wants %q", tc.q, rg, tc.want)
		}
	}
}
