package rows

import (
	"bytes"
	"errors"
	"testing"
)

// scannerLines is the reference: the lines Scanner gives for src.
func scannerLines(src []byte) ([]string, error) {
	sc := NewScanner(bytes.NewReader(src))
	var out []string
	for sc.Scan(len(src) + 1) {
		out = append(out, string(sc.Text()))
	}
	return out, sc.Err()
}

func linesOf(src []byte) ([]string, error) {
	var out []string
	err := Lines(src, func(start, n int) { out = append(out, string(src[start:start+n])) })
	return out, err
}

func checkLines(t *testing.T, src []byte) {
	want, werr := scannerLines(src)
	got, gerr := linesOf(src)
	var we, ge *EncodingError
	if errors.As(werr, &we) != errors.As(gerr, &ge) {
		t.Fatalf("%q: errors differ: Scanner %v, Lines %v", src, werr, gerr)
	}
	if we != nil {
		if we.Offset != ge.Offset {
			t.Fatalf("%q: offsets differ: Scanner %d, Lines %d", src, we.Offset, ge.Offset)
		}
		return
	}
	if len(got) != len(want) {
		t.Fatalf("%q: %d lines, Scanner has %d", src, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%q: line %d is %q, Scanner has %q", src, i+1, got[i], want[i])
		}
	}
}

var lineSeeds = []string{
	"", "a", "a\n", "\n", "\n\n", "a\rb\r\nc\n\n", "\r", "\r\n", "\r\r\n\n", "x\r",
	"\ufeffbom\n", "caf\xe9\n", "ok\n\xff", "tail\xe2\x82", "naïve 値\r\n", "a\x00b\n",
}

func TestLinesMatchesScanner(t *testing.T) {
	for _, s := range lineSeeds {
		checkLines(t, []byte(s))
	}
	if n, _ := linesOf([]byte("a\rb\r\nc\n\n")); len(n) != 4 {
		t.Errorf("a\\rb\\r\\nc\\n\\n has %d lines, want 4", len(n))
	}
}

func FuzzLines(f *testing.F) {
	for _, s := range lineSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) { checkLines(t, src) })
}
