package read

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/rows/rowstest"
)

// The sink bound's table (rowstest) over the reader's rows: a file, a
// range of it, and a kept output, with multibyte text, empty lines and
// lines longer than the small bounds.
func TestSinkBound(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 300; i++ {
		switch {
		case i%50 == 0:
			b.WriteString(strings.Repeat("界", 900)) // 2,700 bytes
		case i%9 == 0:
		default:
			fmt.Fprintf(&b, "row %d: é ü 界 \"q\" %s", i, strings.Repeat("ab ", i%40))
		}
		b.WriteByte('\n')
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if n := rowstest.Check(t, func(s rows.Sink) error {
		return Stream(ctx, "f.txt", All, s, StreamOptions{Dir: dir})
	}); n != 300 {
		t.Errorf("%d rows, want 300", n)
	}
	if n := rowstest.Check(t, func(s rows.Sink) error {
		return Stream(ctx, "f.txt", Range{40, 120}, s, StreamOptions{Dir: dir})
	}); n != 81 {
		t.Errorf("%d rows in 40:120, want 81", n)
	}
	if n := rowstest.Check(t, func(s rows.Sink) error {
		return ReadKept(ctx, strings.NewReader(b.String()), "@out/x", All, s)
	}); n != 300 {
		t.Errorf("%d kept rows, want 300", n)
	}
}
