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
	// The bound includes the marker: 27 bytes for a 40-byte stream, which
	// leaves 9 for the text, 4 of the head and 5 of the tail.
	{"head and tail", "0123456789" + strings.Repeat("-", 20) + "abcdefghij", 36, "0123\n[... 31 bytes elided ...]\nfghij", 31},
	// é is 2 bytes: the cut drops the partial sequence on both sides.
	{"utf8 head", "abcé" + strings.Repeat("-", 40) + "mnoé", 36, "abc\n[... 42 bytes elided ...]\nmnoé", 42},
	{"utf8 tail split", "abcdefghij" + strings.Repeat("-", 40) + "éwxyz", 36, "abcd\n[... 48 bytes elided ...]\nwxyz", 48},
	{"fits whole", "0123456789abcdefghij", 20, "0123456789abcdefghij", 0},
	{"bound below the marker", "0123456789abcdefghij", 19, "", 20},
	{"no room at all", "abc", 0, "", 3},
	// Each lone invalid byte becomes a 3-byte U+FFFD: 60 bytes become 120,
	// past the bound of 100, so the text is elided to fit (82 bytes).
	{"replacements past the bound", strings.Repeat("\xffa", 30), 100, strings.Repeat("\uFFFDa", 6) + "\uFFFD\n[... 33 bytes elided ...]\n" + strings.Repeat("\uFFFDa", 7), 33},
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
		m := int(max % 512)
		cp := NewCapture(m)
		cp.Write([]byte(in))
		got, dropped := cp.Result()
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 %q", got)
		}
		kept := len(got)
		if dropped > 0 && got == "" && dropped != cp.cleaned {
			t.Fatalf("nothing kept but only %d of %d bytes dropped", dropped, cp.cleaned)
		}
		if dropped > 0 && got != "" {
			i := strings.Index(got, "\n[... ")
			j := strings.Index(got, " bytes elided ...]\n")
			if i < 0 || j < i {
				t.Fatalf("no elision marker in %q", got)
			}
			kept = len(got) - (j + len(" bytes elided ...]\n") - i)
		}
		if len(got) > m {
			t.Fatalf("%d bytes kept, marker included, past the bound %d", len(got), m)
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
		// A smaller bound applied afterwards keeps what a capture made
		// with that bound keeps.
		for _, b := range []int{m / 3, m / 2, m - 1} {
			if b < 0 {
				continue
			}
			small := NewCapture(b)
			small.Write([]byte(in))
			wantText, wantDropped := small.Result()
			if got, d := cp.ResultWithin(b); got != wantText || d != wantDropped {
				t.Fatalf("ResultWithin(%d) = %q (%d), a capture of %d gives %q (%d)", b, got, d, b, wantText, wantDropped)
			}
		}
	})
}

// ResultWithin under the capture's own bound, or a larger one, is Result;
// under a smaller one it is what a capture made with it keeps.
func TestCaptureResultWithin(t *testing.T) {
	for _, c := range captureCases {
		cp := NewCapture(c.max)
		cp.Write([]byte(c.in))
		want, wantDropped := cp.Result()
		for _, b := range []int{c.max, c.max + 100} {
			if got, d := cp.ResultWithin(b); got != want || d != wantDropped {
				t.Errorf("%s: ResultWithin(%d) = %q (%d), Result %q (%d)", c.name, b, got, d, want, wantDropped)
			}
		}
		for b := 0; b < c.max; b++ {
			small := NewCapture(b)
			small.Write([]byte(c.in))
			want, wantDropped := small.Result()
			if got, d := cp.ResultWithin(b); got != want || d != wantDropped {
				t.Errorf("%s: ResultWithin(%d) = %q (%d), a capture of %d gives %q (%d)", c.name, b, got, d, b, want, wantDropped)
			}
		}
	}
}
