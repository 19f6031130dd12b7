package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/patch"
	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/txn"
)

const maxScriptBytes = 64 << 20

// Patch is hpatch: an HPATCH/2 script applied to the workspace.
var Patch = &cli.Command{
	Name:    "patch",
	Aliases: []string{"hpatch"},
	Usage:   "hpatch [-f FILE] [--dry-run] [--json] [--gofmt] [--max-output BYTES]",
	Summary: "apply an HPATCH/2 edit script (stdin) to the files of the current directory",
	Help: `Reads an HPATCH/2 script from stdin (or FILE) and applies it to the workspace,
the current directory, addressed by the verified rows (LINE:HASH) and exact
text that hread, hgrep and inspect_file print.

` + patch.Language + `
On success stdout lists the net file actions and, for each edit, the verified
rows at its edges ("PATH":LINE:HASH TEXT), ready for the next script. A
rejection prints, on stderr, one line per failure
  OP: command N, path "PATH", reason REASON: MESSAGE
followed by repair rows LINE:HASH TEXT (or "LINE| TEXT" for lines of rejected
new content). REASON is one of script-syntax row-missing row-stale
occurrence-missing invalid-count target-order edit-conflict active-file
initialization file-path language-syntax. A range's order is judged on the
rows it resolves to; a row past the end whose hash is on other lines is
row-stale (row-missing when no line has it); rm after an edit of the same
file is edit-conflict; a <<PATCH body that is not UTF-8 is script-syntax; a
count that is not a number is invalid-count; a row or text target in a file
the script creates is initialization (a new file takes type VALUE).

options:
  -f FILE     read the script from FILE instead of stdin
  --dry-run   print the unified diff and change nothing
  --gofmt     format the Go files the script writes that were gofmt-clean
              before it (and new ones); the report lists the rows gofmt
              changed under "gofmt:". Without it the exact bytes are written.
  --json      print the result as JSON on stdout (also when rejected)
` + maxOutputHelp + `
The report of edits, a dry run's diff and a rejection's failures are
admitted block by block under 15,000 tokens and the output bound, and end
with a line saying how many were left out.
`,
	Exits: []cli.Exit{
		{Status: 0, When: "applied, or nothing to do (every edit a no-op), or a dry run"},
		{Status: 1, When: "rejected, nothing written: script-syntax, row-missing, row-stale, occurrence-missing, invalid-count, target-order, edit-conflict, active-file, initialization, file-path, language-syntax; or journal (a pending journal that is not rowkit's own, or another rowkit process committing here for over 10 s)"},
		{Status: 2, When: "usage: an empty script (no commands), an unknown option or argument, a --max-output or ROWKIT_MAX_OUTPUT that is not a number of bytes"},
		{Status: 3, When: "the commit failed: rolled back, every file as it was, unless the message says where each file stands"},
	},
	Run:  runPatch,
	Fail: failPatch,
}

// patchFailure carries a result to the Fail hook along with the error.
type patchFailure struct {
	err  error
	res  *patch.Result
	json bool
}

func (p *patchFailure) Error() string { return p.err.Error() }
func (p *patchFailure) Unwrap() error { return p.err }

// patchOptions are hpatch's options.
var patchOptions = []cli.Option{
	{Long: []string{"file"}, Short: 'f', Value: true},
	{Long: []string{"dry-run"}},
	{Long: []string{"json"}},
	{Long: []string{"gofmt"}},
	maxOutputOption,
}

