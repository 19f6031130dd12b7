package shell

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/spool"
)

// expected is what Output must make of in under bound, worked out from
// the definition rather than from the writer's state: everything when it
// fits; else the longest prefix of whole lines within the head's size,
// the note, the lines left out that name an error (numbered, in order,
// each while it fits the errors' room), and the longest suffix of the
// lines after the head within the held room less those errors. A last
// line without its newline is a line.
func expected(in []byte, bound int) []byte {
	bound = max(bound, MinOutput)
	if len(in) <= bound {
		return in
	}
	o := NewOutput(nil, bound)
	lines := bytes.SplitAfter(in, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	h, hn := 0, 0
	for hn < len(lines) && h+len(lines[hn]) <= o.headMax {
		h += len(lines[hn])
		hn++
	}
	room := o.heldMax
	for {
		t, tn := 0, 0
		for tn < len(lines)-hn && t+len(lines[len(lines)-1-tn]) <= room {
			t += len(lines[len(lines)-1-tn])
			tn++
		}
		var errs []byte
		errN, errMore, left, leftN, lastErr, msg := 0, 0, 0, 0, -1, -1
		for i := hn; i < len(lines)-tn; i++ {
			l := lines[i]
			e := fmt.Appendf(nil, "%d|%s", i+1, l)
			if !bytes.HasSuffix(e, []byte("\n")) {
				e = append(e, '\n')
			}
			text := bytes.TrimSuffix(l, []byte("\n"))
			switch {
			case len(l) > o.heldMax || !ErrorLine(text) && !(lastErr == i-1 && WhereLine(text)):
				// A line too long to be shown anywhere is not read.
				left, leftN, msg = left+len(l), leftN+1, -1
				if len(l) <= o.heldMax && MessageLine(text) {
					msg = i
				}
			case len(errs)+len(e) <= o.errMax:
				if msg == i-1 && FailLine(text) {
					m := fmt.Appendf(nil, "%d|%s", i, lines[i-1])
					if len(errs)+len(m)+len(e) <= o.errMax {
						errs, errN, left, leftN = append(errs, m...), errN+1, left-len(lines[i-1]), leftN-1
					}
				}
				msg = -1
				errs, errN, lastErr = append(errs, e...), errN+1, i
			default:
				errMore, left, leftN = errMore+1, left+len(l), leftN+1
			}
		}
		if o.heldMax-len(errs) < room {
			room = o.heldMax - len(errs)
			continue
		}
		out := append([]byte{}, in[:h]...)
		out = append(out, note(int64(left), int64(leftN), "", errNoStore, errN, errMore, t)...)
		out = append(out, errs...)
		return append(out, in[len(in)-t:]...)
	}
}

// run writes in to an Output in the given pieces and closes it.
func run(in []byte, bound int, pieces []int) []byte {
	var b bytes.Buffer
	o := NewOutput(&b, bound)
	for _, n := range pieces {
		n = min(n, len(in))
		o.Write(in[:n])
		in = in[n:]
	}
	o.Write(in)
	o.Close()
	return b.Bytes()
}

func check(t *testing.T, in []byte, bound int, pieces []int) {
	t.Helper()
	got := run(in, bound, pieces)
	want := expected(in, bound)
	if !bytes.Equal(got, want) {
		t.Fatalf("bound %d, %d bytes in %v:\ngot  %q\nwant %q", bound, len(in), pieces, got, want)
	}
	if len(got) > max(bound, MinOutput) {
		t.Fatalf("bound %d: %d bytes out", bound, len(got))
	}
}

var outputCases = []struct {
	name  string
	in    string
	bound int
}{
	{"fits", "a\nb\nc\n", 512},
	{"fits without a final newline", "a\nb\nc", 512},
	{"empty", "", 512},
	{"exactly the bound", strings.Repeat("x", 511) + "\n", 512},
	{"one over", strings.Repeat("x", 512) + "\n", 512},
	{"many lines", seq(1, 2000), 512},
	{"many lines, a larger bound", seq(1, 20000), 9600},
	{"one long line", strings.Repeat("word ", 5000), 2000},
	{"a long line in the middle", "head\n" + strings.Repeat("y", 5000) + "\ntail\n", 1000},
	{"a long last line", seq(1, 500) + strings.Repeat("z", 3000) + "\n", 1000},
	{"a long line before the tail", seq(1, 500) + strings.Repeat("z", 3000) + "\nend 1\nend 2\n", 1000},
	{"utf-8", strings.Repeat("値naïve\n", 900), 700},
	{"no newline at all, fits", "partial", 512},
}

func seq(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

func TestOutputCases(t *testing.T) {
	for _, c := range outputCases {
		t.Run(c.name, func(t *testing.T) {
			in := []byte(c.in)
			check(t, in, c.bound, nil)
			check(t, in, c.bound, []int{1, 1, 1, 3, 7})
			var bytewise []int
			for range in {
				bytewise = append(bytewise, 1)
			}
			check(t, in, c.bound, bytewise)
		})
	}
}

// The whole contract on random outputs written in random pieces.
func TestOutputRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		var in []byte
		for n := r.IntN(200); n > 0; n-- {
			l := r.IntN(40)
			if r.IntN(30) == 0 {
				l = r.IntN(3000)
			}
			if r.IntN(8) == 0 {
				in = append(in, []string{"error: ", "--- FAIL: Test", "E   assert ", "panic: ", "  --> x.rs:1:2 ", "    x_test.go:3: "}[r.IntN(6)]...)
			}
			in = append(in, bytes.Repeat([]byte{byte('a' + r.IntN(26))}, l)...)
			if r.IntN(50) != 0 {
				in = append(in, '\n')
			}
		}
		var pieces []int
		for n := r.IntN(20); n > 0; n-- {
			pieces = append(pieces, r.IntN(300))
		}
		check(t, in, MinOutput+r.IntN(4000), pieces)
	}
}

