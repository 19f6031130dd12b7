package cli

import (
	"bytes"
	"context"
)

// Output is what a command run by Call wrote, and how it ended.
type Output struct {
	Stdout, Stderr []byte
	Code           int
}

// Call runs the command line argv (as os.Args: argv[0] is the name invoked,
// rowkit or a shell name) against cmds inside this process: in env's
// directory and environment, with its
// Stdin and OutputBytes, and its output in buffers (env's Stdout and
// Stderr are not used). Tests call the commands this way to compare them
// with another surface (the MCP tools) without a process per call.
func Call(ctx context.Context, env Env, cmds []*Command, argv ...string) Output {
	var stdout, stderr bytes.Buffer
	env.Stdout, env.Stderr = &stdout, &stderr
	code := Main(ctx, &env, argv, cmds)
	return Output{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Code: code}
}
