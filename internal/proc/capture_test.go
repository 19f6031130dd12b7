package proc

import (
	"strings"
	"testing"
	"unicode/utf8"
)

var captureCases = []struct {
	name, in string
	max      int
	want     string
	dropped  int64
}{
	{"plain", "hello\nworld\n", 100, "hello\nworld\n", 0},
	{"ansi colours", "\x1b[31mred\x1b[0m \x1b[1;32mgreen\x1b[m\n", 100, "red green\n", 0},
	{"osc title", "\x1b]0;title\x07text\x1b]8;;http://x\x1b\\link\n", 100, "textlink\n", 0},
	{"charset", "\x1b(Bplain\n", 100, "plain\n", 0},
	{"escape before utf8", "\x1bĦ\x1b[Ħ\n", 100, "ĦĦ\n", 0},
	{"progress bar", "10%\r50%\r100%\ndone\n", 100, "100%\ndone\n", 0},
	{"crlf", "a\r\nb\r\n", 100, "a\nb\n", 0},
	{"cr at end", "partial\r", 100, "partial", 0},
	{"bell and backspace", "a\x07b\x08c\n", 100, "abc\n", 0},
	{"head and tail", "0123456789abcdefghij", 10, "01234\n[... 10 bytes elided ...]\nfghij", 10},
	// é is 2 bytes: the cut drops the partial sequence on both sides.
	{"utf8 head", "abcdéfghijklmnoé", 10, "abcd\n[... 9 bytes elided ...]\nmnoé", 9},
	{"utf8 tail split", "abcdefghijéwxyz", 10, "abcde\n[... 7 bytes elided ...]\nwxyz", 7},
	{"utf8 tail", "abcdefghijéklmno", 10, "abcde\n[... 7 bytes elided ...]\nklmno", 7},
}

func TestCapture(t *testing.T) {
	for _, c := range captureCases {
		cp := NewCapture(c.max)
		// Byte by byte, so every escape and sequence spans writes.
		for i := 0; i < len(c.in); i++ {
			cp.Write([]byte{c.in[i]})
		}
		got, dropped := cp.Result()
		if got != c.want || dropped != c.dropped || cp.Total() != int64(len(c.in)) {
			t.Errorf("%s: got %q (dropped %d, total %d), want %q (dropped %d)", c.name, got, dropped, cp.Total(), c.want, c.dropped)
		}
	}
}

// FuzzCapture: the kept text is valid UTF-8, within the bound, and kept
// plus dropped accounts for every cleaned byte.
func FuzzCapture(f *testing.F) {
	for _, c := range captureCases {
		f.Add(c.in, uint16(c.max))
	}
	f.Fuzz(func(t *testing.T, in string, max uint16) {
		m := int(max%512) + 2
		cp := NewCapture(m)
		cp.Write([]byte(in))
		got, dropped := cp.Result()
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 %q", got)
		}
		kept := len(got)
		if dropped > 0 {
			i := strings.Index(got, "\n[... ")
			j := strings.Index(got, " bytes elided ...]\n")
			if i < 0 || j < i {
				t.Fatalf("no elision marker in %q", got)
			}
			kept = len(got) - (j + len(" bytes elided ...]\n") - i)
			if kept > m && utf8.ValidString(in) {
				t.Fatalf("kept %d > %d", kept, m)
			}
		}
		if !strings.ContainsAny(in, "\x1b\r") && utf8.ValidString(in) && dropped == 0 {
			var want strings.Builder
			for _, r := range in {
				if r >= 0x20 && r != 0x7f || r == '\t' || r == '\n' {
					want.WriteRune(r)
				}
			}
			if got != want.String() {
				t.Fatalf("plain text changed: %q -> %q", in, got)
			}
		}
		if utf8.ValidString(in) && int64(kept)+dropped != cp.cleaned {
			t.Fatalf("kept %d + dropped %d != cleaned %d", kept, dropped, cp.cleaned)
		}
	})
}
