package rows

import (
	"bytes"
	"strings"
	"testing"
)

func TestIndex(t *testing.T) {
	for _, tc := range []struct {
		src   string
		lines []string // text + "|" + terminator name
	}{
		{"", nil},
		{"a", []string{"a|none"}},
		{"a\n", []string{"a|LF"}},
		{"\n\n", []string{"|LF", "|LF"}},
		{"a\rb\r\nc\n\n", []string{"a|CR", "b|CRLF", "c|LF", "|LF"}},
		{"\uFEFFx\r", []string{"\uFEFFx|CR"}},
		{"x\r\r\n", []string{"x|CR", "|CRLF"}},
	} {
		x, err := NewIndex([]byte(tc.src))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for n := 1; n <= x.Count(); n++ {
			got = append(got, string(x.Text(n))+"|"+x.Term(n).Name())
			if x.LineAt(x.Start(n)) != n || x.LineAt(x.End(n)-1) != n && x.End(n) > x.Start(n) {
				t.Errorf("%q: LineAt disagrees with line %d", tc.src, n)
			}
		}
		if strings.Join(got, ",") != strings.Join(tc.lines, ",") {
			t.Errorf("%q: got %q, want %q", tc.src, got, tc.lines)
		}
	}
	if _, err := NewIndex([]byte("ok\n\xff")); err == nil {
		t.Error("invalid UTF-8 was indexed")
	}
}

// FuzzIndex checks the index against Scanner, the streaming splitter, and
// that text and terminators rebuild the source byte for byte.
func FuzzIndex(f *testing.F) {
	for _, s := range []string{"", "a", "a\n", "\n\n", "a\rb\r\nc\n\n", "\r\n\r", "\uFEFF\r\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		x, err := NewIndex(src)
		sc := NewScanner(bytes.NewReader(src))
		var want [][]byte
		for sc.Scan(len(src) + 1) {
			want = append(want, append([]byte(nil), sc.Text()...))
		}
		if scErr := sc.Drain(); (err == nil) != (scErr == nil) {
			t.Fatalf("NewIndex err %v, Scanner err %v", err, scErr)
		}
		if err != nil {
			return
		}
		if x.Count() != len(want) {
			t.Fatalf("%d lines, Scanner %d", x.Count(), len(want))
		}
		var rebuilt []byte
		for n := 1; n <= x.Count(); n++ {
			if !bytes.Equal(x.Text(n), want[n-1]) {
				t.Fatalf("line %d %q, Scanner %q", n, x.Text(n), want[n-1])
			}
			if x.Term(n) == TermNone && n != x.Count() {
				t.Fatalf("line %d of %d has no terminator", n, x.Count())
			}
			rebuilt = append(append(rebuilt, x.Text(n)...), x.Term(n).String()...)
		}
		if !bytes.Equal(rebuilt, src) {
			t.Fatalf("rebuilt %q from %q", rebuilt, src)
		}
	})
}
