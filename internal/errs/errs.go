// Package errs owns the one error contract every rowkit engine returns: a
// stable machine code, one line of explanation, optionally the next step
// to take and the exit status a command should end with.
//
// Engines return *Error values (wrapped or not); adapters find them with
// errors.As (or As here) and decide what to print. The CLI maps any error
// to its stderr line and exit code in one place (cli.Exec); the MCP server
// puts Code in structuredContent. An error carrying an exit status is the
// idea of mvdan/sh's interp.ExitStatus: the engine that knows the outcome
// also knows how a process reporting it should end. Vocabularies (tools.go)
// is the table of the codes each command and MCP tool can answer.
package errs

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Codes shared by several engines. An engine adds its own codes beside
// these, but never redefines one of them under another spelling.
const (
	Usage            = "usage"             // the call itself is wrong
	NotFound         = "not_found"         // the path does not exist
	PermissionDenied = "permission_denied" // the file cannot be opened for reading
	NotRegular       = "not_regular"       // a directory, FIFO, socket or device
	NotUTF8          = "not_utf8"          // invalid UTF-8 where text is required
	Read             = "read"              // any other I/O error reading
	Write            = "write"             // an I/O error writing output
	Outside          = "outside_workspace" // the path leaves the confinement root
	Changed          = "changed"           // the file changed while it was read
	TooLarge         = "too_large"         // an input exceeds a fixed bound
	Cancelled        = "cancelled"         // the context was cancelled (signal, client)
	Incomplete       = "output_incomplete" // a budget cut the result; what fits was delivered
	// PendingEdit starts the warning line of a command that only reads
	// and shows files of an edit that an interrupted commit left half
	// done: not a failure, the command exits as it would.
	PendingEdit = "pending_edit"
)

// Exit statuses of the conventions most commands follow. A command with
// other statuses (rowkit review) sets Exit on its errors.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// Error is a failure with a stable code.
type Error struct {
	Code string // stable machine code, e.g. not_found or E_CONFIG
	Msg  string // one line of explanation
	Hint string // optional: what to do next
	Exit int    // optional exit status; 0 means the convention (see ExitCode)
}

func (e *Error) Error() string {
	s := e.Code + ": " + e.Msg
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return strings.ReplaceAll(s, "\n", " ")
}

// New returns an *Error with code and message msg, taken literally.
func New(code, msg string) *Error { return &Error{Code: code, Msg: msg} }

// Errorf returns an *Error with code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// WithHint sets the next step to take and returns e.
func (e *Error) WithHint(hint string) *Error { e.Hint = hint; return e }

// WithExit sets the exit status and returns e.
func (e *Error) WithExit(status int) *Error { e.Exit = status; return e }

// Usagef returns a usage error.
func Usagef(format string, args ...any) *Error { return Errorf(Usage, format, args...) }

// IncompleteTokens is the error of a result cut short by token admission
// at limit tokens; what fit has been delivered.
func IncompleteTokens(limit int) *Error {
	return Errorf(Incomplete, "%s-token limit reached", Thousands(limit))
}

// IncompleteBytes is the error of a result cut short by a byte ceiling of
// limit bytes on the whole output; what fit has been delivered.
func IncompleteBytes(limit int) *Error {
	return Errorf(Incomplete, "%s-byte output limit reached", Thousands(limit))
}

// Thousands writes n with a comma between groups of three digits, as
// rowkit's messages write sizes and counts.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Name returns a file name for a message: as it is when every character is
// printable, Go-quoted otherwise, so that a name holding an escape sequence
// or invalid UTF-8 cannot rewrite the terminal that shows the message.
func Name(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) && r != ' ' {
			return strconv.Quote(s)
		}
	}
	return s
}

// As returns the *Error in err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Code returns the code of the *Error in err's chain, or "" when there is
// none.
func Code(err error) string {
	if e, ok := As(err); ok {
		return e.Code
	}
	return ""
}

// Is reports whether err carries code.
func Is(err error, code string) bool { return err != nil && Code(err) == code }

// ExitCode is the exit status for err: 0 for nil; the error's own Exit when
// set; 2 for a usage error; 1 for anything else, coded or not.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	e, ok := As(err)
	switch {
	case !ok:
		return ExitFailure
	case e.Exit != 0:
		return e.Exit
	case e.Code == Usage:
		return ExitUsage
	}
	return ExitFailure
}
