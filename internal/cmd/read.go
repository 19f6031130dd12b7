package cmd

import (
	"context"
	"math"
	"os"
	"syscall"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/read"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/workspace"
)

// Read is rowkit read, the bounded reader.
var Read = &cli.Command{
	Name:    "read",
	Usage:   readUsage,
	Summary: "read a file or directory in bounded, explained views of verified rows",
	Help: `Reads PATH (relative to the root: --root DIR, default the current directory)
and prints a view of at most 2000 lines and 50 KiB, starting at line --offset
(default 1), at most --limit lines (default and ceiling 2000; a larger limit
is clamped with a note). After the lines come notes "[read:CODE] MESSAGE"
saying what bounded the view and how to continue (the continue note names
the next offset), and anything else worth knowing (a BOM, clamped long
lines, the scan limit, an empty file).

Formats (--format): rows (default) prints each line as its verified row
LINE:HASH TEXT, an edit target; numbered prints N|TEXT; plain the text
alone; json the whole result, the structured content of the MCP tool
read_file. Converted text (notebooks) and directory listings print N|TEXT in
rows, since their lines are not lines of a file.

Lines end at LF, CRLF or a lone CR; a BOM stays in line 1. A line longer
than 2000 characters is shown clamped (its hash covers the whole line). The
file is scanned up to 64 MiB to count its lines and hash it; past that the
totals are marked inexact. Images (PNG, JPEG, GIF, WebP) are returned as
media (base64 in json); PDF, Office, zip and other binary files, and text
that is not UTF-8, are refused as unsupported. Paths stay inside the root
(symlinks leading out, absolute paths and .. are refused); /dev, /proc and
/sys are never opened; FIFOs, sockets and devices are refused without
blocking. A file that changes while it is read fails with
CHANGED_DURING_READ and a retry of the same range.

stdout always carries the result in the chosen format (for a failure, its
notes or its json document); a failure or refusal also prints one line
"read: CODE: MESSAGE" on stderr.

Under an output bound (--max-output, below) the text formats show the
rows that fit it with their notes, the continue note among them; json is a
document for programs and is never cut.

options:
` + maxOutputHelp,
	Exits: []cli.Exit{
		{Status: 0, When: "ok: text, a directory listing or media (also empty and truncated views)"},
		{Status: 1, When: "failure: invalid_input (offset or limit not a positive integer), not_found (with suggestions), not_regular, dangerous_path, outside_workspace, permission_denied, denied, changed, cancelled, unsupported_backend, extension_failed, read (--format json keeps seed 003's spellings: INVALID_INPUT, NOT_FOUND, NOT_A_FILE, DANGEROUS_PATH, OUTSIDE_ALLOWED_ROOTS, PERMISSION_DENIED, DENIED, CHANGED_DURING_READ, ABORTED, UNSUPPORTED_BACKEND, EXTENSION_FAILED, IO_ERROR)"},
		{Status: 2, When: "usage: no PATH, a second PATH, an unknown option, a missing option value, an unknown format, a --max-output or ROWKIT_MAX_OUTPUT that is not a number of bytes"},
		{Status: 3, When: "unsupported: the content is not text: image (over the media limit), pdf, office_document, binary, not_utf8 (text that is not UTF-8), invalid_notebook, too_large (--format json: IMAGE, PDF, OFFICE_DOCUMENT, BINARY, UNKNOWN_ENCODING, INVALID_NOTEBOOK, TOO_LARGE)"},
	},
	Run: runRead,
	// SIGINT or SIGTERM cancels the read, which ends with its ABORTED
	// result (exit 1) instead of dying with nothing printed.
	Signals: []os.Signal{os.Interrupt, syscall.SIGTERM},
}

const readUsage = "read PATH [--offset N] [--limit N] [--format rows|numbered|plain|json] [--root DIR] [--max-output BYTES]"

// readArgs is the parsed command line of rowkit read.
type readArgs struct {
	path, offset, limit, format, root string
	hasPath                           bool
	maxOutput                         int
}

