package shell

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestErrorLine(t *testing.T) {
	for _, c := range []struct {
		line string
		want bool
	}{
		{"--- FAIL: TestParse (0.00s)", true},
		{"FAIL\tgithub.com/x/y\t0.012s", true},
		{"./main.go:12:5: undefined: foo", true},
		{"panic: runtime error: index out of range [3] with length 3", true},
		{"FAILED tests/test_x.py::test_y - AssertionError: assert 1 == 2", true},
		{"E       assert 1 == 2", true},
		{"____________________________ test_parse[7] ____________________________", true},
		{"src/a.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'.", true},
		{"src/a.ts:3:5 - error TS2322: Type 'string' is not assignable to type 'number'.", true},
		{"✖ parses dates (1.2ms)", true},
		{"  ● Suite › fails", true},
		{"error[E0308]: mismatched types", true},
		{"thread 'tests::it_works' panicked at src/lib.rs:10:9:", true},
		{"test result: FAILED. 3 passed; 1 failed; 0 ignored", true},
		{"Traceback (most recent call last):", true},
		{"ValueError: invalid literal for int() with base 10: 'x'", true},
		{"npm ERR! Test failed.  See above for more details.", true},
		{"the build failed", true},

		{"--- PASS: TestErrorHandling (0.00s)", false},
		{"=== RUN   TestFailover", false},
		{"ok  \tgithub.com/x/y\t0.012s", false},
		{"PASS", false},
		{"✔ handles errors (0.3ms)", false},
		{"tests/test_x.py::test_errors PASSED                             [ 10%]", false},
		{"    calc_test.go:12: checking 3", false}, // t.Log of a passing test in -v
		{"  --> src/main.rs:12:5", false},          // a WhereLine
		{"Found 0 errors.", false},
		{"test result: ok. 4 passed; 0 failed; 0 ignored", false},
		{"# fail 0", false},
		{"   Compiling demo v0.1.0 (/tmp/demo)", false},
		{"warning: unused variable: `x`", false},
		{"collected 300 items", false},
		{"", false},
		{"mail sent to the tailor", false},
	} {
		if got := ErrorLine([]byte(c.line)); got != c.want {
			t.Errorf("%q: %v, want %v", c.line, got, c.want)
		}
	}
}

func TestMessageLine(t *testing.T) {
	for _, c := range []struct {
		line      string
		msg, fail bool
	}{
		{"    calc_test.go:6: Add(80, 1) = 81, want 82", true, false},
		{"        sub_test.go:14: nested subtest detail", true, false},
		{"--- FAIL: TestCase80 (0.00s)", false, true},
		{"    --- FAIL: TestCase80/sub (0.00s)", false, true},
		{"calc_test.go:6: not indented", false, false},
		{"    calc.go:6: not a test file", false, false},
		{"--- PASS: TestCase80 (0.00s)", false, false},
		{"FAIL\texample.com/calc\t0.01s", false, false},
	} {
		if m, f := MessageLine([]byte(c.line)), FailLine([]byte(c.line)); m != c.msg || f != c.fail {
			t.Errorf("%q: message %v, fail %v; want %v, %v", c.line, m, f, c.msg, c.fail)
		}
	}
}

func TestWhereLine(t *testing.T) {
	for _, c := range []struct {
		line string
		want bool
	}{
		{"  --> src/main.rs:12:5", true},
		{`  File "/tmp/x/test_calc.py", line 11, in test_add`, true},
		{"    calc_test.go:6: Add(80, 1) = 81, want 82", true},
		{"        sub_test.go:14: nested subtest detail", true},

		{"calc_test.go:6: not indented", false},
		{"    calc.go:6: not a test file", false},
		{"  -> src/main.rs:12:5", false},
		{`File "x.py", line 3`, false},
		{"", false},
	} {
		if got := WhereLine([]byte(c.line)); got != c.want {
			t.Errorf("%q: %v, want %v", c.line, got, c.want)
		}
	}
}

// failure is a real failing run of a tool: its merged output, and the
// lines that say what failed (by a stricter rule of that tool's own).
type failure struct {
	name string
	out  []byte
	key  *regexp.Regexp
}

