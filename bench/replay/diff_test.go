package main

import (
	"math/rand/v2"
	"testing"
)

// Applying the hunks to a gives b, for random line lists.
func TestDiffLines(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for range 2000 {
		gen := func() []string {
			s := make([]string, r.IntN(20))
			for i := range s {
				s[i] = string(rune('a' + r.IntN(4)))
			}
			return s
		}
		a, b := gen(), gen()
		var out []string
		at := 0
		for _, h := range diffLines(a, b) {
			out = append(out, a[at:h.oa]...)
			out = append(out, b[h.na:h.na+h.nn]...)
			at = h.oa + h.on
		}
		out = append(out, a[at:]...)
		if len(out) != len(b) {
			t.Fatalf("%v -> %v gave %v", a, b, out)
		}
		for i := range b {
			if out[i] != b[i] {
				t.Fatalf("%v -> %v gave %v", a, b, out)
			}
		}
	}
}