// The note's figures add up: what was shown and what it says was left out
// is the whole, in bytes and in lines.
func TestOutputNoteAddsUp(t *testing.T) {
	in := []byte(seq(1, 100000))
	got := run(in, 2000, []int{4096, 4096, 4096})
	m := regexp.MustCompile(`\[rowkit shell: output limit reached: ([0-9,]+) bytes \(([0-9,]+) lines\) left out here; the last ([0-9,]+) bytes follow\]\n`).FindSubmatchIndex(got)
	if m == nil {
		t.Fatalf("no note in %q", got)
	}
	num := func(i int) int {
		n, _ := strconv.Atoi(strings.ReplaceAll(string(got[m[2*i]:m[2*i+1]]), ",", ""))
		return n
	}
	head, tail := got[:m[0]], got[m[1]:]
	if len(head)+num(1)+len(tail) != len(in) || bytes.Count(head, []byte("\n"))+num(2)+bytes.Count(tail, []byte("\n")) != 100000 || num(3) != len(tail) {
		t.Errorf("the note does not add up: head %d, left %d bytes %d lines, tail %d (%d said)", len(head), num(1), num(2), len(tail), num(3))
	}
	if !bytes.HasPrefix(in, head) || !bytes.HasSuffix(in, tail) || !bytes.HasPrefix(tail, []byte("99")) {
		t.Errorf("head or tail is not the output's: %q ... %q", head, tail)
	}
	if len(got) > 2000 {
		t.Errorf("%d bytes", len(got))
	}
}

// The head is written as it comes, before the output ends.
func TestOutputHeadIsLive(t *testing.T) {
	var b bytes.Buffer
	o := NewOutput(&b, 1000)
	o.Write([]byte("first\nsecond"))
	if b.String() != "first\n" {
		t.Errorf("after one line: %q", b.String())
	}
	o.Write([]byte(" line\n"))
	if b.String() != "first\nsecond line\n" {
		t.Errorf("after two lines: %q", b.String())
	}
	o.Close()
	o.Write([]byte("after close\n"))
	if b.String() != "first\nsecond line\n" {
		t.Errorf("after close: %q", b.String())
	}
}

// Room is the head that is left, at least the tail; Line starts a line.
func TestOutputRoomAndLine(t *testing.T) {
	var b bytes.Buffer
	o := NewOutput(&b, 9600)
	if r := o.Room(); r != o.headMax {
		t.Errorf("room %d, head %d", r, o.headMax)
	}
	o.Write([]byte("0123456789\npartial"))
	if r := o.Room(); r != o.headMax-18 {
		t.Errorf("room %d, want %d", r, o.headMax-18)
	}
	o.Write(bytes.Repeat([]byte("x\n"), 5000))
	if r := o.Room(); r != o.heldMax {
		t.Errorf("room %d once the head is full, want the held room's %d", r, o.heldMax)
	}
	o.Line("[a note]")
	o.Close()
	if !bytes.HasSuffix(b.Bytes(), []byte("x\nx\n[a note]\n")) {
		t.Errorf("ends %q", b.Bytes()[b.Len()-20:])
	}
	var c bytes.Buffer
	o = NewOutput(&c, 9600)
	o.Write([]byte("no newline"))
	o.Line("[a note]")
	o.Close()
	if c.String() != "no newline\n[a note]\n" {
		t.Errorf("%q", c.String())
	}
}

