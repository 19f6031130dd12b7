package mcpserver

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/jsonstr"
	"github.com/rowkit/rowkit/internal/patch"
	"github.com/rowkit/rowkit/internal/rows"
)

// EditInput is the arguments of edit.
type EditInput struct {
	Script string `json:"script" jsonschema:"an HPATCH/2 script; paths are relative to the first workspace root"`
	DryRun bool   `json:"dry_run,omitempty" jsonschema:"resolve and check every edit and return the unified diff; write nothing"`
}

// maxEditScript bounds a script: the whole request is at most
// MaxFrameBytes anyway.
const maxEditScript = MaxFrameBytes / 2

// Text bounds of an edit's report, as hpatch prints it.
const (
	maxEditFailures = 50
	maxEditEdges    = 100
)

// EditDescription teaches the language in the tool's own description,
// since the model writes it.
const EditDescription = `Edits files with an HPATCH/2 script, all files at once or none (journalled). One command per line:
  in PATH             select an existing file
  new PATH            create a file and select it (then optionally: type VALUE, its initial content)
  mv PATH | rm        move or delete the selected file
  type TARGET VALUE   replace every span TARGET selects with VALUE ("" deletes)
  add DEST VALUE      insert VALUE before DEST (a ROW, a text target, or EOF)
TARGET is a verified row LINE:HASH (the whole line with its terminator), a range ROW..ROW, "TEXT" [N] (the first N exact matches) or ROW "TEXT" [N]. VALUE is a JSON string, or <<PATCH followed by literal lines and a line PATCH. A replacement without a final newline keeps the target's. Every target resolves against the files as they were when the script started. Copy LINE:HASH rows from read_file, search or inspect_file; a stale row is rejected with the current rows around it, usable in the next script.`

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
	out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: editText(res, err)}}}
	// A rejected or rolled-back script is the engine's own result, with
	// the reasons in failures; the call is an error all the same.
	out.IsError = err != nil
	return out, res, nil
}

// editText is what hpatch prints: the failures with their repair rows, or
// the file actions and the rows at each edit's edges, or the diff.
func editText(res *patch.Result, err error) string {
	var b []byte
	switch {
	case len(res.Failures) > 0:
		for i := range res.Failures {
			if i == maxEditFailures {
				b = fmt.Appendf(b, "edit: %d more failures left out\n", len(res.Failures)-i)
				break
			}
			f := &res.Failures[i]
			b = append(append(b, f.Line()...), '\n')
			for _, r := range f.Rows {
				b = rows.AppendRow(b, r.Line, []byte(r.Text))
			}
			for _, r := range f.Proposed {
				b = append(strconv.AppendInt(b, int64(r.Line), 10), "| "...)
				b = append(append(b, r.Text...), '\n')
			}
		}
		return string(b)
	case err != nil:
		return failureText(failureOf(err, nil))
	case res.Status == patch.StatusDryRun:
		if res.Diff == "" {
			return "dry run: no change\n"
		}
		return res.Diff
	case res.Status == patch.StatusUnchanged:
		return "unchanged: every edit leaves its file as it was\n"
	}
	counts := map[string]int{}
	for _, f := range res.Files {
		counts[f.Action]++
	}
	var parts []string
	for _, a := range []string{"modified", "created", "moved", "deleted"} {
		if counts[a] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[a], a))
		}
	}
	b = append(b, "applied: "+strings.Join(parts, ", ")+"\n"...)
	for _, f := range res.Files {
		b = append(append(b, f.Action...), ' ')
		if f.From != "" {
			b = append(jsonstr.Append(b, f.From), " -> "...)
		}
		b = append(jsonstr.Append(b, f.Path), '\n')
	}
	for i, e := range res.Edits {
		if i == maxEditEdges {
			b = fmt.Appendf(b, "(%d more edits left out)\n", len(res.Edits)-i)
			break
		}
		b = fmt.Appendf(b, "command %d %s:\n", e.Command, e.Op)
		for _, r := range e.Rows {
			b = rows.AppendPrinted(b, rows.Row{Path: e.Path, Line: r.Line, Text: []byte(r.Text)})
		}
	}
	return string(b)
}
