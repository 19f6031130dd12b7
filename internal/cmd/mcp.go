package cmd

import (
	"context"
	"os"
	"strings"
	"syscall"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/mcpserver"
)

// MCP is rowkit mcp: the MCP server on stdio.
var MCP = &cli.Command{
	Name:    "mcp",
	Usage:   mcpUsage,
	Summary: "serve rowkit's tools to an MCP client (Claude Code, Codex, Cursor) over stdio",
	Help: `Speaks the Model Context Protocol on stdin/stdout (newline-delimited
JSON-RPC) until stdin ends or rowkit gets SIGINT/SIGTERM, which cancels the
calls still running (a search is stopped, not finished) and exits at once.
One line on stderr says what is served; stderr also carries log lines,
never stdout.

Tools: inspect_repository, inspect_file, search, read_file, edit, and
run_validations only when --config allows validations to MCP callers
(mcp.allowValidations). Every path argument is confined to a root:
relative paths are relative to the first root, absolute paths must lie
inside one, and symlinks leading out are refused. When the client
announces MCP roots, the server uses those that lie inside a --root and
ignores (and logs) the others.

Every result is bounded by the token rule and by what the client passes
its model whole (which it says at initialize; Codex names its model in
each call): a view, search or report cut there ends at a whole row and
says how to go on.

read_file, search, inspect_file and edit answer with text alone (verified
rows LINE:HASH TEXT, an outline, an edit report): agent clients show their
model a result's structuredContent in place of its text. --structured adds
their output schemas and structuredContent (the CLI's JSON) for programmatic
clients. A failure is an error result whose text is one line,
CODE: MESSAGE (HINT).

options:
  --root DIR     a confinement root (repeatable; default: the current
                 directory)
  --config FILE  the operator's validation allowlist, the format of rowkit
                 review --config; a repository's own rowkit.json is never
                 read
  --structured   every tool declares its output schema and returns
                 structuredContent, failures a Failure object
  --max-output BYTES
                 bound every result at BYTES of what the client shows
                 its model (0: the token rule alone); the default comes
                 from ROWKIT_MAX_OUTPUT, else from the client: Codex
                 46,000 (11,400 for a model it has no metadata for),
                 Claude Code 96,000 (every tool declares
                 anthropic/maxResultSizeChars 100,000), any other 46,000
`,
	Exits: []cli.Exit{
		{Status: 0, When: "the client disconnected (stdin ended), or rowkit got SIGINT or SIGTERM"},
		{Status: 1, When: "a root could not be opened (read)"},
		{Status: 2, When: "usage (an unknown argument, a missing or empty value, --config twice, a value after --structured, a --max-output or ROWKIT_MAX_OUTPUT that is not a number of bytes) or a config that cannot be read or is invalid (E_CONFIG)"},
	},
	Run:     runMCP,
	Signals: []os.Signal{os.Interrupt, syscall.SIGTERM},
}

const mcpUsage = "rowkit mcp [--root DIR]... [--config FILE] [--structured] [--max-output BYTES]"

// mcpOptions are rowkit mcp's options.
var mcpOptions = []cli.Option{
	{Long: []string{"root"}, Value: true, Repeat: true},
	{Long: []string{"config"}, Value: true},
	{Long: []string{"structured"}},
	maxOutputOption,
}

func runMCP(ctx context.Context, env *cli.Env, args []string) error {
	var o mcpserver.Options
	given := map[string]string{} // the paths opened, and as they were given
	maxOut := notGiven
	ops, err := cli.Parse("mcp", mcpOptions, args, func(a cli.Arg) (err error) {
		switch a.Long[0] {
		case "structured":
			o.Structured = true
			return nil
		case maxOutputOption.Long[0]:
			maxOut, err = parseMaxOutput(a.Spelled, a.Value)
			return err
		}
		if a.Value == "" {
			return errs.Usagef("%s is empty", a.Spelled)
		}
		given[env.Path(a.Value)] = a.Value
		if a.Long[0] == "root" {
			o.Roots = append(o.Roots, env.Path(a.Value))
		} else {
			o.Config = env.Path(a.Value)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(ops) > 0 {
		return errs.Usagef("unexpected argument %q; usage: %s", ops[0], mcpUsage)
	}
	// Without --max-output or ROWKIT_MAX_OUTPUT each result is bounded by
	// what its client passes whole (the server tells the client).
	if maxOut == notGiven {
		if maxOut, err = envMaxOutput(env); err != nil {
			return err
		}
	}
	switch maxOut {
	case notGiven:
	case 0:
		o.OutputBytes = mcpserver.NoOutputBound
	default:
		o.OutputBytes = maxOut
	}
	if len(o.Roots) == 0 {
		dir, err := env.WorkDir()
		if err != nil {
			return err
		}
		o.Roots = []string{dir}
	}
	o.LookupEnv = env.LookupEnv
	o.Log = env.Stderr
	o.Version = strings.TrimPrefix(cli.Version(), "rowkit ")
	srv, err := mcpserver.New(o)
	if err != nil {
		return asGiven(err, given)
	}
	defer srv.Close()
	env.Stderr.Write([]byte(srv.Banner() + "\n"))
	return srv.ServeStdio(ctx, env.Stdin, env.Stdout)
}
