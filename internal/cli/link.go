package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/regfile"
)

// Codes of rowkit link.
const (
	CodeNotDir = "not_directory"
	CodeExists = "exists"
	CodeLink   = "link"
)

// Names are the shell names of cmds, the names the binary answers to as
// argv[0] (hread, hgrep, ...): what rowkit link makes, and what rowkit
// shell puts on its script's PATH. A command added to the table with an
// alias is in both.
func Names(cmds []*Command) []string {
	var names []string
	for _, c := range cmds {
		names = append(names, c.Aliases...)
	}
	return names
}

func linkCommand(cmds []*Command) *Command {
	names := Names(cmds)
	return &Command{
		Name:    "link",
		Usage:   "rowkit link DIR",
		Summary: "create the shell names (" + strings.Join(names, ", ") + ") as symlinks to this binary in DIR",
		Help: `Each name becomes a symlink DIR/NAME pointing at the running rowkit binary,
so that an agent with only a shell can call it by that name. A name that is
already a symlink to a rowkit binary is pointed at this one; anything else
at that path (a file, a directory, another program's link) is left alone and
reported as an error.
`,
		Exits: []Exit{
			{Status: 0, When: "every name is linked"},
			{Status: 1, When: "some name could not be linked (the error names it)"},
			{Status: 2, When: "usage: not exactly one DIR"},
		},
		Run: func(_ context.Context, env *Env, args []string) error {
			args, err := Parse("link", nil, args, nil)
			if err != nil {
				return err
			}
			if len(args) != 1 {
				return errs.Usagef("want exactly one argument, the directory: rowkit link DIR")
			}
			return Link(env, env.Path(args[0]), args[0], names)
		},
	}
}

// Link creates each of names in dir as a symlink to the running
// executable. given is dir as the user wrote it, for messages and the list.
func Link(env *Env, dir, given string, names []string) error {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return errs.Errorf(CodeNotDir, "%s is not a directory; create it first", given)
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return errs.Errorf(CodeLink, "cannot locate the running binary: %v", err)
	}
	var failed, werr error
	for _, name := range names {
		path := filepath.Join(given, name)
		if err := linkOne(exe, filepath.Join(dir, name), path); err != nil {
			fmt.Fprintf(env.Stderr, "rowkit link: %v\n", err)
			failed = err
			continue
		}
		if _, err := fmt.Fprintf(env.Stdout, "%s -> %s\n", path, exe); err != nil && werr == nil {
			werr = err
		}
	}
	switch {
	case failed != nil:
		return errs.Errorf(CodeExists, "some names were not linked (see above)")
	case werr != nil:
		return errs.Errorf(errs.Write, "the names are linked, but writing the list failed: %v", werr)
	}
	return nil
}

// linkOne links at to exe; path is at as the user named it, for messages.
func linkOne(exe, at, path string) error {
	fail := func(err error) error {
		var le *os.LinkError
		if errors.As(err, &le) {
			err = le.Err
		}
		return errs.Errorf(CodeLink, "%s: %v", path, regfile.Cause(err))
	}
	fi, err := os.Lstat(at)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.Symlink(exe, at); err != nil {
			return fail(err)
		}
		return nil
	case err != nil:
		return fail(err)
	case fi.Mode()&fs.ModeSymlink == 0:
		return errs.Errorf(CodeExists, "%s exists and is not a symlink; refusing to replace it", path)
	}
	target, err := os.Readlink(at)
	if err != nil {
		return fail(err)
	}
	if target == exe {
		return nil
	}
	if !isRowkit(at, target, exe) {
		return errs.Errorf(CodeExists, "%s is a symlink to %s, not to rowkit; refusing to replace it", path, target)
	}
	// Replace atomically, so the name never disappears.
	tmp := at + ".rowkit-link"
	os.Remove(tmp)
	if err := os.Symlink(exe, tmp); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, at); err != nil {
		os.Remove(tmp)
		return fail(err)
	}
	return nil
}

// isRowkit reports whether a symlink at path with the given target is one
// that rowkit link made: it resolves to this binary, or to a file named
// rowkit (an older or moved installation).
func isRowkit(path, target, exe string) bool {
	if filepath.Base(target) == "rowkit" {
		return true
	}
	a, err1 := os.Stat(path)
	b, err2 := os.Stat(exe)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}
