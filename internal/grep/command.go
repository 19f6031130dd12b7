package grep

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/errs"
)

// Command is hgrep as a rowkit command.
var Command = &cli.Command{
	Name:    "grep",
	Aliases: []string{"hgrep"},
	Usage:   "hgrep [OPTIONS] PATTERN [PATH ...]",
	Summary: "search with ripgrep; every result is a verified row \"PATH\":LINE:HASH TEXT",
	Help:    help,
	Run:     run,
}

var help = `Runs the installed ripgrep (rg) with the given arguments, which the shell has
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

` + policyHelp() + `
exit codes:
  0  success; no match is an empty result
  1  failure, one line "hgrep: CODE: MESSAGE" on stderr: rg_missing,
     invalid_pattern, rg_failed (ripgrep's own message, e.g. a missing path;
     rows found elsewhere are still printed), not_utf8, not_regular, changed,
     read, too_large, write, cancelled; or output_incomplete (token limit)
  2  usage: no pattern, a rejected or unknown option, the path - (stdin)
`

func run(ctx context.Context, env *cli.Env, args []string) error {
	plan, err := Parse(args)
	if err != nil {
		return err
	}
	dir, err := os.Getwd()
	if err != nil {
		return errs.Errorf(CodeRead, "cannot determine the current directory: %v", err)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	return Search(ctx, plan, dir, env.Stdout)
}