// TestErrorLineOnRealFailures measures the rule on what real tools print
// when they fail, in generated projects: go test -v (a few failing tests
// among many passing ones), go build -x (type errors in one package of
// many), pytest -v, tsc over three projects, npm test (node:test), cargo
// build over three crates (errors among warnings) and cargo test. Each
// output is cut by the shell's bound (the router's 9,600 bytes, and
// 4,000) and the lines that say what failed (each tool's own headline:
// --- FAIL, FAILED, error TS, ✖, error[E...], panicked) are looked for in
// what the model sees, against what the cut before the rule showed (the
// longest head of whole lines within the bound less a 2 KiB tail and its
// note, and that tail). At 9,600 bytes every one must be shown.
func TestErrorLineOnRealFailures(t *testing.T) {
	var fs []failure
	fs = append(fs, goFailures(t)...)
	fs = append(fs, pytestFailure(t), tscFailure(t), nodeTestFailure(t))
	fs = append(fs, cargoFailures(t)...)
	numberedRE := regexp.MustCompile(`(?m)^[0-9]+\|(.*)\n`)
	for _, f := range fs {
		for _, bound := range []int{9600, 4000} {
			if len(f.out) <= bound {
				t.Errorf("%s: %d bytes, within %d: not a cut output", f.name, len(f.out), bound)
				continue
			}
			var b bytes.Buffer
			o := NewOutput(&b, bound)
			o.Write(f.out)
			o.Close()
			got := b.Bytes()
			if len(got) > bound {
				t.Errorf("%s: %d bytes out of %d", f.name, len(got), bound)
			}
			// What the model sees: the head, the note, the lines of the
			// middle that name an error (N|TEXT), the tail.
			noted := bytes.Index(got, []byte("[rowkit shell:"))
			seen := map[string]bool{}
			for _, l := range bytes.Split(got[:noted], []byte("\n")) {
				seen[string(l)] = true
			}
			after := got[noted:]
			after = after[bytes.IndexByte(after, '\n')+1:]
			tail := after
			ms := numberedRE.FindAllSubmatchIndex(after, -1)
			numberedKeys := 0
			for _, m := range ms {
				l := after[m[2]:m[3]]
				seen[string(l)] = true
				if f.key.Match(l) {
					numberedKeys++
				}
				tail = after[m[1]:]
			}
			for _, l := range bytes.Split(tail, []byte("\n")) {
				seen[string(l)] = true
			}
			old := map[string]bool{}
			for _, l := range bytes.Split(oldCut(f.out, bound), []byte("\n")) {
				old[string(l)] = true
			}
			keys, now, before := 0, 0, 0
			for _, l := range bytes.Split(f.out, []byte("\n")) {
				if !f.key.Match(l) {
					continue
				}
				keys++
				if seen[string(l)] {
					now++
				}
				if old[string(l)] {
					before++
				}
			}
			if keys == 0 {
				t.Errorf("%s: no line says what failed:\n%s", f.name, f.out)
				continue
			}
			t.Logf("%-26s %6d bytes, bound %5d: %2d of %2d failure lines shown (before the rule: %2d); %2d lines shown from the middle, %2d of them failure lines",
				f.name, len(f.out), bound, now, keys, before, len(ms), numberedKeys)
			if bound == 9600 && now < keys {
				t.Errorf("%s: %d of %d failure lines shown:\n%s", f.name, now, keys, got)
			}
		}
	}
}

// oldCut is what the bound showed of out before errors were kept: the
// longest head of whole lines within bound less a tail of at most
// min(bound/4, 2 KiB) and a note of 150 bytes, and that tail.
func oldCut(out []byte, bound int) []byte {
	tail := min(bound/4, 2<<10)
	lines := bytes.SplitAfter(out, []byte("\n"))
	h, hn := 0, 0
	for hn < len(lines) && h+len(lines[hn]) <= bound-tail-150 {
		h += len(lines[hn])
		hn++
	}
	tl := 0
	for tn := len(lines) - 1; tn >= hn && tl+len(lines[tn]) <= tail; tn-- {
		tl += len(lines[tn])
	}
	return append(append([]byte{}, out[:h]...), out[len(out)-tl:]...)
}

