package agenttest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain serves the echo MCP server instead of running the tests when
// AGENTTEST_ECHO is set: the clients start the test binary as a stdio MCP
// server whose tool returns outputs of exact sizes.
func TestMain(m *testing.M) {
	if os.Getenv("AGENTTEST_ECHO") != "" {
		serveEcho()
		return
	}
	os.Exit(m.Run())
}

// EchoInput asks for an output of exactly Bytes bytes, or with Client
// for the clientInfo the client sent at initialize and the call's _meta.
type EchoInput struct {
	Client     bool   `json:"client,omitempty"`
	Bytes      int    `json:"bytes,omitempty"`
	Unit       string `json:"unit,omitempty"`
	Structured bool   `json:"structured,omitempty"`
	IsError    bool   `json:"is_error,omitempty"`
}

// echoText is n bytes of numbered 100-byte lines filled with unit, so a
// cut shows where it fell; the tail is padded with dots to fit.
func echoText(n int, unit string) string {
	if unit == "" {
		unit = "a"
	}
	var b strings.Builder
	for i := 1; b.Len() < n; i++ {
		line := fmt.Sprintf("%06d ", i)
		for len(line)+len(unit) <= 99 {
			line += unit
		}
		line += strings.Repeat(".", 99-len(line)) + "\n"
		if rest := n - b.Len(); len(line) > rest {
			line = line[:rest]
			for !utf8.ValidString(line) {
				line = line[:len(line)-1]
			}
			line += strings.Repeat(".", rest-len(line))
		}
		b.WriteString(line)
	}
	return b.String()
}

func serveEcho() {
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, &mcp.ServerOptions{Instructions: os.Getenv("AGENTTEST_ECHO_INSTRUCTIONS")})
	echo := func(ctx context.Context, req *mcp.CallToolRequest, in EchoInput) (*mcp.CallToolResult, any, error) {
		text := echoText(in.Bytes, in.Unit)
		if in.Client {
			b, _ := json.Marshal(map[string]any{"clientInfo": req.Session.InitializeParams().ClientInfo, "_meta": req.Params.Meta})
			text = string(b)
		}
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: in.IsError}
		if in.Structured {
			b, _ := json.Marshal(map[string]any{"text": text})
			res.StructuredContent = json.RawMessage(b)
		}
		return res, nil, nil
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "returns text of an exact size"}, echo)
	// Claude Code reads a tool's own bound on its results from _meta.
	mcp.AddTool(s, &mcp.Tool{Name: "echo_big", Description: "returns text of an exact size, declaring a larger result bound",
		Meta: mcp.Meta{"anthropic/maxResultSizeChars": 200000}}, echo)
	// Claude Code offers a tool that declares _meta["anthropic/alwaysLoad"]
	// from the first request instead of deferring it behind ToolSearch.
	mcp.AddTool(s, &mcp.Tool{Name: "echo_loaded", Description: "returns text of an exact size, loaded up front",
		Meta: mcp.Meta{"anthropic/alwaysLoad": true}}, echo)
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
