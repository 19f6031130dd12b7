package review

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
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

// maxGitOutput bounds what one git call may write before it is stopped.
const maxGitOutput = 256 << 20

// git runs git for one inspection: always in the repository's directory,
// with the pinned keys and the blanked repository keys, an allowlisted
// environment, its own process group and a timeout.
type git struct {
	dir     string
	blanked []string // "-c", "key=" pairs from the config audit
	timeout time.Duration
	calls   atomic.Int64
}

// gitResult is what one git call produced.
type gitResult struct {
	out    []byte
	stderr string
	exit   int // -1 when git did not exit normally
}

func gitEnv() []string {
	env := []string{
		"LC_ALL=C", "LANG=C", "LANGUAGE=C", // stable messages, which are matched below
		"GIT_OPTIONAL_LOCKS=0",  // never rewrite the index: inspection writes nothing
		"GIT_TERMINAL_PROMPT=0", // never wait for a person
		"GIT_PAGER=cat", "PAGER=cat",
	}
	for _, k := range gitEnvKeys {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// run runs git ARGS and returns its output. A non-zero exit is not an error
// here (callers decide what it means); failing to run, output past
// maxGitOutput and a timeout are.
func (g *git) run(ctx context.Context, args ...string) (gitResult, error) {
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	argv := make([]string, 0, 4+len(pinned)+len(g.blanked)+len(args))
	argv = append(argv, "-C", g.dir, "--no-pager")
	argv = append(argv, pinned...)
	argv = append(argv, g.blanked...)
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, "git", argv...)
	cmd.Dir = g.dir
	cmd.Env = gitEnv()
	cmd.Stdin = nil
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// On timeout or interrupt: SIGTERM to the group, SIGKILL after a grace
	// period, and at most WaitDelay more for the pipes.
	var killer *time.Timer
	cmd.Cancel = func() error {
		pgid := cmd.Process.Pid
		killer = time.AfterFunc(killGrace, func() { syscall.Kill(-pgid, syscall.SIGKILL) })
		return syscall.Kill(-pgid, syscall.SIGTERM)
	}
	cmd.WaitDelay = killGrace + time.Second
	out := &capped{max: maxGitOutput}
	stderr := &capped{max: 64 << 10, silent: true}
	cmd.Stdout, cmd.Stderr = out, stderr
	g.calls.Add(1)
	err := cmd.Run()
	if killer != nil {
		// Cancelled: whatever is left of the group goes now, not after the
		// grace period, when its id might name another group.
		killer.Stop()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	res := gitResult{out: out.Bytes(), stderr: stderr.String(), exit: -1}
	if cmd.ProcessState != nil {
		res.exit = cmd.ProcessState.ExitCode()
	}
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return res, errorf(CodeGitTimeout, fmt.Sprintf("git %s took longer than %v", args[0], g.timeout), "inspect a smaller repository or raise --git-timeout")
	case out.over:
		return res, errorf(CodeGitFailed, fmt.Sprintf("git %s wrote more than %d bytes", args[0], maxGitOutput), "")
	case err == nil:
		return res, nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && res.exit >= 0 {
		return res, nil
	}
	if errors.Is(err, exec.ErrNotFound) {
		return res, errorf(CodeGitFailed, "git is not installed or not on PATH", "install git")
	}
	return res, errorf(CodeGitFailed, fmt.Sprintf("running git %s: %v", args[0], err), "")
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

// capped is a buffer that keeps at most max bytes. Past that it refuses
// more, which stops the writer (the pipe closes under it), or, when silent,
// drops the rest while still draining.
type capped struct {
	bytes.Buffer
	max    int
	over   bool
	silent bool
}

func (c *capped) Write(p []byte) (int, error) {
	if c.Len()+len(p) > c.max {
		c.over = true
		if c.silent {
			c.Buffer.Write(p[:c.max-c.Len()])
			return len(p), nil
		}
		return 0, errors.New("output limit reached")
	}
	return c.Buffer.Write(p)
}
