package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/inspect"
	"github.com/rowkit/rowkit/internal/read"
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
	benchServer(b, newServer(b, Options{Roots: []string{benchRoot(b)}}), name, args)
}

// benchServer calls s's tool name with args b.N times from the Go SDK's
// client, over the in-memory transport.
func benchServer(b *testing.B, s *Server, name string, args map[string]any) {
	cs := connect(b, s, nil)
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

// BenchmarkReadFileText is read_file as agent clients get it: text alone,
// within the default client bound.
func BenchmarkReadFileText(b *testing.B) {
	benchServer(b, newTextServer(b, Options{Roots: []string{benchRoot(b)}}), "read_file", map[string]any{"path": "nodes.go"})
}

// BenchmarkInspectFileText is inspect_file as agent clients get it.
func BenchmarkInspectFileText(b *testing.B) {
	benchServer(b, newTextServer(b, Options{Roots: []string{benchRoot(b)}}), "inspect_file", map[string]any{"path": "nodes.go"})
}

// BenchmarkStdio is the server's own cost of a call over stdio, as a
// client that sends a request line and takes the response line without
// decoding it: the JSON-RPC framing, the tool, the result's encoding. The
// client's decoding (which bench/mcp.sh's clients include) is left out.
func BenchmarkStdio(b *testing.B) {
	root := benchRoot(b)
	for _, tc := range []struct {
		name string
		args string
	}{
		{"read_file", `{"path":"nodes.go"}`},
		{"inspect_file", `{"path":"nodes.go"}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := newTextServer(b, Options{Roots: []string{root}})
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			done := make(chan error, 1)
			go func() { done <- s.ServeStdio(context.Background(), inR, outW) }()
			br := bufio.NewReaderSize(outR, 1<<20)
			send := func(msg string) string {
				if _, err := io.WriteString(inW, msg+"\n"); err != nil {
					b.Fatal(err)
				}
				if strings.Contains(msg, `"id"`) {
					line, err := br.ReadString('\n')
					if err != nil {
						b.Fatal(err)
					}
					return line
				}
				return ""
			}
			send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
			send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			req := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, tc.name, tc.args)
			if r := send(req); !strings.Contains(r, `"content"`) || strings.Contains(r, `"isError":true`) {
				b.Fatalf("%.300s", r)
			}
			checkOutputs = false
			defer func() { checkOutputs = true }()
			b.ResetTimer()
			c0 := cpuTime()
			for i := 0; i < b.N; i++ {
				send(req)
			}
			b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
			b.StopTimer()
			inW.Close()
			<-done
		})
	}
}

// cpuTime is this process's user and system CPU time: the machine is
// shared, and CPU time is what a call costs whatever else runs beside it.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCallParts is the floor of a read_file and an inspect_file call
// on the 2,000-line file, part by part, each reported in CPU time per
// call (cpu-ns/op): the read (scan, hashes, view) without token
// admission, the read as read_file makes it (admission and the default
// client's 46,000-byte bound), the SDK's encoding of that result (the
// result, then the response around it: what jsonrpc2 does with
// encoding/json), go/parser alone (as internal/lang calls it), and inspect_file's outline and text.
func BenchmarkCallParts(b *testing.B) {
	s := newTextServer(b, Options{Roots: []string{benchRoot(b)}})
	r := s.roots[0]
	ctx := context.Background()
	in := read.Input{Path: "nodes.go"}
	src, _ := os.ReadFile(filepath.Join(r.ws.Dir(), "nodes.go"))
	_, text := s.readView(ctx, r, in, defaultResultBytes)
	result := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
	raw, _ := json.Marshal(result)
	parts := []struct {
		name string
		f    func()
	}{
		{"read_uncounted", func() { read.Read(ctx, r.ws, in, read.Options{}) }},
		{"read_file_view", func() { s.readView(ctx, r, in, defaultResultBytes) }},
		{"sdk_encode_result", func() { json.Marshal(result) }},
		{"sdk_encode_response", func() {
			json.Marshal(struct {
				V  string          `json:"jsonrpc"`
				ID int             `json:"id"`
				R  json.RawMessage `json:"result"`
			}{"2.0", 1, raw})
		}},
		{"go_parser", func() { parser.ParseFile(token.NewFileSet(), "", src, parser.SkipObjectResolution|parser.AllErrors) }},
		{"inspect_file", func() {
			res, _ := inspect.Inspect(ctx, r.ws, "nodes.go")
			inspect.OutlineText(res)
		}},
	}
	for _, p := range parts {
		b.Run(p.name, func(b *testing.B) {
			c0 := cpuTime()
			for i := 0; i < b.N; i++ {
				p.f()
			}
			b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
		})
	}
}
