package errs

// seedCodes is the one table between the spellings two seeds give their
// codes inside their JSON documents and the lower_snake codes a person or
// a script reads everywhere else (stderr lines, MCP failure texts). Seed
// 003's reader writes UPPER_SNAKE codes in `rowkit read --format json` and
// MCP read_file's structured result; seed 004's inspector writes E_ and W_
// codes in the review report and inspect_repository's structured result.
// Those documents keep the seeds' spellings, since code written to the
// seeds' schemas branches on them; the lines beside them do not. A
// condition shared with other commands maps to their code, so a missing
// file is not_found in hread, read and hgrep alike. An array, not a map:
// a map literal is built as every rowkit process starts, and errors are
// rare.
var seedCodes = [...]struct{ seed, code string }{
	// seed 003, rowkit read
	{"INVALID_INPUT", "invalid_input"},
	{"NOT_FOUND", NotFound},
	{"NOT_A_FILE", NotRegular},
	{"DANGEROUS_PATH", "dangerous_path"},
	{"OUTSIDE_ALLOWED_ROOTS", Outside},
	{"PERMISSION_DENIED", PermissionDenied},
	{"DENIED", "denied"},
	{"CHANGED_DURING_READ", Changed},
	{"ABORTED", Cancelled},
	{"UNSUPPORTED_BACKEND", "unsupported_backend"},
	{"EXTENSION_FAILED", "extension_failed"},
	{"IO_ERROR", Read},
	{"TOO_LARGE", TooLarge},
	{"IMAGE", "image"},
	{"PDF", "pdf"},
	{"OFFICE_DOCUMENT", "office_document"},
	{"NOTEBOOK", "notebook"},
	{"BINARY", "binary"},
	{"UNKNOWN_ENCODING", NotUTF8},
	{"INVALID_NOTEBOOK", "invalid_notebook"},
	// seed 004, rowkit review
	{"E_USAGE", Usage},
	{"E_CONFIG", "config"},
	{"E_VALIDATION_UNKNOWN", "validation_unknown"},
	{"E_REPO_NOT_FOUND", NotFound},
	{"E_NOT_A_REPO", "not_a_repo"},
	{"E_UNSAFE_REPOSITORY", "unsafe_repository"},
	{"E_BARE_REPOSITORY", "bare_repository"},
	{"E_BASE_REF_UNKNOWN", "base_ref_unknown"},
	{"E_REPO_EXEC_CONFIG", "repo_exec_config"},
	{"E_GIT_FAILED", "git_failed"},
	{"E_GIT_TIMEOUT", "git_timeout"},
	{"E_INTERNAL", "internal"},
	{"W_REPO_EXEC_CONFIG_ALLOWED", "repo_exec_config_allowed"},
	{"W_REPO_EXEC_CONFIG_BLANKED", "repo_exec_config_blanked"},
	{"W_SUBMODULES", "submodules"},
	{"W_REPO_CONFIG_USED", "repo_config_used"},
	{"W_REPO_CONFIG_IGNORED", "repo_config_ignored"},
	{"W_DETACHED_HEAD", "detached_head"},
	{"W_NO_COMMITS", "no_commits"},
	{"W_NO_BASE_REF", "no_base_ref"},
	{"W_NO_MERGE_BASE", "no_merge_base"},
	{"W_UNMERGED_PATHS", "unmerged_paths"},
}

// Snake is code as every line outside a seed's JSON spells it: a seed
// spelling becomes its lower_snake code from the table, any other code is
// already one and is returned as it is.
func Snake(code string) string {
	for _, p := range seedCodes {
		if p.seed == code {
			return p.code
		}
	}
	return code
}
