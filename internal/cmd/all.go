package cmd

import "github.com/rowkit/rowkit/internal/cli"

// All is every command of the rowkit binary, in the order help lists them:
// main dispatches to them, rowkit link and rowkit shell make their shell
// names (cli.Names: a command added here with an alias is in both), and a
// caller that runs commands in-process finds them here by name (Find).
var All = []*cli.Command{
	Hread,
	Read,
	Grep,
	Symbol,
	Review,
	Inspect,
	Patch,
	Recover,
	MCP,
	Router,
	Carrier,
	Shell,
}

func init() {
	// rowkit shell's, made once All is (see shellNames).
	shellNames = append([]string{"rowkit"}, cli.Names(All)...)
}

// Find returns the command named name, as a subcommand (grep) or by a
// name the binary answers to (hgrep), or nil.
func Find(name string) *cli.Command {
	for _, c := range All {
		if c.Name == name {
			return c
		}
		for _, a := range c.Aliases {
			if a == name {
				return c
			}
		}
	}
	return nil
}