// runTool runs name with args in dir and returns its merged output; it
// must fail.
func runTool(t *testing.T, dir string, env []string, name string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("%s %v succeeded:\n%s", name, args, out)
	}
	if _, ok := err.(*exec.ExitError); !ok {
		t.Fatalf("%s %v: %v (install it: scripts/test does)", name, args, err)
	}
	return out
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func goFailures(t *testing.T) []failure {
	dir := t.TempDir()
	var tests strings.Builder
	tests.WriteString("package calc\n\nimport \"testing\"\n\n")
	for i := 1; i <= 240; i++ {
		switch i {
		case 80, 150, 151:
			fmt.Fprintf(&tests, "func TestCase%d(t *testing.T) {\n\tt.Logf(\"checking %%d\", %d)\n\tif got := Add(%d, 1); got != %d {\n\t\tt.Errorf(\"Add(%d, 1) = %%d, want %d\", got)\n\t}\n}\n\n", i, i, i, i+2, i, i+2)
		default:
			fmt.Fprintf(&tests, "func TestCase%d(t *testing.T) {\n\tt.Logf(\"checking %%d\", %d)\n\tif got := Add(%d, 1); got != %d {\n\t\tt.Errorf(\"Add(%d, 1) = %%d\", got)\n\t}\n}\n\n", i, i, i, i+1, i)
		}
	}
	files := map[string]string{
		"go.mod":            "module example.com/calc\n\ngo 1.22\n",
		"calc.go":           "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
		"calc_test.go":      tests.String(),
		"broken/broken.go":  "package broken\n\nimport \"example.com/calc\"\n\nfunc F() string { return calc.Add(1, 2) }\n\nfunc G() int { return undefinedName }\n",
		"broken/other.go":   "package broken\n\nvar x int = \"not an int\"\n",
		"zz/zz.go":          "package zz\n\nfunc Z() {}\n",
		"aa/aa.go":          "package aa\n\nfunc A() {}\n",
		"calc/more/more.go": "package more\n\nfunc M() {}\n",
	}
	for i := 0; i < 30; i++ {
		files[fmt.Sprintf("p%02d/p.go", i)] = fmt.Sprintf("package p%02d\n\nimport \"example.com/calc\"\n\nfunc P() int { return calc.Add(%d, 1) }\n", i, i)
	}
	writeTree(t, dir, files)
	env := []string{"GOFLAGS=-count=1", "GOWORK=off"}
	test := runTool(t, dir, env, "go", "test", "-v", ".")
	// go build -x lists every action around the errors: a long output
	// with the errors in its middle.
	build := runTool(t, dir, env, "go", "build", "-x", "./...")
	return []failure{
		{"go test -v", test, regexp.MustCompile(`^--- FAIL: |_test\.go:\d+: Add\(\d+, 1\) = \d+, want`)},
		{"go build -x (type errors)", build, regexp.MustCompile(`^broken/\S+\.go:\d+:\d+: `)},
	}
}

func pytestFailure(t *testing.T) failure {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"test_calc.py": "import pytest\n\n\ndef add(a, b):\n    return a + b\n\n\n" +
			"@pytest.mark.parametrize('n', range(300))\ndef test_add(n):\n    want = n + 2 if n in (120, 121, 200) else n + 1\n    assert add(n, 1) == want\n",
	})
	out := runTool(t, dir, nil, "/usr/bin/python3", "-m", "pytest", "-v", "-p", "no:cacheprovider", "test_calc.py")
	return failure{"pytest -v", out, regexp.MustCompile(`^FAILED |^E\s+assert |^test_calc\.py::test_add\[\d+\] FAILED`)}
}

// tscFailure is tsc run over three projects in turn, as a build script
// does, listing their files; the middle one has type errors.
func tscFailure(t *testing.T) failure {
	dir := t.TempDir()
	files := map[string]string{}
	for _, p := range []string{"a", "b", "c"} {
		files[p+"/tsconfig.json"] = `{"compilerOptions": {"strict": true, "noEmit": true, "target": "es2022", "module": "nodenext"}, "include": ["src"]}`
		for i := 0; i < 60; i++ {
			body := fmt.Sprintf("export function f%d(a: number): number {\n  return a + %d;\n}\n", i, i)
			if p == "b" && i%25 == 7 {
				body += fmt.Sprintf("export const wrong%d: number = \"text\";\nexport const missing%d = notDefined%d;\n", i, i, i)
			}
			files[fmt.Sprintf("%s/src/m%02d.ts", p, i)] = body
		}
	}
	writeTree(t, dir, files)
	tsc := nodeBin(t, "tsc")
	out := runTool(t, dir, nil, "bash", "-c", "status=0; for p in a b c; do "+tsc+" -p $p --listFiles --pretty false || status=$?; done; exit $status")
	return failure{"tsc, three projects", out, regexp.MustCompile(`error TS\d+`)}
}

