package review

import (
	"errors"
	"strings"
)

// Error is a failure that prevents a report: a stable UPPER_SNAKE code, one
// line of explanation and, where there is one, the next step to take.
type Error struct {
	Code string
	Msg  string
	Hint string
}

func (e *Error) Error() string {
	s := e.Code + ": " + e.Msg
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return strings.ReplaceAll(s, "\n", " ")
}

func errorf(code, msg, hint string) *Error { return &Error{Code: code, Msg: msg, Hint: hint} }

// Error codes. Each one belongs to exactly one exit code, decided by ExitCode.
const (
	CodeUsage          = "E_USAGE"              // the command line is wrong
	CodeConfig         = "E_CONFIG"             // the config file is missing, malformed or invalid
	CodeValidationName = "E_VALIDATION_UNKNOWN" // --validation names nothing in the config
	CodeRepoNotFound   = "E_REPO_NOT_FOUND"     // --repo does not exist or is not a directory
	CodeNotARepo       = "E_NOT_A_REPO"         // git finds no repository there
	CodeUnsafeRepo     = "E_UNSAFE_REPOSITORY"  // git refuses it for ownership (safe.directory)
	CodeBareRepo       = "E_BARE_REPOSITORY"    // no work tree to inspect
	CodeBaseRef        = "E_BASE_REF_UNKNOWN"   // --base-ref does not name a commit
	CodeRepoExecConfig = "E_REPO_EXEC_CONFIG"   // an executable config key cannot be blanked
	CodeGitFailed      = "E_GIT_FAILED"         // git failed unexpectedly
	CodeGitTimeout     = "E_GIT_TIMEOUT"        // a git call ran out of time
	CodeInternal       = "E_INTERNAL"           // a bug in rowkit
)

// Exit codes of rowkit review.
const (
	ExitOK               = 0  // done; nothing failed
	ExitValidationFailed = 1  // done; a validation failed
	ExitUsage            = 2  // usage or configuration error
	ExitInspection       = 3  // the repository could not be inspected
	ExitTimeout          = 4  // a time budget ran out
	ExitInternal         = 70 // internal error (EX_SOFTWARE)
)

// ExitCode is the one place that decides rowkit review's exit code, from the
// report when one was produced and from the error otherwise. exitZero is
// --exit-zero: any produced report exits 0.
func ExitCode(r *Report, err error, exitZero bool) int {
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			return ExitInternal
		}
		switch e.Code {
		case CodeUsage, CodeConfig, CodeValidationName:
			return ExitUsage
		case CodeRepoNotFound, CodeNotARepo, CodeUnsafeRepo, CodeBareRepo, CodeBaseRef,
			CodeRepoExecConfig, CodeGitFailed:
			return ExitInspection
		case CodeGitTimeout:
			return ExitTimeout
		default:
			return ExitInternal
		}
	}
	if r == nil {
		return ExitInternal
	}
	if exitZero {
		return ExitOK
	}
	failed := false
	for _, v := range r.Validations {
		switch v.Status {
		case StatusTimedOut, StatusSkipped:
			return ExitTimeout
		case StatusPassed:
		default:
			failed = true
		}
	}
	if failed {
		return ExitValidationFailed
	}
	return ExitOK
}
