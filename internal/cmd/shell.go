package cmd

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/proc"
	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/shell"
	"github.com/rowkit/rowkit/internal/spool"
)

const shellUsage = "rowkit shell [--max-output BYTES] (-c SCRIPT | FILE | -)"

// maxShellScript bounds a script run with bash -c: Linux's limit on one
// argument (MAX_ARG_STRLEN, 32 pages with the final NUL).
const maxShellScript = 128<<10 - 1

// Shell is rowkit shell: a script run by the system's bash, with rowkit's
// commands private to it.
var Shell = &cli.Command{
	Name:    "shell",
	Usage:   shellUsage,
	Summary: "run a bash script with the system's bash, rowkit's commands first on its PATH",
	Help: `Runs a bash script with the system's bash, as Codex runs its model's commands:
bash -lc SCRIPT for -c SCRIPT and for - (a script on stdin, whose commands
then read /dev/null), bash -l FILE for a FILE; a login shell, so the user's
profile sets PATH as for Codex's own commands. bash leads a session of its
own, in the current directory and the caller's environment; what it prints,
and its exit status, are its own.

hread, hgrep, inspect_file and hpatch (every shell name rowkit link makes)
and rowkit itself are on the script's PATH, first, once the profile has run:
links to this rowkit binary in a directory of the user's own
($TMPDIR/rowkit-UID, made safely by the first shell that needs it), on no
other PATH. A function or alias of the script wins over them, as in bash;
the programs the script runs find them too (xargs hread).

Nothing outlives the call: what the script leaves running in its process
group when it ends (a background command, a server a helper started) is
stopped, SIGTERM and SIGKILL two seconds later, and named in one line;
setsid -f detaches on purpose (give it its own output: setsid -f CMD >LOG
2>&1). A guardian process stops them even when the shell's process group is
killed with SIGKILL (as Codex does). A signal to the shell (SIGINT, SIGTERM,
SIGHUP) stops the script and all it started; the shell exits 128 + n.

--max-output BYTES (at least 512) merges stdout and stderr into stdout, in
the order they were written, within BYTES: the first lines are written as
they come, the last ones are kept, and one note between them says how many
bytes and lines were left out; no line is ever cut. The script's commands
get the room before that note in ROWKIT_MAX_OUTPUT, so that hread, hgrep,
inspect_file and hpatch end a longer result with their whole rows and
"output incomplete" line, before the note.
`,
	Exits: []cli.Exit{
		{Status: 0, When: "the script succeeded: its last command (or exit) returned 0; the shell's status is bash's, whatever it is, except as below"},
		{Status: 1, When: "the script's status 1 (a command failed, set -e stopped it)"},
		{Status: 2, When: "usage (no script, -c and a FILE, a bound under 512, a script on stdin or in -c over 131,071 bytes, one argument's limit); or bash's 2 (the script does not parse, a builtin misused)"},
		{Status: 70, When: "the shell could not run bash, or could not make the directory of rowkit's commands (private_dir); or the script's status 70"},
		{Status: 126, When: "bash's: the script's last command could not run (not executable, a directory)"},
		{Status: 127, When: "bash is not on PATH (bash_missing: install it); or bash's: the script's last command was not found, or the FILE does not exist"},
		{Status: 129, When: "the shell got SIGHUP (128 + 1) and stopped what the script had started"},
		{Status: 130, When: "the shell got SIGINT (128 + 2) and stopped what the script had started; or bash died of SIGINT"},
		{Status: 143, When: "the shell got SIGTERM (128 + 15), or its caller cancelled it, and stopped what the script had started; or bash died of SIGTERM"},
	},
	Run:     runShell,
	Fail:    failShell,
	Signals: []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP},
}

// shellOptions are rowkit shell's options; --guardian is the hidden mode
// the shell starts its guardian in.
var shellOptions = []cli.Option{
	{Long: []string{"command"}, Short: 'c', Value: true},
	{Long: []string{"max-output"}, Value: true},
	{Long: []string{"guardian"}},
}

// shellExit is the status of a script that has run.
type shellExit int

func (e shellExit) Error() string { return "exit status " + strconv.Itoa(int(e)) }

