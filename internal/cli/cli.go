// Package cli owns the conventions every rowkit command follows: how it is
// found (by subcommand or by the name it was invoked under), how it reports
// errors, and which exit code each outcome gets.
//
// A command returns an error value (an *errs.Error, or one wrapping it);
// Exec turns it into one stderr line and an exit code, the one place where
// a command's outcome becomes an exit status (errs.ExitCode):
//
//	0  success (including an empty result)
//	1  the command ran and failed, or its output is incomplete
//	2  usage error: the command line itself is wrong
//	N  whatever status the error carries (rowkit review's 3, 4 and 70)
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/rows"
)

// Exit documents one exit status of a command: `rowkit help NAME`, its
// page in docs/commands and the exit-code table of docs/exit-codes.md are
// all made from it, so they cannot disagree.
type Exit struct {
	Status int
	When   string // what ends this way, with the error codes it carries
}

// Env is everything a command may touch of the world it runs in. A command
// reads no process-global state (the working directory, the environment,
// signals), so that several can run at once in one process, each in its
// own directory (cli.Call, the router's hpatch carrier); main fills an Env
// from the process (and owns signals and process tuning).
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer

	// Dir is the working directory, absolute. A relative path a command
	// is given is taken relative to it and reported as given. Empty: the
	// directory is unknown (the process's was removed); relative paths
	// are then left to the operating system.
	Dir string

	// LookupEnv finds an environment variable, as os.LookupEnv does for
	// the process. Nil is an empty environment.
	LookupEnv func(key string) (string, bool)

	// Environ lists the whole environment, KEY=VALUE, for a command that
	// hands all of it on (the shell); the variables LookupEnv finds. Nil
	// is an empty environment. A function, so that a command that does
	// not need the list does not pay for it.
	Environ func() []string

	// Executable runs this binary again, as rowkit ("/proc/self/exe" from
	// main), for a command that starts rowkit in a process of its own
	// (the shell's guardian) or links to it (the shell's commands, to the
	// file it resolves to). Empty (an embedder, a test whose binary is not
	// rowkit): the command does without.
	Executable string

	// OutputBytes bounds what a verified-row command writes to stdout and
	// stderr together (rows, diagnostic and continuation), for a caller
	// that shows both as one text under a byte limit; 0 is no bound. A
	// command may set it in Run before it writes (its --max-output, the
	// bound of the agent whose shell runs it); Exec bounds the diagnostic
	// by what is left of it then.
	OutputBytes int

	// Name is the name the command was invoked under (hpatch, rowkit
	// patch), which starts its diagnostics; Exec sets it.
	Name string
}

// Path is the name under which the command opens p: p relative to Dir.
// It is never cleaned, so "link/../x" stays what the system makes of it,
// and it is never shown: messages name p as given.
func (e *Env) Path(p string) string {
	if e.Dir == "" || p == "" || filepath.IsAbs(p) {
		return p
	}
	return e.Dir + "/" + p
}

// WorkDir is Dir, or a coded error when it is unknown.
func (e *Env) WorkDir() (string, error) {
	if e.Dir == "" {
		return "", errs.Errorf(errs.Read, "cannot determine the current directory (was it removed?)")
	}
	return e.Dir, nil
}

// Budget is the admission rule of a verified-row command run in e: the
// token rule, and OutputBytes as its byte ceiling with room kept for the
// line that names a stopped result ("NAME: output incomplete: ..."), so
// that stdout and stderr together stay within the bound.
func (e *Env) Budget() rows.Budget {
	b := rows.DefaultBudget
	if e.OutputBytes > 0 {
		b.MaxBytes = e.OutputBytes
		b.Reserve = max(len(e.line(b.Stopped(true))), len(e.line(b.Stopped(false))))
	}
	return b
}

// line is err as the command's stderr lines (Lines).
func (e *Env) line(err error) string { return Lines(e.Name, err) }

// Signal is the cause main gives a command's context when one of the
// command's Signals arrives (context.Cause), so that the command can tell
// which: the shell exits 128 + its number.
type Signal struct{ os.Signal }

func (s Signal) Error() string { return s.Signal.String() + " signal received" }

// Command is one rowkit command.
type Command struct {
	Name    string   // subcommand name: rowkit NAME
	Aliases []string // names the binary answers to as argv[0], e.g. hread
	Usage   string   // one line: NAME ARGS
	Summary string   // one line for the command table
	Help    string   // the rest of `rowkit help NAME`: the contract
	Exits   []Exit   // every exit status the command can end with

	// HelpMore, when set, is the end of Help, made when help is shown:
	// text built from a table (hgrep's option policy) that no other use
	// of the command needs, so that no process builds it at start-up.
	HelpMore func() string

	// Run does the work. Its error decides the exit code (errs.ExitCode).
	Run func(ctx context.Context, env *Env, args []string) error

	// Fail, when set, reports a failure itself and returns the exit code,
	// for commands whose failures are a document on stdout.
	Fail func(env *Env, err error) int

	// Signals are the signals that cancel the command's context instead
	// of ending the process, when the command is the process: main
	// installs them (a command never does; in a shell the shell decides).
	// None leaves every signal its default action.
	Signals []os.Signal
	// GCPercent, when not 0, is the garbage collector's target main sets
	// for the command as the process, unless GOGC is set.
	GCPercent int
}

