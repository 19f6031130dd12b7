package cmd

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/grep"
	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/spool"
)

// Grep is hgrep as a rowkit command.
var Grep = &cli.Command{
	Name:     "grep",
	Aliases:  []string{"hgrep"},
	Usage:    "hgrep [OPTIONS] PATTERN [PATH ...]",
	Summary:  "search with ripgrep; every result is a verified row \"PATH\":LINE:HASH TEXT",
	Help:     grepHelp,
	HelpMore: grep.PolicyHelp,
	Exits: []cli.Exit{
		{Status: 0, When: "success; no match is an empty result"},
		{Status: 1, When: "failure: rg_missing, invalid_pattern, not_found or permission_denied (a named path that ripgrep could not open; rows found elsewhere are still printed), rg_failed (ripgrep's own message for anything else), not_utf8 (a printed row; or a file name, skipped after the rest was searched), not_regular (a named FIFO, socket, device or kernel pseudo file), changed, read, too_large, write, cancelled; or output_incomplete (token limit or output bound)"},
		{Status: 2, When: "usage: no pattern, a rejected or unknown option, a bad context value, the path - (stdin), a --max-output or ROWKIT_MAX_OUTPUT that is not a number of bytes"},
	},
	Run: runGrep,
	// A signal (Ctrl-C) ends ripgrep's process group before hgrep exits.
	Signals: []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP},
	// Decoding ripgrep's events makes short-lived garbage; collecting at
	// half the default growth keeps the peak resident set of a large
	// search about 1.5 MiB lower (within the 16 MB target) for a few
	// percent more CPU.
	GCPercent: 50,
}

var grepHelp = `Runs the installed ripgrep (rg) with the given arguments, which the shell has
already split, and prints each row it finds once, in ripgrep's order, as

  "PATH":LINE:HASH TEXT

PATH JSON-quoted as ripgrep reports it and LINE:HASH TEXT the verified row
(the same identity as hread: complete line, no highlighting or trimming).
With no PATH the current directory is searched. ripgrep owns regex syntax,
ignore rules, traversal and matching; hgrep runs it with --no-config --json
--encoding=none (the file's own bytes, never transcoded) and its standard
input closed. hgrep reads what your shell can read, like rg.

Each row is checked against the file. ripgrep ends lines at LF only, while a
verified row also ends at a lone CR, so hgrep maps the byte offsets ripgrep
reports to the file's rows: a match prints the rows it touches, and -A, -B
and -C count context in verified rows either side of them (ripgrep never
sees those options). A row prints once, even when the same file is named
twice (n.txt ./n.txt). A printed row that is not valid UTF-8, a UTF-16 file,
or a file that changed during the search is an error, never a wrong row.

A FIFO, device, socket or kernel pseudo file (/proc, /sys) named on the
command line, or given to -f or --ignore-file, would block ripgrep: it is
refused before ripgrep starts (directories are searched as usual). A file
whose name is not UTF-8 cannot be printed as a JSON string: it is skipped
with a message and the search goes on, but the result is not the whole
search (exit 1).

Output is bounded by token admission (o200k_base, after de-duplication): rows
are written while the total stays within 15,000 tokens, one more may take it
to 15,500. The rows left out are kept: the search goes on and keeps every row
it finds (up to 1 MiB of them; then it stops and kills ripgrep) in the user's
store of kept outputs, and hgrep prints "hgrep: output incomplete: 15,000-token
limit reached; continue with: hread @out/ID N:" and exits 1; that command
reads the kept rows on from the first one left out without searching again.
Under an output bound (--max-output, below) rows are admitted while they fit
it with that line, which then names the bound.

hgrep's own option, beside ripgrep's:
` + maxOutputHelp + `
`

// grepOptions is hgrep's command line for the parser: grep's policy table,
// each row an option that may repeat (ripgrep's rule: the last one wins),
// the rejected ones refused with their reason before any value is read.
// policy maps each back to its row. Built on first use.
var grepOptions = sync.OnceValues(func() ([]cli.Option, map[*cli.Option]*grep.Option) {
	opts := make([]cli.Option, len(grep.Options), len(grep.Options)+1)
	policy := make(map[*cli.Option]*grep.Option, len(opts))
	for i := range grep.Options {
		o := &grep.Options[i]
		opts[i] = cli.Option{Long: o.Long, Short: o.Short, Value: o.Value, Repeat: true}
		if o.Action == grep.Reject {
			opts[i].Refuse = o.Why
		}
		policy[&opts[i]] = o
	}
	// hgrep's own, beside the policy's: ripgrep never sees it. (The
	// capacity is there: policy's keys point into opts.)
	opts = append(opts, maxOutputOption)
	return opts, policy
})

