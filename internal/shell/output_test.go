package shell

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// expected is what Output must make of in under bound, worked out from
// the definition rather than from the writer's state: everything when it
// fits; else the longest prefix of whole lines within the head's size,
// the note, and the longest suffix of the lines after it within the
// tail's size. A last line without its newline is a line.
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
	t, tn := 0, 0
	for tn < len(lines)-hn && t+len(lines[len(lines)-1-tn]) <= o.tailMax {
		t += len(lines[len(lines)-1-tn])
		tn++
	}
	out := append([]byte{}, in[:h]...)
	out = append(out, note(int64(len(in)-h-t), int64(len(lines)-hn-tn), t)...)
	return append(out, in[len(in)-t:]...)
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
	if r := o.Room(); r != o.tailMax {
		t.Errorf("room %d once the head is full, want the tail's %d", r, o.tailMax)
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
