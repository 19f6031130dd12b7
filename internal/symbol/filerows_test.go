package symbol

import (
	"context"
	"sync"
	"testing"

	"github.com/rowkit/rowkit/internal/rows"
)

// The engine's cache shares a file between queries a broker answers at
// once: each must see the whole outline, never one another query is still
// making (six racing first calls of symbol_broker.txtar lost the span of
// their definition about once in twelve runs).
func TestFileRowsOutlineShared(t *testing.T) {
	x, err := rows.NewIndex([]byte("package main\n\nfunc main() {\n\tHelper()\n}\n\n// Helper helps.\nfunc Helper() {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 50; round++ {
		f := &fileRows{x: x}
		var wg sync.WaitGroup
		got := make([]int, 8)
		for i := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i] = len(f.entries(context.Background(), "main.go"))
			}()
		}
		wg.Wait()
		for i, n := range got {
			if n != 2 {
				t.Fatalf("round %d, query %d: %d outline entries, want 2", round, i, n)
			}
		}
	}
	// A query cancelled while it outlines leaves the outline to the next.
	f := &fileRows{x: x}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f.entries(ctx, "main.go")
	if n := len(f.entries(context.Background(), "main.go")); n != 2 {
		t.Fatalf("after a cancelled query: %d entries, want 2", n)
	}
}
