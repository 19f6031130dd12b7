package workspace_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/workspace"
)

// Resolving a path of depth n costs the kernel O(n) component lookups,
// not O(n^2): each component is looked up from a descriptor of the
// directory before it, not by walking the whole path again (issue 24: at
// depth 1,500 rowkit read took 21.6 s). A symlink on the way (here one
// near the bottom leading back up, and one absolute to the top) adds at
// most one walk of the path.
func TestResolveLinearInDepth(t *testing.T) {
	const depth = 1200
	dir := t.TempDir()
	rel := strings.TrimSuffix(strings.Repeat("d/", depth), "/")
	if err := os.MkdirAll(filepath.Join(dir, rel), 0o755); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, rel, "f.txt"), []byte("x"), 0o644))
	must(os.Symlink("../d/f.txt", filepath.Join(dir, rel, "up.txt")))
	r, err := workspace.Open(dir)
	must(err)
	must(os.Symlink(filepath.Join(r.Dir(), rel, "f.txt"), filepath.Join(dir, rel, "abs.txt")))
	for _, name := range []string{"f.txt", "up.txt", "abs.txt"} {
		cost := 0
		workspace.SetLookups(func(n int) { cost += n })
		_, target, err := r.Resolve(rel + "/" + name)
		workspace.SetLookups(nil)
		if err != nil || target != rel+"/f.txt" {
			t.Fatalf("%s: %q %v", name, target, err)
		}
		if limit := 6 * depth; cost > limit {
			t.Errorf("%s at depth %d: %d component lookups, more than %d", name, depth, cost, limit)
		}
		t.Logf("%s at depth %d: %d component lookups", name, depth, cost)
	}
}
