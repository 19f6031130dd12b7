package inspect

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
)

// Lines that look like cuts but lie inside a construct that spans them: a
// multi-line string, a raw string, a comment, a function body or class
// written at column 0, a fenced code block, an HTML block. With pieces
// small enough that a cut is tried before every such line, the outline is
// still the whole parse's; a real syntax error is still reported.
func TestPiecesSpanningConstructs(t *testing.T) {
	cases := map[string]string{
		"x.py": `import os

class A:
    """Doc.

def not_a_function():
    pass
"""
    def m(self):
        return """
import fake
class Fake:
"""

x = [
1,
def_,
]

@decorator
def f():
    pass
if x:
    y = 1
else:
    z = 2
try:
    pass
except Exception:
    pass
finally:
    pass
`,
		"x.go": "package x\n\nimport \"fmt\"\n\nvar s = `\nfunc Fake() {}\ntype Fake struct{}\n`\n\n/*\nfunc Commented() {}\n*/\n\nfunc F() {\nvar inner = 1\nfunc() {}()\n_ = inner\n}\n\ntype T struct{}\n\nfunc (t *T) M() { fmt.Println(s) }\n\nconst (\n\tA = 1\n)\n",
		"x.ts": "import { a } from \"a\";\n\nconst t = `\nexport function fake() {}\nclass Fake {}\n`;\n\n/*\nfunction commented() {}\n*/\nfunction f() {\nconst inner = 1;\nfunction nested() {}\nreturn inner;\n}\n\nexport class C {\nm(): void {}\n}\n\n@dec\nclass D {}\n\ninterface I { x: number }\ntype U = string;\nlet v = 1\nvar w = 2\n",
		"x.js": "import a from \"a\";\nconst t = `\nexport function fake() {}\n`;\nfunction f() {\nlet inner = 1;\nclass Inner {}\nreturn inner;\n}\nexport default function g() {}\nclass C {\nm() {}\n}\nasync function h() {}\n",
		"x.md": "---\ntitle: x\n---\n\n# One\n\ntext\n\n```\n\n# not a heading\n\nplain\n```\n\n## Two\n\n<pre>\n\n# not a heading either\n\n</pre>\n\n<!--\n\n# nor this\n\n-->\n\n- item\n\n  # heading in a list\n\n> quote\n\n### Three\n\n~~~~\n\n# code\n\n~~~~\n\n#### Four\n",
	}
	defer func(n int) { pieceBytes = n }(pieceBytes)
	for name, src := range cases {
		for _, broken := range []bool{false, true} {
			b := []byte(src)
			if broken {
				// An error in the middle: a bracket that never closes.
				mid := strings.Index(src, "\n\n") + 1
				b = []byte(src[:mid] + "((((\n" + src[mid:])
			}
			pieceBytes = 1 << 30
			whole, err := OutlineSource(ctx, name, b)
			if err != nil {
				t.Fatal(err)
			}
			for _, size := range []int{1, 16, 64} {
				pieceBytes = size
				pieced, err := OutlineSource(ctx, name, b)
				if err != nil {
					t.Fatal(err)
				}
				if pieced.ParseComplete != whole.ParseComplete || !broken && !sameEntries(whole.Outline, pieced.Outline) {
					t.Errorf("%s (broken %v), pieces of %d: complete %v, %d entries; whole: complete %v, %d entries\n%s\n%s",
						name, broken, size, pieced.ParseComplete, len(pieced.Outline), whole.ParseComplete, len(whole.Outline), entriesText(pieced.Outline), entriesText(whole.Outline))
				}
			}
			if !broken && len(whole.Outline) < 4 {
				t.Errorf("%s: only %d entries", name, len(whole.Outline))
			}
		}
	}
}

func entriesText(es []Entry) string {
	var b strings.Builder
	for _, e := range es {
		b.Write(e.appendJSON(nil))
		b.WriteByte('\n')
	}
	return b.String()
}

// No entry encodes shorter than minEntryBytes (less its comma), so that
// maxEntries entries can never all fit a document: keeping no more than
// that changes no result.
func TestMinEntryBytes(t *testing.T) {
	empty := ""
	for _, e := range []Entry{
		{Kind: KindImport, Name: &empty}, {Kind: KindConstant, Name: &empty}, {Kind: KindVariable, Name: &empty},
		{Kind: KindType, Name: &empty}, {Kind: KindClass, Name: &empty}, {Kind: KindFunction, Name: &empty},
		{Kind: KindMethod, Name: &empty, Receiver: &empty}, {Kind: KindHeading, Name: &empty, Level: 1},
		{Kind: KindFrontmatter, Name: &empty}, {Kind: KindJSON, Pointer: &empty, ValueType: "null"},
	} {
		e.Line, e.LineEnd = "1:0000", "1:0000"
		if n := len(e.appendJSON(nil)); n < minEntryBytes-1 {
			t.Errorf("%s: %d bytes, under minEntryBytes %d", e.Kind, n, minEntryBytes-1)
		}
	}
	if maxEntries*minEntryBytes <= MaxOutputBytes {
		t.Errorf("maxEntries %d could all fit", maxEntries)
	}
}

