// Command rowkit is the one binary behind every rowkit surface. It only
// dispatches: by subcommand (rowkit hread ...) or by the name it was invoked
// under (hread ...). The work lives in the packages under internal/.
package main

import (
	"context"
	"os"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/cmd"
)

// commands is every command the binary offers.
var commands = []*cli.Command{
	cmd.Hread,
	cmd.Read,
	cmd.Grep,
	cmd.Review,
	cmd.Inspect,
	cmd.Patch,
	cmd.Recover,
	cmd.MCP,
	cmd.Router,
	cmd.Carrier,
}

func main() {
	os.Exit(cli.Main(context.Background(), cli.StdEnv(), os.Args, commands))
}