func nodeTestFailure(t *testing.T) failure {
	dir := t.TempDir()
	var tests strings.Builder
	tests.WriteString("const test = require('node:test');\nconst assert = require('node:assert');\n\n")
	for i := 0; i < 400; i++ {
		want := i + 1
		if i == 90 || i == 170 {
			want = i + 2
		}
		fmt.Fprintf(&tests, "test('adds %d', () => { assert.strictEqual(%d + 1, %d); });\n", i, i, want)
	}
	writeTree(t, dir, map[string]string{
		"package.json":     `{"name": "calc", "version": "1.0.0", "scripts": {"test": "node --test --test-reporter=spec"}}`,
		"test/add.test.js": tests.String(),
	})
	out := runTool(t, dir, nil, "npm", "test")
	return failure{"npm test (node:test)", out, regexp.MustCompile(`✖ adds \d+`)}
}

// cargoFailures are cargo build over a workspace of three
// crates whose middle one does not compile, among the others' warnings,
// and cargo test with two failing tests among 300.
func cargoFailures(t *testing.T) []failure {
	dir := t.TempDir()
	files := map[string]string{
		"ws/Cargo.toml":    "[workspace]\nmembers = [\"a\", \"b\", \"c\"]\nresolver = \"2\"\n",
		"tests/Cargo.toml": "[package]\nname = \"demotest\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
		"tests/src/lib.rs": cargoTests(),
	}
	for _, c := range []string{"a", "b", "c"} {
		var lib strings.Builder
		for i := 0; i < 40; i++ {
			fmt.Fprintf(&lib, "pub fn f%d(a: i32) -> i32 {\n    let unused%d = a;\n    a + %d\n}\n\n", i, i, i)
		}
		if c == "b" {
			lib.Reset()
			lib.WriteString("pub fn broken() -> i32 {\n    let s: i32 = \"text\";\n    s\n}\n\npub fn other() -> String {\n    42\n}\n")
		}
		files["ws/"+c+"/Cargo.toml"] = "[package]\nname = \"" + c + "\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n"
		files["ws/"+c+"/src/lib.rs"] = lib.String()
	}
	writeTree(t, dir, files)
	env := []string{"CARGO_TERM_COLOR=never", "CARGO_TARGET_DIR=" + filepath.Join(dir, "target"), "CARGO_NET_OFFLINE=true"}
	// One crate after the other, as a build script does (cargo build
	// --keep-going is not in Debian's cargo).
	build := runTool(t, filepath.Join(dir, "ws"), env, "bash", "-c", "status=0; for c in a b c; do cargo build -p $c || status=$?; done; exit $status")
	test := runTool(t, filepath.Join(dir, "tests"), env, "cargo", "test", "--", "--test-threads=1")
	return []failure{
		{"cargo build, 3 crates", build, regexp.MustCompile(`^error(\[E\d+\])?: `)},
		{"cargo test", test, regexp.MustCompile(`panicked at|^test tests::t\d+ \.\.\. FAILED`)},
	}
}

func cargoTests() string {
	var b strings.Builder
	b.WriteString("#[cfg(test)]\nmod tests {\n")
	for i := 0; i < 300; i++ {
		want := i + 1
		if i == 111 || i == 222 {
			want = i + 2
		}
		fmt.Fprintf(&b, "    #[test]\n    fn t%d() { assert_eq!(%d + 1, %d); }\n", i, i, want)
	}
	return b.String() + "}\n"
}

// nodeBin finds name in node_modules/.bin here or above (npm ci puts the
// TypeScript compiler there).
func nodeBin(t *testing.T, name string) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(dir, "node_modules", ".bin", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no node_modules/.bin/%s: run npm ci (scripts/test does)", name)
		}
		dir = parent
	}
}
