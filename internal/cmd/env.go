package cmd

import (
	"sort"
	"strings"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/workspace"
)

// openWorkDir opens the command's working directory as its workspace.
func openWorkDir(env *cli.Env) (*workspace.Root, error) {
	dir, err := env.WorkDir()
	if err != nil {
		return nil, err
	}
	return workspace.Open(dir)
}

// openWorkspace opens the workspace dir, a directory given on the command
// line: relative to the working directory, and named as given in a
// message.
func openWorkspace(env *cli.Env, dir string) (*workspace.Root, error) {
	at := env.Path(dir)
	root, err := workspace.Open(at)
	if err != nil {
		return nil, asGiven(err, map[string]string{at: dir})
	}
	return root, nil
}

// asGiven words err with each path the command opened (a key of given)
// as the user wrote it (its value): a message never shows the joined path.
func asGiven(err error, given map[string]string) error {
	e, ok := errs.As(err)
	if !ok {
		return err
	}
	ats := make([]string, 0, len(given))
	for at := range given {
		ats = append(ats, at)
	}
	// The longest first: one joined path may begin another.
	sort.Slice(ats, func(i, j int) bool { return len(ats[i]) > len(ats[j]) })
	c := *e
	for _, at := range ats {
		c.Msg = strings.ReplaceAll(c.Msg, at, given[at])
	}
	return &c
}