// Exec runs c with args and returns its exit code, reporting a failure as
// one line "NAME: CODE: MESSAGE" on stderr. name is the name c was invoked
// under, so diagnostics read as the user typed the command.
//
// A Run that returns ErrHelp (from Parse: -h or --help) gets the answer
// every command gives: its help, as `rowkit help NAME` prints it, on
// stdout, and exit 0.
func (c *Command) Exec(ctx context.Context, env *Env, name string, args []string) int {
	e := *env
	e.Name = name
	env = &e
	// Both streams count against the one bound: the diagnostic gets the
	// room the output left. Run may set the bound itself (OutputBytes):
	// from its --max-output, or the agent whose shell runs it.
	out := new(atomic.Int64)
	env.Stdout = &counting{w: env.Stdout, n: out}
	env.Stderr = &counting{w: env.Stderr, n: out}
	err := c.Run(ctx, env, args)
	if err == nil {
		return errs.ExitOK
	}
	if errors.Is(err, ErrHelp) {
		return written(env, name, func(w io.Writer) { writeHelp(w, c) })
	}
	if c.Fail != nil {
		return c.Fail(env, err)
	}
	line := env.line(err)
	if env.OutputBytes > 0 {
		line = clampLine(line, env.OutputBytes-int(out.Load()))
	}
	if out.Load() > 0 {
		// The diagnostic follows the output: an agent that reads the
		// two pipes apart sees it last only once it has read the output.
		Drained(File(env.Stdout), File(env.Stderr))
	}
	io.WriteString(env.Stderr, line)
	return errs.ExitCode(err)
}

// counting counts the bytes written through it into n, which the two
// streams share.
type counting struct {
	w io.Writer
	n *atomic.Int64
}

func (c *counting) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// Unwrap is the writer counted: a command that hands its stream to a
// program of its own (the shell's bash) finds the file under it.
func (c *counting) Unwrap() io.Writer { return c.w }

// File is the file under w (a command's stream, however wrapped), or nil
// when w writes elsewhere.
func File(w io.Writer) *os.File {
	for {
		switch x := w.(type) {
		case *os.File:
			return x
		case interface{ Unwrap() io.Writer }:
			w = x.Unwrap()
		default:
			return nil
		}
	}
}

// clampLine cuts line, which ends in LF, to at most room bytes on a rune
// boundary, marking the cut with "...": a message too long for what an
// output bound left (ripgrep's, naming many paths) still ends the output
// within it.
func clampLine(line string, room int) string {
	const mark = "...\n"
	switch {
	case len(line) <= room:
		return line
	case room < len(mark):
		return ""
	}
	cut := room - len(mark)
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	return line[:cut] + mark
}

// Diagnostic is err as one line of text, without the command's name: for an
// incomplete result the wording agents know from REQ-READ-001 ("output
// incomplete: ..."), for any other error "CODE: MESSAGE".
func Diagnostic(err error) string {
	msg := err.Error()
	if e, ok := errs.As(err); ok && msg == e.Error() {
		if e.Code == errs.Incomplete {
			msg = "output incomplete: " + e.Msg
		} else if c := errs.Snake(e.Code); c != e.Code {
			// A seed's spelling stays in the seed's JSON; a line is read
			// by people and scripts that branch on one dialect.
			w := *e
			w.Code = c
			msg = w.Error()
		}
	}
	return escapeControls(strings.ReplaceAll(msg, "\n", " "))
}

// Lines is err as a command's stderr: "NAME: CODE: MESSAGE" and, when the
// error says what to do next, that on a line of its own, "NAME: hint:
// HINT", as age writes its error: and hint: lines; a script matches the
// first line alone, a person reads the second as the next step.
func Lines(name string, err error) string {
	e, ok := errs.As(err)
	if !ok || e.Hint == "" || err.Error() != e.Error() {
		return name + ": " + Diagnostic(err) + "\n"
	}
	w := *e
	w.Hint = ""
	return name + ": " + Diagnostic(&w) + "\n" + name + ": hint: " + escapeControls(strings.ReplaceAll(e.Hint, "\n", " ")) + "\n"
}

// escapeControls writes every control character but TAB as a Go escape:
// messages carry names from the command line and the file system, and a raw
// ESC or CR in one would drive the user's terminal.
func escapeControls(s string) string {
	if !strings.ContainsFunc(s, isEscaped) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !isEscaped(r):
			b.WriteRune(r)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

func isEscaped(r rune) bool { return r != '\t' && unicode.IsControl(r) }
