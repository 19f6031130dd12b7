package patch

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/rows"
)

// gofmtBinary formats src with the toolchain's gofmt command, the
// independent reference for go/format.
func gofmtBinary(t *testing.T, src string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "gofmt"))
	cmd.Stdin = strings.NewReader(src)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gofmt: %v", err)
	}
	return string(out)
}

const cleanGo = `package p

type T struct {
	A int
	B string
}

func f() int {
	return 1
}
`

// rowsOf checks that every record is the current row of content.
func rowsOf(t *testing.T, content string, rs []rows.Record) {
	t.Helper()
	x, err := rows.NewIndex([]byte(content))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Line < 1 || r.Line > x.Count() || string(x.Text(r.Line)) != r.Text || r.Hash != rows.Hash(x.Text(r.Line)) {
			t.Fatalf("row %+v is not line %d of the new content %q", r, r.Line, content)
		}
	}
}

func TestGofmtOption(t *testing.T) {
	if gofmtBinary(t, cleanGo) != cleanGo {
		t.Fatal("the fixture is not gofmt-clean")
	}
	x, _ := rows.NewIndex([]byte(cleanGo))
	script := "in p.go\nadd " + x.Ref(6).String() + " \"\tLonger bool\"\ntype \"return 1\" \"return   1+2\"\n"
	unformatted := strings.Replace(strings.Replace(cleanGo, "\tB string\n", "\tB string\n\tLonger bool\n", 1), "return 1", "return   1+2", 1)
	want := gofmtBinary(t, unformatted)
	if want == unformatted {
		t.Fatal("the script's text is already formatted")
	}

	// Off: exactly the script's bytes.
	root := workspaceWith(t, map[string]string{"p.go": cleanGo})
	res, err := Apply(context.Background(), root, script, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, root.Dir(), "p.go"); got != unformatted || res.Gofmt != nil {
		t.Fatalf("without the option: %q, gofmt %v", got, res.Gofmt)
	}

	// On: what the gofmt command writes; the rows it changed reported,
	// and every edge row current.
	root = workspaceWith(t, map[string]string{"p.go": cleanGo})
	res, err = Apply(context.Background(), root, script, Options{Gofmt: true})
	if err != nil {
		t.Fatal(err)
	}
	got := readFile(t, root.Dir(), "p.go")
	if got != want {
		t.Fatalf("with the option: %q, want %q", got, want)
	}
	if len(res.Gofmt) != 1 || res.Gofmt[0].Path != "p.go" {
		t.Fatalf("gofmt report %+v", res.Gofmt)
	}
	// gofmt changed the lines that differ from the script's text (no line
	// count changes here, so line by line).
	ul, wl := strings.Split(unformatted, "\n"), strings.Split(want, "\n")
	var changed []int
	for i := range wl {
		if wl[i] != ul[i] {
			changed = append(changed, i+1)
		}
	}
	var reported []int
	for _, r := range res.Gofmt[0].Rows {
		reported = append(reported, r.Line)
	}
	if len(changed) < 3 || !equalInts(changed, reported) {
		t.Fatalf("gofmt rows %v, want the changed lines %v", reported, changed)
	}
	rowsOf(t, got, res.Gofmt[0].Rows)
	if len(res.Edits) != 2 {
		t.Fatalf("edits %+v", res.Edits)
	}
	for _, e := range res.Edits {
		rowsOf(t, got, e.Rows)
	}

	// A dry run shows the formatted content and writes nothing.
	root = workspaceWith(t, map[string]string{"p.go": cleanGo})
	res, err = Apply(context.Background(), root, script, Options{Gofmt: true, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Diff, "+\tLonger bool\n") || !strings.Contains(res.Diff, "+\tA      int\n") || !strings.Contains(res.Diff, "-\tA int\n") || !strings.Contains(res.Diff, "+\treturn 1 + 2\n") {
		t.Fatalf("dry-run diff:\n%s", res.Diff)
	}
	if readFile(t, root.Dir(), "p.go") != cleanGo {
		t.Fatal("a dry run wrote")
	}

	// A file that was not gofmt-clean keeps exactly the script's bytes.
	messy := strings.Replace(cleanGo, "func f() int {", "func f()   int {", 1)
	root = workspaceWith(t, map[string]string{"p.go": messy})
	res, err = Apply(context.Background(), root, script, Options{Gofmt: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, root.Dir(), "p.go"); got != strings.Replace(unformatted, "func f() int {", "func f()   int {", 1) || len(res.Gofmt) != 0 {
		t.Fatalf("a messy file was formatted: %q %+v", got, res.Gofmt)
	}

	// Formatting that undoes the script's only change leaves nothing to do.
	root = workspaceWith(t, map[string]string{"p.go": cleanGo})
	res, err = Apply(context.Background(), root, "in p.go\ntype \"return 1\" \"return    1\"\n", Options{Gofmt: true})
	if err != nil || res.Status != StatusUnchanged || readFile(t, root.Dir(), "p.go") != cleanGo {
		t.Fatalf("got %v %+v", err, res)
	}

	// A new Go file is formatted; other files never are.
	root = workspaceWith(t, map[string]string{})
	res, err = Apply(context.Background(), root, "new n.go\ntype \"package n\\nfunc  f( ) {}\\n\"\nnew n.txt\ntype \"a   b\\n\"\n", Options{Gofmt: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, root.Dir(), "n.go"); got != gofmtBinary(t, "package n\nfunc  f( ) {}\n") {
		t.Fatalf("new file: %q", got)
	}
	if readFile(t, root.Dir(), "n.txt") != "a   b\n" || len(res.Gofmt) != 1 || res.Gofmt[0].Path != "n.go" {
		t.Fatalf("%+v", res.Gofmt)
	}
	rowsOf(t, readFile(t, root.Dir(), "n.go"), res.Gofmt[0].Rows)
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// lineDiff on random line lists: applying its changes gives the new list,
// and its changes are no more lines than a common-prefix-and-suffix
// replacement would be.
func TestLineDiff(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for range 3000 {
		gen := func() [][]byte {
			out := make([][]byte, r.IntN(15))
			for i := range out {
				out[i] = []byte{"abcde"[r.IntN(5)], '\n'}
			}
			return out
		}
		a, b := gen(), gen()
		var out [][]byte
		at, cost := 0, 0
		for _, c := range lineDiff(a, b) {
			out = append(out, a[at:c.oa]...)
			out = append(out, b[c.na:c.na+c.nn]...)
			at = c.oa + c.on
			cost += c.on + c.nn
		}
		out = append(out, a[at:]...)
		if !bytes.Equal(bytes.Join(out, nil), bytes.Join(b, nil)) {
			t.Fatalf("%q -> %q gave %q", a, b, out)
		}
		if cost > len(a)+len(b) {
			t.Fatalf("%q -> %q: %d changed lines", a, b, cost)
		}
	}
	if cs := lineDiff([][]byte{[]byte("x\n")}, [][]byte{[]byte("x\n")}); cs != nil {
		t.Fatalf("equal lists: %v", cs)
	}
}