func runPatch(ctx context.Context, env *cli.Env, args []string) error {
	var file string
	var dry, asJSON, haveFile, gofmt bool
	maxOut := notGiven
	ops, err := cli.Parse("patch", patchOptions, args, func(a cli.Arg) (err error) {
		switch a.Long[0] {
		case maxOutputOption.Long[0]:
			maxOut, err = parseMaxOutput(a.Spelled, a.Value)
			return err
		case "dry-run":
			dry = true
		case "json":
			asJSON = true
		case "gofmt":
			gofmt = true
		case "file":
			file, haveFile = a.Value, true
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(ops) > 0 {
		return errs.Usagef("unexpected argument %q; the script comes on stdin or with -f FILE; usage: hpatch [-f FILE] [--dry-run] [--json] [--gofmt] [--max-output BYTES]", ops[0])
	}
	bound, err := bounded(env, maxOut)
	if err != nil {
		return err
	}
	var src []byte
	if haveFile {
		// A FIFO or device named by -f would block the open or never end.
		f, _, oerr := regfile.Open(os.Stat, os.OpenFile, env.Path(file))
		if oerr != nil {
			return errs.Usagef("cannot read the script %s: %v", file, regfile.Cause(oerr))
		}
		src, err = io.ReadAll(io.LimitReader(regfile.Reader(f), maxScriptBytes+1))
		f.Close()
		if err != nil {
			return errs.Usagef("cannot read the script %s: %v", file, regfile.Cause(err))
		}
	} else {
		src, err = io.ReadAll(io.LimitReader(env.Stdin, maxScriptBytes+1))
		if err != nil {
			return errs.Errorf(errs.Read, "reading the script from stdin: %v", err)
		}
	}
	if len(src) > maxScriptBytes {
		return errs.Errorf(errs.TooLarge, "the script is larger than %d bytes", maxScriptBytes)
	}
	root, err := openWorkDir(env)
	if err != nil {
		return err
	}
	res, err := patch.Apply(ctx, root, string(src), patch.Options{DryRun: dry, Gofmt: gofmt})
	if res != nil && res.Recovery != nil {
		fmt.Fprintf(env.Stderr, "%s: %s\n", env.Name, res.Recovery)
	}
	if err != nil {
		// A rejection exits 1: its report gets the bound of a command
		// that fails.
		env.OutputBytes = bound.fail
		if res != nil {
			return &patchFailure{err: err, res: res, json: asJSON}
		}
		return err
	}
	if asJSON {
		err = writeJSON(env.Stdout, res)
	} else {
		_, err = io.WriteString(env.Stdout, formatResult(res, env.Budget()))
	}
	if err != nil {
		return errs.Errorf(errs.Write, "writing the report: %v", regfile.Cause(err))
	}
	return nil
}

func failPatch(env *cli.Env, err error) int {
	name := env.Name
	pf, ok := err.(*patchFailure)
	if !ok {
		io.WriteString(env.Stderr, cli.Lines(name, err))
		return errs.ExitCode(err)
	}
	if pf.json {
		writeJSON(env.Stdout, pf.res)
	}
	if len(pf.res.Failures) > 0 {
		if !pf.json {
			io.WriteString(env.Stderr, formatFailures(pf.res.Failures, name, env.Budget()))
		}
	} else {
		io.WriteString(env.Stderr, cli.Lines(name, pf.err))
	}
	return errs.ExitCode(pf.err)
}

func writeJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// formatFailures prints each failure's line and its repair rows under b,
// the budget of every verified-row output; name starts the closing line
// of a report cut short.
func formatFailures(fs []patch.Failure, name string, b rows.Budget) string {
	return patch.FailureReport(fs, b, name+": ")
}

// formatResult prints a success: the diff of a dry run, or the file actions
// and the rows at each edit's edges.
func formatResult(res *patch.Result, b rows.Budget) string {
	if res.Status == patch.StatusDryRun && res.Diff == "" {
		return "" // the diff alone: nothing when nothing changes
	}
	return patch.Report(res, b)
}

// Recover is rowkit recover: settle a transaction a crash left pending.
var Recover = &cli.Command{
	Name:    "recover",
	Usage:   "rowkit recover [DIR]",
	Summary: "complete or roll back an edit transaction a crash left in the workspace",
	Help: `hpatch writes all the files of a script through a journal (.rowkit/journal).
If the process died mid-way, the next hpatch (or MCP edit) in the workspace
settles it before it reads; commands that only read never do. rowkit recover
does only that, for the workspace DIR (default: the current directory), and
says what it did. It holds the workspace lock (.rowkit/lock) that every
transaction holds, so a transaction another process is running is waited
for (up to 10 s) and never touched. A .rowkit/journal.tmp an interrupted run
left is removed.

A journal is acted on only when it provably belongs to a transaction rowkit
staged in this workspace on this machine (its own inode and its directory's
recorded in it, owned by you, mode 0600, not a symlink, naming only rowkit's
staging files inside the workspace). Any other .rowkit/journal, such as one a
repository ships, is left alone and reported, and hpatch refuses to write
beside it until it is removed.

`,
	Exits: []cli.Exit{
		{Status: 0, When: "recovered, or nothing was pending"},
		{Status: 1, When: "journal: the pending transaction could not be settled, a journal that is not rowkit's own was left alone, or another rowkit process kept committing here for 10 s"},
		{Status: 2, When: "usage"},
	},
	Run: func(ctx context.Context, env *cli.Env, args []string) error {
		args, err := cli.Parse("recover", nil, args, nil)
		if err != nil {
			return err
		}
		if len(args) > 1 {
			return errs.Usagef("rowkit recover takes at most one DIR; usage: rowkit recover [DIR]")
		}
		dir := "."
		if len(args) == 1 {
			dir = args[0]
		}
		root, err := openWorkspace(env, dir)
		if err != nil {
			return err
		}
		rec, err := txn.Recover(ctx, root)
		if err == nil {
			err = rec.Err()
		}
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(env.Stdout, rec)
		return err
	},
}
