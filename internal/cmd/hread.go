package cmd

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
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
	Usage:   "hread [--max-output BYTES] PATH [START:END]",
	Summary: "print a file's lines as verified rows LINE:HASH TEXT",
	Help: `Prints every line of PATH, or the lines START through END (inclusive), as
"LINE:HASH TEXT" rows, one per line. LINE is the one-based line number, HASH
the first two bytes of the SHA-256 of TEXT in hex, and TEXT the line exactly,
without its terminator (LF, CRLF or a lone CR). A row reference LINE:HASH
can be used directly as an edit target.

PATH is exactly one argument (quote it in the shell if it has spaces; write
./-name for a name starting with a dash). START must exist; an END past the
end of the file stops at the last line, and START: (no END) reads to the
end.

The whole file is validated as UTF-8 even when a range is asked for. Output
is bounded by token admission (o200k_base): rows are written while the total
stays within 15,000 tokens, one more row may take it to 15,500, and anything
after that is left out with "hread: output incomplete: 15,000-token limit
reached; continue with: hread PATH NEXT:" on stderr and exit code 1; the
rows written are then a prefix of the full result, and the command named
reads on. Under an output bound (below) rows are admitted while they fit it
with that line, which then names the bound ("8,192-byte output limit").
On any other failure stdout is empty and stderr has one line
"hread: CODE: MESSAGE".

options:
` + maxOutputHelp,
	Exits: []cli.Exit{
		{Status: 0, When: "success (an empty file prints nothing)"},
		{Status: 1, When: "failure: not_found, permission_denied, not_regular (directory, FIFO, socket, device, kernel stream), not_utf8 (with the byte offset), bad_range (malformed or reversed), past_eof (START after the last line), read, write; or output_incomplete (token limit or output bound; the diagnostic names the command that reads on)"},
		{Status: 2, When: "usage: no path, a second path, a second range, an unknown option, a --max-output or ROWKIT_MAX_OUTPUT that is not a number of bytes"},
	},
	Run: runHread,
}

func runHread(ctx context.Context, env *cli.Env, args []string) error {
	maxOut := notGiven
	args, err := cli.Parse("hread", []cli.Option{maxOutputOption}, args, func(a cli.Arg) (err error) {
		maxOut, err = parseMaxOutput(a.Spelled, a.Value)
		return err
	})
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
	bound, err := bounded(env, maxOut)
	if err != nil {
		return err
	}
	notePendingAbove(env, args[:1])
	// Rows are held until the whole file is validated, so that a failure
	// leaves stdout empty; token admission bounds what is held. The
	// diagnostic of a cut result ends with the command that reads on,
	// which the bound makes room for.
	cont := func(next int, skip bool) string { return hreadContinuation(env.Name, args[0], next, r, skip) }
	// A row takes at least 8 bytes ("1:hhhh " and LF), which bounds the
	// line a continuation names; a line skipped is named only when no row
	// was written, when the whole bound is left for it.
	reserve := func(b rows.Budget) int { return len(cont(min(r.Start+b.MaxBytes/8+1, r.End), false)) }
	b := env.Budget()
	if b.MaxBytes > 0 {
		b.Reserve += reserve(b)
	}
	var out bytes.Buffer
	p := rows.NewPrinter(&out, b)
	err = hread.Read(ctx, args[0], r, p, hread.Options{Dir: env.Dir})
	if err != nil && !errs.Is(err, errs.Incomplete) {
		return err
	}
	p.Flush() // into a bytes.Buffer, which cannot fail
	if err != nil {
		if bound.fail > 0 && bound.fail < bound.ok {
			// The agent shows less of a command that fails, and a cut
			// result exits 1: keep the rows that fit its bound.
			env.OutputBytes = bound.fail
			fb := env.Budget()
			if room := fb.MaxBytes - fb.Reserve - reserve(fb); out.Len() > room {
				out.Truncate(bytes.LastIndexByte(out.Bytes()[:max(room, 0)], '\n') + 1)
				err = fb.Stopped(true)
			}
		}
		e, _ := errs.As(err)
		next, skip := nextRow(out.Bytes(), r.Start)
		err = errs.New(errs.Incomplete, e.Msg+cont(next, skip))
	}
	if _, werr := out.WriteTo(env.Stdout); werr != nil {
		return errs.Errorf(errs.Write, "writing output: %v", regfile.Cause(werr))
	}
	return err
}

// nextRow is the line after the last row of out (rows as hread prints
// them), or, when out has none, start, which did not fit at all: skip.
func nextRow(out []byte, start int) (int, bool) {
	if len(out) == 0 {
		return start, true
	}
	last := out[bytes.LastIndexByte(out[:len(out)-1], '\n')+1:]
	n, _ := strconv.Atoi(string(last[:bytes.IndexByte(last, ':')]))
	return n + 1, false
}

// hreadContinuation ends the diagnostic of a read cut short at line next:
// the command (as invoked, name) that reads on to the end of range r. A
// line that does not fit even alone (skip) is skipped, so that following
// the continuations always reaches the end.
func hreadContinuation(name, path string, next int, r hread.Range, skip bool) string {
	msg := "; continue with: "
	if skip {
		msg = fmt.Sprintf("; line %d alone is over the limit, continue after it with: ", next)
		next++
	}
	end := ""
	if r.End != hread.All.End {
		end = strconv.Itoa(r.End)
	}
	if next > r.End {
		return fmt.Sprintf("; line %d alone is over the limit and ends the range", next-1)
	}
	return msg + name + " " + shellWord(path) + " " + strconv.Itoa(next) + ":" + end
}

// shellWord is s as one word of a POSIX shell command line: as it is when
// it holds no character the shell reads specially, else single-quoted; a
// leading dash, which hread would read as an option, behind "./".
func shellWord(s string) string {
	plain := s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_./+,:=@%-", r))
	})
	if strings.HasPrefix(s, "-") {
		s = "./" + s
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// looksLikeRange tells a mistyped range (an error in the range) from a second
// path (an error in how hread was called).
func looksLikeHreadRange(s string) bool {
	return strings.Contains(s, ":") || s != "" && s[0] >= '0' && s[0] <= '9'
}
