package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rowkit/rowkit/internal/proc"
	"github.com/rowkit/rowkit/internal/spool"
)

// Script is what bash runs: a script given as text (bash -c) or a file
// bash reads (bash FILE).
type Script struct {
	Command string
	File    string // when not "": relative to Config.Dir
}

// Program is how to start a program: its path and its argv (Args[0] is
// the name it sees as argv[0]).
type Program struct {
	Path string
	Args []string
}

// Config is the world a script runs in.
type Config struct {
	// Bash is the bash that runs the script, an absolute path (LookBash).
	Bash string
	// Dir is the working directory, absolute.
	Dir string
	// Environ is the environment, KEY=VALUE. bash runs as a login shell
	// in it, as Codex runs its model's commands: the profile runs first.
	Environ []string
	// Stdin is the script's standard input; nil is none (/dev/null).
	Stdin io.Reader
	// Stdout and Stderr are the script's streams; nil discards. A file
	// is bash's own (a terminal stays a terminal); any other writer is
	// fed from a pipe.
	Stdout, Stderr io.Writer
	// MaxOutput, when positive, merges stdout and stderr into Stdout
	// (Output) within MaxOutput bytes (at least MinOutput).
	MaxOutput int
	// BoundVar, with MaxOutput, names the variable that gives the
	// script's commands the room of the bounded output's head (Room), so
	// that a command that heeds it (rowkit's ROWKIT_MAX_OUTPUT) shows its
	// whole result before the bound's note.
	BoundVar string
	// Keep, with MaxOutput, opens the store where the whole output is
	// kept when it passes the bound (Output.Keep); nil keeps none.
	Keep func() (*spool.Store, error)

	// Private is a directory of private commands (Links), put first on
	// the script's PATH once its profile has run; "" puts none.
	Private string

	// Guardian starts the guardian (Guard) in a process of its own,
	// before bash; nil runs none, and a caller that SIGKILLs the shell
	// may then leave the script's processes running.
	Guardian *Program

	// Grace is how long a stopped process group has between SIGTERM and
	// SIGKILL; 0 is proc.DefaultGrace.
	Grace time.Duration
}

// Result is how a script ended.
type Result struct {
	// Status is the script's exit status, bash's: its last command's, or
	// exit's; 128 + n when bash died of signal n.
	Status int
	// Stopped names the commands the script left running in its process
	// group, which were stopped.
	Stopped []string
	// Err is why the script did not run to its end: ctx's error when it
	// was cancelled (Status is then StatusStopped), or why bash did not
	// start (StatusInternal).
	Err error
}

// StatusInternal is the status of a script the shell could not run.
const StatusInternal = 70

// StatusStopped is the status of a script whose context was cancelled:
// what SIGTERM gives (a caller that knows the signal reports 128 + it).
const StatusStopped = 128 + int(syscall.SIGTERM)

// ErrNoBash is a PATH without bash.
var ErrNoBash = errors.New("bash is not on PATH")

// LookBash finds bash on the PATH of environ.
func LookBash(environ []string) (string, error) {
	if p, ok := proc.LookPath("bash", environ); ok {
		return p, nil
	}
	return "", ErrNoBash
}

