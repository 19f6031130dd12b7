package patch

import (
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/txn"
)

// Result statuses.
const (
	StatusApplied   = "applied"
	StatusUnchanged = "unchanged"
	StatusDryRun    = "dry-run"
	StatusRejected  = "rejected"
	StatusFailed    = "failed"
)

// Result is what a script did, or why it did nothing. The CLI's --json and
// the MCP edit tool's structuredContent are this value.
type Result struct {
	Status   string       `json:"status" jsonschema:"applied; unchanged (every edit was a no-op); dry-run (nothing written); rejected (nothing written, see failures); failed (the commit failed: rolled back, or the error says where each file stands)"`
	Files    []FileAction `json:"files" jsonschema:"the net file actions, in script order"`
	Edits    []EditRows   `json:"edits,omitempty" jsonschema:"for each edit, the current verified rows at its edges: the surviving neighbours and the first and last rows of the new text"`
	Gofmt    []FormatRows `json:"gofmt,omitempty" jsonschema:"with the gofmt option: for each Go file it formatted, the rows gofmt wrote differently from the script's text"`
	Failures []Failure    `json:"failures,omitempty" jsonschema:"why the script was rejected, every independent reason at once"`
	Diff     string       `json:"diff,omitempty" jsonschema:"dry-run only: the unified diff of every change"`
	// Recovery is set when a transaction a crash left pending was settled
	// before the script ran.
	Recovery *txn.Recovery `json:"recovery,omitempty" jsonschema:"set when a transaction an interrupted run left pending in the workspace was settled before this script ran"`
	// Truncated counts what a size bound left out (Within, Bound; each adds to it).
	Truncated *Truncation `json:"truncated,omitempty" jsonschema:"what a size bound left out of the lists above; absent when nothing was"`
}

// FileAction is one file's net change.
type FileAction struct {
	Action string `json:"action" jsonschema:"modified, created, deleted or moved"`
	Path   string `json:"path" jsonschema:"the file's path after the script"`
	From   string `json:"from,omitempty" jsonschema:"moved only: the path before"`
	// Symlink: the action was on a symbolic link itself (rm and mv of a
	// path that is a link act on the link, as in a shell), whose text is
	// LinkTo; what it leads to is not touched.
	Symlink bool   `json:"symlink,omitempty" jsonschema:"the path is a symbolic link, deleted or moved itself; what it leads to is not touched"`
	LinkTo  string `json:"linkTo,omitempty" jsonschema:"symlink only: the link's text (what it leads to)"`
}

// EditRows are the rows around one edit after the script.
type EditRows struct {
	Command int           `json:"command" jsonschema:"the one-based number of the command"`
	Op      string        `json:"op" jsonschema:"type or add"`
	Path    string        `json:"path" jsonschema:"the file's path after the script"`
	Rows    []rows.Record `json:"rows" jsonschema:"verified rows of the new content: the row before, the first and last new rows, the row after"`
	// Moved is how many lines the edit's target had moved since its rows
	// were copied (relocated: +3 means 3 lines further down); 0 when
	// they were current. Other rows copied from the file at the same time
	// are stale by as much.
	Moved int `json:"moved,omitempty" jsonschema:"lines the target had moved since its rows were copied (relocated; +3 is 3 lines down); other rows copied from this file then are stale too"`
}
