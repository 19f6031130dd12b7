package mcpserver

import (
	"context"
	"encoding/base64"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/read"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/spool"
)

// ReadFileInput is the arguments of read_file.
type ReadFileInput struct {
	Path   string `json:"path"`
	Offset *int   `json:"offset,omitempty"`
	Limit  *int   `json:"limit,omitempty"`
}

func (s *Server) addReadFile() {
	in := mustSchema[ReadFileInput]()
	in.Properties["path"].MinLength = iptr(1)
	in.Properties["offset"].Minimum = fptr(1)
	in.Properties["limit"].Minimum = fptr(1)
	register(s, &mcp.Tool{
		Name:  "read_file",
		Title: "Read a file as verified rows",
		Description: "Reads a file or directory as rows LINE:HASH TEXT, edit's targets, or a kept output @out/ID. " +
			"Part of a file ends with (N lines); a view cut at 2,000 lines, 50 KiB or 15,000 tokens ends with [read:continue] and its offset.",
		InputSchema:  in,
		OutputSchema: outputSchema[read.Result](),
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    true,
			IdempotentHint:  true,
			DestructiveHint: bptr(false),
			OpenWorldHint:   bptr(false),
		},
	}, s.readFile)
}

// readBudget is the token budget of one read_file view, the budget of
// every verified-row output.
var readBudget = rows.DefaultBudget

// readViewBudget makes each read's token admission; a benchmark sets it to
// nil to see what the counting costs.
var readViewBudget = read.Tokens(readBudget)

func (s *Server) readFile(ctx context.Context, req *mcp.CallToolRequest, in ReadFileInput) (*mcp.CallToolResult, *read.Result, error) {
	if id, ok := spool.IsRef(in.Path); ok {
		return s.readKept(ctx, req, in, id) // an output a bound left part of out (kept.go)
	}
	var res *read.Result
	var text []byte
	r, rel, err := locate(s.callRoots(ctx, req), in.Path)
	if err != nil {
		// The reader's own codes and shape for a path no root holds,
		// as for one it refuses itself.
		res, _ = read.Refused(read.Input{Path: in.Path, Offset: in.Offset, Limit: in.Limit}, err)
		text = read.Brief(res, in.Limit != nil)
	}
	var note *mcp.TextContent
	if err == nil {
		note = pendingNote(r.ws, []string{rel})
		res, text = s.readView(ctx, r, read.Input{Path: rel, Offset: in.Offset, Limit: in.Limit}, noteBound(s.resultBytes(req), note))
	}
	out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
	// A failed read is still a result of the reader's own shape, with its
	// error code; the call is an error result all the same.
	out.IsError = res.Status == read.StatusError
	for _, p := range res.Parts {
		if data, derr := base64.StdEncoding.DecodeString(p.Data); derr == nil {
			out.Content = append(out.Content, &mcp.ImageContent{Data: data, MIMEType: p.MediaType})
		}
	}
	withNote(out, note)
	return out, res, nil
}

// readView reads in and formats it, within bound bytes of what the client
// shows (the text, or the result's JSON on a structured server) when bound
// is not 0: the reader keeps the rows that fit with the notes after them,
// the continuation among them, reading the file once (read.Fit).
func (s *Server) readView(ctx context.Context, r root, in read.Input, bound int) (*read.Result, []byte) {
	opts := read.Options{Budget: readViewBudget}
	if bound > 0 {
		// No more rows than the bound holds printed (their JSON or the
		// text shown is never smaller), so that the token rule counts no
		// more than could be shown.
		b := readBudget
		b.MaxBytes = bound
		opts.Budget = read.Tokens(b)
		opts.Limits.MaxViewBytes = min(read.DefaultLimits.MaxViewBytes, bound)
		size := func(res *read.Result) int { return len(read.Brief(res, in.Limit != nil)) }
		if s.structured {
			// Without its newline, as the result carries it.
			size = func(res *read.Result) int { return len(read.JSON(res)) - 1 }
		}
		opts.Fit = &read.Fit{Max: bound, Size: size}
	}
	res, _ := read.Read(ctx, r.ws, in, opts)
	return res, read.Brief(res, in.Limit != nil)
}

func fptr(f float64) *float64 { return &f }
