package errs

import "slices"

// Vocabulary is every failure code one tool can answer with, whichever
// layer produces it (argument parsing, confinement, the engine, writing
// the result): a caller can branch on these and no others, and one
// condition has one code within a tool. The codes of a failed edit's
// failures (its reasons) are listed with the edit's own.
type Vocabulary struct {
	Tool  string   // a command by its rowkit name, or an MCP tool as "mcp:NAME"
	Codes []string // in no particular order
}

// The codes each engine shares between its command and its MCP tool.
var (
	inspectCodes = []string{NotFound, NotRegular, NotUTF8, Outside, Read, "parse", "output_limit", Cancelled}
	readCodes    = []string{"INVALID_INPUT", "NOT_FOUND", "NOT_A_FILE", "DANGEROUS_PATH", "OUTSIDE_ALLOWED_ROOTS",
		"PERMISSION_DENIED", "DENIED", "CHANGED_DURING_READ", "ABORTED", "UNSUPPORTED_BACKEND", "EXTENSION_FAILED", "IO_ERROR",
		// status unsupported
		"IMAGE", "PDF", "OFFICE_DOCUMENT", "NOTEBOOK", "BINARY", "UNKNOWN_ENCODING", "INVALID_NOTEBOOK", "TOO_LARGE"}
	grepCodes = []string{"rg_missing", "invalid_pattern", "rg_failed", NotFound, PermissionDenied, NotUTF8, NotRegular, Changed, Read, TooLarge,
		Cancelled, Incomplete, Outside}
	patchCodes = []string{"rejected", "journal", "commit_failed", Cancelled,
		// the reasons of a rejected script's failures
		"script-syntax", "row-missing", "row-stale", "occurrence-missing", "invalid-count", "target-order",
		"edit-conflict", "active-file", "initialization", "file-path", "language-syntax"}
	symbolCodes = []string{NotFound, NotRegular, NotUTF8, Read, Outside, Changed, Cancelled, Incomplete,
		"row_stale", "row_missing", "symbol_missing", "unsupported", "server_missing", "server_failed",
		"server_crashed", "server_timeout", "index_incomplete"}
	reviewCodes = []string{"E_REPO_NOT_FOUND", "E_NOT_A_REPO", "E_UNSAFE_REPOSITORY", "E_BARE_REPOSITORY",
		"E_BASE_REF_UNKNOWN", "E_REPO_EXEC_CONFIG", "E_GIT_FAILED", "E_GIT_TIMEOUT", "E_INTERNAL", Cancelled, Outside}
)

func join(lists ...[]string) []string { return slices.Concat(lists...) }

// Vocabularies is the table: every command and every MCP tool. Each MCP
// tool also answers usage for arguments its input schema refuses.
var Vocabularies = []Vocabulary{
	// hread is read's engine without its view (read.Stream): read's codes
	// as Snake spells them, but those of a view's extensions, and its own
	// past_eof and expired (a kept output).
	{"hread", []string{Usage, NotFound, PermissionDenied, NotRegular, "dangerous_path", "invalid_input", "past_eof", Read, Write, Cancelled, Incomplete, Outside, "expired",
		"binary", "image", "pdf", "office_document", NotUTF8}},
	{"read", join([]string{Usage, Write}, readCodes)},
	{"grep", join([]string{Usage, Write}, grepCodes)},
	// hsymbol also answers broker_failed: its broker is a process of its
	// own; the MCP tool keeps its servers in the server.
	{"symbol", join([]string{Usage, Write, "broker_failed"}, symbolCodes)},
	{"review", join([]string{"E_USAGE", "E_CONFIG", "E_VALIDATION_UNKNOWN", Write}, reviewCodes)},
	{"inspect", join([]string{Usage, Write}, inspectCodes)},
	{"patch", join([]string{Usage, Read, Write, TooLarge}, patchCodes)},
	{"recover", []string{Usage, "journal", Read, Write}},
	{"mcp", []string{Usage, Read, "E_CONFIG"}},
	{"link", []string{Usage, "not_directory", "exists", "link", Write}},
	{"help", []string{Usage, Write}},
	// The router's own codes reach Codex (a refused start, an HTTP error
	// body, a failed stream) or the model (a routed call it could not
	// carry, in place of Codex's "unsupported custom tool call").
	{"router", []string{Usage, "router_startup", "listen", "upstream_unreachable", "request_too_large", "router_limit", "carrier_nul", "carrier_unsafe"}},
	{"carrier", join([]string{Usage, "carrier_protocol", Read, Write, TooLarge, "bash_missing", "private_dir"}, patchCodes)},
	// rowkit shell reports these before bash runs; then the status is
	// bash's, and what the script prints is its own.
	{"shell", []string{Usage, Read, "bash_missing", "private_dir"}},

	{"mcp:inspect_file", join([]string{Usage}, inspectCodes)},
	// An @out/ID kept output: expired, not_found, and what reading it can meet.
	{"mcp:read_file", join([]string{Usage, "expired", NotFound, NotRegular, "past_eof", Read, Write}, readCodes)},
	// A path no root holds: not_found when it cannot name a file at all
	// (a NUL byte), outside_workspace otherwise.
	{"mcp:search", join([]string{Usage}, grepCodes)},
	{"mcp:edit", join([]string{Usage}, patchCodes)},
	{"mcp:symbol", join([]string{Usage}, symbolCodes)},
	{"mcp:inspect_repository", join([]string{Usage}, reviewCodes)},
	{"mcp:run_validations", join([]string{Usage, "E_CONFIG", "E_VALIDATION_UNKNOWN"}, reviewCodes)},
}

// CodesOf returns the vocabulary of tool, nil for a tool not in the table.
func CodesOf(tool string) []string {
	for _, v := range Vocabularies {
		if v.Tool == tool {
			return v.Codes
		}
	}
	return nil
}

// Speaks reports whether code is in tool's vocabulary.
func Speaks(tool, code string) bool { return slices.Contains(CodesOf(tool), code) }
