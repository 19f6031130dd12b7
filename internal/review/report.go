package review

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/rowkit/rowkit/internal/jsonstr"
)

// SchemaVersion is bumped on any incompatible change to Report's JSON.
const SchemaVersion = 1

// Scope names, in report order.
const (
	ScopeCommitted = "committed"
	ScopeStaged    = "staged"
	ScopeUnstaged  = "unstaged"
	ScopeUntracked = "untracked"
)

// AllScopes is every scope in report order.
var AllScopes = []string{ScopeCommitted, ScopeStaged, ScopeUnstaged, ScopeUntracked}

// File statuses, listed from the highest precedence to the lowest: a path in
// several scopes gets the first of its statuses in this list.
var statusPrecedence = []string{
	"unmerged", "deleted", "untracked", "renamed", "copied", "added", "typechange", "modified",
}

// Validation statuses.
const (
	StatusPassed     = "passed"
	StatusFailed     = "failed"
	StatusTimedOut   = "timed_out"
	StatusSpawnError = "spawn_error"
	StatusSkipped    = "skipped" // the total budget ran out before it started
)

// Report is the one result of rowkit review. Its JSON is the CLI's
// --format json and the future MCP structuredContent: keys in struct order,
// optional keys omitted, no timestamps; only durationMs fields vary between
// two runs over the same repository state.
type Report struct {
	SchemaVersion int          `json:"schemaVersion"`
	OK            bool         `json:"ok"` // every validation passed
	Detail        string       `json:"detail"`
	Scopes        []string     `json:"scopes"`
	Repository    Repository   `json:"repository"`
	Changes       Changes      `json:"changes"`
	Validations   []Validation `json:"validations"`
	Diagnostics   []Diagnostic `json:"diagnostics"`
	Truncation    Truncation   `json:"truncation"`
	GitCalls      int          `json:"gitCalls"` // git processes spawned
}

// Repository says what was inspected.
type Repository struct {
	Path string `json:"path"` // canonical top level of the work tree
	Head Head   `json:"head"`
	Base *Base  `json:"base,omitempty"` // absent when no base was found
}

// Head is the state of HEAD.
type Head struct {
	Unborn   bool   `json:"unborn"` // no commit yet (or HEAD names a missing branch)
	Detached bool   `json:"detached"`
	Oid      string `json:"oid,omitempty"`
	Branch   string `json:"branch,omitempty"` // short name
}

// Base is the commit the committed scope is measured from.
type Base struct {
	Requested string `json:"requested,omitempty"` // --base-ref as given
	Ref       string `json:"ref"`                 // the ref that resolved
	Oid       string `json:"oid"`
	MergeBase string `json:"mergeBase,omitempty"` // absent for unrelated histories
}

// Changes holds the four disjoint scopes and their union.
type Changes struct {
	Committed []Entry `json:"committed,omitempty"`
	Staged    []Entry `json:"staged,omitempty"`
	Unstaged  []Entry `json:"unstaged,omitempty"`
	Untracked []Entry `json:"untracked,omitempty"`
	Files     []File  `json:"files"`
	Counts    Counts  `json:"counts"`
}

// Counts are the true totals, whatever the lists kept.
type Counts struct {
	Committed int `json:"committed"`
	Staged    int `json:"staged"`
	Unstaged  int `json:"unstaged"`
	Untracked int `json:"untracked"`
	Files     int `json:"files"` // distinct paths over all scopes
}

// Entry is one changed path in one scope.
type Entry struct {
	Path     Path      `json:"path"`
	Kind     string    `json:"kind,omitempty"` // "directory" for an embedded repository
	Status   string    `json:"status"`
	OrigPath Path      `json:"origPath,omitzero"` // renames and copies
	Score    int       `json:"score,omitempty"`   // similarity, 0-100, renames and copies
	Added    LineCount `json:"added,omitzero"`    // null for a binary file
	Removed  LineCount `json:"removed,omitzero"`  // null for a binary file
}

// File is one path of the union of the scopes.
type File struct {
	Path     Path     `json:"path"`
	Kind     string   `json:"kind,omitempty"`
	Status   string   `json:"status"`
	OrigPath Path     `json:"origPath,omitzero"`
	Scopes   []string `json:"scopes"`
}

// Path is a repository-relative path, exactly the bytes git gave. Valid
// UTF-8 is written as a JSON string; any other name cannot be a JSON string
// without loss, so it is written as {"lossy": "...", "base64": "..."}, the
// second keeping the exact bytes.
type Path string

// MarshalJSON writes valid UTF-8 as a plain string and anything else as an
// object that keeps the exact bytes.
func (p Path) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(p)) {
		return jsonstr.Append(nil, string(p)), nil
	}
	return marshal(struct {
		Lossy  string `json:"lossy"`
		Base64 string `json:"base64"`
	}{string(bytes.ToValidUTF8([]byte(p), []byte("\uFFFD"))), base64.StdEncoding.EncodeToString([]byte(p))})
}

// LineCount is a numstat count: absent when not measured (untracked files),
// null when git calls the file binary, a number otherwise.
type LineCount struct {
	N        int
	Binary   bool
	Measured bool
}

func (c LineCount) IsZero() bool { return !c.Measured }

func (c LineCount) MarshalJSON() ([]byte, error) {
	if c.Binary {
		return []byte("null"), nil
	}
	return strconv.AppendInt(nil, int64(c.N), 10), nil
}

// Validation is the outcome of one validation command.
type Validation struct {
	ID         string   `json:"id"`   // config name, or "validate:N" for --validate
	Argv       []string `json:"argv"` // exactly what ran; there is no shell
	Status     string   `json:"status"`
	ExitCode   *int     `json:"exitCode"` // null when killed or not started
	Signal     string   `json:"signal,omitempty"`
	DurationMs int64    `json:"durationMs"`
	Stdout     Stream   `json:"stdout"`
	Stderr     Stream   `json:"stderr"`
	Reason     string   `json:"reason,omitempty"` // why it did not start or was stopped
}

// Stream is the captured output of one stream.
type Stream struct {
	Text         string `json:"text"`
	BytesTotal   int64  `json:"bytesTotal"`             // raw bytes the command wrote
	BytesDropped int64  `json:"bytesDropped,omitempty"` // cleaned bytes elided from the middle
}

// Diagnostic is a warning or error about the inspection that did not stop it.
type Diagnostic struct {
	Code     string `json:"code"`
	Severity string `json:"severity"` // "error" or "warning"
	Message  string `json:"message"`
	Hint     string `json:"hint,omitempty"`
}

// Truncation names every bound that shortened the report.
type Truncation struct {
	Applied      bool        `json:"applied"`
	BytesRemoved int64       `json:"bytesRemoved"`
	Fields       []Truncated `json:"fields"`
}

// Truncated is one shortened field.
type Truncated struct {
	Field        string `json:"field"`                  // e.g. changes.committed, validations[0].stdout
	BytesRemoved int64  `json:"bytesRemoved"`           // text elided, or removed entries as compact JSON
	ItemsRemoved int    `json:"itemsRemoved,omitempty"` // entries removed from a list
}

// JSON is the report's one serialisation: indented, HTML characters left
// alone, ending in a newline.
func (r *Report) JSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func (r *Report) warn(code, msg, hint string) {
	r.Diagnostics = append(r.Diagnostics, Diagnostic{Code: code, Severity: "warning", Message: msg, Hint: hint})
}
