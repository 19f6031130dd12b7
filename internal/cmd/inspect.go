package cmd

import (
	"context"
	"errors"
	"strconv"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/inspect"
)

// Inspect is inspect_file as a rowkit command.
var Inspect = &cli.Command{
	Name:    "inspect",
	Aliases: []string{"inspect_file"},
	Usage:   "inspect_file [--text] [--max-output BYTES] PATH",
	Summary: "outline a file's structure as JSON, each entry spanning LINE:HASH rows",
	Help: `Prints one JSON document (LF-terminated, each outline entry on a line of
its own) describing the file PATH, a path relative to the workspace (the
canonical current directory):

  {"ok":true,"data":{"path","kind","language","size_bytes","line_count",
   "parse_complete","outline":[...]},"truncated":false,"truncation":null}

kind is code, markdown, json or none; language is go, python, typescript
(.tsx included) or javascript for code, null otherwise. Outline entries are
flat, in source order, and carry "line" and "line_end": the LINE:HASH rows
of the first and last line of the entry, usable directly as ROW or ROW..ROW
edit targets. Code entries are {"kind","name",["receiver"],"line",
"line_end"} with kind import, constant, variable, type, class, function or
method; Markdown entries are heading (with "level") and frontmatter; JSON
entries are {"kind":"json","pointer","value_type","line","line_end"}. No
entry holds source text beyond a name: no bodies, values, comments or
fields.

Formats by exact extension: .go .py .pyi .ts .tsx .d.ts .mts .d.mts .cts
.d.cts .js .jsx .mjs .cjs .md .json. Any other file is kind "none": only
its size is reported (line_count null) and its content is never read.
Supported files must be strict UTF-8. A recoverable syntax error gives a
partial outline with "parse_complete":false.

The whole output is at most 65,536 bytes, or the output bound (below); a
longer outline keeps its longest prefix that fits and reports
"truncated":true,"truncation":{"reason":"output_bytes","after_entries":N}.

PATH is exactly one argument ("--" may precede a path starting with a
dash). Absolute paths, paths climbing out with "..",
@shell paths and symlinks whose target leaves the workspace are refused.

--text prints the outline as MCP inspect_file shows it instead, at about
a third of the JSON's tokens: a header line (path, kind, language, lines),
then one line per entry, ROW[..ROW] kind name, where runs of imports or of
one-line constants share a line and a method inside its class is named
without the class. It keeps the JSON's entries within the same bound.

On failure stdout is one document {"ok":false,"path":PATH or null,
"error":{"code","message"}} and stderr is empty. Codes: usage, not_found,
not_regular, not_utf8, outside_workspace, read, parse, output_limit.

options:
  --text              the outline as text, one line per entry (above)
` + maxOutputHelp,
	Exits: []cli.Exit{
		{Status: 0, When: "success, also a partial parse (parse_complete false) or a truncated outline"},
		{Status: 1, When: "any failure, usage errors included (the failure document's code tells them apart: usage, also for a --max-output or ROWKIT_MAX_OUTPUT that is not a number of bytes; not_found, not_regular, not_utf8, outside_workspace, read, parse, output_limit)"},
	},
	Run:  runInspect,
	Fail: failInspect,
}

// textOption is inspect_file --text: the outline as text.
var textOption = cli.Option{Long: []string{"text"}}

// inspectFailure carries the path a failure document reports: the path as
// given, nil unless there was exactly one.
type inspectFailure struct {
	path *string
	err  error
}

func (f *inspectFailure) Error() string { return f.err.Error() }
func (f *inspectFailure) Unwrap() error { return f.err }

// inspectUsage is a usage failure; inspect_file exits 1 on it like on
// every other failure.
func inspectUsage(path *string, msg string) error {
	return &inspectFailure{path, errs.New(errs.Usage, msg).WithExit(errs.ExitFailure)}
}

func runInspect(ctx context.Context, env *cli.Env, args []string) error {
	maxOut, text := notGiven, false
	args, err := cli.Parse("inspect", []cli.Option{maxOutputOption, textOption}, args, func(a cli.Arg) (err error) {
		if a.Long[0] == "text" {
			text = true
			return nil
		}
		maxOut, err = parseMaxOutput(a.Spelled, a.Value)
		return err
	})
	if err == nil {
		_, err = bounded(env, maxOut)
	}
	if e, ok := errs.As(err); ok {
		return inspectUsage(nil, e.Msg)
	}
	if err != nil {
		return err // help
	}
	switch {
	case len(args) == 0:
		return inspectUsage(nil, "missing PATH; usage: inspect_file PATH")
	case len(args) > 1:
		return inspectUsage(nil, "inspect_file takes exactly one PATH, got "+strconv.Itoa(len(args))+"; quote a path with spaces")
	case args[0] == "":
		return inspectUsage(&args[0], "PATH is empty; usage: inspect_file PATH")
	}
	path := &args[0]
	root, err := openWorkDir(env)
	if err != nil {
		return &inspectFailure{path, err}
	}
	notePendingIn(env, root, *path)
	res, err := inspect.Inspect(ctx, root, *path)
	if err == nil {
		res, err = res.WithinLines(env.OutputBytes)
	}
	if err != nil {
		return &inspectFailure{path, err}
	}
	out := res.AppendLines(make([]byte, 0, 4096))
	if text {
		// Within the JSON's bound, the text (shorter) is too.
		out = []byte(inspect.OutlineText(res))
	}
	if _, err := env.Stdout.Write(out); err != nil {
		return &inspectFailure{path, errs.New(errs.Read, "writing the result: "+err.Error())}
	}
	return nil
}

// failInspect writes the failure document. Every failure exits 1.
func failInspect(env *cli.Env, err error) int {
	var path *string
	var pf *inspectFailure
	if errors.As(err, &pf) {
		path = pf.path
	}
	env.Stdout.Write(inspect.AppendFailure(nil, path, err))
	return errs.ExitFailure
}
