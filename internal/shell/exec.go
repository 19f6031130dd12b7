package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/rowkit/rowkit/internal/proc"
)

// session is one script's run: its private commands, the programs it
// started that still run, its guardian.
type session struct {
	cfg   Config
	grace time.Duration
	out   *Output // the bounded output; nil without a bound
	jobs  jobs
	guard guard
}

func newSession(cfg Config) *session {
	grace := cfg.Grace
	if grace <= 0 {
		grace = proc.DefaultGrace
	}
	s := &session{cfg: cfg, grace: grace}
	s.guard.prog = cfg.Guardian
	return s
}

// internal is the result of a script the shell could not run.
func (s *session) internal(err error) Result {
	w := s.cfg.Stderr
	if s.out != nil {
		w = s.out
		defer s.out.Close()
	}
	fmt.Fprintf(w, "shell: internal error: %s\n", oneLine(err.Error()))
	return Result{Status: StatusInternal, Err: err}
}

// killName is what the call handler renames kill to: the interpreter
// knows kill as a builtin it does not implement, and would answer
// "unsupported builtin"; under this name the exec handler runs the kill
// program instead.
const killName = "\x00kill"

// call is the interpreter's call handler: it sends kill to the program,
// unless the script defines a function of that name.
func (s *session) call(ownKill bool) interp.CallHandlerFunc {
	return func(ctx context.Context, args []string) ([]string, error) {
		if args[0] == "kill" && !ownKill {
			return append([]string{killName}, args[1:]...), nil
		}
		return args, nil
	}
}

// middleware is the interpreter's exec handler: it runs every command that
// is not a function or a builtin, as a private command or as a program.
func (s *session) middleware(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
	return s.exec
}

func (s *session) exec(ctx context.Context, args []string) error {
	hc := interp.HandlerCtx(ctx)
	if args[0] == killName {
		return s.program(ctx, hc, append([]string{"kill"}, args[1:]...))
	}
	if s.cfg.Private != nil {
		if c := s.cfg.Private(args); c != nil {
			return s.private(ctx, hc, c, args)
		}
	}
	return s.program(ctx, hc, args)
}

// status is a command's exit status as the interpreter takes it.
func status(code int) error {
	if code == 0 {
		return nil
	}
	return interp.ExitStatus(uint8(code))
}

// diag writes one line of the shell's own about a command, as bash does:
// "shell: line N: MESSAGE".
func diag(hc interp.HandlerContext, msg string) {
	if line := hc.Pos.Line(); line > 0 {
		fmt.Fprintf(hc.Stderr, "shell: line %d: %s\n", line, oneLine(msg))
		return
	}
	fmt.Fprintf(hc.Stderr, "shell: %s\n", oneLine(msg))
}

// environ is the environment a command gets: the exported variables.
func environ(env expand.Environ) []string {
	vals := map[string]string{}
	var order []string
	for name, vr := range env.Each {
		if !vr.IsSet() || !vr.Exported || vr.Kind != expand.String {
			delete(vals, name)
			continue
		}
		if _, ok := vals[name]; !ok {
			order = append(order, name)
		}
		vals[name] = vr.String()
	}
	list := make([]string, 0, len(vals))
	for _, name := range order {
		if v, ok := vals[name]; ok {
			list = append(list, name+"="+v)
			delete(vals, name) // a name that came back twice is listed once
		}
	}
	return list
}

// private runs a private command in this process.
func (s *session) private(ctx context.Context, hc interp.HandlerContext, c Command, args []string) error {
	j, ok := s.jobs.enter(args)
	if !ok {
		return ctx.Err()
	}
	defer s.jobs.leave(j)
	call := &Call{Args: args, Dir: hc.Dir, Environ: environ(hc.Env), Stdin: hc.Stdin}
	if call.Stdin == nil {
		call.Stdin = strings.NewReader("")
	}
	if s.out != nil && hc.Stdout == io.Writer(s.out) {
		call.OutputBytes = s.out.Room()
	}
	out := &pipeOut{w: hc.Stdout}
	call.Stdout, call.Stderr = out, &afterPipe{w: hc.Stderr, out: out}
	code := protect(ctx, c, call, hc.Stderr)
	if out.broken.Load() {
		// What a program writing into a pipe its reader closed dies of,
		// silently: `hread big | head -1` is not an error.
		return interp.ExitStatus(128 + uint8(syscall.SIGPIPE))
	}
	return status(code)
}

