package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/inspect"
)

// InspectFileInput is the arguments of inspect_file.
type InspectFileInput struct {
	Path string `json:"path"`
}

func (s *Server) addInspectFile() {
	in := mustSchema[InspectFileInput]()
	in.Properties["path"].MinLength = iptr(1)
	register(s, &mcp.Tool{
		Name:         "inspect_file",
		Title:        "Outline a file",
		Description:  "Outlines a Go, Python, JS/TS, Markdown or JSON file: one line per definition, heading or member, ROW[..ROW] kind name, whose rows (LINE:HASH) read_file reads and edit targets.",
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
	note := pendingNote(r.ws, []string{rel})
	res, err := inspect.Inspect(ctx, r.ws, rel)
	if err != nil {
		return nil, nil, withPath(in.Path, err)
	}
	res, text, err := s.outlineWithin(res, noteBound(s.resultBytes(req), note))
	if err != nil {
		return nil, nil, withPath(in.Path, err)
	}
	out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
	withNote(out, note)
	return out, res, nil
}

// outlineWithin cuts res's outline to the longest prefix whose form the
// client shows fits bound: the JSON on a structured server (the engine's
// own cut, Within), else the text, whose header then says after how many
// entries the outline was truncated, as the JSON's truncation does. It
// returns the result's text too, formatted once.
func (s *Server) outlineWithin(res *inspect.Result, bound int) (*inspect.Result, string, error) {
	if bound > 0 && s.structured {
		var err error
		if res, err = res.Within(bound); err != nil {
			return nil, "", err
		}
	}
	text := inspect.OutlineText(res)
	if bound <= 0 || s.structured || len(text) <= bound {
		return res, text, nil
	}
	all := res.Data.Outline
	cut := func(n int) *inspect.Result {
		c := *res
		c.Data.Outline = all[:n]
		c.Truncated, c.Truncation = true, &inspect.Truncation{Reason: "output_bytes", AfterEntries: n}
		return &c
	}
	lo := longestFit(len(all), func(n int) bool { return len(inspect.OutlineText(cut(n))) <= bound })
	c := cut(lo)
	if text := inspect.OutlineText(c); lo > 0 || len(text) <= bound {
		return c, text, nil
	}
	return nil, "", errs.Errorf(inspect.CodeOutputLimit, "not even an empty outline fits in %d bytes", bound)
}