// parseGrepLine reads hgrep's command line: the shared parser splits it,
// the policy decides each option, and hgrep's --max-output is returned
// beside the plan (notGiven when absent).
func parseGrepLine(args []string) (*grep.Plan, int, error) {
	opts, policy := grepOptions()
	var b grep.Planner
	maxOut := notGiven
	pos, err := cli.Parse("grep", opts, args, func(a cli.Arg) (err error) {
		o, ok := policy[a.Option]
		if !ok { // --max-output
			maxOut, err = parseMaxOutput(a.Spelled, a.Value)
			return err
		}
		return b.Use(o, a.Spelled, a.Value)
	})
	if err != nil {
		return nil, maxOut, err
	}
	plan, err := b.Finish(pos)
	return plan, maxOut, err
}

func runGrep(ctx context.Context, env *cli.Env, args []string) error {
	plan, maxOut, err := parseGrepLine(args)
	if err != nil {
		return err
	}
	dir, err := env.WorkDir()
	if err != nil {
		return err
	}
	bound, err := bounded(env, maxOut)
	if err != nil {
		return err
	}
	if len(plan.Paths) > 0 {
		notePendingAbove(env, plan.Paths)
	} else {
		notePendingAbove(env, []string{"."})
	}
	// Rows stream to stdout, unless the agent shows less of a command
	// that fails than of one that does not: then they are held (within
	// the larger bound) until the search has ended, and cut to the
	// smaller if it ends with an error.
	var held bytes.Buffer
	var dst io.Writer = env.Stdout
	twoBounds := bound.fail > 0 && bound.fail < bound.ok
	if twoBounds {
		dst = &held
	}
	out := bufio.NewWriterSize(dst, 32<<10)
	// What the bound leaves out is kept: the search goes on past it, the
	// rows it leaves out go to the store of kept outputs, and the
	// diagnostic names the command that reads them on (its room is
	// reserved). The engine reads every row the token rule could admit,
	// whatever the byte bound: past that, the row is kept.
	b := env.Budget()
	cont := keptContinuation(env.Name)
	contRoom := len(cont(spool.Prefix+strings.Repeat("x", spool.IDLen), 1<<30))
	b.Reserve += contRoom
	p := rows.NewPrinter(out, b)
	kept := &keptRows{env: env}
	sink := rows.NewSpill(p, kept.open)
	res, err := grep.Search(ctx, plan, grep.Config{Dir: dir, LookupEnv: env.LookupEnv, Budget: rows.DefaultBudget}, sink)
	// The rows pushed are verified rows whatever ended the search: they
	// stay on stdout before the diagnostic.
	werr := p.Flush()
	if werr == nil {
		werr = out.Flush()
	}
	switch {
	case err != nil:
	case werr != nil:
		err = errs.Errorf(errs.Write, "writing output: %v", regfile.Cause(werr))
	default:
		err = res.Err()
	}
	switch {
	case sink.Spilled() && werr == nil:
		// The rows shown, then the command that reads on from the first
		// row left out; an error that ended the search after them is
		// named too.
		stopped := rows.Incomplete(sink)
		if twoBounds {
			env.OutputBytes = bound.fail
			fb := env.Budget()
			room := fb.MaxBytes - fb.Reserve - contRoom
			if err != nil {
				room -= len("; and ") + len(cli.Diagnostic(err))
			}
			if held.Len() > room {
				held.Truncate(bytes.LastIndexByte(held.Bytes()[:max(room, 0)], '\n') + 1)
				stopped = fb.Stopped(true)
			}
		}
		shown := p.Report().Rows
		if twoBounds {
			shown = bytes.Count(held.Bytes(), []byte{'\n'})
		}
		err = kept.commit(stopped, err, func(id string) string { return cont(id, shown+1) })
	case sink.Spilled():
		kept.abort()
	case sink.Err() != nil && errs.Is(err, errs.Incomplete):
		// Not kept: the rows that fit, and why the rest are not.
		e, _ := errs.As(err)
		err = errs.New(errs.Incomplete, e.Msg+spool.NotKept(sink.Err(), contRoom))
		fallthrough
	default:
		if twoBounds && err != nil {
			err = cutToFailBound(env, bound, &held, err)
		}
	}
	if twoBounds {
		if _, werr := held.WriteTo(env.Stdout); werr != nil {
			return errs.Errorf(errs.Write, "writing output: %v", regfile.Cause(werr))
		}
	}
	return err
}

// cutToFailBound cuts the rows held in out to what the bound of a command
// that fails leaves beside its diagnostic, and narrows env's bound to it.
// A cut result says that bound stopped it, and names the error that ended
// it first when that was another.
func cutToFailBound(env *cli.Env, bound outputBound, out *bytes.Buffer, err error) error {
	env.OutputBytes = bound.fail
	fb := env.Budget()
	line := len(cli.Lines(env.Name, err))
	if out.Len()+line <= bound.fail {
		return err
	}
	room := fb.MaxBytes - fb.Reserve
	if !errs.Is(err, errs.Incomplete) {
		room -= line // both said, on one line
	}
	out.Truncate(bytes.LastIndexByte(out.Bytes()[:max(min(room, out.Len()), 0)], '\n') + 1)
	stopped := fb.Stopped(true)
	if errs.Is(err, errs.Incomplete) {
		return stopped
	}
	return errs.New(errs.Incomplete, stopped.Msg+"; and "+cli.Diagnostic(err))
}