func runShell(ctx context.Context, env *cli.Env, args []string) error {
	var src, bound string
	var haveSrc, haveBound, guardian bool
	operands, err := cli.Parse("shell", shellOptions, args, func(a cli.Arg) error {
		switch a.Long[0] {
		case "command":
			src, haveSrc = a.Value, true
		case "max-output":
			bound, haveBound = a.Value, true
		case "guardian":
			guardian = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	if guardian {
		shell.Guard(env.Stdin, proc.DefaultGrace)
		return nil
	}
	maxOutput := 0
	if haveBound {
		n, err := strconv.Atoi(bound)
		if err != nil || n < shell.MinOutput {
			return errs.Usagef("--max-output %q is not a number of bytes of at least %d; usage: %s", bound, shell.MinOutput, shellUsage)
		}
		maxOutput = n
	}
	var script shell.Script
	stdin := env.Stdin
	switch {
	case haveSrc && len(operands) > 0:
		return errs.Usagef("-c SCRIPT and a script file %q are two scripts; usage: %s", operands[0], shellUsage)
	case !haveSrc && len(operands) == 0:
		return errs.Usagef("no script: give -c SCRIPT, a FILE, or - for stdin; usage: %s", shellUsage)
	case len(operands) > 1:
		return errs.Usagef("one script at a time, got %d operands; usage: %s", len(operands), shellUsage)
	case !haveSrc && operands[0] == "-":
		b, err := readScript(env.Stdin, "-")
		if err != nil {
			return err
		}
		script.Command, stdin = string(b), nil // the script's commands read /dev/null
	case !haveSrc:
		script.File = operands[0]
	default:
		script.Command = src
	}
	if len(script.Command) > maxShellScript {
		return errs.Usagef("the script has more than %s bytes, the most bash -c takes (Linux's limit on one argument): save it in a file and run rowkit shell FILE",
			errs.Thousands(maxShellScript))
	}
	code, err := RunShell(ctx, env, script, stdin, maxOutput)
	if err != nil {
		return err
	}
	if code != 0 {
		return shellExit(code)
	}
	return nil
}

func readScript(r io.Reader, name string) ([]byte, error) {
	if r == nil {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r, maxShellScript+1))
	if err != nil {
		return nil, errs.Usagef("cannot read the script %s: %v", name, regfile.Cause(err))
	}
	return b, nil
}

// Codes of rowkit shell.
const (
	codeBashMissing = "bash_missing"
	codePrivateDir  = "private_dir"
)

// RunShell runs script with bash in env's directory and environment, with
// rowkit's commands first on its PATH, and returns its exit status; or an
// error, before anything ran, when there is no bash or no directory for
// the commands. Its guardian and its commands are env.Executable; without
// one (an embedder, a test whose binary is not rowkit) it has neither.
// stdin is what the script reads (nil: /dev/null). With maxOutput > 0,
// stdout and stderr are merged on env.Stdout within maxOutput bytes (at
// least shell.MinOutput); without it they are env's two streams, handed to
// bash as they are. A cancelled ctx (a signal to main) stops the script
// and everything it started: the status is then 128 + the signal
// (SIGTERM's when ctx names none).
func RunShell(ctx context.Context, env *cli.Env, script shell.Script, stdin io.Reader, maxOutput int) (int, error) {
	dir, err := env.WorkDir()
	if err != nil {
		return 0, err
	}
	var environ []string
	if env.Environ != nil {
		environ = env.Environ()
	}
	cfg := shell.Config{
		Dir: dir, Environ: environ, Stdin: stdin, Stdout: stream(env.Stdout), Stderr: stream(env.Stderr),
		MaxOutput: maxOutput, BoundVar: MaxOutputEnv,
		Keep: func() (*spool.Store, error) { return openSpool(env) },
	}
	if cfg.Bash, err = shell.LookBash(environ); err != nil {
		path, _ := lookupEnv(env, "PATH")
		return 0, errs.Errorf(codeBashMissing, "bash is not on PATH (%s): rowkit shell runs scripts with the system's bash; install it (Debian, Ubuntu: apt-get install bash; Fedora: dnf install bash; Alpine: apk add bash)", path).WithExit(127)
	}
	if env.Executable != "" {
		exe, err := filepath.EvalSymlinks(env.Executable)
		if err != nil {
			return 0, errs.Errorf(codePrivateDir, "cannot find the running rowkit binary (%s): %v", env.Executable, regfile.Cause(err)).WithExit(shell.StatusInternal)
		}
		tmp, _ := lookupEnv(env, "TMPDIR")
		if tmp == "" {
			tmp = "/tmp"
		}
		if cfg.Private, err = shell.Links(tmp, exe, ShellNames()); err != nil {
			return 0, errs.New(codePrivateDir, err.Error()).WithExit(shell.StatusInternal)
		}
		cfg.Guardian = &shell.Program{Path: env.Executable, Args: []string{"rowkit", "shell", "--guardian"}}
	}
	res := shell.Run(ctx, script, cfg)
	if ctx.Err() != nil {
		var sig cli.Signal
		if errors.As(context.Cause(ctx), &sig) {
			if n, ok := sig.Signal.(syscall.Signal); ok {
				return 128 + int(n), nil
			}
		}
		return 128 + int(syscall.SIGTERM), nil
	}
	return res.Status, nil
}

// ShellNames are the names of rowkit's commands on the PATH of a script of
// rowkit shell: rowkit, and every shell name of the command table (All),
// as rowkit link makes them.
func ShellNames() []string { return shellNames }

// shellNames is made once All is (all.go's init): a command's Run that
// referred to All would make All's initialization a cycle.
var shellNames []string

// stream is a command's stream as bash should get it: the file under it
// (a terminal stays a terminal), else the writer.
func stream(w io.Writer) io.Writer {
	if f := cli.File(w); f != nil {
		return f
	}
	return w
}

func failShell(env *cli.Env, err error) int {
	if code, ok := err.(shellExit); ok {
		return int(code)
	}
	io.WriteString(env.Stderr, cli.Lines(env.Name, err))
	return errs.ExitCode(err)
}
