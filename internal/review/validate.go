package review

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/rowkit/rowkit/internal/proc"
)

// Planned is a validation the caller is allowed to run, resolved to argv.
type Planned struct {
	ID      string
	Argv    []string
	Timeout time.Duration
}

// validationEnvKeys are the only variables a validation inherits; tokens,
// cloud credentials and GIT_* stay behind.
var validationEnvKeys = []string{"PATH", "HOME", "LANG", "TMPDIR"}

// killGrace is how long a timed-out group has between SIGTERM and SIGKILL.
var killGrace = 2 * time.Second

func validationEnv() []string {
	env := []string{"CI=1", "NO_COLOR=1", "TERM=dumb"}
	for _, k := range validationEnvKeys {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// runValidations runs the planned validations one at a time (they share the
// work tree) within the total budget, and records their outcomes.
func runValidations(ctx context.Context, o Options, r *Report, dir string) {
	deadline := time.Now().Add(o.TotalBudget)
	r.OK = true
	for i, p := range o.Validations {
		var v Validation
		left := time.Until(deadline)
		switch {
		case ctx.Err() != nil:
			v = Validation{ID: p.ID, Argv: p.Argv, Status: StatusSkipped, Reason: "rowkit was interrupted before it started"}
		case left <= 0:
			v = Validation{ID: p.ID, Argv: p.Argv, Status: StatusSkipped, Reason: "the total validation budget ran out before it started"}
		default:
			timeout, reason := p.Timeout, fmt.Sprintf("its timeout of %v ran out", p.Timeout)
			if left < timeout {
				timeout, reason = left, "the total validation budget ran out"
			}
			v = runOne(ctx, p, dir, timeout, o.MaxOutputBytes)
			if v.Status == StatusTimedOut {
				v.Reason = reason
				if ctx.Err() != nil {
					v.Reason = "rowkit was interrupted"
				}
			}
		}
		for _, s := range []struct {
			name string
			st   *Stream
		}{{"stdout", &v.Stdout}, {"stderr", &v.Stderr}} {
			if s.st.BytesDropped > 0 {
				r.truncate(Truncated{Field: fmt.Sprintf("validations[%d].%s", i, s.name), BytesRemoved: s.st.BytesDropped})
			}
		}
		if v.Status != StatusPassed {
			r.OK = false
		}
		r.Validations = append(r.Validations, v)
	}
}

// runOne runs one command: argv directly (no shell), in dir, stdin at
// /dev/null, in its own process group, with the allowlisted environment.
// On timeout the whole group gets SIGTERM, then SIGKILL after killGrace;
// whatever is left of the group when the command ends is killed too, so
// no grandchild outlives the call. Both pipes are drained to the end.
func runOne(ctx context.Context, p Planned, dir string, timeout time.Duration, maxBytes int) Validation {
	v := Validation{ID: p.ID, Argv: p.Argv}
	start := time.Now()
	spawnErr := func(err error) Validation {
		v.Status, v.Reason = StatusSpawnError, err.Error()
		v.DurationMs = time.Since(start).Milliseconds()
		return v
	}
	cmd := exec.Command(p.Argv[0], p.Argv[1:]...)
	if cmd.Err != nil {
		return spawnErr(cmd.Err)
	}
	cmd.Dir = dir
	cmd.Env = validationEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	outR, outW, err := os.Pipe()
	if err != nil {
		return spawnErr(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return spawnErr(err)
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return spawnErr(err)
	}
	pgid := cmd.Process.Pid
	stdout, stderr := proc.NewCapture(maxBytes), proc.NewCapture(maxBytes)
	var drained sync.WaitGroup
	drained.Add(2)
	go func() { defer drained.Done(); io.Copy(stdout, outR) }()
	go func() { defer drained.Done(); io.Copy(stderr, errR) }()

	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var waitErr error
	timedOut := false
	select {
	case waitErr = <-exited:
	case <-timer.C:
		timedOut = true
	case <-ctx.Done():
		timedOut = true
	}
	if timedOut {
		syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case waitErr = <-exited:
		case <-time.After(killGrace):
			syscall.Kill(-pgid, syscall.SIGKILL)
			waitErr = <-exited
		}
	}
	// The leader is gone; nothing else of its group may stay behind.
	syscall.Kill(-pgid, syscall.SIGKILL)
	done := make(chan struct{})
	go func() { drained.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(killGrace):
		// A process that left the group still holds a pipe: stop reading.
		outR.Close()
		errR.Close()
		<-done
	}
	outR.Close()
	errR.Close()

	v.Stdout = stream(stdout)
	v.Stderr = stream(stderr)
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case timedOut:
		v.Status = StatusTimedOut
	case waitErr == nil:
		v.Status = StatusPassed
	default:
		var ee *exec.ExitError
		if !errors.As(waitErr, &ee) {
			return spawnErr(waitErr)
		}
		v.Status = StatusFailed
	}
	if ws.Signaled() {
		v.Signal = signalName(ws.Signal())
	} else if ws.Exited() {
		code := ws.ExitStatus()
		v.ExitCode = &code
	}
	v.DurationMs = time.Since(start).Milliseconds()
	return v
}

func stream(c *proc.Capture) Stream {
	text, dropped := c.Result()
	return Stream{Text: text, BytesTotal: c.Total(), BytesDropped: dropped}
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	}
	return fmt.Sprintf("signal %d", int(s))
}
