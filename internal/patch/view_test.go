package patch

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/rowkit/rowkit/internal/rows"
)

// A view answers as the bytes it stands for would: random baselines with
// every kind of terminator (CRLF split across pieces included), random
// replacements and insertions, and a final-terminator edit; its joined
// bytes, its render from a stream of the baseline, its line index and its
// lines' texts match the content joined in memory and rows.NewIndex of it.
func TestViewMatchesBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 19))
	alphabet := []string{"a", "bc", "\n", "\r", "\r\n", "é", " ", "x\r", "\ny"}
	gen := func(n int) string {
		var b bytes.Buffer
		for range n {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	for round := range 20000 {
		base := []byte(gen(rng.IntN(30)))
		var es []*edit
		at := 0
		for at < len(base) && rng.IntN(3) > 0 {
			s := at + rng.IntN(len(base)-at+1)
			e := s + rng.IntN(len(base)-s+1)
			if rng.IntN(3) == 0 {
				e = s // an insertion
			}
			es = append(es, &edit{start: s, end: e, value: gen(rng.IntN(4)), insert: e == s, seq: len(es)})
			at = e
			if e == s {
				at++
			}
		}
		f := &fileState{base: base, edits: es}
		if rng.IntN(3) == 0 {
			f.eof = &edit{value: []string{"", "\n", "\r\n"}[rng.IntN(3)]}
		}
		// The content joined in memory, as render built it before views.
		want := []byte{}
		pos := 0
		for _, e := range es {
			want = append(want, base[pos:e.start]...)
			want = append(want, e.value...)
			pos = e.end
		}
		want = append(want, base[pos:]...)
		if f.eof != nil && len(want) > 0 {
			n := len(want)
			switch {
			case bytes.HasSuffix(want, []byte("\r\n")):
				n -= 2
			case want[n-1] == '\n' || want[n-1] == '\r':
				n--
			}
			want = append(want[:n], f.eof.value...)
		}
		f.render()
		v := f.view
		if got := v.Bytes(); !bytes.Equal(got, want) {
			t.Fatalf("round %d: %q + %d edits: view %q, want %q", round, base, len(es), got, want)
		}
		var streamed bytes.Buffer
		if err := v.render(&streamed, bytes.NewReader(base)); err != nil || !bytes.Equal(streamed.Bytes(), want) {
			t.Fatalf("round %d: render %q %v, want %q", round, streamed.Bytes(), err, want)
		}
		if v.equalsBase() != bytes.Equal(want, base) {
			t.Fatalf("round %d: equalsBase %v for %q -> %q", round, v.equalsBase(), base, want)
		}
		x, err := rows.NewIndex(want)
		if err != nil {
			continue // an edit split a multi-byte character: not a script's
		}
		l := v.lines()
		if l.Count() != x.Count() || l.Len() != len(want) {
			t.Fatalf("round %d: %q: %d lines, want %d", round, want, l.Count(), x.Count())
		}
		for n := 1; n <= x.Count(); n++ {
			if l.Start(n) != x.Start(n) || !bytes.Equal(l.Text(n), x.Text(n)) {
				t.Fatalf("round %d: %q line %d: %d %q, want %d %q", round, want, n, l.Start(n), l.Text(n), x.Start(n), x.Text(n))
			}
		}
		for off := 0; off <= len(want); off++ {
			if l.LineAt(off) != x.LineAt(off) {
				t.Fatalf("round %d: %q: LineAt(%d) %d, want %d", round, want, off, l.LineAt(off), x.LineAt(off))
			}
		}
	}
}
