package diff

import (
	"math/rand/v2"
	"testing"
)

// lcs is the length of the longest common subsequence, by dynamic
// programming: a shortest edit script deletes and inserts exactly the
// elements outside it.
func lcs(a, b []byte) int {
	t := make([][]int, len(a)+1)
	for i := range t {
		t[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	return t[0][0]
}

// apply turns a into b with cs, checking that the changes are in order and
// do not touch.
func apply(t *testing.T, a, b []byte, cs []Change) []byte {
	var out []byte
	o := 0
	for _, c := range cs {
		if c.Old < o || c.OldN == 0 && c.NewN == 0 || c.New != len(out)+(c.Old-o) {
			t.Fatalf("bad change %+v after old %d (out %d)", c, o, len(out))
		}
		out = append(out, a[o:c.Old]...)
		out = append(out, b[c.New:c.New+c.NewN]...)
		o = c.Old + c.OldN
	}
	return append(out, a[o:]...)
}

func TestSlicesShortest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 3000; n++ {
		a := make([]byte, r.IntN(30))
		b := make([]byte, r.IntN(30))
		for i := range a {
			a[i] = byte('a' + r.IntN(4))
		}
		for i := range b {
			b[i] = byte('a' + r.IntN(4))
		}
		if n%3 == 0 { // mostly equal sequences, as in real edits
			b = append(append(append([]byte(nil), a[:len(a)/2]...), b[:min(3, len(b))]...), a[len(a)/2:]...)
		}
		cs := Slices(a, b, 0)
		if got := apply(t, a, b, cs); string(got) != string(b) {
			t.Fatalf("%q -> %q: applied %+v gives %q", a, b, cs, got)
		}
		cost := 0
		for _, c := range cs {
			cost += c.OldN + c.NewN
		}
		if want := len(a) + len(b) - 2*lcs(a, b); cost != want {
			t.Fatalf("%q -> %q: cost %d, shortest %d", a, b, cost, want)
		}
		// A bound below the distance still gives a correct script.
		if got := apply(t, a, b, Slices(a, b, 1)); string(got) != string(b) {
			t.Fatalf("%q -> %q: bounded script gives %q", a, b, got)
		}
	}
}
