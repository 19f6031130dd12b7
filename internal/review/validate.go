package review

import (
	"context"
	"fmt"
	"time"

	"github.com/rowkit/rowkit/internal/jsonstr"
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
// work tree) within the total time budget, and returns their outcomes and
// what their captured output left out. Each stream is captured within
// MaxOutputBytes; the total output bound is applied once all have run
// (fitOutput), so that a validation that runs late gets the same share as
// one that ran early. At detail summary a validation that passed shows no
// output (its streams keep their byte counts) and takes no share.
func runValidations(ctx context.Context, o Options, dir string) ([]Validation, []Truncated) {
	deadline := time.Now().Add(o.TotalBudget)
	out := make([]Validation, 0, len(o.Validations))
	var captures []*proc.Capture // stdout and stderr of each validation; nil when none ran
	for i, p := range o.Validations {
		var (
			v              Validation
			stdout, stderr *proc.Capture
		)
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
			v, stdout, stderr = runOne(ctx, p, dir, validationEnv(o.LookupEnv), timeout, o.MaxOutputBytes)
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
		if o.Detail == DetailSummary && v.Status == StatusPassed {
			stdout, stderr = nil, nil
			v.Stdout = Stream{BytesTotal: v.Stdout.BytesTotal}
			v.Stderr = Stream{BytesTotal: v.Stderr.BytesTotal}
		}
		captures = append(captures, stdout, stderr)
		out = append(out, v)
	}
	bound := fitOutput(captures, o.MaxOutputBytes, o.MaxTotalOutputBytes)
	var cut []Truncated
	for i := range out {
		v := &out[i]
		for j, s := range []struct {
			name string
			st   *Stream
		}{{"stdout", &v.Stdout}, {"stderr", &v.Stderr}} {
			if c := captures[2*i+j]; c != nil {
				*s.st = stream(c, bound)
			}
			if s.st.BytesDropped > 0 {
				cut = append(cut, Truncated{Field: fmt.Sprintf("validations[%d].%s", i, s.name), BytesRemoved: s.st.BytesDropped})
			}
		}
	}
	return out, cut
}

// fitOutput is the largest bound of each stream, at most perStream, under
// which the kept texts of all captures (nil ones show nothing) take at most
// total bytes together as the JSON report writes them (escapes included,
// quotes not); total 0 is no total bound. A stream that needs less than
// the bound keeps all of it, and the others share what it left.
func fitOutput(captures []*proc.Capture, perStream, total int) int {
	if total <= 0 {
		return perStream
	}
	var buf []byte
	kept := func(bound int) int {
		n := 0
		for _, c := range captures {
			if c != nil {
				text, _ := c.ResultWithin(bound)
				buf = jsonstr.Append(buf[:0], text)
				n += len(buf) - 2
			}
		}
		return n
	}
	lo, hi := 0, perStream // kept(lo) <= total always: a bound of 0 keeps nothing
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if kept(mid) <= total {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// runOne runs one command through package proc: argv directly (no shell),
// in dir, stdin at /dev/null, in its own process group, with the
// allowlisted environment. On timeout or interrupt the whole group gets
// SIGTERM, then SIGKILL after killGrace; whatever is left of the group when
// the command ends is killed too, so no grandchild outlives the call. Both
// streams are drained to the end into bounded captures: the outcome shows
// what they kept, and they are returned too (nil when the command did not
// start) for a caller that bounds them further.
func runOne(ctx context.Context, p Planned, dir string, env []string, timeout time.Duration, maxBytes int) (Validation, *proc.Capture, *proc.Capture) {
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
		return v, nil, nil
	}
	v.Stdout, v.Stderr = stream(stdout, maxBytes), stream(stderr, maxBytes)
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
	return v, stdout, stderr
}

// stream is what c keeps within bound.
func stream(c *proc.Capture, bound int) Stream {
	text, dropped := c.ResultWithin(bound)
	return Stream{Text: text, BytesTotal: c.Total(), BytesDropped: dropped}
}
