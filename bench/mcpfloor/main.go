// Command mcpfloor is the floor under rowkit mcp's latency (issue 18 item
// 4): an MCP server on the same Go SDK, over stdio, whose one tool does no
// work at all. It answers "text" with the bytes of a file read once at
// start (bench/mcp.sh gives it the text read_file answered for the bench
// file) or with an empty text, so a client's round trip to it is what the
// SDKs and the pipe cost for a result of that size, before any engine runs.
//
// usage: mcpfloor TEXTFILE
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: mcpfloor TEXTFILE")
		os.Exit(2)
	}
	text, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpfloor:", err)
		os.Exit(1)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpfloor", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{
		Name:        "text",
		Description: "Answers the text given at start, or an empty text with empty=true.",
		InputSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"empty": map[string]any{"type": "boolean"}},
		},
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		out := string(text)
		if string(req.Params.Arguments) == `{"empty":true}` {
			out = ""
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out}}}, nil
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "mcpfloor:", err)
		os.Exit(1)
	}
}
