package review

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"unicode/utf8"
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
// --format json and the MCP structuredContent: ordinary struct tags (so a
// JSON Schema can be inferred from the type), keys in struct order,
// optional keys omitted, no timestamps; only durationMs fields vary between
// two runs over the same repository state.
type Report struct {
	SchemaVersion int          `json:"schemaVersion" jsonschema:"version of this document's layout"`
	OK            bool         `json:"ok" jsonschema:"every validation passed (true when none ran)"`
	Detail        string       `json:"detail" jsonschema:"summary or full"`
	Scopes        []string     `json:"scopes" jsonschema:"the scopes inspected: committed, staged, unstaged, untracked"`
	Repository    Repository   `json:"repository"`
	Changes       Changes      `json:"changes"`
	Validations   []Validation `json:"validations"`
	Diagnostics   []Diagnostic `json:"diagnostics"`
	Truncation    Truncation   `json:"truncation" jsonschema:"every bound that shortened the report"`
	GitCalls      int          `json:"gitCalls" jsonschema:"git processes spawned"`
}

// Repository says what was inspected.
type Repository struct {
	Path string `json:"path" jsonschema:"canonical top level of the work tree"`
	Head Head   `json:"head"`
	Base *Base  `json:"base,omitempty" jsonschema:"the base of the committed scope; absent when none was found or the scope was not asked for"`
}

// Head is the state of HEAD.
type Head struct {
	Unborn   bool   `json:"unborn" jsonschema:"no commit yet (or HEAD names a missing branch)"`
	Detached bool   `json:"detached"`
	Oid      string `json:"oid,omitempty"`
	Branch   string `json:"branch,omitempty" jsonschema:"short branch name"`
}

// Base is the commit the committed scope is measured from.
type Base struct {
	Requested string `json:"requested,omitempty" jsonschema:"the base ref as asked for"`
	Ref       string `json:"ref" jsonschema:"the ref that resolved"`
	Oid       string `json:"oid"`
	MergeBase string `json:"mergeBase,omitempty" jsonschema:"absent for unrelated histories"`
}

// Changes holds the four disjoint scopes and their union.
type Changes struct {
	Committed []Entry     `json:"committed,omitempty"`
	Staged    []Entry     `json:"staged,omitempty"`
	Unstaged  []Entry     `json:"unstaged,omitempty"`
	Untracked []Untracked `json:"untracked,omitempty"`
	Files     []File      `json:"files" jsonschema:"the union of the scopes, one entry per path"`
	Counts    Counts      `json:"counts" jsonschema:"the true totals, whatever the lists kept"`
}

// Counts are the true totals, whatever the lists kept.
type Counts struct {
	Committed int `json:"committed"`
	Staged    int `json:"staged"`
	Unstaged  int `json:"unstaged"`
	Untracked int `json:"untracked"`
	Files     int `json:"files" jsonschema:"distinct paths over all scopes"`
}

// Entry is one changed path in the committed, staged or unstaged scope,
// with git's numstat line counts.
type Entry struct {
	Path           Path   `json:"path" jsonschema:"repository-relative path; U+FFFD replaces bytes that are not UTF-8"`
	PathBase64     string `json:"pathBase64,omitempty" jsonschema:"the path's exact bytes in base64, present only when they are not UTF-8"`
	Status         string `json:"status"`
	OrigPath       Path   `json:"origPath,omitempty" jsonschema:"the source of a rename or copy"`
	OrigPathBase64 string `json:"origPathBase64,omitempty"`
	Score          int    `json:"score,omitempty" jsonschema:"similarity of a rename or copy, 0-100"`
	Added          *int   `json:"added" jsonschema:"lines added; null for a binary file"`
	Removed        *int   `json:"removed" jsonschema:"lines removed; null for a binary file"`
}

// Untracked is one path of the untracked scope. It has no line counts:
// git has nothing to compare it with.
type Untracked struct {
	Path       Path   `json:"path" jsonschema:"repository-relative path; an embedded repository's ends in /"`
	PathBase64 string `json:"pathBase64,omitempty"`
	Kind       string `json:"kind,omitempty" jsonschema:"directory, for an embedded repository (not inspected)"`
	Status     string `json:"status" jsonschema:"always untracked"`
}

// File is one path of the union of the scopes.
type File struct {
	Path           Path     `json:"path"`
	PathBase64     string   `json:"pathBase64,omitempty"`
	Kind           string   `json:"kind,omitempty"`
	Status         string   `json:"status" jsonschema:"the first of the path's statuses by precedence: unmerged, deleted, untracked, renamed, copied, added, typechange, modified"`
	OrigPath       Path     `json:"origPath,omitempty"`
	OrigPathBase64 string   `json:"origPathBase64,omitempty"`
	Scopes         []string `json:"scopes"`
}

// Path is a repository-relative path, exactly the bytes git gave. In JSON
// it is a string, with U+FFFD for bytes that are not UTF-8 (as
// encoding/json writes them); such a path also carries its exact bytes in
// base64 beside it (pathBase64, origPathBase64).
type Path string

// base64Of is the pathBase64 of p: empty for valid UTF-8.
func base64Of(p Path) string {
	if utf8.ValidString(string(p)) {
		return ""
	}
	return base64.StdEncoding.EncodeToString([]byte(p))
}

// Validation is the outcome of one validation command.
type Validation struct {
	ID         string   `json:"id" jsonschema:"the config name, or validate:N for an ad-hoc command"`
	Argv       []string `json:"argv" jsonschema:"exactly what ran; there is no shell"`
	Status     string   `json:"status" jsonschema:"passed, failed, timed_out, spawn_error or skipped"`
	ExitCode   *int     `json:"exitCode" jsonschema:"null when killed or not started"`
	Signal     string   `json:"signal,omitempty"`
	DurationMs int64    `json:"durationMs"`
	Stdout     Stream   `json:"stdout"`
	Stderr     Stream   `json:"stderr"`
	Reason     string   `json:"reason,omitempty" jsonschema:"why it did not start or was stopped"`
}

// Stream is the captured output of one stream.
type Stream struct {
	Text         string `json:"text" jsonschema:"head and tail of the cleaned output, around an elision marker when shortened"`
	BytesTotal   int64  `json:"bytesTotal" jsonschema:"raw bytes the command wrote"`
	BytesDropped int64  `json:"bytesDropped,omitempty" jsonschema:"cleaned bytes elided from the middle"`
}

// Diagnostic is a warning or error about the inspection that did not stop it.
type Diagnostic struct {
	Code     string `json:"code"`
	Severity string `json:"severity" jsonschema:"error or warning"`
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
	Field        string `json:"field" jsonschema:"e.g. changes.committed or validations[0].stdout"`
	BytesRemoved int64  `json:"bytesRemoved" jsonschema:"text elided, or the removed entries as compact JSON"`
	ItemsRemoved int    `json:"itemsRemoved,omitempty" jsonschema:"entries removed from a list"`
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

func (r *Report) warn(code, msg, hint string) {
	r.Diagnostics = append(r.Diagnostics, Diagnostic{Code: code, Severity: "warning", Message: msg, Hint: hint})
}
