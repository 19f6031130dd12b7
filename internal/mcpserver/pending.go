package mcpserver

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/txn"
	"github.com/rowkit/rowkit/internal/workspace"
)

// pendingNote is the text block the read tools (read_file, inspect_file,
// search) add after their result when it shows files of an edit that an
// interrupted commit left half done in the root: the CLI's stderr line,
// "pending_edit: ...". The tools still only read; the next edit settles
// the transaction (or rowkit recover). nil when there is nothing to say.
func pendingNote(ws *workspace.Root, rels []string) *mcp.TextContent {
	var shown []string
	for _, r := range rels {
		if c, err := workspace.Clean(r); err == nil {
			shown = append(shown, c)
		}
	}
	in := txn.Interrupted(ws, shown)
	if in == nil {
		return nil
	}
	return &mcp.TextContent{Text: "[" + errs.PendingEdit + ": " + in.MCPLine() + "]"}
}

// withNote appends note, when there is one, to the result's content.
func withNote(out *mcp.CallToolResult, note *mcp.TextContent) {
	if note != nil && out != nil {
		out.Content = append(out.Content, note)
	}
}

// noteBound is bound less what note takes (bound 0: no bound).
func noteBound(bound int, note *mcp.TextContent) int {
	if bound <= 0 || note == nil {
		return bound
	}
	return max(bound-len(note.Text), 1)
}
