package grep

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/rows/rowstest"
)

// The sink bound's table (rowstest) over hgrep's rows from real ripgrep:
// rows of several files, with paths that JSON quotes, multibyte text and
// matches longer than the small bounds.
func TestSinkBound(t *testing.T) {
	fs := map[string]string{}
	for f := 0; f < 6; f++ {
		var b strings.Builder
		for i := 1; i <= 60; i++ {
			switch {
			case i%25 == 0:
				b.WriteString("match " + strings.Repeat("界", 900))
			case i%3 == 0:
				b.WriteString("no")
			default:
				fmt.Fprintf(&b, "match %d é 界 \"q\" %s", i, strings.Repeat("ab ", i%40))
			}
			b.WriteByte('\n')
		}
		fs[fmt.Sprintf("d%d/f \"%d\" 界.txt", f%2, f)] = b.String()
	}
	dir := files(t, fs)
	plan, err := parse([]string{"--sort", "path", "match"})
	if err != nil {
		t.Fatal(err)
	}
	n := rowstest.Check(t, func(s rows.Sink) error {
		res, err := Search(context.Background(), plan, Config{Dir: dir, LookupEnv: os.LookupEnv}, s)
		if err == nil {
			err = res.Err()
		}
		return err
	})
	if n != 6*40 {
		t.Errorf("%d rows, want %d", n, 6*40)
	}
}
