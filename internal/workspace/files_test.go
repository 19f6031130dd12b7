package workspace

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rowkit/rowkit/internal/errs"
)

// The state directory is the transaction's alone: no script may load,
// create or move a file into it, by its name or through a symlink.
func TestStateDirReserved(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".rowkit"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".rowkit", "journal"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".rowkit", filepath.Join(dir, "state")); err != nil {
		t.Fatal(err)
	}
	root, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".rowkit/journal", "./.rowkit/journal", "state/journal"} {
		if _, err := root.Load(p); errs.Code(err) != CodeReserved {
			t.Errorf("Load(%q) = %v, want %s", p, err, CodeReserved)
		}
	}
	for _, p := range []string{".rowkit/new", "state/new", ".rowkit/sub/new"} {
		if _, _, err := root.Free(p); errs.Code(err) != CodeReserved {
			t.Errorf("Free(%q) = %v, want %s", p, err, CodeReserved)
		}
	}
	if _, _, err := root.Free("rowkit/new"); err != nil {
		t.Errorf("Free(rowkit/new) = %v", err)
	}
}