// protect runs c, turning a panic into one line and StatusInternal: the
// shell goes on.
func protect(ctx context.Context, c Command, call *Call, stderr io.Writer) (code int) {
	defer func() {
		if v := recover(); v != nil {
			fmt.Fprintf(stderr, "%s: internal error: panic: %s\n", oneLine(call.Args[0]), oneLine(fmt.Sprint(v)))
			code = StatusInternal
		}
	}()
	return c(ctx, call)
}

// pipeOut is a private command's stdout: it notes a write into a pipe
// whose reader is gone.
type pipeOut struct {
	w      io.Writer
	broken atomic.Bool
}

func (p *pipeOut) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		p.broken.Store(true)
	}
	return n, err
}

// afterPipe is a private command's stderr: silent once its stdout's
// reader is gone, as the program it stands for would be, dead of SIGPIPE.
type afterPipe struct {
	w   io.Writer
	out *pipeOut
}

func (a *afterPipe) Write(b []byte) (int, error) {
	if a.out.broken.Load() {
		return len(b), nil
	}
	return a.w.Write(b)
}

// program runs args as a program through proc, in its own process group.
func (s *session) program(ctx context.Context, hc interp.HandlerContext, args []string) error {
	name := args[0]
	path, err := interp.LookPathDir(hc.Dir, hc.Env, name)
	if name == "" || err != nil {
		code, msg := notRunnable(hc, name)
		diag(hc, msg)
		return interp.ExitStatus(code)
	}
	j, ok := s.jobs.enter(args)
	if !ok {
		return ctx.Err()
	}
	defer s.jobs.leave(j)
	if err := s.guard.start(); err != nil {
		diag(hc, "the guardian did not start ("+err.Error()+"): programs left running if the shell is killed will not be stopped")
	}
	spec := proc.Spec{
		Path: path, Argv0: name, Args: args[1:], Dir: hc.Dir, Env: environ(hc.Env),
		Stdin: hc.Stdin, Stdout: hc.Stdout, Stderr: hc.Stderr, Grace: s.grace,
	}
	p, err := start(ctx, spec)
	if errors.Is(err, syscall.ENOEXEC) {
		return s.script(ctx, hc, path, args, spec.Env)
	}
	if err != nil {
		code, msg := startFailure(name, err)
		diag(hc, msg)
		return interp.ExitStatus(code)
	}
	s.guard.add(p.Pid())
	res := p.Wait()
	s.guard.remove(p.Pid())
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return status(res.Code())
}

// start starts the process, again for a short while when exec finds the
// file busy: a file the script has just written may still be open for
// writing in a child another goroutine forked meanwhile (go.dev/issue/22315).
func start(ctx context.Context, spec proc.Spec) (*proc.Process, error) {
	p, err := proc.Start(ctx, spec)
	for delay := time.Millisecond; errors.Is(err, syscall.ETXTBSY) && delay < 300*time.Millisecond; delay *= 2 {
		time.Sleep(delay)
		p, err = proc.Start(ctx, spec)
	}
	return p, err
}

// notRunnable is the status and message bash gives a command it found no
// program for: 127 when there is none, 126 when there is one it may not
// run.
func notRunnable(hc interp.HandlerContext, name string) (uint8, string) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(hc.Dir, p)
		}
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return 127, name + ": No such file or directory"
		case err != nil:
			return 126, name + ": " + errText(err)
		case fi.IsDir():
			return 126, name + ": Is a directory"
		}
		return 126, name + ": Permission denied"
	}
	if name != "" {
		// bash remembers a file on PATH it may not execute, and names it
		// when nothing else is found.
		for _, dir := range filepath.SplitList(hc.Env.Get("PATH").String()) {
			p := filepath.Join(dir, name)
			if !filepath.IsAbs(p) {
				p = filepath.Join(hc.Dir, p)
			}
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				return 126, filepath.Join(dir, name) + ": Permission denied"
			}
		}
	}
	return 127, name + ": command not found"
}

// startFailure is the status and message for a program exec refused.
func startFailure(name string, err error) (uint8, string) {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return 126, name + ": " + err.Error()
	}
	switch errno {
	case syscall.ENOENT:
		// The file is there (it was found): its interpreter is not.
		return 127, name + ": cannot execute: required file not found"
	case syscall.EACCES:
		return 126, name + ": Permission denied"
	case syscall.E2BIG:
		return 126, name + ": Argument list too long"
	}
	return 126, name + ": cannot execute: " + errText(errno)
}

// errText is an error as bash words it: the system's message, capitalised.
func errText(err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err.Error()
	}
	s := errno.Error()
	if s != "" {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	return s
}

