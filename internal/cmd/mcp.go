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
	Usage:   "rowkit mcp [--root DIR]... [--config FILE]",
	Summary: "serve rowkit's tools to an MCP client (Claude Code, Codex, Cursor) over stdio",
	Help: `Speaks the Model Context Protocol on stdin/stdout (newline-delimited
JSON-RPC) until stdin ends or rowkit gets SIGINT/SIGTERM. One line on stderr
says what is served; stderr also carries log lines, never stdout.

Tools: inspect_repository, inspect_file, search, read_file, and
run_validations only when --config allows validations to MCP callers
(mcp.allowValidations). Every path argument is confined to a root: relative
paths are relative to the first root, absolute paths must lie inside one,
and symlinks leading out are refused. When the client announces MCP roots,
the server uses those that lie inside a --root and ignores (and logs) the
others.

options:
  --root DIR     a confinement root (repeatable; default: the current
                 directory)
  --config FILE  the operator's validation allowlist, the format of rowkit
                 review --config; a repository's own rowkit.json is never
                 read
`,
	Exits: []cli.Exit{
		{Status: 0, When: "the client disconnected (stdin ended), or rowkit got SIGINT or SIGTERM"},
		{Status: 1, When: "a root could not be opened (read)"},
		{Status: 2, When: "usage (an unknown argument, a missing or empty value, --config twice) or a config that cannot be read or is invalid (E_CONFIG)"},
	},
	Run:     runMCP,
	Signals: []os.Signal{os.Interrupt, syscall.SIGTERM},
}

func runMCP(ctx context.Context, env *cli.Env, args []string) error {
	var o mcpserver.Options
	given := map[string]string{} // the paths opened, and as they were given
	for i := 0; i < len(args); i++ {
		name, val, has := strings.Cut(args[i], "=")
		switch name {
		case "--root", "--config":
		default:
			return errs.Usagef("unknown argument %q; usage: rowkit mcp [--root DIR]... [--config FILE]", args[i])
		}
		if !has {
			if i+1 >= len(args) {
				return errs.Usagef("%s needs a value", name)
			}
			i++
			val = args[i]
		}
		if val == "" {
			return errs.Usagef("%s is empty", name)
		}
		if name == "--root" {
			o.Roots = append(o.Roots, env.Path(val))
		} else if o.Config != "" {
			return errs.Usagef("--config is given twice")
		} else {
			o.Config = env.Path(val)
		}
		given[env.Path(val)] = val
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
	env.Stderr.Write([]byte(srv.Banner() + "\n"))
	return srv.ServeStdio(ctx, env.Stdin, env.Stdout)
}
