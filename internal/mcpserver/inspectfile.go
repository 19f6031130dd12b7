package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/inspect"
)

// InspectFileInput is the arguments of inspect_file.
type InspectFileInput struct {
	Path string `json:"path" jsonschema:"the file to outline: a path relative to the first workspace root, or an absolute path inside a root"`
}

func (s *Server) addInspectFile() {
	in := mustSchema[InspectFileInput]()
	in.Properties["path"].MinLength = iptr(1)
	register(s, &mcp.Tool{
		Name:  "inspect_file",
		Title: "Outline a file",
		Description: "Outlines a file's structure, its symbols and definitions (Go, Python, TypeScript/TSX, JavaScript, Markdown, JSON): imports, types, functions, methods, headings, JSON members, each with its span as verified rows. " +
			"The text is one line per entry, ROW[..ROW] kind name, where ROW is LINE:HASH; read those rows with read_file. Other files report only their size. Bounded to 64 KiB; a truncated outline says after how many entries.",
		InputSchema:  in,
		OutputSchema: outputSchema[inspect.Result](),
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    true,
			IdempotentHint:  true,
			DestructiveHint: bptr(false),
			OpenWorldHint:   bptr(false),
		},
	}, s.inspectFile)
}

func (s *Server) inspectFile(ctx context.Context, req *mcp.CallToolRequest, in InspectFileInput) (*mcp.CallToolResult, *inspect.Result, error) {
	r, rel, err := locate(s.callRoots(ctx, req), in.Path)
	if err != nil {
		return nil, nil, withPath(in.Path, err)
	}
	res, err := inspect.Inspect(ctx, r.ws, rel)
	if err != nil {
		return nil, nil, withPath(in.Path, err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: inspect.OutlineText(res)}}}, res, nil
}
