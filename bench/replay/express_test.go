package main

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/patch"
	"github.com/rowkit/rowkit/internal/workspace"
)

// Random files and random edits (words changed inside lines, lines added,
// removed and retyped, CRLF and CR lines, a final terminator gained or
// lost, lines that look like heredoc markers): the script express writes,
// applied by the engine, gives the new file byte for byte.
func TestExpressRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	words := []string{"a", "b", "foo", "bar", "x", "PATCH", " ", "  ", "\t", "(", ")", "\"", "\\", ",", "nil", "err", "<<PATCH"}
	terms := []string{"\n", "\n", "\n", "\n", "\r\n", "\r"}
	line := func() string {
		var b strings.Builder
		for range r.IntN(6) {
			b.WriteString(words[r.IntN(len(words))])
		}
		return b.String()
	}
	gen := func(crlf bool) []string {
		ls := make([]string, r.IntN(12))
		for i := range ls {
			ls[i] = line() + "\n"
			if crlf {
				ls[i] = ls[i][:len(ls[i])-1] + terms[r.IntN(len(terms))]
			}
		}
		return ls
	}
	n := 3000
	if testing.Short() {
		n = 300
	}
	dir := t.TempDir()
	for it := range n {
		a := gen(it%5 == 0)
		c := append([]string(nil), a...)
		for range 1 + r.IntN(4) {
			switch k := r.IntN(5); {
			case k == 0 && len(c) > 0: // change words inside a line
				i := r.IntN(len(c))
				tw := tokens(c[i])
				for range 1 + r.IntN(3) {
					if len(tw) > 0 {
						tw[r.IntN(len(tw))] = words[r.IntN(len(words))]
					}
				}
				c[i] = strings.Join(tw, "")
				if !strings.HasSuffix(c[i], "\n") && !strings.HasSuffix(c[i], "\r") {
					c[i] += "\n"
				}
			case k == 1:
				i := r.IntN(len(c) + 1)
				c = append(c[:i], append([]string{line() + "\n"}, c[i:]...)...)
			case k == 2 && len(c) > 0:
				i := r.IntN(len(c))
				c = append(c[:i], c[i+1:]...)
			case k == 3 && len(c) > 0:
				i := r.IntN(len(c))
				c[i] = line() + terms[r.IntN(len(terms))]
			}
		}
		before, after := strings.Join(a, ""), strings.Join(c, "")
		if r.IntN(4) == 0 && len(after) > 0 { // drop or keep the final terminator
			after = strings.TrimRight(after, "\r\n")
		}
		if r.IntN(6) == 0 && len(before) > 0 {
			before = strings.TrimRight(before, "\r\n")
		}
		if before == after {
			continue
		}
		p := filepath.Join(dir, "f.txt")
		if err := os.WriteFile(p, []byte(before), 0o644); err != nil {
			t.Fatal(err)
		}
		var script strings.Builder
		var st stats
		if why := express(&script, change{status: 'M', old: "f.txt", new: "f.txt", before: []byte(before), after: []byte(after)}, &st); why != "" {
			t.Fatalf("inexpressible: %s", why)
		}
		root, err := workspace.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		res, err := patch.Apply(context.Background(), root, script.String(), patch.Options{})
		if err != nil {
			var fs []string
			if res != nil {
				for _, f := range res.Failures {
					fs = append(fs, f.Line())
				}
			}
			t.Fatalf("%q -> %q: script\n%s\nrejected: %v\n%s", before, after, script.String(), err, strings.Join(fs, "\n"))
		}
		got, _ := os.ReadFile(p)
		if !bytes.Equal(got, []byte(after)) {
			t.Fatalf("%q -> %q: script\n%s\ngave %q", before, after, script.String(), got)
		}
	}
}
