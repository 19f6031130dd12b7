package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/proc"
	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/shell"
)

const shellUsage = "rowkit shell [--max-output BYTES] (-c SCRIPT | FILE | -)"

// maxShellScript bounds a script read from a file or stdin.
const maxShellScript = 16 << 20

// Shell is rowkit shell: a bash script in which hread, hgrep, inspect_file
// and hpatch are private commands.
var Shell = &cli.Command{
	Name:    "shell",
	Usage:   shellUsage,
	Summary: "run a bash script in which hread, hgrep, inspect_file and hpatch run in-process",
	Help: `Runs a bash script: -c SCRIPT, the script in FILE (relative to the current
directory), or - for a script on stdin (its commands then read /dev/null).
The interpreter is mvdan.cc/sh, which parses bash fully and runs it with its
own builtins, functions and cd, in the caller's environment.

hread, hgrep, inspect_file and hpatch (and rowkit hread, rowkit grep, rowkit
inspect, rowkit patch) are private commands: they run inside rowkit, with
the script's streams, current directory and exported variables, and their
exit status is $?. They take part in pipes, redirections, $(...), heredocs
(hpatch <<'EOF'), &&, ||, set -e and functions; a function of the same name
wins, command hread reaches the private one, and ./hread is a program. A
panic in one is exit 70 with one line, and the script goes on.

Every other command is a program found on the script's PATH from its
current directory, run in its own process group: stopping it (a signal to
the shell, the end of the script) sends SIGTERM to the group and SIGKILL
two seconds later, and when it exits the rest of its group is killed, so a
grandchild holding a pipe cannot hang the script. A command that is not
found is status 127, one that cannot run 126, as in bash; a file without a
#! line runs as a script of this shell (private commands included).

Nothing outlives the call: background commands still running when the
script ends are stopped and named in one line; setsid -f detaches on
purpose (give it its own output: setsid -f CMD >LOG 2>&1). A guardian
process stops the script's programs even when the shell's process group is
killed with SIGKILL (as Codex does).

--max-output BYTES (at least 512) merges stdout and stderr into stdout, in
the order they were written, within BYTES: the first lines are written as
they come, the last ones are kept, and one note between them says how many
bytes and lines were left out; no line is ever cut. A private command whose
output goes straight there gets the room left as its byte budget, so its
verified rows are a whole prefix ending with its "output incomplete" line;
in a pipe or a file it keeps the 15,000-token rule.

Dialect limits: no job control (jobs, fg, bg, disown), $! is a job number
for wait (not a process id), ${PIPESTATUS[@]} is empty, kill runs the kill
program, and shopt and set -o are partial. It is not an interactive shell:
a program reading from a terminal is a background job there and is stopped
(SIGTTIN); give it its input from a file or a pipe.
`,
	Exits: []cli.Exit{
		{Status: 0, When: "the script succeeded: its last command (or exit) returned 0; the shell's status is the script's, whatever it is, except as below"},
		{Status: 1, When: "the script's status 1 (a command failed, set -e stopped it)"},
		{Status: 2, When: "usage (no script, -c and a FILE, a FILE that cannot be read, a bound under 512), or the script does not parse (shell: script:LINE:COL: MESSAGE); or the script's status 2"},
		{Status: 70, When: "internal error (the interpreter failed); or the script's status 70 (its last command a private command that panicked)"},
		{Status: 126, When: "the script's status: its last command could not run (not executable, a directory), as in bash"},
		{Status: 127, When: "the script's status: its last command was not found, as in bash"},
		{Status: 129, When: "the shell got SIGHUP (128 + 1) and stopped what it had started"},
		{Status: 130, When: "the shell got SIGINT (128 + 2) and stopped what it had started"},
		{Status: 143, When: "the shell got SIGTERM (128 + 15), or its caller cancelled it, and stopped what it had started"},
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
	name, stdin := "script", env.Stdin
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
		src, stdin = string(b), nil // the script's commands read /dev/null
	case !haveSrc:
		name = operands[0]
		f, err := os.Open(env.Path(name))
		if err != nil {
			return errs.Usagef("cannot read the script %s: %v", name, regfile.Cause(err))
		}
		b, err := readScript(f, name)
		f.Close()
		if err != nil {
			return err
		}
		src = string(b)
	}
	code := RunShell(ctx, env, name, src, stdin, maxOutput)
	if code != 0 {
		return shellExit(code)
	}
	return nil
}

