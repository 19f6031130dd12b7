// Command rowkit is the one binary behind every rowkit surface. It only
// dispatches: by subcommand (rowkit hread ...) or by the name it was invoked
// under (hread ...). The work lives in the packages under internal/.
//
// main is also the one place that reads the process: its working
// directory, environment and standard streams become the command's
// cli.Env, and the signals and runtime tuning a command asks for are set
// up here, so that every command can equally run inside another process
// (an embedder, a test).
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/cmd"
)

func main() {
	ctx := context.Background()
	if c := cli.Lookup(os.Args, cmd.All); c != nil {
		if len(c.Signals) > 0 {
			// The first signal cancels the command, which stops what it
			// started and ends; a second one has its default action again.
			// The cause names the signal (the shell exits 128 + it).
			var cancel context.CancelCauseFunc
			ctx, cancel = context.WithCancelCause(ctx)
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, c.Signals...)
			go func() {
				s := <-sigs
				signal.Stop(sigs)
				cancel(cli.Signal{Signal: s})
			}()
		}
		if _, set := os.LookupEnv("GOGC"); c.GCPercent != 0 && !set {
			debug.SetGCPercent(c.GCPercent)
		}
	}
	code := cli.Main(ctx, stdEnv(), os.Args, cmd.All)
	os.Exit(code)
}

// stdEnv is the process's own environment. A working directory that cannot
// be determined (it was removed) is left empty: the commands that need it
// say so.
func stdEnv() *cli.Env {
	dir, err := os.Getwd()
	if err != nil {
		dir = ""
	}
	return &cli.Env{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Dir: dir, LookupEnv: os.LookupEnv, Environ: os.Environ,
		// The running binary itself, even if its file was replaced.
		Executable: "/proc/self/exe",
	}
}
