package cmd

import (
	"bytes"
	"context"
	"strings"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/hread"
	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/rows"
)

// Hread is hread as a rowkit command.
var Hread = &cli.Command{
	Name:    "hread",
	Aliases: []string{"hread"},
	Usage:   "hread PATH [START:END]",
	Summary: "print a file's lines as verified rows LINE:HASH TEXT",
	Help: `Prints every line of PATH, or the lines START through END (inclusive), as
"LINE:HASH TEXT" rows, one per line. LINE is the one-based line number, HASH
the first two bytes of the SHA-256 of TEXT in hex, and TEXT the line exactly,
without its terminator (LF, CRLF or a lone CR). A row reference LINE:HASH
can be used directly as an edit target.

PATH is exactly one argument (quote it in the shell if it has spaces; write
./-name for a name starting with a dash). START must exist; an END past the
end of the file stops at the last line. There are no options.

The whole file is validated as UTF-8 even when a range is asked for. Output
is bounded by token admission (o200k_base): rows are written while the total
stays within 15,000 tokens, one more row may take it to 15,500, and anything
after that is left out with "hread: output incomplete: 15,000-token limit
reached" on stderr and exit code 1; the rows written are then a prefix of the
full result. On any other failure stdout is empty and stderr has one line
"hread: CODE: MESSAGE".
`,
	Exits: []cli.Exit{
		{Status: 0, When: "success (an empty file prints nothing)"},
		{Status: 1, When: "failure: not_found, permission_denied, not_regular (directory, FIFO, socket, device, kernel stream), not_utf8 (with the byte offset), bad_range (malformed or reversed), past_eof (START after the last line), read, write; or output_incomplete (token limit)"},
		{Status: 2, When: "usage: no path, a second path, a second range, or any option"},
	},
	Run: runHread,
}

func runHread(ctx context.Context, env *cli.Env, args []string) error {
	args, err := cli.Parse("hread", nil, args, nil)
	if err != nil {
		return err
	}
	switch {
	case len(args) == 0:
		return errs.Usagef("missing PATH; usage: hread PATH [START:END]")
	case len(args) > 2:
		return errs.Usagef("hread reads one file and at most one range, got %d arguments; usage: hread PATH [START:END]", len(args))
	case args[0] == "":
		return errs.Usagef("PATH is empty; usage: hread PATH [START:END]")
	}
	r := hread.All
	if len(args) == 2 {
		if !looksLikeHreadRange(args[1]) {
			return errs.Usagef("hread reads one file; %q is a second path, not a START:END range", args[1])
		}
		if r, err = hread.ParseRange(args[1]); err != nil {
			return err
		}
	}
	// Rows are held until the whole file is validated, so that a failure
	// leaves stdout empty; token admission bounds what is held.
	var out bytes.Buffer
	p := rows.NewPrinter(&out, env.Budget())
	err = hread.Read(ctx, args[0], r, p, hread.Options{Dir: env.Dir})
	if err != nil && !errs.Is(err, errs.Incomplete) {
		return err
	}
	p.Flush() // into a bytes.Buffer, which cannot fail
	if _, werr := out.WriteTo(env.Stdout); werr != nil {
		return errs.Errorf(errs.Write, "writing output: %v", regfile.Cause(werr))
	}
	return err
}

// looksLikeRange tells a mistyped range (an error in the range) from a second
// path (an error in how hread was called).
func looksLikeHreadRange(s string) bool {
	return strings.Contains(s, ":") || s != "" && s[0] >= '0' && s[0] <= '9'
}