// maxScript bounds a file run as a script (ENOEXEC): a larger one is not
// a script.
const maxScript = 16 << 20

// script runs a file that exec refused with ENOEXEC (no #! line) as a
// script, as bash does, in a new interpreter with this one's handlers: the
// private commands stay available, and what it starts is this script's.
// env is the environment the program would have had.
func (s *session) script(ctx context.Context, hc interp.HandlerContext, path string, args, env []string) error {
	name := args[0]
	f, err := os.Open(path)
	if err != nil {
		diag(hc, name+": "+errText(err))
		return interp.ExitStatus(126)
	}
	src, err := io.ReadAll(io.LimitReader(f, maxScript+1))
	f.Close()
	switch {
	case err != nil:
		diag(hc, name+": "+errText(err))
		return interp.ExitStatus(126)
	case len(src) > maxScript:
		diag(hc, name+": cannot execute: not a script (over 16 MiB)")
		return interp.ExitStatus(126)
	}
	// bash's test for a binary file: a NUL in the first line.
	if first, _, _ := bytes.Cut(src, []byte("\n")); bytes.IndexByte(first, 0) >= 0 {
		diag(hc, name+": cannot execute binary file")
		return interp.ExitStatus(126)
	}
	sc, err := Parse(src, name)
	if err != nil {
		fmt.Fprintf(hc.Stderr, "shell: %s\n", oneLine(err.Error()))
		return interp.ExitStatus(2)
	}
	r, err := s.runner(sc, hc.Dir, env, hc.Stdin, hc.Stdout, hc.Stderr)
	if err != nil {
		diag(hc, name+": "+err.Error())
		return interp.ExitStatus(126)
	}
	r.Params = args[1:]
	err = r.Run(ctx, sc.file)
	if err != nil && !isExit(err) {
		return err
	}
	return status(exitStatus(err))
}

// runner is an interpreter that runs sc with this session's handlers.
func (s *session) runner(sc *Script, dir string, env []string, stdin io.Reader, stdout, stderr io.Writer) (*interp.Runner, error) {
	return interp.New(
		interp.Dir(dir),
		interp.Env(expand.ListEnviron(env...)),
		interp.StdIO(stdin, stdout, stderr),
		interp.CallHandler(s.call(sc.ownKill)),
		interp.ExecHandlers(s.middleware),
	)
}

// jobs are the commands of a script that are running: after the script
// ends, those are its background jobs.
type jobs struct {
	mu      sync.Mutex
	closed  bool
	seq     int
	running map[*job]struct{}
	wg      sync.WaitGroup
}

type job struct {
	seq  int
	args []string
}

// enter records a command about to run; false when the script has ended
// and nothing may start any more.
func (j *jobs) enter(args []string) (*job, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil, false
	}
	if j.running == nil {
		j.running = map[*job]struct{}{}
	}
	j.seq++
	jb := &job{seq: j.seq, args: args}
	j.running[jb] = struct{}{}
	j.wg.Add(1)
	return jb, true
}

func (j *jobs) leave(jb *job) {
	j.mu.Lock()
	delete(j.running, jb)
	j.mu.Unlock()
	j.wg.Done()
}

// close lets nothing more start and names what still runs, in the order
// it started.
func (j *jobs) close() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.closed = true
	var left []*job
	for jb := range j.running {
		left = append(left, jb)
	}
	slices.SortFunc(left, func(a, b *job) int { return a.seq - b.seq })
	names := make([]string, len(left))
	for i, jb := range left {
		names[i] = commandLine(jb.args)
	}
	return names
}

// commandLine is args as one short line, quoted as bash would read it.
func commandLine(args []string) string {
	words := make([]string, len(args))
	for i, a := range args {
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil {
			q = oneLine(a)
		}
		words[i] = q
	}
	s := strings.Join(words, " ")
	if len(s) > 80 {
		cut := 77
		for cut > 0 && s[cut]&0xc0 == 0x80 {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

// end stops what the script left running: it lets nothing new start,
// cancels the script's context (each program's group gets SIGTERM, then
// SIGKILL after the grace period; private commands see ctx done) and waits
// for them, at most the grace period and a little more. It returns the
// names of the commands that were still running.
func (s *session) end(cancel context.CancelFunc) []string {
	names := s.jobs.close()
	cancel()
	done := make(chan struct{})
	go func() { s.jobs.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2*s.grace + time.Second):
		// A private command that does not heed ctx (blocked reading a
		// stdin that never ends): it is abandoned, and the guardian
		// stops any program still listed.
	}
	return names
}
