package mcpserver_test

import (
	"context"
	"os"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/cmd"
	"github.com/rowkit/rowkit/internal/mcpserver"
)

// The parity tests compare each tool with the CLI run in-process, as a
// shell runs its private commands: the command table imports this package,
// so it is reached from here.
func init() {
	mcpserver.RunCLI = func(dir string, args ...string) ([]byte, []byte, int) {
		env := cli.Env{Dir: dir, LookupEnv: os.LookupEnv}
		out := cli.Call(context.Background(), env, cmd.All, append([]string{"rowkit"}, args...)...)
		return out.Stdout, out.Stderr, out.Code
	}
}
