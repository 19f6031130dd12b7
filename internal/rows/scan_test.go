package rows

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

// refSplit is the whole-buffer reference for the line rules.
func refSplit(b []byte) []string {
	var lines []string
	for len(b) > 0 {
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			lines = append(lines, string(b))
			break
		}
		lines = append(lines, string(b[:i]))
		if b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n' {
			i++
		}
		b = b[i+1:]
	}
	return lines
}

// refInvalid returns the offset of the first invalid UTF-8 byte, or -1.
func refInvalid(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// chunkReader returns reads of the given sizes in turn, cycling.
type chunkReader struct {
	data  []byte
	sizes []int
	i     int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := c.sizes[c.i%len(c.sizes)]
	c.i++
	n = min(n, len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

func scanAll(t testing.TB, r io.Reader) ([]string, error) {
	t.Helper()
	sc := NewScanner(r)
	var got []string
	for sc.Scan(1 << 30) {
		if sc.Line() != len(got)+1 {
			t.Fatalf("Line() = %d, want %d", sc.Line(), len(got)+1)
		}
		if !sc.Complete() || sc.Len() != int64(len(sc.Text())) {
			t.Fatalf("line %d incomplete with unlimited keep", sc.Line())
		}
		got = append(got, string(sc.Text()))
	}
	return got, sc.Err()
}

var lineTests = []struct {
	in   string
	want []string
}{
	{"", nil},
	{"a", []string{"a"}},
	{"a\n", []string{"a"}},
	{"\n", []string{""}},
	{"\n\n", []string{"", ""}},
	{"a\rb\r\nc\n\n", []string{"a", "b", "c", ""}},
	{"a\r", []string{"a"}},
	{"\r\r", []string{"", ""}},
	{"\r\n\r\n", []string{"", ""}},
	{"\n\r", []string{"", ""}},
	{"a\r\rb", []string{"a", "", "b"}},
	{"  \tindented\t \n", []string{"  \tindented\t "}},
	{"\uFEFFbom\nx", []string{"\uFEFFbom", "x"}},
	{"ünïcödé\r\n日本語\r", []string{"ünïcödé", "日本語"}},
	{"no terminator", []string{"no terminator"}},
	{"nul\x00byte\n", []string{"nul\x00byte"}},
}

func TestScannerLines(t *testing.T) {
	for _, tt := range lineTests {
		for _, size := range []int{1, 2, 3, 7, 4096} {
			got, err := scanAll(t, &chunkReader{data: []byte(tt.in), sizes: []int{size}})
			if err != nil {
				t.Fatalf("%q (chunks of %d): %v", tt.in, size, err)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("%q (chunks of %d) = %q, want %q", tt.in, size, got, tt.want)
			}
		}
	}
}

// A buffer sized from a stat that proved too small (the file grew, or the
// size was a guess) still gives every line, in as many reads as it takes.
func TestScannerSizeHint(t *testing.T) {
	long := strings.Repeat("é", 700) + "\r\n" + strings.Repeat("x\n", 600) + "日本語\r"
	want := refSplit([]byte(long))
	for _, hint := range []int64{-1, 0, 5, 600, int64(len(long)) - 1, int64(len(long)), 1 << 30} {
		sc := NewScannerSize(strings.NewReader(long), hint)
		var got []string
		for sc.Scan(1 << 30) {
			got = append(got, string(sc.Text()))
		}
		if sc.Err() != nil || strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("hint %d: %d lines, %v; want %d lines", hint, len(got), sc.Err(), len(want))
		}
		if n := len(sc.buf); hint >= 0 && hint < bufSize-1 && n != max(int(hint)+1, minBufSize) || n > bufSize {
			t.Errorf("hint %d: buffer of %d bytes", hint, n)
		}
	}
}

// A CR at the end of one read and LF at the start of the next is one CRLF.
func TestScannerCRLFAcrossReads(t *testing.T) {
	r := &chunkReader{data: []byte("ab\r\ncd\r\n"), sizes: []int{3, 1, 3}}
	got, err := scanAll(t, r)
	if err != nil || strings.Join(got, "|") != "ab|cd" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestScannerInvalidUTF8(t *testing.T) {
	tests := []struct {
		in     string
		offset int64
	}{
		{"ab\xffc", 2},
		{"ok\n\xc3", 3},           // truncated at EOF
		{"ok\n\xe2\x82", 3},       // truncated three-byte sequence
		{"x\xed\xa0\x80", 1},      // UTF-16 surrogate
		{"x\xc0\xaf", 1},          // overlong
		{"日本\xf4\x90\x80\x80", 6}, // beyond U+10FFFF
		{"a\r\n\x80", 3},          // lone continuation byte
	}
	for _, tt := range tests {
		for _, size := range []int{1, 2, 5, 4096} {
			_, err := scanAll(t, &chunkReader{data: []byte(tt.in), sizes: []int{size}})
			e, ok := IsEncoding(err)
			if !ok || e.Offset != tt.offset {
				t.Errorf("%q (chunks of %d): err = %v, want offset %d", tt.in, size, err, tt.offset)
			}
		}
		sc := NewScanner(strings.NewReader(tt.in))
		if e, ok := IsEncoding(sc.Drain()); !ok || e.Offset != tt.offset {
			t.Errorf("Drain(%q) = %v, want offset %d", tt.in, e, tt.offset)
		}
	}
}

func TestScannerKeep(t *testing.T) {
	sc := NewScanner(strings.NewReader("short\n" + strings.Repeat("x", 1000) + "\nend"))
	if !sc.Scan(3) || string(sc.Text()) != "sho" || sc.Complete() || sc.Len() != 5 {
		t.Fatalf("line 1: %q complete=%v len=%d", sc.Text(), sc.Complete(), sc.Len())
	}
	if !sc.Scan(0) || len(sc.Text()) != 0 || sc.Len() != 1000 || sc.Line() != 2 {
		t.Fatalf("line 2: %q len=%d line=%d", sc.Text(), sc.Len(), sc.Line())
	}
	if !sc.Scan(10) || string(sc.Text()) != "end" || !sc.Complete() {
		t.Fatalf("line 3: %q", sc.Text())
	}
	if sc.Scan(10) || sc.Err() != nil {
		t.Fatalf("scan past end: err %v", sc.Err())
	}
}

func TestScannerReadError(t *testing.T) {
	boom := errors.New("boom")
	sc := NewScanner(io.MultiReader(strings.NewReader("a\nb"), iotest.ErrReader(boom)))
	n := 0
	for sc.Scan(10) {
		n++
	}
	if !errors.Is(sc.Err(), boom) || n != 1 {
		t.Fatalf("lines %d, err %v", n, sc.Err())
	}
}

// The scanner's memory does not grow with a line it does not keep.
func TestScannerLongLineFlat(t *testing.T) {
	r := io.MultiReader(io.LimitReader(repeatReader('y'), 64<<20), strings.NewReader("\nz\n"))
	sc := NewScanner(r)
	if !sc.Scan(16) || sc.Len() != 64<<20 || len(sc.Text()) != 16 {
		t.Fatalf("len %d", sc.Len())
	}
	if cap(sc.buf) != bufSize || cap(sc.text) > 1024 {
		t.Fatalf("buffers grew: buf %d text %d", cap(sc.buf), cap(sc.text))
	}
	if !sc.Scan(16) || string(sc.Text()) != "z" {
		t.Fatalf("line 2 %q", sc.Text())
	}
}

type repeatReader byte

func (b repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

func FuzzScanner(f *testing.F) {
	for _, tt := range lineTests {
		f.Add([]byte(tt.in), uint64(1))
	}
	f.Add([]byte("a\r\nb\xffc"), uint64(7))
	f.Add([]byte("日本\r\n語\r"), uint64(3))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, seed>>7))
		sizes := make([]int, 1+rng.IntN(8))
		for i := range sizes {
			sizes[i] = 1 + rng.IntN(16)
		}
		got, err := scanAll(t, &chunkReader{data: data, sizes: sizes})
		if bad := refInvalid(data); bad >= 0 {
			e, ok := IsEncoding(err)
			if !ok || e.Offset != int64(bad) {
				t.Fatalf("err %v, want invalid UTF-8 at %d", err, bad)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		want := refSplit(data)
		if len(got) != len(want) {
			t.Fatalf("%d lines, want %d: %q vs %q", len(got), len(want), got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("line %d = %q, want %q", i+1, got[i], want[i])
			}
		}
	})
}

// The tap sees each line's whole text, whatever is kept and however the
// input is split into reads, and never a terminator.
func TestScannerTap(t *testing.T) {
	src := "alpha\r\n" + strings.Repeat("é", 5000) + "\rbeta\n\nlast"
	for _, size := range []int{1, 2, 3, 7, 4096, len(src)} {
		sc := NewScanner(&chunkReader{data: []byte(src), sizes: []int{size}})
		var got []byte
		sc.SetTap(func(b []byte) { got = append(got, b...) })
		var lines []string
		for sc.Scan(2) {
			lines = append(lines, string(got))
			if int64(len(got)) != sc.Len() {
				t.Fatalf("size %d line %d: tap saw %d bytes, Len %d", size, sc.Line(), len(got), sc.Len())
			}
			got = got[:0]
		}
		want := refSplit([]byte(src))
		if strings.Join(lines, "|") != strings.Join(want, "|") {
			t.Fatalf("size %d: tap lines %q, want %q", size, lines, want)
		}
	}
}
