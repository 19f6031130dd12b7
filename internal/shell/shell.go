package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"time"

	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// Script is a parsed bash script.
type Script struct {
	file    *syntax.File
	ownKill bool // it defines a function named kill
}

// SyntaxError is a script that bash would not parse. Its text is
// NAME:LINE:COL: MESSAGE.
type SyntaxError struct{ err error }

func (e *SyntaxError) Error() string { return e.err.Error() }

// Parse parses src as bash. name names the script in a syntax error.
func Parse(src []byte, name string) (*Script, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(bytes.NewReader(src), name)
	if err != nil {
		return nil, &SyntaxError{err}
	}
	return &Script{file: f, ownKill: definesKill(f)}, nil
}

// definesKill reports whether f declares a function named kill, which
// then answers to kill in place of the external one (see Session.call).
func definesKill(f *syntax.File) bool {
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if d, ok := n.(*syntax.FuncDecl); ok && d.Name != nil && d.Name.Value == "kill" {
			found = true
		}
		return !found
	})
	return found
}

// Command is a private command: a Go function the script runs in-process
// under a name, in place of a program. It returns its exit status.
type Command func(ctx context.Context, c *Call) int

// Call is what a private command gets: the interpreter's state where the
// script calls it.
type Call struct {
	Args    []string // Args[0] is the name it was called under
	Dir     string   // the script's current directory
	Environ []string // the exported variables, KEY=VALUE
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	// OutputBytes is the byte budget of a command whose stdout is the
	// shell's bounded output (Config.MaxOutput), so that its result is
	// shown whole; 0 when its output goes elsewhere (a pipe, a file).
	OutputBytes int
}

// Program is how to start a program: its path and its argv (Args[0] is
// the name it sees as argv[0]).
type Program struct {
	Path string
	Args []string
}

// Config is the world a script runs in.
type Config struct {
	Dir     string   // the working directory, absolute
	Environ []string // the environment, KEY=VALUE
	// Stdin is the script's standard input; nil is none (/dev/null).
	Stdin io.Reader
	// Stdout and Stderr are the script's streams; nil discards.
	Stdout, Stderr io.Writer
	// MaxOutput, when positive, merges stdout and stderr into Stdout
	// (Output) within MaxOutput bytes (at least MinOutput).
	MaxOutput int

	// Private returns the private command that runs args in-process, or
	// nil: args then names a program. It is asked only for a name that is
	// not a function or a builtin of the script.
	Private func(args []string) Command

	// Guardian starts the guardian (Guard) in a process of its own, before
	// the first program the script runs; nil runs none, and a caller that
	// SIGKILLs the shell may then leave the script's programs running.
	Guardian *Program

	// Grace is how long a stopped program has between SIGTERM and
	// SIGKILL; 0 is proc.DefaultGrace.
	Grace time.Duration
}

// Result is how a script ended.
type Result struct {
	// Status is the script's exit status: the last command's, or exit's.
	Status int
	// Stopped names the background commands still running at the end of
	// the script, which were stopped.
	Stopped []string
	// Err is why the script did not run to its end: ctx's error when it
	// was cancelled (Status is then StatusStopped), or an internal error
	// (StatusInternal).
	Err error
}

// StatusInternal is the status of a script the shell could not run, and
// of a private command that panicked.
const StatusInternal = 70

// StatusStopped is the status of a script whose context was cancelled:
// what SIGTERM gives (a caller that knows the signal reports 128 + it).
const StatusStopped = 128 + int(syscall.SIGTERM)

// Run runs s in cfg until it ends or ctx is cancelled, and stops whatever
// it left running. Cancelling ctx stops the programs it runs (SIGTERM to
// each process group, SIGKILL after the grace period) before Run returns.
func Run(ctx context.Context, s *Script, cfg Config) Result {
	if cfg.Stdout == nil {
		cfg.Stdout = io.Discard
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	sh := newSession(cfg)
	stdout, stderr := serialized(cfg.Stdout, cfg.Stderr)
	if cfg.MaxOutput > 0 {
		sh.out = NewOutput(cfg.Stdout, cfg.MaxOutput)
		stdout, stderr = sh.out, sh.out
	}
	if cfg.Dir == "" {
		return sh.internal(errors.New("no working directory"))
	}
	stdin := cfg.Stdin
	if stdin == nil {
		null, err := os.Open(os.DevNull)
		if err != nil {
			return sh.internal(fmt.Errorf("opening %s: %w", os.DevNull, err))
		}
		defer null.Close()
		stdin = null
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	r, err := sh.runner(s, cfg.Dir, cfg.Environ, stdin, stdout, stderr)
	if err != nil {
		return sh.internal(err)
	}
	err = r.Run(runCtx, s.file)
	res := Result{Status: exitStatus(err)}
	switch {
	case ctx.Err() != nil:
		res.Status, res.Err = StatusStopped, ctx.Err()
	case err != nil && !isExit(err):
		res.Status, res.Err = StatusInternal, err
		fmt.Fprintf(stderr, "shell: internal error: %s\n", oneLine(err.Error()))
	}
	res.Stopped = sh.end(stop)
	if len(res.Stopped) > 0 && ctx.Err() == nil {
		line := stoppedLine(res.Stopped)
		if sh.out != nil {
			sh.out.Line(line)
		} else {
			fmt.Fprintln(stderr, line)
		}
	}
	sh.guard.close()
	if sh.out != nil {
		sh.out.Close()
	}
	return res
}

// serialized makes the script's streams safe for the writes that come at
// once from background commands, pipeline stages and programs' pipes: a
// file is written to whole by the system, any other writer gets a lock
// (one for both when they are the same writer).
func serialized(stdout, stderr io.Writer) (io.Writer, io.Writer) {
	wrap := func(w io.Writer) io.Writer {
		if _, ok := w.(*os.File); ok || w == nil {
			return w
		}
		return &locked{w: w}
	}
	if _, ok := stdout.(*os.File); !ok && stdout != nil && sameWriter(stdout, stderr) {
		l := wrap(stdout)
		return l, l
	}
	return wrap(stdout), wrap(stderr)
}

// locked is a writer one write at a time. It has no ReadFrom, so that a
// copy into it (from a program's pipe) writes what it read, under the
// lock, rather than reading into the writer's buffer while others write.
type locked struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *locked) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// sameWriter reports whether a and b are the same writer; writers of a
// type that cannot be compared are never the same.
func sameWriter(a, b io.Writer) bool {
	if a == nil || b == nil {
		return false
	}
	t := reflect.TypeOf(a)
	return t == reflect.TypeOf(b) && t.Comparable() && a == b
}

// exitStatus is the status err from the interpreter stands for.
func exitStatus(err error) int {
	var es interp.ExitStatus
	switch {
	case err == nil:
		return 0
	case errors.As(err, &es):
		return int(es)
	}
	return StatusInternal
}

func isExit(err error) bool {
	var es interp.ExitStatus
	return errors.As(err, &es)
}

// stoppedLine names the background commands stopped at the end.
func stoppedLine(names []string) string {
	const most = 5
	shown := names
	if len(shown) > most {
		shown = shown[:most]
	}
	s := fmt.Sprintf("[rowkit shell: stopped %d background %s still running at the end of the script: %s",
		len(names), plural(len(names), "command", "commands"), strings.Join(shown, "; "))
	if len(names) > most {
		s += fmt.Sprintf("; and %d more", len(names)-most)
	}
	return s + "]"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// oneLine is s on one line, its control characters escaped.
func oneLine(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20 && r != '\t' || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
