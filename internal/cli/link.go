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
)

// Codes of rowkit link.
const (
	CodeNotDir = "not_directory"
	CodeExists = "exists"
	CodeLink   = "link"
)

func linkCommand(cmds []*Command) *Command {
	var names []string
	for _, c := range cmds {
		names = append(names, c.Aliases...)
	}
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
			if len(args) != 1 || strings.HasPrefix(args[0], "-") && args[0] != "-" {
				return errs.Usagef("want exactly one argument, the directory: rowkit link DIR")
			}
			return Link(env, args[0], names)
		},
	}
}

// Link creates each of names in dir as a symlink to the running executable.
func Link(env *Env, dir string, names []string) error {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return errs.Errorf(CodeNotDir, "%s is not a directory; create it first", dir)
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
		path := filepath.Join(dir, name)
		if err := linkOne(exe, path); err != nil {
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

func linkOne(exe, path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.Symlink(exe, path); err != nil {
			return errs.Errorf(CodeLink, "%v", err)
		}
		return nil
	case err != nil:
		return errs.Errorf(CodeLink, "%v", err)
	case fi.Mode()&fs.ModeSymlink == 0:
		return errs.Errorf(CodeExists, "%s exists and is not a symlink; refusing to replace it", path)
	}
	target, err := os.Readlink(path)
	if err != nil {
		return errs.Errorf(CodeLink, "%v", err)
	}
	if target == exe {
		return nil
	}
	if !isRowkit(path, target, exe) {
		return errs.Errorf(CodeExists, "%s is a symlink to %s, not to rowkit; refusing to replace it", path, target)
	}
	// Replace atomically, so the name never disappears.
	tmp := path + ".rowkit-link"
	os.Remove(tmp)
	if err := os.Symlink(exe, tmp); err != nil {
		return errs.Errorf(CodeLink, "%v", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return errs.Errorf(CodeLink, "%v", err)
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
