package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestTablesAreCurrent regenerates both tables from the npm packages and
// compares them with the ones package tokens embeds.
func TestTablesAreCurrent(t *testing.T) {
	root, err := filepath.Abs("../../../..")
	if err != nil {
		t.Fatal(err)
	}
	vocab := filepath.Join(root, "node_modules", "tiktoken", "encoders", "o200k_base.json")
	if _, err := os.Stat(vocab); err != nil {
		t.Fatalf("%s is missing: run `npm ci` in %s (scripts/test does)", vocab, root)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is missing: run scripts/test, which installs nodejs")
	}
	classes, err := exec.Command(node, "classes.mjs").Output()
	if err != nil {
		t.Fatalf("node classes.mjs: %v", err)
	}
	dir := t.TempDir()
	if err := run(vocab, dir, bytes.NewReader(classes)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"o200k_base.bin", "classes.bin"} {
		fresh, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		embedded, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fresh, embedded) {
			t.Errorf("internal/tokens/%s is not what the generator makes now: run go generate ./internal/tokens", name)
		}
	}
}
