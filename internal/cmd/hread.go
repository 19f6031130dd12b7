package cmd

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/read"
	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/spool"
)

// Hread is hread as a rowkit command.
var Hread = &cli.Command{
	Name:    "hread",
	Aliases: []string{"hread"},
	Usage:   "hread [-a] [--max-output BYTES] (PATH | @out/ID) [START:END]",
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

hread is the reader of rowkit read without its view (docs/hread.md,
"hread and read"): the same open rules (/dev, /proc and /sys are
dangerous_path; a directory, FIFO, socket or device not_regular, without
blocking), the same classifiers on the first 8 KiB and the same codes. A
file with a NUL byte is binary, a PNG, JPEG, GIF or WebP image, a PDF
pdf, an Office document office_document: refused with exit status 3 and
stdout empty, as rowkit read refuses them; -a/--text prints such a file's
rows anyway when it is valid UTF-8 (as grep -a does). hread opens a path
as the shell would, like cat; rowkit read is confined to its root.

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

PATH @out/ID reads an output a bound left part of out, which rowkit kept
(the shell's note, a search's continuation name it) in the user's store
of kept outputs (TMPDIR/rowkit-UID/out, kept for 24 hours): its lines,
split at LF, as N|TEXT for a program's output, or as the rows they are
for kept rows, a range and its continuation as for a file. An ID that
expired is the error expired, one that names nothing kept not_found.
Write ./@out/NAME for a file of that name.

options:
  -a, --text          print content the classifiers refuse (binary data, an
                      image, a PDF...) as rows when it is valid UTF-8
` + maxOutputHelp,
	Exits: []cli.Exit{
		{Status: 0, When: "success (an empty file prints nothing)"},
		{Status: 1, When: "failure: not_found (also an @out/ID that names nothing kept), expired (an @out/ID kept too long ago), permission_denied, not_regular (directory, FIFO, socket, device, kernel stream), dangerous_path (/dev, /proc, /sys), invalid_input (a malformed or reversed range), past_eof (START after the last line), read, write, cancelled; or output_incomplete (token limit or output bound; the diagnostic names the command that reads on)"},
		{Status: 2, When: "usage: no path, a second path, a second range, an unknown option, a --max-output or ROWKIT_MAX_OUTPUT that is not a number of bytes"},
		{Status: 3, When: "unsupported: the content is not text, as rowkit read refuses it: binary, image, pdf, office_document (-a prints it when it is valid UTF-8), not_utf8 (invalid UTF-8 anywhere, with the byte offset)"},
	},
	Run: runHread,
}

// hreadOptions are hread's options: -a/--text and the output bound.
var hreadOptions = []cli.Option{hreadTextOption, maxOutputOption}

var hreadTextOption = cli.Option{Long: []string{"text"}, Short: 'a'}

func runHread(ctx context.Context, env *cli.Env, args []string) error {
	maxOut, text := notGiven, false
	args, err := cli.Parse("hread", hreadOptions, args, func(a cli.Arg) (err error) {
		if a.Long[0] == hreadTextOption.Long[0] {
			text = true
			return nil
		}
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
	r := read.All
	if len(args) == 2 {
		if !looksLikeHreadRange(args[1]) {
			return errs.Usagef("hread reads one file; %q is a second path, not a START:END range", args[1])
		}
		if r, err = read.ParseRange(args[1]); err != nil {
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
	stream := func(sink rows.Sink) error {
		err := read.Stream(ctx, args[0], r, sink, read.StreamOptions{Dir: env.Dir, Text: text})
		if e, ok := errs.As(err); ok && e.Code == read.CodeOf(read.UnsupportedBinary) {
			e.Hint = "hread --text " + shellWord(args[0]) + " prints it if it is valid UTF-8"
		}
		return err
	}
	form := rows.Form(rows.AppendPrinted)
	if id, ok := spool.IsRef(args[0]); ok {
		it, err := openKept(env, id)
		if err != nil {
			return err
		}
		defer it.Close()
		if it.Kind == spool.Text {
			form = rows.AppendNumbered
		} else {
			form = rows.AppendBare
		}
		stream = func(sink rows.Sink) error {
			err := read.ReadKept(ctx, it, it.Name(), r, sink)
			if err == nil && it.Capped {
				err = errs.Errorf(errs.Incomplete, "%s ends here: the output was longer, and only its first %s bytes were kept", it.Name(), errs.Thousands(int(it.Size)))
			}
			return err
		}
	}
	p := &lastRow{Printer: rows.NewFormPrinter(&out, b, form)}
	err = stream(p)
	if err != nil && !errs.Is(err, errs.Incomplete) {
		return err
	}
	p.Flush() // into a bytes.Buffer, which cannot fail
	if err != nil && p.Report().Omitted {
		if bound.fail > 0 && bound.fail < bound.ok {
			// The agent shows less of a command that fails, and a cut
			// result exits 1: keep the rows that fit its bound.
			env.OutputBytes = bound.fail
			fb := env.Budget()
			if room := fb.MaxBytes - fb.Reserve - reserve(fb); out.Len() > room {
				cut := bytes.LastIndexByte(out.Bytes()[:max(room, 0)], '\n') + 1
				p.last -= bytes.Count(out.Bytes()[cut:], []byte{'\n'})
				out.Truncate(cut)
				err = fb.Stopped(true)
			}
		}
		e, _ := errs.As(err)
		next, skip := p.last+1, p.last == 0
		if skip {
			next = r.Start
		}
		err = errs.New(errs.Incomplete, e.Msg+cont(next, skip))
	}
	if _, werr := out.WriteTo(env.Stdout); werr != nil {
		return errs.Errorf(errs.Write, "writing output: %v", regfile.Cause(werr))
	}
	return err
}

// lastRow is a Printer that knows the line of the last row it admitted
// (0: none), where a cut read goes on.
type lastRow struct {
	*rows.Printer
	last int
}

func (p *lastRow) Put(r rows.Row) (bool, error) {
	ok, err := p.Printer.Put(r)
	if ok {
		p.last = r.Line
	}
	return ok, err
}

// hreadContinuation ends the diagnostic of a read cut short at line next:
// the command (as invoked, name) that reads on to the end of range r. A
// line that does not fit even alone (skip) is skipped, so that following
// the continuations always reaches the end.
func hreadContinuation(name, path string, next int, r read.Range, skip bool) string {
	msg := "; continue with: "
	if skip {
		msg = fmt.Sprintf("; line %d alone is over the limit, continue after it with: ", next)
		next++
	}
	end := ""
	if r.End != read.All.End {
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
