package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/patch"
	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/txn"
	"github.com/rowkit/rowkit/internal/workspace"
)

const maxScriptBytes = 64 << 20

// reportBudget bounds the text report like every verified-row output (see
// patch.Report).
var reportBudget = rows.DefaultBudget

// Patch is hpatch: an HPATCH/2 script applied to the workspace.
var Patch = &cli.Command{
	Name:    "patch",
	Aliases: []string{"hpatch"},
	Usage:   "hpatch [-f FILE] [--dry-run] [--json] [--gofmt]",
	Summary: "apply an HPATCH/2 edit script (stdin) to the files of the current directory",
	Help: `Reads an HPATCH/2 script from stdin (or FILE) and applies it to the workspace,
the current directory. Targets are verified rows (LINE:HASH) and exact text, as
hread, hgrep and inspect_file print them:

  in PATH              select an existing file
  new PATH             create a file (missing parent directories too) and select it
  mv PATH              move the selected file
  rm                   delete the selected file
  type TARGET VALUE    replace every span TARGET selects ("" deletes)
  add DEST VALUE       insert before DEST (ROW, a text target or EOF)
  type VALUE           initial content, directly after new
  type EOF VALUE       set the final terminator: "" drops it, "\n" adds one

TARGET is ROW (LINE:HASH, the whole line with its terminator), ROW..ROW, or
[ROW] "TEXT" [N] (the first N exact matches, from ROW or from the start).
VALUE is a JSON string or <<PATCH followed by literal lines and a line PATCH.
A row replacement without a final terminator keeps the target's (LF, CRLF,
CR, or none for an unterminated last line). Paths with spaces may be written
bare or as JSON strings.

Every target resolves against the files as they were when the script started.
A stale row is relocated only when two independent rows agree on the shift
(both ends of a range, or another target of the script); otherwise the script
is rejected with current rows around the place. Every changed Go, Python,
JavaScript/TypeScript or JSON file must still parse (unless it did not before). All files are written at once
through a journal: after a crash, the next hpatch in the workspace (or
rowkit recover) completes or rolls back the whole transaction. One
transaction runs at a time in a workspace (a lock in .rowkit; another waits
up to 10 s), and a file another writer changed meanwhile is never
overwritten: the script is rejected row-stale with the file's fresh rows.

On success stdout lists the net file actions and, for each edit, the verified
rows at its edges ("PATH":LINE:HASH TEXT), ready for the next script. A
rejection prints, on stderr, one line per failure
  OP: command N, path "PATH", reason REASON: MESSAGE
followed by repair rows LINE:HASH TEXT (or "LINE| TEXT" for lines of rejected
new content). REASON is one of script-syntax row-missing row-stale
occurrence-missing invalid-count target-order edit-conflict active-file
initialization file-path language-syntax.

options:
  -f FILE     read the script from FILE instead of stdin
  --dry-run   print the unified diff and change nothing
  --gofmt     format the Go files the script writes that were gofmt-clean
              before it (and new ones); the report lists the rows gofmt
              changed under "gofmt:". Without it the exact bytes are written.
  --json      print the result as JSON on stdout (also when rejected)

`,
	Exits: []cli.Exit{
		{Status: 0, When: "applied, or nothing to do (every edit a no-op), or a dry run"},
		{Status: 1, When: "rejected, nothing written: script-syntax, row-missing, row-stale, occurrence-missing, invalid-count, target-order, edit-conflict, active-file, initialization, file-path, language-syntax; or journal (a pending journal that is not rowkit's own, or another rowkit process committing here for over 10 s)"},
		{Status: 2, When: "usage"},
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

func runPatch(ctx context.Context, env *cli.Env, args []string) error {
	var file string
	var dry, asJSON, haveFile, gofmt bool
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--dry-run":
			dry = true
		case a == "--json":
			asJSON = true
		case a == "--gofmt":
			gofmt = true
		case a == "-f" || a == "--file":
			if i+1 >= len(args) || haveFile {
				return errs.Usagef("-f takes one FILE; usage: hpatch [-f FILE] [--dry-run] [--json] [--gofmt]")
			}
			i++
			file, haveFile = args[i], true
		default:
			return errs.Usagef("unexpected argument %q; the script comes on stdin or with -f FILE; usage: hpatch [-f FILE] [--dry-run] [--json] [--gofmt]", a)
		}
	}
	var src []byte
	var err error
	if haveFile {
		// A FIFO or device named by -f would block the open or never end.
		f, _, oerr := regfile.Open(os.Stat, os.OpenFile, file)
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
	root, err := workspace.Cwd()
	if err != nil {
		return err
	}
	res, err := patch.Apply(ctx, root, string(src), patch.Options{DryRun: dry, Gofmt: gofmt})
	if res != nil && res.Recovery != nil {
		fmt.Fprintf(env.Stderr, "hpatch: %s\n", res.Recovery)
	}
	if err != nil {
		if res != nil {
			return &patchFailure{err: err, res: res, json: asJSON}
		}
		return err
	}
	if asJSON {
		err = writeJSON(env.Stdout, res)
	} else {
		_, err = io.WriteString(env.Stdout, formatResult(res))
	}
	if err != nil {
		return errs.Errorf(errs.Write, "writing the report: %v", regfile.Cause(err))
	}
	return nil
}

func failPatch(env *cli.Env, err error) int {
	pf, ok := err.(*patchFailure)
	if !ok {
		fmt.Fprintf(env.Stderr, "hpatch: %s\n", cli.Diagnostic(err))
		return errs.ExitCode(err)
	}
	if pf.json {
		writeJSON(env.Stdout, pf.res)
	}
	if len(pf.res.Failures) > 0 {
		if !pf.json {
			io.WriteString(env.Stderr, formatFailures(pf.res.Failures))
		}
	} else {
		fmt.Fprintf(env.Stderr, "hpatch: %s\n", cli.Diagnostic(pf.err))
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

// formatFailures prints each failure's line and its repair rows.
func formatFailures(fs []patch.Failure) string {
	return patch.FailureReport(fs, reportBudget, "hpatch: ")
}

// formatResult prints a success: the diff of a dry run, or the file actions
// and the rows at each edit's edges.
func formatResult(res *patch.Result) string {
	if res.Status == patch.StatusDryRun {
		return res.Diff // the diff alone, empty when nothing changes
	}
	return patch.Report(res, reportBudget)
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
		if len(args) > 1 || len(args) == 1 && strings.HasPrefix(args[0], "-") {
			return errs.Usagef("rowkit recover takes at most one DIR and no options; usage: rowkit recover [DIR]")
		}
		dir := "."
		if len(args) == 1 {
			dir = args[0]
		}
		root, err := workspace.Open(dir)
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
