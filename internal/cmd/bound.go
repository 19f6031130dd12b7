package cmd

import (
	"strconv"
	"strings"

	"github.com/rowkit/rowkit/internal/agent"
	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/spool"
)

// An agent's shell tool hands its model a command's output (stdout and
// stderr together) whole only up to a bound of its own; above it Codex
// cuts the middle out and Claude Code shows a saved file's 2 KB preview,
// or cuts the middle of a failed command's output. So the verified-row
// commands (hread, hgrep, inspect_file, hpatch's reports, rowkit read)
// bound their output by the token rule and, when they can tell the agent
// whose shell runs them, by its bound. The figures are the clients',
// measured with the real clients (internal/agenttest pins them:
// TestCodex, TestCodexFallback, TestClaude).
const (
	// Codex 0.169 passes 40,000 bytes of a command's output whole for a
	// model it has metadata for, 10,000 for any other (agent.CodexModel
	// finds the model). It reads stdout and stderr in 8,192-byte chunks,
	// each from its own pipe, and shows them in the order it got them:
	// the diagnostic after the rows waits until Codex has read them
	// (cli.Drained), so that it comes last however many chunks they take.

	// claudeShellBytes: Claude Code 2.1.328's Bash passes 30,000 bytes of
	// a command that exits 0 whole.
	claudeShellBytes = 28_800
	// claudeShellFailBytes: and 11,012 characters of one that does not.
	// An incomplete hread or hgrep, or a rejected hpatch, exits 1.
	claudeShellFailBytes = 10_500
)

// MaxOutputEnv names the variable that bounds the output of the
// verified-row commands for an agent rowkit does not recognise (or to
// override the bound it chose): a number of bytes, 0 for none; empty is
// as unset.
const MaxOutputEnv = "ROWKIT_MAX_OUTPUT"

// maxOutputOption is --max-output BYTES, which every verified-row command
// takes: the bound for this run, whatever the environment says.
var maxOutputOption = cli.Option{Long: []string{"max-output"}, Value: true}

// maxOutputHelp documents --max-output in each command's help.
const maxOutputHelp = `  --max-output BYTES  bound stdout and stderr together at BYTES (0: no byte
                      bound), for an agent whose shell shows only so much of
                      a command's output; the default comes from
                      ROWKIT_MAX_OUTPUT, else from the agent whose shell runs
                      the command (Codex 40,000, or 10,000 for a model it
                      has no metadata for; Claude Code 28,800, and 10,500
                      for an output that exits 1), else none
`

// notGiven is a --max-output that was not given.
const notGiven = -1

// parseMaxOutput reads BYTES of --max-output (or of ROWKIT_MAX_OUTPUT,
// named by what).
func parseMaxOutput(what, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || strings.TrimSpace(v) != v || strings.HasPrefix(v, "+") {
		return 0, errs.Usagef("%s %q is not a number of bytes (0 for no byte bound)", what, v)
	}
	return n, nil
}

// outputBound is what of a command's output its caller shows whole: ok
// bytes of stdout and stderr together when it exits 0, fail when it exits
// otherwise; 0 for no byte bound.
type outputBound struct {
	ok, fail int
}

// boundOf decides the output bound of a command run in env, the first of:
// its --max-output (flag, notGiven when absent); the bound its caller set
// (env.OutputBytes: a caller running it in-process, the hpatch carrier);
// ROWKIT_MAX_OUTPUT (rowkit shell sets it for its script's commands); the
// agent whose shell runs it, told by the environment that agent's shell
// sets (Claude Code: CLAUDECODE=1 or AI_AGENT=claude-code_...; Codex:
// CODEX_THREAD_ID, CODEX_VERSION, and the session's model from its file).
// A terminal has none of these: the token rule alone.
func boundOf(env *cli.Env, flag int) (outputBound, error) {
	if flag != notGiven {
		return outputBound{flag, flag}, nil
	}
	if env.OutputBytes > 0 {
		return outputBound{env.OutputBytes, env.OutputBytes}, nil
	}
	if n, err := envMaxOutput(env); err != nil || n != notGiven {
		return outputBound{n, n}, err
	}
	look := func(k string) string { v, _ := lookupEnv(env, k); return v }
	var b outputBound
	narrow := func(ok, fail int) {
		if b.ok == 0 || ok < b.ok {
			b.ok = ok
		}
		if b.fail == 0 || fail < b.fail {
			b.fail = fail
		}
	}
	if look("CLAUDECODE") == "1" || strings.HasPrefix(look("AI_AGENT"), "claude-code") {
		narrow(claudeShellBytes, claudeShellFailBytes)
	}
	if look("CODEX_THREAD_ID") != "" || look("CODEX_VERSION") != "" {
		n := agent.CodexFallbackShellBytes
		if m, ok := agent.CodexModel(func(k string) (string, bool) { return lookupEnv(env, k) }); ok && agent.CodexKnows(m) {
			n = agent.CodexShellBytes
		}
		narrow(n, n)
	}
	return b, nil
}

