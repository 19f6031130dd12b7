package rows

import (
	"bytes"
	"strings"
	"testing"
)

// indexTermRef is the obvious definition, byte by byte.
func indexTermRef(b []byte) int {
	for i, c := range b {
		if c == '\n' || c == '\r' {
			return i
		}
	}
	return -1
}

var termSeeds = []string{
	"", "a", "\n", "\r", "\r\n", "abc\rdef\n", "abc\ndef\r",
	strings.Repeat("x", 63) + "\r", strings.Repeat("x", 64) + "\r", strings.Repeat("x", 65) + "\n",
	strings.Repeat("y", 1000) + "\r" + strings.Repeat("z", 5000) + "\n",
	strings.Repeat("y", 200) + "\n" + strings.Repeat("z", 5) + "\r",
	strings.Repeat("w", 70000),
}

func TestIndexTerm(t *testing.T) {
	for _, s := range termSeeds {
		if got, want := IndexTerm([]byte(s)), indexTermRef([]byte(s)); got != want {
			t.Errorf("IndexTerm(%.20q... len %d) = %d, want %d", s, len(s), got, want)
		}
	}
}

func FuzzIndexTerm(f *testing.F) {
	for _, s := range termSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := IndexTerm(b), indexTermRef(b); got != want {
			t.Fatalf("IndexTerm = %d, want %d", got, want)
		}
	})
}

// examined counts the bytes the terminator searches examine while fn runs.
func examined(fn func()) int {
	n := 0
	probe = func(k int) { n += k }
	defer func() { probe = nil }()
	fn()
	return n
}

// TestSplitIsLinear counts the work of splitting files of n and 8n lines,
// every terminator style, by both splitters: the bytes examined stay
// within a constant of the input size (a lone-CR file used to cost the
// rest of the file per line: 50,000 lines of 540 KB in all, about 13 GB
// searched), and grow with the input, not with its square.
func TestSplitIsLinear(t *testing.T) {
	gen := func(lines int, term string, width int) []byte {
		var b bytes.Buffer
		for i := range lines {
			b.WriteString(strings.Repeat("x", i%width))
			b.WriteString(term)
		}
		return b.Bytes()
	}
	styles := []struct {
		name, term   string
		width, lines int
	}{{"CR", "\r", 10, 20000}, {"LF", "\n", 10, 20000}, {"CRLF", "\r\n", 10, 20000}, {"CR-long", "\r", 2000, 1000}, {"LF-long", "\n", 2000, 1000}}
	for _, st := range styles {
		var work [2]float64 // bytes examined per input byte
		for k, lines := range []int{st.lines, 8 * st.lines} {
			src := gen(lines, st.term, st.width)
			lw := examined(func() { Lines(src, func(int, int) {}) })
			sw := examined(func() {
				sc := NewScanner(bytes.NewReader(src))
				for sc.Scan(0) {
				}
			})
			// Per line: under twice its bytes plus the first window,
			// each window searched at most twice.
			bound := 2*len(src) + (firstWindow+2)*lines
			if lw > bound || sw > bound {
				t.Errorf("%s, %d lines (%d bytes): Lines examined %d bytes, Scanner %d; bound %d", st.name, lines, len(src), lw, sw, bound)
			}
			work[k] = float64(lw) / float64(len(src))
		}
		if ratio := work[1] / work[0]; ratio > 1.2 {
			t.Errorf("%s: 8x the lines cost %.1fx the work per byte", st.name, ratio)
		}
	}
}