func readScript(r io.Reader, name string) ([]byte, error) {
	if r == nil {
		r = strings.NewReader("")
	}
	b, err := io.ReadAll(io.LimitReader(r, maxShellScript+1))
	switch {
	case err != nil:
		return nil, errs.Usagef("cannot read the script %s: %v", name, regfile.Cause(err))
	case len(b) > maxShellScript:
		return nil, errs.Usagef("the script %s is larger than %d bytes", name, maxShellScript)
	}
	return b, nil
}

// RunShell runs the bash script src (named name in a syntax error) in
// env's directory and environment, with the private commands, and returns
// its exit status. Its guardian is env.Executable run as rowkit shell
// --guardian; without one (an embedder, a test) it runs none. stdin is what the script's commands read (nil: none).
// With maxOutput > 0, stdout and stderr are merged on env.Stdout within
// maxOutput bytes (at least shell.MinOutput), syntax errors included;
// without it they are env's two streams. A cancelled ctx (a signal to
// main) stops the script and everything it started: the status is then
// 128 + the signal (SIGTERM's when ctx names none).
func RunShell(ctx context.Context, env *cli.Env, name, src string, stdin io.Reader, maxOutput int) int {
	stderr := env.Stderr
	if maxOutput > 0 {
		stderr = env.Stdout
	}
	script, err := shell.Parse([]byte(src), name)
	if err != nil {
		fmt.Fprintf(stderr, "shell: %s\n", err)
		return errs.ExitUsage
	}
	dir, err := env.WorkDir()
	if err != nil {
		fmt.Fprintf(stderr, "shell: %s\n", cli.Diagnostic(err))
		return shell.StatusInternal
	}
	var environ []string
	if env.Environ != nil {
		environ = env.Environ()
	}
	cfg := shell.Config{
		Dir: dir, Environ: environ, Stdin: stdin,
		Stdout: env.Stdout, Stderr: env.Stderr, MaxOutput: maxOutput,
		Private: private,
	}
	if env.Executable != "" {
		cfg.Guardian = &shell.Program{Path: env.Executable, Args: []string{"rowkit", "shell", "--guardian"}}
	}
	res := shell.Run(ctx, script, cfg)
	if ctx.Err() != nil {
		var sig cli.Signal
		if errors.As(context.Cause(ctx), &sig) {
			if n, ok := sig.Signal.(syscall.Signal); ok {
				return 128 + int(n)
			}
		}
		return 128 + int(syscall.SIGTERM)
	}
	return res.Status
}

func failShell(env *cli.Env, err error) int {
	if code, ok := err.(shellExit); ok {
		return int(code)
	}
	fmt.Fprintf(env.Stderr, "%s: %s\n", env.Name, cli.Diagnostic(err))
	return errs.ExitCode(err)
}

// privateCommands are the commands a script runs in-process, by their
// shell names and as rowkit subcommands.
var privateCommands = []*cli.Command{Hread, Grep, Inspect, Patch}

// private returns the private command args names, or nil.
func private(args []string) shell.Command {
	if !isPrivate(args) {
		return nil
	}
	return func(ctx context.Context, c *shell.Call) int {
		env := &cli.Env{
			Stdin: c.Stdin, Stdout: c.Stdout, Stderr: c.Stderr, Dir: c.Dir,
			LookupEnv: lookupIn(c.Environ), Environ: func() []string { return c.Environ },
			OutputBytes: c.OutputBytes,
		}
		return cli.Main(ctx, env, c.Args, privateCommands)
	}
}

// isPrivate reports whether args names a private command: by its shell
// name (hread), or as a rowkit subcommand (rowkit hread, rowkit grep).
func isPrivate(args []string) bool {
	for _, c := range privateCommands {
		if args[0] == c.Aliases[0] || args[0] == "rowkit" && len(args) > 1 && args[1] == c.Name {
			return true
		}
	}
	return false
}

// lookupIn finds a variable in environ, as the program would.
func lookupIn(environ []string) func(string) (string, bool) {
	return func(key string) (string, bool) {
		for i := len(environ) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(environ[i], key+"="); ok {
				return v, true
			}
		}
		return "", false
	}
}
