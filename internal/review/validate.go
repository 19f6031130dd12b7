package review

import (
	"context"
	"fmt"
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

var validationFixedEnv = []string{"CI=1", "NO_COLOR=1", "TERM=dumb"}

// validationEnv is the whole environment of a validation, from the caller's.
func validationEnv(lookup func(string) (string, bool)) []string {
	return proc.Env(lookup, validationEnvKeys, validationFixedEnv...)
}

// Progress is what a progress callback learns: validation Index (0-based)
// of Total has started (Done false) or ended (Done true, with its Status).
type Progress struct {
	Index, Total int
	ID           string
	Done         bool
	Status       string // when Done
}

// runValidations runs the planned validations one at a time (they share the
// work tree) within the total budgets of time and output, and returns their
// outcomes and what their capture left out.
func runValidations(ctx context.Context, o Options, dir string) ([]Validation, []Truncated) {
	deadline := time.Now().Add(o.TotalBudget)
	out := make([]Validation, 0, len(o.Validations))
	var cut []Truncated
	left := o.MaxTotalOutputBytes // 0: no total bound
	for i, p := range o.Validations {
		var v Validation
		timeLeft := time.Until(deadline)
		switch {
		case ctx.Err() != nil:
			v = Validation{ID: p.ID, Argv: p.Argv, Status: StatusSkipped, Reason: "rowkit was interrupted before it started"}
		case timeLeft <= 0:
			v = Validation{ID: p.ID, Argv: p.Argv, Status: StatusSkipped, Reason: "the total validation budget ran out before it started"}
		default:
			if o.Progress != nil {
				o.Progress(Progress{Index: i, Total: len(o.Validations), ID: p.ID})
			}
			timeout, reason := p.Timeout, fmt.Sprintf("its timeout of %v ran out", p.Timeout)
			if timeLeft < timeout {
				timeout, reason = timeLeft, "the total validation budget ran out"
			}
			max := o.MaxOutputBytes
			if o.MaxTotalOutputBytes > 0 {
				// Each stream may take half of what is left, so the two
				// together never pass the total.
				max = min(max, left/2)
			}
			v = runOne(ctx, p, dir, validationEnv(o.LookupEnv), timeout, max)
			left -= len(v.Stdout.Text) + len(v.Stderr.Text)
			if v.Status == StatusTimedOut {
				v.Reason = reason
				if ctx.Err() != nil {
					v.Reason = "rowkit was interrupted"
				}
			}
			if o.Progress != nil {
				o.Progress(Progress{Index: i, Total: len(o.Validations), ID: p.ID, Done: true, Status: v.Status})
			}
		}
		for _, s := range []struct {
			name string
			st   *Stream
		}{{"stdout", &v.Stdout}, {"stderr", &v.Stderr}} {
			if s.st.BytesDropped > 0 {
				cut = append(cut, Truncated{Field: fmt.Sprintf("validations[%d].%s", i, s.name), BytesRemoved: s.st.BytesDropped})
			}
		}
		out = append(out, v)
	}
	return out, cut
}

// runOne runs one command through package proc: argv directly (no shell),
// in dir, stdin at /dev/null, in its own process group, with the
// allowlisted environment. On timeout or interrupt the whole group gets
// SIGTERM, then SIGKILL after killGrace; whatever is left of the group when
// the command ends is killed too, so no grandchild outlives the call. Both
// streams are drained to the end into bounded captures.
func runOne(ctx context.Context, p Planned, dir string, env []string, timeout time.Duration, maxBytes int) Validation {
	v := Validation{ID: p.ID, Argv: p.Argv}
	stdout, stderr := proc.NewCapture(maxBytes), proc.NewCapture(maxBytes)
	start := time.Now()
	res, err := proc.Run(ctx, proc.Spec{
		Path: p.Argv[0], Args: p.Argv[1:], Dir: dir,
		Env:    env,
		Stdout: stdout, Stderr: stderr, Timeout: timeout, Grace: killGrace,
	})
	if err != nil {
		v.Status, v.Reason = StatusSpawnError, err.Error()
		v.DurationMs = time.Since(start).Milliseconds()
		return v
	}
	v.Stdout, v.Stderr = stream(stdout), stream(stderr)
	switch {
	case res.TimedOut || res.Stopped:
		v.Status = StatusTimedOut
	case res.Exit == 0:
		v.Status = StatusPassed
	default:
		v.Status = StatusFailed
	}
	if res.Exit >= 0 {
		code := res.Exit
		v.ExitCode = &code
	}
	v.Signal = res.Signal
	v.DurationMs = res.Duration.Milliseconds()
	return v
}

func stream(c *proc.Capture) Stream {
	text, dropped := c.Result()
	return Stream{Text: text, BytesTotal: c.Total(), BytesDropped: dropped}
}
