package cmd

import (
	"fmt"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/txn"
	"github.com/rowkit/rowkit/internal/workspace"
)

// notePending writes the one stderr line of a reading command that shows
// files of a transaction an interrupted edit left pending (in may be nil:
// nothing to say). The command still reads, never settles, and exits as it
// would; under an output bound the line's bytes come off the bound.
func notePending(env *cli.Env, in *txn.Interruption) {
	if in == nil {
		return
	}
	line := fmt.Sprintf("%s: %s: %s\n", env.Name, errs.PendingEdit, in.Line(env.Dir))
	fmt.Fprint(env.Stderr, line)
	if env.OutputBytes > 0 {
		env.OutputBytes = max(env.OutputBytes-len(line), 1)
	}
}

// notePendingIn is notePending for a command confined to root that shows
// the path req.
func notePendingIn(env *cli.Env, root *workspace.Root, req string) {
	clean, err := workspace.Clean(req)
	if err != nil {
		return
	}
	notePending(env, txn.Interrupted(root, []string{clean}))
}

// notePendingAbove is notePending for a command not confined to a
// workspace, showing paths (as given, relative to the working directory):
// the workspaces are the working directory and those above it.
func notePendingAbove(env *cli.Env, paths []string) {
	if env.Dir == "" {
		return
	}
	notePending(env, txn.InterruptedAbove(env.Dir, paths))
}
