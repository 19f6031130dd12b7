package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchRoot holds a real 1,999-line Go file, the size of bench/mcp.sh's
// latency target.
func benchRoot(b *testing.B) string {
	src, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "go", "printer", "nodes.go"))
	if err != nil {
		b.Skip("GOROOT sources are not installed")
	}
	dir := b.TempDir()
	write(b, filepath.Join(dir, "nodes.go"), string(src))
	return dir
}

func benchTool(b *testing.B, name string, args map[string]any) {
	cs := connect(b, newServer(b, Options{Roots: []string{benchRoot(b)}}), nil)
	checkOutputs = false // as a server runs
	defer func() { checkOutputs = true }()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

func BenchmarkReadFile(b *testing.B) {
	benchTool(b, "read_file", map[string]any{"path": "nodes.go"})
}

func BenchmarkInspectFile(b *testing.B) {
	benchTool(b, "inspect_file", map[string]any{"path": "nodes.go"})
}

// BenchmarkReadFileUncounted is BenchmarkReadFile without the view's token
// admission: the difference is what counting o200k tokens costs.
func BenchmarkReadFileUncounted(b *testing.B) {
	old := readViewBudget
	readViewBudget = nil
	defer func() { readViewBudget = old }()
	benchTool(b, "read_file", map[string]any{"path": "nodes.go"})
}
