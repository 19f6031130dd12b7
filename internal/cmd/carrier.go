package cmd

import (
	"bytes"
	"context"
	"io"
	"os"
	"strconv"
	"syscall"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/router"
	"github.com/rowkit/rowkit/internal/shell"
)

const carrierUsage = "rowkit carrier [--max-output BYTES] (hpatch | shell)"

// minCarrierOutput is the smallest bound a carrier accepts: room for its
// note and a few rows, as the shell's own bound needs.
const minCarrierOutput = shell.MinOutput

// Carrier is rowkit carrier: the command a routed call runs as (see
// rowkit router).
var Carrier = &cli.Command{
	Name:    "carrier",
	Usage:   carrierUsage,
	Summary: "run a routed hpatch or shell call's script from stdin (what the router's carriers run)",
	Help: `rowkit router hands the model's hpatch and shell calls to Codex as
exec_command calls whose command feeds the model's exact script to this
command through a quoted heredoc. It reads the script from stdin (at most
131,072 bytes, which must end with the heredoc's line feed; exactly one is
stripped, and a NUL byte is refused) and prints everything on stdout, within
BYTES (default 9,600: below the point where Codex cuts the middle out of a
command's output).

hpatch applies the script in the current directory as hpatch does, with its
report and diagnostics in one stream; a longer report keeps its first whole
lines and ends with one line saying what was left out. The exit status is
hpatch's.

shell runs the script as rowkit shell --max-output BYTES -c does (see rowkit
help shell): the system's bash as a login shell, as Codex runs its model's
commands, with hread, hgrep, inspect_file and hpatch first on its PATH, its
commands reading /dev/null, stdout and stderr merged within BYTES (the first
lines, one note saying what was left out, the last lines; no line cut), and
the room before the note in ROWKIT_MAX_OUTPUT, so that a verified-row
command's rows end whole with its "output incomplete" line. Nothing the
script left running in its process group outlives it, also when Codex kills
the carrier's process group. The exit status is bash's.

options:
  --max-output BYTES  bound the output at BYTES (at least 512)
`,
	Exits: []cli.Exit{
		{Status: 0, When: "hpatch: applied, or nothing to do; shell: the script's status 0 (every other status of the script is the carrier's too, as for rowkit shell)"},
		{Status: 1, When: "hpatch: rejected, nothing written (its reasons and repair rows on stdout); shell: the script's status 1"},
		{Status: 2, When: "usage, or the carrier's protocol broken: no final line feed, a NUL byte, more than 131,072 bytes (carrier_protocol); shell: bash's 2 (the script does not parse, a builtin misused)"},
		{Status: 3, When: "hpatch: the commit failed and was rolled back (hpatch's status)"},
		{Status: 70, When: "shell: bash could not run, or no directory for rowkit's commands (private_dir); or the script's status 70"},
		{Status: 126, When: "shell: bash's: the script's last command could not run"},
		{Status: 127, When: "shell: bash is not on PATH (bash_missing: install it); or bash's: the script's last command was not found"},
		{Status: 129, When: "shell: the carrier got SIGHUP (128 + 1) and stopped what the script had started"},
		{Status: 130, When: "shell: the carrier got SIGINT (128 + 2) and stopped what the script had started; or bash died of SIGINT"},
		{Status: 143, When: "shell: the carrier got SIGTERM (128 + 15) and stopped what the script had started; or bash died of SIGTERM"},
	},
	// The shell stops what it started on these; hpatch, cancelled before
	// its commit, writes nothing (after it, the journal settles the rest).
	Signals: []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP},
	Run:     runCarrier,
	Fail:    failCarrier,
}

// carrierProtocol is the code of a script that did not arrive as a
// carrier sends it.
const carrierProtocol = "carrier_protocol"

// carrierExit is the status of a carried command that has reported itself.
type carrierExit int

func (e carrierExit) Error() string { return "exit " + strconv.Itoa(int(e)) }

func runCarrier(ctx context.Context, env *cli.Env, args []string) error {
	bound := router.OutputBytes
	var tool string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--max-output":
			if i+1 >= len(args) {
				return errs.Usagef("--max-output needs a number of bytes; usage: %s", carrierUsage)
			}
			i++
			n, err := strconv.Atoi(args[i])
			if err != nil || n < minCarrierOutput {
				return errs.Usagef("--max-output %q is not a number of bytes of at least %d", args[i], minCarrierOutput)
			}
			bound = n
		case tool == "" && (a == router.ToolHpatch || a == router.ToolShell):
			tool = a
		default:
			return errs.Usagef("unexpected argument %q; usage: %s", a, carrierUsage)
		}
	}
	if tool == "" {
		return errs.Usagef("which tool? usage: %s", carrierUsage)
	}
	script, err := io.ReadAll(io.LimitReader(env.Stdin, router.MaxStdinBytes+1))
	if err != nil {
		return errs.Errorf(errs.Read, "reading the script from stdin: %v", regfile.Cause(err))
	}
	switch {
	case len(script) > router.MaxStdinBytes:
		return errs.Errorf(carrierProtocol, "the script is larger than %d bytes; split it into several calls", router.MaxStdinBytes).WithExit(errs.ExitUsage)
	case len(script) == 0 || script[len(script)-1] != '\n':
		return errs.New(carrierProtocol, "the script does not end with the line feed a carrier's heredoc adds; run it through rowkit router's carrier, or hpatch").WithExit(errs.ExitUsage)
	case bytes.IndexByte(script, 0) >= 0:
		return errs.New(carrierProtocol, "the script contains a NUL byte").WithExit(errs.ExitUsage)
	}
	script = script[:len(script)-1]

	if tool == router.ToolShell {
		// The script's own commands read /dev/null: the carrier's stdin
		// held the script.
		code, err := RunShell(ctx, env, shell.Script{Command: string(script)}, nil, bound)
		if err != nil {
			return err
		}
		if code != 0 {
			return carrierExit(code)
		}
		return nil
	}
	// hpatch itself, with its report and its diagnostics in one stream:
	// Codex merges a command's stdout and stderr anyway, and the bound
	// holds for both.
	var out bytes.Buffer
	code := Patch.Exec(ctx, &cli.Env{Stdin: bytes.NewReader(script), Stdout: &out, Stderr: &out,
		Dir: env.Dir, LookupEnv: env.LookupEnv, OutputBytes: bound}, router.ToolHpatch, nil)
	if _, err := env.Stdout.Write(router.Bound(out.Bytes(), bound, router.ToolHpatch)); err != nil {
		return errs.Errorf(errs.Write, "writing the report: %v", regfile.Cause(err))
	}
	if code != 0 {
		return carrierExit(code)
	}
	return nil
}

func failCarrier(env *cli.Env, err error) int {
	if code, ok := err.(carrierExit); ok {
		return int(code)
	}
	io.WriteString(env.Stderr, cli.Lines("rowkit carrier", err))
	return errs.ExitCode(err)
}
