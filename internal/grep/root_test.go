package grep

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/workspace"
)

// A confined search reads nothing outside its root: paths and file-valued
// options are resolved inside it, -L is refused, and ripgrep runs there.
func TestSearchConfined(t *testing.T) {
	outside := files(t, map[string]string{"secret.txt": "needle outside\n", "pats": "needle\n", "ign": "*.txt\n"})
	dir := files(t, map[string]string{
		"in.txt":     "needle inside\n",
		"sub/s.txt":  "needle sub\n",
		"pats":       "needle\n",
		"ignore.lst": "sub/\n",
	})
	for name, target := range map[string]string{
		"out.txt":  filepath.Join(outside, "secret.txt"),
		"outdir":   outside,
		"inlink":   "in.txt",
		"sub/back": "../in.txt",
	} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	root, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	run := func(argv ...string) (string, *Result, error) {
		plan, err := parse(argv)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Collect(context.Background(), plan, Config{Root: root, Dir: outside, LookupEnv: os.LookupEnv})
		var out []byte
		if res != nil {
			for _, r := range res.Rows {
				out = rows.AppendPrinted(out, rows.Row{Path: r.Path, Line: r.Line, Text: []byte(r.Text)})
			}
		}
		return string(out), res, err
	}
	for _, tc := range []struct {
		argv []string
		code string
	}{
		{[]string{"needle", "../x"}, errs.Outside},
		{[]string{"needle", outside}, errs.Outside},
		{[]string{"needle", "/etc/passwd"}, errs.Outside},
		{[]string{"needle", "out.txt"}, errs.Outside},
		{[]string{"needle", "outdir"}, errs.Outside},
		{[]string{"needle", "outdir/secret.txt"}, errs.Outside},
		{[]string{"-f", filepath.Join(outside, "pats"), "."}, errs.Outside},
		{[]string{"-f", "outdir/pats", "."}, errs.Outside},
		{[]string{"--ignore-file=../ign", "needle"}, errs.Outside},
		{[]string{"-L", "needle"}, errs.Usage},
		{[]string{"--follow", "--no-follow", "-L", "needle"}, errs.Usage},
	} {
		out, _, err := run(tc.argv...)
		if errs.Code(err) != tc.code || out != "" {
			t.Errorf("%q: %q, %v; want nothing and %s", tc.argv, out, err, tc.code)
		}
	}
	for _, tc := range []struct {
		argv []string
		want string
	}{
		// Relative to the root, whatever the process's directory; the links
		// are not followed in the walk, and nothing outside shows.
		{[]string{"--sort=path", "needle"}, "\"in.txt\":1:" + h("needle inside") + " needle inside\n\"pats\":1:0988 needle\n\"sub/s.txt\":1:" + h("needle sub") + " needle sub\n"},
		{[]string{"--no-follow", "needle", "./sub/../in.txt"}, "\"in.txt\":1:" + h("needle inside") + " needle inside\n"},
		// A link named explicitly that stays inside is searched (and is the
		// same file as its target).
		{[]string{"-j1", "needle", "inlink", "in.txt", "sub/back"}, "\"inlink\":1:" + h("needle inside") + " needle inside\n"},
		{[]string{"-f", "pats", "--ignore-file=ignore.lst", "--sort=path"}, "\"in.txt\":1:" + h("needle inside") + " needle inside\n\"pats\":1:0988 needle\n"},
	} {
		out, res, err := run(tc.argv...)
		if err != nil || out != tc.want || !res.Complete {
			t.Errorf("%q: %q, %v; want %q", tc.argv, out, err, tc.want)
		}
	}
	// Without a root the same search reads what the process can read.
	got, err := search(t, dir, "needle", "out.txt")
	if err != nil || !strings.Contains(got, "needle outside") {
		t.Errorf("unconfined: %q, %v", got, err)
	}
}

// ripgrep opens the ignore files it meets while walking by their paths,
// following links; its message about a malformed one quotes the bad line.
// An ignore file linked out of the root must not bring the outside file's
// lines into a confined search's result.
func TestSearchConfinedIgnoreLinkSilent(t *testing.T) {
	outside := files(t, map[string]string{"secret": "TOPSECRET[\n"})
	dir := files(t, map[string]string{"in.txt": "needle inside\n", "sub/x.md": "needle sub\n"})
	for _, name := range []string{".gitignore", ".ignore", "sub/.ignore", "sub/.rgignore"} {
		if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	root, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{{"needle"}, {"needle", "sub"}, {"--ignore-messages", "needle", "sub"}, {"needle", "sub/x.md"}} {
		plan, err := parse(argv)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Collect(context.Background(), plan, Config{Root: root, LookupEnv: os.LookupEnv})
		if err != nil || len(res.Rows) == 0 {
			t.Fatalf("%q: %+v, %v", argv, res, err)
		}
		if strings.Contains(fmt.Sprintf("%+v %+v", res, res.Incomplete), "TOPSECRET") {
			t.Errorf("%q: the result quotes the file outside: %+v", argv, res.Incomplete)
		}
	}
	// Unconfined, ripgrep's message stands (hgrep is rg).
	plan, _ := parse([]string{"needle", "sub"})
	res, err := Collect(context.Background(), plan, Config{Dir: dir, LookupEnv: os.LookupEnv})
	if err != nil || res.Incomplete == nil || !strings.Contains(res.Incomplete.Message, "TOPSECRET") {
		t.Errorf("unconfined: %+v, %v; want ripgrep's message", res, err)
	}
}