// readOptions are rowkit read's options; each takes a value, once.
var readOptions = []cli.Option{
	{Long: []string{"offset"}, Value: true},
	{Long: []string{"limit"}, Value: true},
	{Long: []string{"format"}, Value: true},
	{Long: []string{"root"}, Value: true},
	maxOutputOption,
}

// parseReadArgs parses PATH and the options, in any order; "--" ends the
// options. Values are kept as strings for the engine's rules.
func parseReadArgs(args []string) (readArgs, error) {
	a := readArgs{format: read.FormatRows, maxOutput: notGiven}
	ops, err := cli.Parse("read", readOptions, args, func(o cli.Arg) (err error) {
		if o.Long[0] == maxOutputOption.Long[0] {
			a.maxOutput, err = parseMaxOutput(o.Spelled, o.Value)
			return err
		}
		if o.Value == "" {
			// An empty value would read as "not given" and pass unnoticed.
			return errs.Usagef("%s needs a value", o.Spelled)
		}
		*map[string]*string{"offset": &a.offset, "limit": &a.limit, "format": &a.format, "root": &a.root}[o.Long[0]] = o.Value
		return nil
	})
	switch {
	case err != nil:
		return a, err
	case len(ops) == 0:
		return a, errs.Usagef("missing PATH; usage: rowkit %s", readUsage)
	case len(ops) > 1:
		return a, errs.Usagef("read takes one PATH, got %q and %q", ops[0], ops[1])
	}
	a.path, a.hasPath = ops[0], true
	switch a.format {
	case read.FormatRows, read.FormatNumbered, read.FormatPlain, read.FormatJSON:
	default:
		return a, errs.Usagef("unknown format %q: use rows, numbered, plain or json", a.format)
	}
	return a, nil
}

func runRead(ctx context.Context, env *cli.Env, args []string) error {
	a, err := parseReadArgs(args)
	if err != nil {
		return err
	}
	if _, err := bounded(env, a.maxOutput); err != nil {
		return err
	}
	var root *workspace.Root
	if a.root != "" {
		root, err = openWorkspace(env, a.root)
	} else {
		root, err = openWorkDir(env)
	}
	if err != nil {
		return err
	}
	notePendingIn(env, root, a.path)
	in := read.Input{Path: a.path}
	res, rerr := read.ParseCounts(&in, a.offset, a.limit)
	var out []byte
	if rerr == nil {
		out, rerr = readView(ctx, env, root, in, a.format)
	} else {
		out = read.Format(res, a.format)
	}
	if _, err := env.Stdout.Write(out); err != nil {
		return errs.Errorf(errs.Write, "writing the result: %v", err)
	}
	return rerr
}

// readView reads in and formats the view. Under an output bound
// (env.OutputBytes; the text formats, json is a document for programs and
// is never cut) the view keeps the rows that fit the bound with what
// follows them, the notes, reading the file once
// (read.Fit).
func readView(ctx context.Context, env *cli.Env, root *workspace.Root, in read.Input, format string) ([]byte, error) {
	if env.OutputBytes <= 0 || format == read.FormatJSON {
		res, err := read.Read(ctx, root, in, read.Options{})
		return read.Format(res, format), err
	}
	// Bytes only: the command's view has no token budget; no more rows
	// than the bound holds printed.
	b := rows.Budget{Limit: math.MaxInt32, Ceiling: math.MaxInt32, MaxBytes: env.OutputBytes}
	opts := read.Options{
		Limits: read.Limits{MaxViewBytes: min(read.DefaultLimits.MaxViewBytes, env.OutputBytes)},
		Budget: read.Tokens(b),
		Fit:    &read.Fit{Max: env.OutputBytes, Size: func(res *read.Result) int { return len(read.Format(res, format)) }},
	}
	res, err := read.Read(ctx, root, in, opts)
	return read.Format(res, format), err
}
