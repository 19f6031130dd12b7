// Package cli owns the conventions every rowkit command follows: how it is
// found (by subcommand or by the name it was invoked under), how it reports
// errors, and which exit code each outcome gets.
//
// A command returns an error value; Run turns it into one stderr line and
// an exit code, so each command decides its exit codes in one place:
//
//	0  success (including an empty result)
//	1  the command ran and failed, or its output is incomplete
//	2  usage error: the command line itself is wrong
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Stable error codes shared by several commands. Commands add their own.
const (
	CodeUsage      = "usage"
	CodeIncomplete = "output_incomplete"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// Error is a failure with a stable machine code and one line of explanation.
type Error struct {
	Code string
	Msg  string
}

func (e *Error) Error() string {
	if e.Code == CodeIncomplete {
		// The wording agents already know from REQ-READ-001.
		return "output incomplete: " + e.Msg
	}
	return e.Code + ": " + e.Msg
}

// Errorf returns an *Error with the given code.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Usagef returns a usage error.
func Usagef(format string, args ...any) *Error {
	return Errorf(CodeUsage, format, args...)
}

// Incomplete is the error of a result cut short by token admission.
func Incomplete() *Error {
	return &Error{Code: CodeIncomplete, Msg: "15,000-token limit reached"}
}

// Code returns err's stable code, or "" when err carries none.
func Code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// ExitCode maps an error to the exit code of the conventions above.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case Code(err) == CodeUsage:
		return ExitUsage
	default:
		return ExitFailure
	}
}

// Env is what a command may touch of the process it runs in.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Command is one rowkit command.
type Command struct {
	Name    string   // subcommand name: rowkit NAME
	Aliases []string // names the binary answers to as argv[0], e.g. hread
	Usage   string   // one line: NAME ARGS
	Summary string   // one line for the command table
	Help    string   // the rest of `rowkit help NAME`: contract and exit codes

	// Run does the work. Its error decides the exit code (ExitCode).
	Run func(ctx context.Context, env *Env, args []string) error

	// Fail, when set, reports a failure itself and returns the exit code,
	// for commands whose failures are a document on stdout.
	Fail func(env *Env, err error) int
}

// Exec runs c with args and returns its exit code, reporting a failure as
// one line "NAME: CODE: MESSAGE" on stderr. name is the name c was invoked
// under, so diagnostics read as the user typed the command.
func (c *Command) Exec(ctx context.Context, env *Env, name string, args []string) int {
	err := c.Run(ctx, env, args)
	if err == nil {
		return ExitOK
	}
	if c.Fail != nil {
		return c.Fail(env, err)
	}
	fmt.Fprintf(env.Stderr, "%s: %s\n", name, strings.ReplaceAll(err.Error(), "\n", " "))
	return ExitCode(err)
}