// envMaxOutput is the bound ROWKIT_MAX_OUTPUT sets, notGiven when it is
// unset or empty.
func envMaxOutput(env *cli.Env) (int, error) {
	v, _ := lookupEnv(env, MaxOutputEnv)
	if v == "" {
		return notGiven, nil
	}
	return parseMaxOutput(MaxOutputEnv, v)
}

func lookupEnv(env *cli.Env, k string) (string, bool) {
	if env.LookupEnv == nil {
		return "", false
	}
	return env.LookupEnv(k)
}

// bounded sets env's output bound for a command that exits 0 and returns
// the bound: the one place a verified-row command decides it.
func bounded(env *cli.Env, flag int) (outputBound, error) {
	b, err := boundOf(env, flag)
	if err != nil {
		return b, err
	}
	env.OutputBytes = b.ok
	return b, nil
}

// openKept opens the output kept as id in the user's store of kept
// outputs (internal/spool).
func openKept(env *cli.Env, id string) (*spool.Item, error) {
	s, err := openSpool(env)
	if err != nil {
		return nil, err
	}
	return s.Open(id)
}

// openSpool opens the user's store of kept outputs under env's TMPDIR.
func openSpool(env *cli.Env) (*spool.Store, error) {
	return spool.Open(spool.Base(func(k string) (string, bool) { return lookupEnv(env, k) }), spool.Options{})
}

// keptRows keeps the rows a bound leaves out of a row-producing command's
// output in the user's store of kept outputs, whole (rows.Spill), up to
// spool.MaxRows bytes: the continuation reads them on without running the
// search again.
type keptRows struct {
	env *cli.Env
	w   *spool.RowsWriter
}

// open starts keeping: a rows.Spill calls it at the first row left out.
func (k *keptRows) open() (rows.Keeper, error) {
	s, err := openSpool(k.env)
	if err != nil {
		return nil, err
	}
	if k.w, err = s.CreateRows(); err != nil {
		return nil, err
	}
	return k.w, nil
}

func (k *keptRows) abort() {
	if k.w != nil {
		k.w.Abort()
	}
}

// commit makes the kept rows readable and returns the error of the cut
// result: stopped's message, the continuation that cont makes of the kept
// output's name (or why it was not kept), and other, the error that ended
// the search after the rows left out, when there was one.
func (k *keptRows) commit(stopped *errs.Error, other error, cont func(ref string) string) error {
	msg := stopped.Msg
	if id, err := k.w.Commit(); err != nil {
		msg += spool.NotKept(err, len(cont(spool.Prefix+strings.Repeat("x", spool.IDLen))))
	} else {
		msg += cont(spool.Prefix + id)
	}
	if other != nil && !errs.Is(other, errs.Incomplete) {
		msg += "; and " + cli.Diagnostic(other)
	}
	return errs.New(errs.Incomplete, msg)
}

// keptContinuation returns the end of the diagnostic of a result whose
// rows are kept: the command that reads them on from row n of ref, as
// name (hgrep, or rowkit grep) would have it.
func keptContinuation(name string) func(ref string, n int) string {
	hread := "hread"
	if strings.HasPrefix(name, "rowkit ") {
		hread = "rowkit hread"
	}
	return func(ref string, n int) string {
		return "; continue with: " + hread + " " + ref + " " + strconv.Itoa(n) + ":"
	}
}
