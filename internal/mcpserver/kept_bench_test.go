package mcpserver

import (
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkSearchKept is what keeping costs a search that finds more than
// its bound shows: MCP search of "err" in $GOROOT/src/net (about 9,000
// rows; Codex's bound shows some 400 and the rest is kept, up to 1 MiB),
// against the baseline of ripgrep printing the same search whole, run in
// turns in one run. The ratio is reported as x-rg.
func BenchmarkSearchKept(b *testing.B) {
	root := filepath.Join(runtime.GOROOT(), "src", "net")
	s := newTextServer(b, Options{Roots: []string{root}, LookupEnv: keptEnv(b)})
	c := boundClients[1]
	cs := connectAs(b, s, c.name, c.version)
	checkOutputs = false // as a server runs
	defer func() { checkOutputs = true }()
	var mcpTime, rgTime time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		p := &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"pattern": "err"}, Meta: mcp.Meta{"x-codex-turn-metadata": map[string]any{"model": c.model}}}
		if res, err := cs.CallTool(context.Background(), p); err != nil || res.IsError {
			b.Fatal(err, res)
		}
		mcpTime += time.Since(start)
		start = time.Now()
		cmd := exec.Command("rg", "--no-config", "-n", "--no-heading", "-e", "err")
		cmd.Dir = root
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		rgTime += time.Since(start)
	}
	b.ReportMetric(float64(mcpTime)/float64(rgTime), "x-rg")
}
