package review

import (
	"github.com/rowkit/rowkit/internal/errs"
)

// Error codes of the review engine, beside the shared ones of package errs
// (a cancelled inspection is errs.Cancelled, a path outside the root is
// errs.Outside). Each code belongs to exactly one exit status (exitOf),
// which every error carries, so that the CLI needs no table of its own.
const (
	CodeUsage          = "E_USAGE"              // the request is wrong
	CodeConfig         = "E_CONFIG"             // the config file is missing, malformed or invalid
	CodeValidationName = "E_VALIDATION_UNKNOWN" // a validation name that the config does not hold
	CodeRepoNotFound   = "E_REPO_NOT_FOUND"     // the repository path does not exist or is not a directory
	CodeNotARepo       = "E_NOT_A_REPO"         // git finds no work tree there
	CodeUnsafeRepo     = "E_UNSAFE_REPOSITORY"  // git refuses it for ownership (safe.directory)
	CodeBareRepo       = "E_BARE_REPOSITORY"    // no work tree to inspect
	CodeBaseRef        = "E_BASE_REF_UNKNOWN"   // the base ref does not name a commit
	CodeRepoExecConfig = "E_REPO_EXEC_CONFIG"   // an executable config key cannot be blanked
	CodeGitFailed      = "E_GIT_FAILED"         // git failed unexpectedly
	CodeGitTimeout     = "E_GIT_TIMEOUT"        // a git call ran out of time
	CodeInternal       = "E_INTERNAL"           // a bug in rowkit
)

// Exit statuses of rowkit review. The engine's errors carry theirs; the
// statuses of a produced report (0, 1, 4) are the adapter's decision.
const (
	ExitOK               = 0  // done; nothing failed
	ExitValidationFailed = 1  // done; a validation failed
	ExitUsage            = 2  // usage or configuration error
	ExitInspection       = 3  // the repository could not be inspected
	ExitTimeout          = 4  // a time budget ran out, or the inspection was interrupted
	ExitInternal         = 70 // internal error (EX_SOFTWARE)
)

// exitOf is the one table from error code to exit status.
var exitOf = map[string]int{
	CodeUsage: ExitUsage, CodeConfig: ExitUsage, CodeValidationName: ExitUsage,
	CodeRepoNotFound: ExitInspection, CodeNotARepo: ExitInspection, CodeUnsafeRepo: ExitInspection,
	CodeBareRepo: ExitInspection, CodeBaseRef: ExitInspection, CodeRepoExecConfig: ExitInspection,
	CodeGitFailed: ExitInspection, errs.Outside: ExitInspection,
	CodeGitTimeout: ExitTimeout, errs.Cancelled: ExitTimeout,
	CodeInternal: ExitInternal,
}

// errorf is an engine error with its exit status. Messages and hints name
// what was asked for ("the base ref"), never a command-line flag: the CLI
// adapter words them for its users.
func errorf(code, msg, hint string) *errs.Error {
	exit, ok := exitOf[code]
	if !ok {
		exit = ExitInternal
	}
	return errs.New(code, msg).WithHint(hint).WithExit(exit)
}

// Codes returns every engine error code with the exit status it carries,
// for adapters that document them.
func Codes() map[string]int {
	m := make(map[string]int, len(exitOf))
	for k, v := range exitOf {
		m[k] = v
	}
	return m
}