// A file with more entries than any document holds: the outline keeps
// maxEntries of them, the document is the same as from the whole outline,
// and the parse still covers the whole file (an error at its end).
func TestManyEntriesKept(t *testing.T) {
	var b strings.Builder
	for i := range 5000 {
		b.WriteString("def f" + strings.Repeat("x", i%7) + "(): pass\n")
	}
	src := b.String() + "def broken(:\n"
	d, err := OutlineSource(ctx, "many.py", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Outline) != maxEntries || d.ParseComplete || *d.LineCount != 5001 {
		t.Fatalf("%d entries (want %d), complete %v, %d lines", len(d.Outline), maxEntries, d.ParseComplete, *d.LineCount)
	}
	r, err := NewResult(d)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Truncated || r.Truncation.AfterEntries >= maxEntries || len(r.AppendJSON(nil)) > MaxOutputBytes {
		t.Fatalf("truncation %+v, %d bytes", r.Truncation, len(r.AppendJSON(nil)))
	}
}

// bigSource repeats a valid snippet of the language, names numbered, to
// at least size bytes.
func bigSource(name string, size int) []byte {
	snippets := map[string]string{
		"big.go": "type T%[1]d struct{ N int }\n\nfunc (t *T%[1]d) M%[1]d(x int) int {\n\tif x > %[1]d {\n\t\treturn t.N + x\n\t}\n\treturn 0\n}\n\n",
		"big.py": "class C%[1]d:\n    def m(self, x):\n        return [v for v in x if v > %[1]d]\n\n\ndef f%[1]d(a, b=None):\n    return a or b\n\n\n",
		"big.js": "export class C%[1]d {\n  m(x) {\n    return x.filter((v) => v > %[1]d);\n  }\n}\n\nexport function f%[1]d(a, b) {\n  return a ?? b;\n}\n\n",
		"big.md": "## Section %[1]d\n\nSome *text* and `code`.\n\n- item\n- item\n\n```\n# not a heading\n```\n\n",
	}
	var b strings.Builder
	if name == "big.go" {
		b.WriteString("package big\n\n")
	}
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, snippets[name], i)
	}
	return []byte(b.String())
}

// BenchmarkOutlineSize outlines 7 MB sources in pieces of several sizes
// and whole (the whole-file parse is what a file within one piece gets),
// with the process's CPU time per outline beside the wall time.
func BenchmarkOutlineSize(b *testing.B) {
	for _, name := range []string{"big.go", "big.py", "big.js", "big.md"} {
		src := bigSource(name, 7<<20)
		for _, pb := range []int{16 << 10, 64 << 10, 256 << 10, 1 << 30} {
			label := fmt.Sprintf("%s/%dKiB", name, pb>>10)
			if pb == 1<<30 {
				label = name + "/whole"
			}
			b.Run(label, func(b *testing.B) {
				defer func(n int) { pieceBytes = n }(pieceBytes)
				pieceBytes = pb
				b.SetBytes(int64(len(src)))
				start := cpuTime()
				for b.Loop() {
					if _, err := OutlineSource(ctx, name, src); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e6, "cpu-ms/op")
			})
		}
	}
}

// cpuTime is the CPU time of this process (all its threads, not its
// children) in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// A real syntax error that runs on to the end (an unclosed bracket): the
// pieces before it are outlined as the whole parse outlines them, and the
// rest, parsed whole after maxDoublings, is incomplete.
func TestPiecesRunawayError(t *testing.T) {
	defer func(n int) { pieceBytes = n }(pieceBytes)
	good := bigSource("big.py", 4000)
	src := append(append(append([]byte{}, good...), "x = ((((\n"...), good...)
	pieceBytes = 1 << 30
	whole, err := OutlineSource(ctx, "x.py", src)
	if err != nil || whole.ParseComplete {
		t.Fatalf("whole: %v, complete %v", err, whole.ParseComplete)
	}
	pieceBytes = 256
	pieced, err := OutlineSource(ctx, "x.py", src)
	if err != nil || pieced.ParseComplete {
		t.Fatalf("pieces: %v, complete %v", err, pieced.ParseComplete)
	}
	before := 0
	for _, e := range whole.Outline {
		if e.Span.Start.Line < strings.Count(string(good), "\n")-8 {
			before++
		}
	}
	if before < 10 || len(pieced.Outline) < before || !sameEntries(whole.Outline[:before], pieced.Outline[:before]) {
		t.Fatalf("%d entries before the error; pieces:\n%s\nwhole:\n%s", before, entriesText(pieced.Outline), entriesText(whole.Outline))
	}
}