// Run runs s with bash in cfg until it ends or ctx is cancelled, and stops
// what it left running in its process group. Cancelling ctx stops the
// script (SIGTERM to its process group, SIGKILL after the grace period)
// before Run returns.
func Run(ctx context.Context, s Script, cfg Config) Result {
	if cfg.Stdout == nil {
		cfg.Stdout = io.Discard
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	grace := cfg.Grace
	if grace <= 0 {
		grace = proc.DefaultGrace
	}
	env := bashEnviron(cfg)
	var out *Output
	stdout, stderr := cfg.Stdout, cfg.Stderr
	if cfg.MaxOutput > 0 {
		out = NewOutput(cfg.Stdout, cfg.MaxOutput)
		if cfg.Keep != nil {
			out.Keep(cfg.Keep)
		}
		stdout, stderr = out, out
		if cfg.BoundVar != "" {
			env = setenv(env, cfg.BoundVar, strconv.Itoa(out.Room()))
		}
	}
	internal := func(err error) Result {
		fmt.Fprintf(stderr, "shell: internal error: %s\n", oneLine(err.Error()))
		if out != nil {
			out.Close()
		}
		return Result{Status: StatusInternal, Err: err}
	}
	if cfg.Dir == "" {
		return internal(errors.New("no working directory"))
	}
	var st streams
	defer st.abandon()
	in, err := st.input(cfg.Stdin)
	if err != nil {
		return internal(err)
	}
	outf, errf, err := st.outputs(stdout, stderr)
	if err != nil {
		return internal(err)
	}
	var g guard
	g.prog = cfg.Guardian
	if err := g.start(); err != nil {
		fmt.Fprintf(stderr, "shell: the guardian did not start (%s): what the script leaves running is not stopped if the shell is killed\n", oneLine(err.Error()))
	}
	defer g.close()
	args := []string{"-lc", s.Command}
	if s.File != "" {
		args = []string{"-l", "--", s.File} // a FILE named -x is no option
	}
	spec := proc.Spec{
		Path: cfg.Bash, Argv0: "bash", Args: args, Dir: cfg.Dir, Env: env,
		Stdout: outf, Stderr: errf, Grace: grace, Session: true,
	}
	if in != nil {
		spec.Stdin = in
	}
	p, err := proc.Start(ctx, spec)
	st.started()
	if err != nil {
		return internal(fmt.Errorf("cannot run %s: %w", cfg.Bash, err))
	}
	g.add(p.Pid())
	res := p.Wait()
	stopped := endGroup(p.Pid(), append([]string{"bash"}, args...), grace)
	g.remove(p.Pid())
	st.drain(grace)
	r := Result{Status: res.Code()}
	if ctx.Err() != nil {
		r.Status, r.Err = StatusStopped, ctx.Err()
	} else if len(stopped) > 0 {
		r.Stopped = stopped
		if out != nil {
			out.Line(stoppedLine(stopped))
		} else {
			fmt.Fprintln(stderr, stoppedLine(stopped))
		}
	}
	if out != nil {
		out.Close()
	}
	return r
}

// bashEnviron is the environment bash starts in: cfg's, with BASH_ENV
// naming the file that puts the private commands on PATH after the
// profile (the caller's own BASH_ENV handed over in CallerBashEnv).
func bashEnviron(cfg Config) []string {
	env := append([]string(nil), cfg.Environ...)
	if cfg.Private == "" {
		return env
	}
	if v, ok := getenv(env, "BASH_ENV"); ok {
		env = setenv(env, CallerBashEnv, v)
	} else {
		env = unsetenv(env, CallerBashEnv)
	}
	return setenv(env, "BASH_ENV", bashEnvFile(cfg.Private))
}

func getenv(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v, true
		}
	}
	return "", false
}

func unsetenv(env []string, key string) []string {
	out := env[:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}

func setenv(env []string, key, value string) []string {
	return append(unsetenv(env, key), key+"="+value)
}

// streams are bash's standard streams: the caller's files as they are,
// pipes for its other readers and writers.
type streams struct {
	parentEnds []*os.File // the ends bash gets, closed here once it has them
	readEnds   []*os.File // the ends copied from, closed when drained
	copies     sync.WaitGroup
}

// input is bash's stdin for r.
func (s *streams) input(r io.Reader) (*os.File, error) {
	switch f := r.(type) {
	case nil:
		return nil, nil // proc gives /dev/null
	case *os.File:
		return f, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	s.parentEnds = append(s.parentEnds, pr)
	// Not waited for: a script that does not read its input ends all
	// the same, and the write fails once no one holds the read end.
	go func() {
		io.Copy(pw, r)
		pw.Close()
	}()
	return pr, nil
}

// outputs are bash's stdout and stderr for w and e: one pipe for both
// when they are the same writer, so that their order is kept.
func (s *streams) outputs(w, e io.Writer) (*os.File, *os.File, error) {
	of, err := s.output(w)
	if err != nil {
		return nil, nil, err
	}
	if _, file := e.(*os.File); !file && e == w {
		return of, of, nil
	}
	ef, err := s.output(e)
	return of, ef, err
}

func (s *streams) output(w io.Writer) (*os.File, error) {
	if f, ok := w.(*os.File); ok {
		return f, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	s.parentEnds = append(s.parentEnds, pw)
	s.readEnds = append(s.readEnds, pr)
	s.copies.Add(1)
	go func() {
		defer s.copies.Done()
		io.Copy(w, pr)
		io.Copy(io.Discard, pr) // a writer that refused more: keep draining
	}()
	return pw, nil
}

// started closes this process's copies of the ends bash has: the pipes
// then end when bash and what it started are gone.
func (s *streams) started() {
	for _, f := range s.parentEnds {
		f.Close()
	}
	s.parentEnds = nil
}

// drain waits for the copies to reach the end of their pipes, at most d:
// a process that left the group on purpose (setsid -f) may hold one for
// ever, and is then left to write into a pipe no one reads.
func (s *streams) drain(d time.Duration) {
	done := make(chan struct{})
	go func() { s.copies.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		s.abandon()
		<-done
	}
}

func (s *streams) abandon() {
	s.started()
	for _, f := range s.readEnds {
		f.Close()
	}
	s.readEnds = nil
}

// stoppedLine names the commands the script left running, which were
// stopped.
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
