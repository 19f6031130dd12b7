package read

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/workspace"
)

// A view that Fit cuts is the view a read stopped there by its byte limit
// makes, notes, continuation and observation alike, and the most rows
// that fit; one row too long for the bound by itself is clamped as a
// first line longer than the view limit is.
func TestFitIsTheByteLimit(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 400; i++ {
		switch {
		case i%97 == 0:
			b.WriteString(strings.Repeat("é", 2100)) // clamped by characters
		case i%7 == 0:
			b.WriteString(strings.Repeat("\"quoted\" ", i%30))
		default:
			fmt.Fprintf(&b, "line %d 界 %s", i, strings.Repeat("x", i%50))
		}
		b.WriteByte('\n')
	}
	root, _ := ws(t, map[string]string{"f.txt": b.String(), "one.txt": strings.Repeat("ab界", 3000) + "\n"})
	now := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	sizes := map[string]func(*Result) int{
		"json":  func(r *Result) int { return len(JSON(r)) },
		"brief": func(r *Result) int { return len(Brief(r, false)) },
	}
	for name, size := range sizes {
		for _, c := range []struct {
			path   string
			offset int
			max    int
		}{
			{"f.txt", 0, 3000}, {"f.txt", 0, 11400}, {"f.txt", 90, 11400}, {"f.txt", 0, 40000},
			{"f.txt", 390, 5000}, {"f.txt", 0, 1}, {"one.txt", 0, 2000}, {"one.txt", 0, 1 << 20},
		} {
			req := in(c.path, c.offset, 0)
			got, err := Read(context.Background(), root, req, Options{Now: clock, Fit: &Fit{Max: c.max, Size: size}})
			if err != nil || got.Status != StatusOK {
				t.Fatalf("%s %+v: %v %+v", name, c, err, got)
			}
			v := got.View
			// The same view from a read stopped by its byte limit.
			lim := v.Bytes
			want, _ := Read(context.Background(), root, req, Options{Now: clock, Limits: Limits{MaxViewBytes: max(lim, 1)}})
			if !bytes.Equal(JSON(got), JSON(want)) {
				t.Errorf("%s %+v: the fitted view is not the byte limit's:\n%s\n%s", name, c, JSON(got), JSON(want))
				continue
			}
			whole, _ := Read(context.Background(), root, req, Options{Now: clock})
			if size(whole) <= c.max {
				if !bytes.Equal(JSON(got), JSON(whole)) {
					t.Errorf("%s %+v: a view that fits was changed", name, c)
				}
				continue
			}
			if len(v.Lines) > 1 || !v.Lines[0].Clamped || c.max > size(got) {
				if size(got) > c.max {
					t.Errorf("%s %+v: %d bytes, over %d", name, c, size(got), c.max)
				}
			}
			// One more row does not fit.
			if n := len(v.Lines); n < len(whole.View.Lines) && !v.Lines[n-1].Clamped {
				next := v.Bytes + 1 + len(whole.View.Lines[n].Text)
				more, _ := Read(context.Background(), root, req, Options{Now: clock, Limits: Limits{MaxViewBytes: next}})
				if len(more.View.Lines) == n+1 && size(more) <= c.max {
					t.Errorf("%s %+v: %d rows kept, %d fit", name, c, n, n+1)
				}
			}
		}
	}
}

// JSON is what encoding/json's encoder (HTML escaping off) makes of a
// Result, byte for byte, over the Go tree's files and text that JSON
// escapes.
func TestJSONIsTheEncoders(t *testing.T) {
	files := map[string]string{
		"odd.txt": "<a href=\"x\">&amp;</a>\n\u2028\u2029 tab\there \x01\x1f \\ back\n",
		"big.txt": strings.Repeat("界 \"q\" <>&\n", 3000),
	}
	root, _ := ws(t, files)
	check := func(name string, res *Result) {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(res); err != nil {
			t.Fatal(err)
		}
		if got := JSON(res); !bytes.Equal(got, b.Bytes()) {
			t.Errorf("%s: JSON differs from the encoder's:\n%s\n%s", name, got, b.Bytes())
		}
	}
	for name := range files {
		for _, o := range []Options{{}, {Limits: Limits{MaxViewBytes: 100, MaxCharsPerLine: 5}}} {
			res, _ := Read(context.Background(), root, in(name, 0, 0), o)
			check(name, res)
		}
	}
	for _, p := range []string{"nope.txt", "../x", "", "."} {
		res, _ := Read(context.Background(), root, in(p, 0, 0), Options{})
		check(p, res)
	}
	goroot, err := workspace.Open(filepath.Join(runtime.GOROOT(), "src"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	filepath.WalkDir(goroot.Dir(), func(p string, d fs.DirEntry, err error) error {
		if n >= 300 {
			return fs.SkipAll
		}
		if err != nil || d.IsDir() {
			return nil
		}
		n++
		rel, _ := filepath.Rel(goroot.Dir(), p)
		res, _ := Read(context.Background(), goroot, in(rel, 0, 0), Options{})
		check(rel, res)
		return nil
	})
}
