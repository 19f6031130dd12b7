package cmd

import (
	"bufio"
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/grep"
	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/rows"
)

// Grep is hgrep as a rowkit command.
var Grep = &cli.Command{
	Name:    "grep",
	Aliases: []string{"hgrep"},
	Usage:   "hgrep [OPTIONS] PATTERN [PATH ...]",
	Summary: "search with ripgrep; every result is a verified row \"PATH\":LINE:HASH TEXT",
	Help:    grepHelp,
	Run:     runGrep,
}

var grepHelp = `Runs the installed ripgrep (rg) with the given arguments, which the shell has
already split, and prints each line it reports once, in ripgrep's order, as

  "PATH":LINE:HASH TEXT

PATH JSON-quoted as ripgrep reports it and LINE:HASH TEXT the verified row
(the same identity as hread: complete line, no highlighting or trimming).
Lines ripgrep reports as context (-A, -B, -C) are rows too; a line reported
several times prints once. With no PATH the current directory is searched.
ripgrep owns regex syntax, ignore rules, traversal and matching; hgrep runs it
with --no-config --json and its standard input closed.

Each row is checked against the file: ripgrep numbers lines at LF only, while
a verified row also ends at a lone CR, so hgrep re-reads each file with
results up to the reported lines and prints the rows that hold them. A
reported row that is not valid UTF-8, or a file that changed during the
search, is an error, never a wrong row.

Output is bounded by token admission (o200k_base, after de-duplication): rows
are written while the total stays within 15,000 tokens, one more may take it
to 15,500; at the first row left out hgrep stops and kills ripgrep, keeps the
rows written, prints "hgrep: output incomplete: 15,000-token limit reached"
and exits 1.

` + grep.PolicyHelp() + `
exit codes:
  0  success; no match is an empty result
  1  failure, one line "hgrep: CODE: MESSAGE" on stderr: rg_missing,
     invalid_pattern, rg_failed (ripgrep's own message, e.g. a missing path;
     rows found elsewhere are still printed), not_utf8, not_regular, changed,
     read, too_large, write, cancelled; or output_incomplete (token limit)
  2  usage: no pattern, a rejected or unknown option, the path - (stdin)
`

func runGrep(ctx context.Context, env *cli.Env, args []string) error {
	plan, err := grep.Parse(args)
	if err != nil {
		return err
	}
	dir, err := os.Getwd()
	if err != nil {
		return errs.Errorf(errs.Read, "cannot determine the current directory: %v", err)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	out := bufio.NewWriterSize(env.Stdout, 32<<10)
	p := rows.NewPrinter(out, rows.DefaultBudget)
	res, err := grep.Search(ctx, plan, grep.Config{Dir: dir}, p)
	// The rows pushed are verified rows whatever ended the search: they
	// stay on stdout before the diagnostic.
	werr := p.Flush()
	if werr == nil {
		werr = out.Flush()
	}
	if err != nil {
		return err
	}
	if werr != nil {
		return errs.Errorf(errs.Write, "writing output: %v", regfile.Cause(werr))
	}
	return res.Err(rows.DefaultBudget)
}