func FuzzOutput(f *testing.F) {
	for _, c := range outputCases {
		f.Add([]byte(c.in), uint16(c.bound), uint8(7))
	}
	f.Fuzz(func(t *testing.T, in []byte, bound uint16, piece uint8) {
		var pieces []int
		for n := 0; n < len(in); n += int(piece) + 1 {
			pieces = append(pieces, int(piece)+1)
		}
		check(t, in, int(bound), pieces)
	})
}

// What the bound leaves out is kept whole: the note names the command that
// reads it on from the first line left out, and the lines shown after the
// note, numbered, are those lines of the kept output.
func TestOutputKept(t *testing.T) {
	store, err := spool.Open(t.TempDir(), spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	for i := 1; i <= 3000; i++ {
		switch {
		case i == 1500:
			in.WriteString("--- FAIL: TestParse (0.00s)\n")
		case i == 1501:
			in.WriteString("    parse_test.go:42: got 1, want 2\n")
		case i == 2200:
			in.WriteString("    other_test.go:7: got 3, want 4\n") // go test -v: before its FAIL
		case i == 2201:
			in.WriteString("--- FAIL: TestOther (0.00s)\n")
		case i%700 == 0:
			fmt.Fprintf(&in, "./x.go:%d:5: undefined: y%d\n", i, i)
		default:
			fmt.Fprintf(&in, "=== RUN   TestCase%d\n", i)
		}
	}
	var b bytes.Buffer
	o := NewOutput(&b, 4000)
	o.Keep(func() (*spool.Store, error) { return store, nil })
	io.WriteString(o, in.String())
	o.Close()
	got := b.String()
	if len(got) > 4000 {
		t.Fatalf("%d bytes", len(got))
	}
	m := regexp.MustCompile(`\[rowkit shell: output limit reached: [0-9,]+ bytes \([0-9,]+ lines\) left out here; kept: hread @out/([0-9a-z]{10}) ([0-9]+):; 8 lines among them name an error: they follow as N\|TEXT, then the last [0-9,]+ bytes\]\n`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("the note: %q", got[strings.Index(got, "[rowkit"):])
	}
	it, err := store.Open(m[1])
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	kept, _ := io.ReadAll(it)
	if string(kept) != in.String() {
		t.Fatalf("kept %d bytes, not the output's %d", len(kept), in.Len())
	}
	lines := strings.Split(in.String(), "\n")
	head := got[:strings.Index(got, "[rowkit")]
	if first, _ := strconv.Atoi(m[2]); first != strings.Count(head, "\n")+1 {
		t.Errorf("reads on at line %d; the head has %d lines", first, strings.Count(head, "\n"))
	}
	shown := regexp.MustCompile(`(?m)^([0-9]+)\|(.*)$`).FindAllStringSubmatch(got, -1)
	// The six that name an error, the test's message under its --- FAIL
	// line, which says where (WhereLine), and the one before the other's
	// (MessageLine).
	if len(shown) != 8 {
		t.Fatalf("%d numbered lines: %q", len(shown), shown)
	}
	for _, l := range shown {
		n, _ := strconv.Atoi(l[1])
		if lines[n-1] != l[2] || !ErrorLine([]byte(l[2])) && !WhereLine([]byte(l[2])) && !MessageLine([]byte(l[2])) {
			t.Errorf("line %d shown as %q, kept as %q", n, l[2], lines[n-1])
		}
	}
	// An output that fits is not kept.
	before, _ := os.ReadDir(store.Dir())
	o = NewOutput(&bytes.Buffer{}, 4000)
	o.Keep(func() (*spool.Store, error) { return store, nil })
	io.WriteString(o, "short\n")
	o.Close()
	if after, _ := os.ReadDir(store.Dir()); len(after) != len(before) {
		t.Errorf("an output that fits was kept")
	}
}

// A store that cannot keep the output: the note says why.
func TestOutputNotKept(t *testing.T) {
	base := t.TempDir()
	store, err := spool.Open(base, spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(store.Dir())
	var b bytes.Buffer
	o := NewOutput(&b, 1000)
	o.Keep(func() (*spool.Store, error) { return store, nil })
	io.WriteString(o, seq(1, 1000))
	o.Close()
	if !regexp.MustCompile(`left out here; not kept: cannot keep the output in .*; the last`).Match(b.Bytes()) {
		t.Errorf("%q", b.String())
	}
}
