package review

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/proc"
)

// pinned are blanked on every git call, whatever the repository says. They
// have fixed names, so they need no prior read of the configuration (no gap
// between check and use), and rowkit needs neither: fsmonitor is only a
// speed hint and diff.external only produces diff bodies.
var pinned = []string{"-c", "core.fsmonitor=", "-c", "diff.external="}

// gitEnvKeys are the only variables git inherits. Everything else — GIT_DIR,
// GIT_INDEX_FILE, GIT_WORK_TREE, GIT_CONFIG_*, tokens, credentials — stays
// behind, so the caller's environment cannot redirect or widen a call.
var gitEnvKeys = []string{"PATH", "HOME", "XDG_CONFIG_HOME", "TMPDIR"}

// gitFixedEnv is set on every call.
var gitFixedEnv = []string{
	"LC_ALL=C", "LANG=C", "LANGUAGE=C", // stable messages, which are matched below
	"GIT_OPTIONAL_LOCKS=0",  // never rewrite the index: inspection writes nothing
	"GIT_TERMINAL_PROMPT=0", // never wait for a person
	"GIT_PAGER=cat", "PAGER=cat",
}

// maxGitOutput bounds what one git call may write before it is stopped
// (a variable so that tests can lower it).
var maxGitOutput = 256 << 20

// maxGitStderr is what is kept of git's complaints.
const maxGitStderr = 64 << 10

// killGrace is how long a stopped group has between SIGTERM and SIGKILL.
var killGrace = proc.DefaultGrace

// git runs git for one inspection: always in the repository's directory,
// with the pinned keys and the blanked repository keys, an allowlisted
// environment, its own process group and a timeout (package proc).
type git struct {
	dir     string
	blanked []string // "-c", "key=" pairs from the config audit
	timeout time.Duration
	env     []string // the whole environment of every call (gitEnvKeys, gitFixedEnv)
	calls   atomic.Int64
}

// gitResult is what one git call produced.
type gitResult struct {
	out    []byte
	stderr string
	exit   int // -1 when git did not exit normally
}

// run runs git ARGS and returns its output. A non-zero exit is not an error
// here (callers decide what it means); failing to run, output past
// maxGitOutput, a timeout and a cancelled ctx are.
func (g *git) run(ctx context.Context, args ...string) (gitResult, error) {
	argv := make([]string, 0, 3+len(pinned)+len(g.blanked)+len(args))
	argv = append(argv, "-C", g.dir, "--no-pager")
	argv = append(argv, pinned...)
	argv = append(argv, g.blanked...)
	argv = append(argv, args...)
	// Output past the bound stops git at once rather than draining it.
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	out := &stopping{limit: proc.Limit{Max: maxGitOutput}, stop: stop}
	stderr := &proc.Limit{Max: maxGitStderr}
	g.calls.Add(1)
	res, err := proc.Run(runCtx, proc.Spec{
		Path: "git", Args: argv, Dir: g.dir, Env: g.env,
		Stdout: out, Stderr: stderr, Timeout: g.timeout, Grace: killGrace,
	})
	r := gitResult{out: out.limit.Bytes(), stderr: string(stderr.Bytes()), exit: res.Exit}
	switch {
	case errors.Is(err, proc.ErrNotFound):
		return r, errorf(CodeGitFailed, "git is not installed or not on PATH", "install git")
	case err != nil:
		return r, errorf(CodeGitFailed, fmt.Sprintf("running git %s: %v", args[0], err), "")
	case res.TimedOut:
		return r, errorf(CodeGitTimeout, fmt.Sprintf("git %s took longer than %v", args[0], g.timeout), "inspect a smaller repository or raise the git timeout")
	case out.limit.Over():
		return r, errorf(CodeGitFailed, fmt.Sprintf("git %s wrote more than %d bytes", args[0], maxGitOutput), "")
	case ctx.Err() != nil:
		return r, errorf(errs.Cancelled, fmt.Sprintf("the inspection was interrupted while git %s ran", args[0]), "")
	case res.Exit < 0:
		return r, errorf(CodeGitFailed, fmt.Sprintf("git %s was ended by %s", args[0], res.Signal), "")
	}
	return r, nil
}

// stopping is a proc.Limit that stops the process when it is passed.
type stopping struct {
	limit proc.Limit
	stop  func()
}

func (s *stopping) Write(p []byte) (int, error) {
	n, err := s.limit.Write(p)
	if err != nil {
		s.stop()
	}
	return n, err
}

// must runs git and turns a non-zero exit into a CodeGitFailed error
// quoting git's first line of complaint.
func (g *git) must(ctx context.Context, args ...string) ([]byte, error) {
	res, err := g.run(ctx, args...)
	if err != nil {
		return nil, err
	}
	if res.exit != 0 {
		return nil, gitFailure(args[0], res)
	}
	return res.out, nil
}

func gitFailure(sub string, res gitResult) error {
	return errorf(CodeGitFailed, fmt.Sprintf("git %s exited %d: %s", sub, res.exit, firstLine(res.stderr)), "")
}

// firstLine is the first non-empty line of git's stderr, without "fatal: ".
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l != "" {
			l = strings.TrimPrefix(l, "fatal: ")
			l = strings.TrimPrefix(l, "error: ")
			if len(l) > 300 {
				l = l[:300] + "..."
			}
			return strings.ToValidUTF8(l, "?")
		}
	}
	return "(no message)"
}
