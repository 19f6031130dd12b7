package main

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	scriptCmds["rowscript"] = cmdRowScript
	scriptCmds["inreadonly"] = cmdInReadonly
}

// inreadonly CODE DIR PROG [ARGS...] runs PROG in a copy of DIR that its
// user may read but not write, except DIR/.rowkit (rowkit's state, created
// writable): the user nobody when the tests run as root (root writes
// anywhere), else the current user with the directory made read-only. It
// checks PROG's exit code; its stdout and stderr are checked as for exec;
// afterwards DIR holds the copy's files as PROG left them.
func cmdInReadonly(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: inreadonly CODE DIR PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	src := ts.MkAbs(args[1])
	bin, err := exec.LookPath(args[2])
	ts.Check(err)
	top, err := os.MkdirTemp("", "rowkit-readonly")
	ts.Check(err)
	ts.Defer(func() {
		filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
		os.RemoveAll(top)
	})
	ts.Check(os.Chmod(top, 0o755))
	exe := filepath.Join(top, args[2])
	ts.Check(os.Link(bin, exe)) // a link, not a copy: see cmdDenied
	ws := filepath.Join(top, "ws")
	ts.Check(copyDir(src, ws))
	ts.Check(os.MkdirAll(filepath.Join(ws, ".rowkit"), 0o700))
	cmd := exec.Command(exe, args[3:]...)
	cmd.Dir = ws
	if os.Geteuid() == 0 {
		ts.Check(filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, 65534, 65534)
		}))
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	ts.Check(os.Chmod(ws, 0o555))
	cmd.Stdout, cmd.Stderr = ts.Stdout(), ts.Stderr()
	got := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[2], err)
		}
		got = ee.ExitCode()
	}
	ts.Check(os.Chmod(ws, 0o755))
	ts.Check(os.RemoveAll(src))
	ts.Check(copyDir(ws, src))
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[2], got, want)
	}
}

// copyDir copies the directories and regular files under src to dst.
func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, fi.Mode().Perm())
	})
}

// rowRefs finds the row references in the output of hread (LINE:HASH TEXT),
// hgrep ("PATH":LINE:HASH TEXT), hpatch's edge rows and inspect_file's JSON
// ("line":"LINE:HASH"), in order.
var rowRefs = regexp.MustCompile(`(?m)(?:^|^"(?:[^"\\]|\\.)*":|"line(?:_end)?":")([1-9][0-9]*:[0-9a-f]{4})`)

// rowscript OUT SCRIPT TEMPLATE writes SCRIPT from the Go-escaped TEMPLATE
// (without quotes), replacing {N} with the N-th row reference found in OUT
// (a file, or stdout/stderr of the last command): how an agent turns what
// it read into edit targets.
func cmdRowScript(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: rowscript OUT SCRIPT TEMPLATE")
	}
	var refs []string
	for _, m := range rowRefs.FindAllStringSubmatch(ts.ReadFile(args[0]), -1) {
		refs = append(refs, m[1])
	}
	tmpl, err := strconv.Unquote(`"` + args[2] + `"`)
	ts.Check(err)
	out := regexp.MustCompile(`\{([0-9]+)\}`).ReplaceAllStringFunc(tmpl, func(s string) string {
		n, _ := strconv.Atoi(strings.Trim(s, "{}"))
		if n < 1 || n > len(refs) {
			ts.Fatalf("%s has %d row references, no %d", args[0], len(refs), n)
		}
		return refs[n-1]
	})
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(out), 0o644))
}
