package inspect

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/lang"
	"github.com/rowkit/rowkit/internal/proc"
	"github.com/rowkit/rowkit/internal/workspace"
)

// corpus is a directory of real files and a sample of its supported ones.
type corpus struct {
	name, dir string
	files     []string // relative to dir
}

// realCorpora returns samples of the Go tree, the Python standard library
// and npm's own package, at most per files each, spread evenly over the
// sorted list. Python and npm must be installed (scripts/test installs
// them).
func realCorpora(t *testing.T, per int) []corpus {
	t.Helper()
	dirs := []corpus{{name: "go", dir: filepath.Join(runtime.GOROOT(), "src")}}
	py := strings.TrimSpace(run(t, "python3", "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"))
	npm := filepath.Join(strings.TrimSpace(run(t, "npm", "root", "-g")), "npm")
	dirs = append(dirs, corpus{name: "python", dir: py}, corpus{name: "npm", dir: npm})
	for i := range dirs {
		c := &dirs[i]
		var all []string
		err := filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "site-packages" || d.Name() == "dist-packages") {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() && lang.Lookup(p) != nil {
				rel, _ := filepath.Rel(c.dir, p)
				all = append(all, rel)
			}
			return nil
		})
		if err != nil || len(all) < 50 {
			t.Fatalf("corpus %s at %s: %d files, %v", c.name, c.dir, len(all), err)
		}
		sort.Strings(all)
		step := max(len(all)/per, 1)
		for j := 0; j < len(all); j += step {
			c.files = append(c.files, all[j])
		}
	}
	return dirs
}

// run runs a program and returns its stdout.
func run(t *testing.T, prog string, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	res, err := proc.Run(context.Background(), proc.Spec{Path: prog, Args: args, Dir: os.TempDir(),
		Env: proc.Env(os.LookupEnv, []string{"PATH", "HOME"}), Stdout: &out, Timeout: time.Minute})
	if err != nil || res.Exit != 0 {
		t.Fatalf("%s %v: exit %d, %v (install it; scripts/test does)", prog, args, res.Exit, err)
	}
	return out.String()
}

// The command's bytes (AppendJSON) and the encoding/json form of the same
// result, which an MCP server sends as structured content, decode to the
// same JSON value on real files; and every span is real rows of the file.
func TestRealFilesJSONParity(t *testing.T) {
	per := 250
	if testing.Short() {
		per = 60
	}
	for _, c := range realCorpora(t, per) {
		root, err := workspace.Open(c.dir)
		if err != nil {
			t.Fatal(err)
		}
		entries, partial := 0, 0
		for _, rel := range c.files {
			res, err := Inspect(ctx, root, rel)
			if errs.Code(err) == errs.NotUTF8 {
				continue // test data of the Go tree
			}
			if err != nil {
				t.Fatalf("%s: %v", rel, err)
			}
			checkSameJSON(t, res.AppendJSON(nil), res)
			src, err := os.ReadFile(filepath.Join(c.dir, rel))
			if err != nil {
				t.Fatal(err)
			}
			d := res.Data
			if res.Truncated {
				// The spans and the count are checked on the whole outline.
				if d, err = OutlineSource(ctx, rel, src); err != nil {
					t.Fatal(err)
				}
			}
			checkData(t, d, src)
			entries += len(res.Data.Outline)
			if !d.ParseComplete {
				partial++
			}
		}
		t.Logf("%s: %d files, %d entries, %d partial", c.name, len(c.files), entries, partial)
	}
}

// A file outlined in pieces (inPieces) has the outline of the file parsed
// whole: with pieces of 2 KiB, every real file of the three corpora that
// parses without error is cut many times, and its entries (kinds, names,
// receivers, levels, spans) and completeness are the whole parse's. A file
// with a syntax error stays incomplete.
func TestPiecesOutlineAsWhole(t *testing.T) {
	per := 400
	if testing.Short() {
		per = 80
	}
	defer func(n int) { pieceBytes = n }(pieceBytes)
	cuts, files := 0, 0
	for _, c := range realCorpora(t, per) {
		for _, rel := range c.files {
			src, err := os.ReadFile(filepath.Join(c.dir, rel))
			if err != nil {
				t.Fatal(err)
			}
			pieceBytes = 1 << 30
			whole, err := OutlineSource(ctx, rel, src)
			if err != nil {
				continue // not UTF-8: test data of the Go tree
			}
			pieceBytes = 2 << 10
			pieced, err := OutlineSource(ctx, rel, src)
			if err != nil {
				t.Fatalf("%s: %v", rel, err)
			}
			if !whole.ParseComplete {
				if pieced.ParseComplete {
					t.Errorf("%s: complete in pieces, not whole", rel)
				}
				continue
			}
			files++
			if len(src) > pieceBytes {
				cuts++
			}
			if !pieced.ParseComplete || !sameEntries(whole.Outline, pieced.Outline) {
				t.Errorf("%s/%s: in pieces (complete %v) %d entries, whole %d", c.name, rel, pieced.ParseComplete, len(pieced.Outline), len(whole.Outline))
				for i := range min(len(whole.Outline), len(pieced.Outline)) {
					if !sameEntries(whole.Outline[i:i+1], pieced.Outline[i:i+1]) {
						t.Errorf("  first difference, entry %d: whole %+v, pieces %+v", i, whole.Outline[i], pieced.Outline[i])
						break
					}
				}
			}
		}
	}
	t.Logf("%d complete files, %d of them larger than a piece", files, cuts)
}

func sameEntries(a, b []Entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i].appendJSON(nil), b[i].appendJSON(nil)
		if !bytes.Equal(x, y) {
			return false
		}
	}
	return true
}
