// Package cmd holds the CLI adapters, one file per command: each parses its
// arguments, calls an engine with a context (and a confined root where the
// command has one), prints the engine's result and returns the engine's
// error, which cli.Exec turns into the stderr line and the exit code. No
// engine imports this package.
package cmd
