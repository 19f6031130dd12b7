package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rowkit/rowkit/internal/cmd"
	"github.com/rowkit/rowkit/internal/rows"
)

// TestMain lets the test binary run as rowkit and as each shell name, so the
// scripts exercise the real dispatch on argv[0].
func TestMain(m *testing.M) {
	names := map[string]func(){"rowkit": main}
	for _, c := range cmd.All {
		for _, a := range c.Aliases {
			names[a] = main
		}
	}
	testscript.Main(m, names)
}

// scriptCmds are the custom commands of the scripts. Test files of other
// commands add theirs in an init function.
var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"mkfifo":     cmdMkfifo,
	"genlines":   cmdGenlines,
	"tokens":     cmdTokens,
	"rowsprefix": cmdRowsPrefix,
	"bytes":      cmdBytes,
	"mksock":     cmdMksock,
	"denied":     cmdDenied,
	"genlong":    cmdGenlong,
}

// scriptSetups prepare every script's environment; test files of other
// commands add theirs in an init function.
var scriptSetups []func(env *testscript.Env) error

// scriptConds are the conditions scripts may test with [NAME].
var scriptConds = map[string]func() bool{
	"root": func() bool { return os.Geteuid() == 0 },
	// The commands run inside rowkit shell (TestScriptsThroughShell).
	"throughshell": func() bool { return false },
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "../../testdata/script",
		Setup: func(env *testscript.Env) error {
			for _, f := range scriptSetups {
				if err := f(env); err != nil {
					return err
				}
			}
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if f, ok := scriptConds[cond]; ok {
				return f(), nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: scriptCmds,
	})
}

// mkfifo PATH
func cmdMkfifo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mkfifo PATH")
	}
	ts.Check(syscall.Mkfifo(ts.MkAbs(args[0]), 0o644))
}

// genlines FILE N writes N lines of varied prose and code, each ending in
// LF, so that a whole-file read passes the token limit.
func cmdGenlines(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: genlines FILE N")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	f, err := os.Create(ts.MkAbs(args[0]))
	ts.Check(err)
	w := bufio.NewWriter(f)
	words := []string{"alpha", "beta", "gamma", "needle", "return", "func", "値", "naïve", "{", "}", "x := 42", "// note"}
	for i := range n {
		fmt.Fprintf(w, "%*s%s %s %d %s\n", i%8, "", words[i%len(words)], words[(i*7)%len(words)], i*31%1000, words[(i*5)%len(words)])
	}
	ts.Check(w.Flush())
	ts.Check(f.Close())
}

// tokens FILE MIN MAX checks that FILE (or stdout/stderr) holds between MIN
// and MAX o200k_base tokens.
func cmdTokens(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: tokens FILE MIN MAX")
	}
	lo, err1 := strconv.Atoi(args[1])
	hi, err2 := strconv.Atoi(args[2])
	if err1 != nil || err2 != nil {
		ts.Fatalf("usage: tokens FILE MIN MAX")
	}
	n := rows.CountTokens(ts.ReadFile(args[0]))
	if n < lo || n > hi {
		ts.Fatalf("%s has %d tokens, want %d..%d", args[0], n, lo, hi)
	}
	ts.Logf("%s has %d tokens", args[0], n)
}

// rowsprefix OUT SRC checks that OUT is exactly the verified rows of the
// first lines of SRC (LF-terminated lines only), at least one of them.
func cmdRowsPrefix(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: rowsprefix OUT SRC")
	}
	out := ts.ReadFile(args[0])
	src := strings.Split(ts.ReadFile(args[1]), "\n")
	var want []byte
	for i, line := range src {
		if len(want) >= len(out) {
			break
		}
		want = rows.AppendRow(want, i+1, []byte(line))
	}
	if out == "" || string(want) != out {
		ts.Fatalf("%s is not a prefix of the rows of %s", args[0], args[1])
	}
}

// bytes FILE GO-STRING writes the Go-escaped string (without its quotes) to
// FILE, for content a txtar file cannot hold: CR, invalid UTF-8, no final LF.
func cmdBytes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: bytes FILE GO-STRING")
	}
	s, err := strconv.Unquote(`"` + args[1] + `"`)
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(s), 0o644))
}

// mksock PATH binds a unix socket at PATH for the rest of the script.
func cmdMksock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mksock PATH")
	}
	l, err := net.Listen("unix", ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Defer(func() { l.Close() })
}

// denied CMD FILE runs CMD FILE on a copy of FILE that its user may not
// read: mode 000, and, when the test runs as root (who reads anything), as
// the user nobody. It checks that CMD fails with permission_denied.
func cmdDenied(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: denied CMD FILE")
	}
	bin, err := exec.LookPath(args[0])
	ts.Check(err)
	// A directory every user can enter, holding the binary and the file.
	dir, err := os.MkdirTemp("", "rowkit-denied")
	ts.Check(err)
	ts.Defer(func() { os.RemoveAll(dir) })
	ts.Check(os.Chmod(dir, 0o755))
	// A hard link, not a copy: a copy written here could be held open by a
	// child forked meanwhile by a parallel script, and exec would then fail
	// with "text file busy".
	exe := filepath.Join(dir, args[0])
	ts.Check(os.Link(bin, exe))
	ts.Check(os.Chmod(exe, 0o755))
	secret := filepath.Join(dir, "secret.txt")
	ts.Check(os.WriteFile(secret, []byte(ts.ReadFile(args[1])), 0o000))

	cmd := exec.Command(exe, secret)
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 || stdout.Len() != 0 || !strings.Contains(stderr.String(), "permission_denied") {
		ts.Fatalf("want exit 1, empty stdout, permission_denied; got %v, stdout %q, stderr %q", err, stdout.String(), stderr.String())
	}
	ts.Logf("%s", stderr.String())
}

// genlong FILE BYTES writes one line of BYTES bytes, then a short line.
func cmdGenlong(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: genlong FILE BYTES")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	data := append(bytes.Repeat([]byte("word "), n/5+1)[:n], "\nafter\n"...)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), data, 0o644))
}
