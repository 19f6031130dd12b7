package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/patch"
	"github.com/rowkit/rowkit/internal/rows"
)

// EditInput is the arguments of edit.
type EditInput struct {
	Script string `json:"script"`
	DryRun bool   `json:"dry_run,omitempty" jsonschema:"check and show the diff; write nothing"`
}

// maxEditScript bounds a script: the whole request is at most
// MaxFrameBytes anyway.
const maxEditScript = MaxFrameBytes / 2

// editBounds keep the structured result within what the description
// promises; the text is bounded by token admission (patch.Report).
var editBounds = patch.Bounds{Edits: 200, Failures: 50, Gofmt: 50, DiffBytes: 256 << 10}

// EditDescription teaches the language in the tool's own description,
// since the model writes it: patch.Brief, the language as every model's
// tool text teaches it (the router's hpatch too), after the tool's own
// words.
const EditDescription = "Edits files by verified rows; the report shows the rows around each edit, ready for the next script.\n\n" + patch.Brief

func (s *Server) addEdit() {
	in := mustSchema[EditInput]()
	in.Properties["script"].MinLength = iptr(1)
	in.Properties["script"].MaxLength = iptr(maxEditScript)
	register(s, &mcp.Tool{
		Name:         "edit",
		Title:        "Edit files by verified rows",
		Description:  EditDescription,
		InputSchema:  in,
		OutputSchema: outputSchema[patch.Result](),
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    false,
			IdempotentHint:  false,
			DestructiveHint: bptr(true),
			OpenWorldHint:   bptr(false),
		},
	}, s.edit)
}

func (s *Server) edit(ctx context.Context, req *mcp.CallToolRequest, in EditInput) (*mcp.CallToolResult, *patch.Result, error) {
	r := s.callRoots(ctx, req)[0]
	s.editMu.Lock()
	defer s.editMu.Unlock()
	res, err := patch.Apply(ctx, r.ws, in.Script, patch.Options{DryRun: in.DryRun})
	if res == nil {
		return nil, nil, err
	}
	bound := s.resultBytes(req)
	b := rows.DefaultBudget
	b.MaxBytes = bound
	out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: editText(res, err, b)}}}
	s.editWithin(res, bound)
	// A rejected or rolled-back script is the engine's own result, with
	// the reasons in failures; the call is an error all the same.
	out.IsError = err != nil
	return out, res, nil
}

// editText is what hpatch prints: the failures with their repair rows, or
// the file actions and the rows at each edit's edges, or the diff, within
// the verified-row budget; the structured result is cut to what it admits.
func editText(res *patch.Result, err error, b rows.Budget) string {
	if len(res.Failures) == 0 && err != nil {
		return patch.Text(res, err, b, "edit")
	}
	return res.Within(b, "edit: ")
}

// editWithin bounds res's lists (editBounds) and, on a structured server,
// whose client shows the JSON, halves those bounds until the JSON fits
// bound; res.Truncated says what was left out, by the text (editText) and
// by these bounds.
func (s *Server) editWithin(res *patch.Result, bound int) {
	full := *res
	apply := func(bs patch.Bounds) {
		*res = full
		res.Bound(bs)
	}
	bs := editBounds
	apply(bs)
	if !s.structured || bound <= 0 {
		return
	}
	for {
		j, _ := encode(res)
		if len(j) <= bound || bs == (patch.Bounds{Edits: 1, Failures: 1, Gofmt: 1, DiffBytes: 1}) {
			return
		}
		bs = patch.Bounds{Edits: max(bs.Edits/2, 1), Failures: max(bs.Failures/2, 1), Gofmt: max(bs.Gofmt/2, 1), DiffBytes: max(bs.DiffBytes/2, 1)}
		apply(bs)
	}
}
