package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rowkit/rowkit/internal/grep"
)

// realRg is the installed ripgrep, found before any script changes PATH.
var realRg, realRgErr = exec.LookPath("rg")

func init() {
	scriptCmds["fakerg"] = cmdFakeRg
	scriptCmds["withoutrg"] = cmdWithoutRg
	scriptCmds["qwrite"] = cmdQwrite
	scriptCmds["genmatches"] = cmdGenmatches
	scriptCmds["within"] = cmdWithin
	scriptCmds["gone"] = cmdGone
	scriptCmds["hgrep-rejects-all"] = cmdRejectsAll
	scriptCmds["waitfile"] = cmdWaitfile
	scriptCmds["gencr"] = cmdGencr
}

// fakerg DIR [exec [PATH...]] writes DIR/rg, a ripgrep stand-in that
// appends each argument to DIR/rg.log (one a line) and its pid to
// DIR/rg.pid, then either execs the real rg (so the pid stays the same),
// with the PATHs (relative to the script's directory) added to its
// arguments, or exits 0. An added FIFO is a trap that hgrep's own check
// of named paths never sees: rg blocks on it until it is killed.
func cmdFakeRg(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) >= 2 && args[1] != "exec" {
		ts.Fatalf("usage: fakerg DIR [exec [PATH...]]")
	}
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o755))
	script := fmt.Sprintf("#!/bin/sh\necho $$ >> '%s/rg.pid'\nprintf '%%s\\n' \"$@\" >> '%s/rg.log'\n", dir, dir)
	if len(args) >= 2 {
		if realRgErr != nil {
			ts.Fatalf("ripgrep is not installed: %v", realRgErr)
		}
		extra := ""
		for _, p := range args[2:] {
			extra += fmt.Sprintf(" '%s'", ts.MkAbs(p))
		}
		script += fmt.Sprintf("exec '%s' \"$@\"%s\n", realRg, extra)
	}
	// Written by a child process, not by this one: a child that a parallel
	// script forks here could hold a descriptor this process wrote through,
	// and exec would fail with "text file busy".
	write := exec.Command("sh", "-c", `cat > "$1" && chmod 755 "$1"`, "sh", filepath.Join(dir, "rg"))
	write.Stdin = strings.NewReader(script)
	if out, err := write.CombinedOutput(); err != nil {
		ts.Fatalf("writing the fake rg: %v: %s", err, out)
	}
}

// withoutrg removes from PATH every directory that holds an rg.
func cmdWithoutRg(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: withoutrg")
	}
	var keep []string
	for _, d := range filepath.SplitList(ts.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "rg")); err == nil {
			continue
		}
		keep = append(keep, d)
	}
	ts.Setenv("PATH", strings.Join(keep, string(filepath.ListSeparator)))
}

// qwrite PATH CONTENT writes a file whose name and content are Go string
// literals, for names with newlines and content with CRs.
func cmdQwrite(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: qwrite \"PATH\" \"CONTENT\"")
	}
	name, err1 := strconv.Unquote(args[0])
	content, err2 := strconv.Unquote(args[1])
	if err1 != nil || err2 != nil {
		ts.Fatalf("qwrite: arguments must be Go string literals")
	}
	path := ts.MkAbs(name)
	ts.Check(os.MkdirAll(filepath.Dir(path), 0o755))
	ts.Check(os.WriteFile(path, []byte(content), 0o644))
}

// genmatches FILE N writes N lines "needle I".
func cmdGenmatches(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: genmatches FILE N")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	f, err := os.Create(ts.MkAbs(args[0]))
	ts.Check(err)
	w := bufio.NewWriterSize(f, 1<<20)
	for i := range n {
		fmt.Fprintf(w, "needle %d\n", i)
	}
	ts.Check(w.Flush())
	ts.Check(f.Close())
}

// onPath finds the program name on the script's PATH, or fails the script.
func onPath(ts *testscript.TestScript, name string) string {
	for _, d := range filepath.SplitList(ts.Getenv("PATH")) {
		if p := filepath.Join(d, name); fileExists(p) {
			return p
		}
	}
	ts.Fatalf("%s is not on PATH", name)
	return ""
}

// within SECONDS NAME ARGS... runs a program from PATH like exec, but fails
// the script if it has not exited after SECONDS (and kills it), so that a
// hang is a failure rather than a stuck test. Its output becomes stdout and
// stderr. With !, the program must exit non-zero.
func cmdWithin(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: within SECONDS NAME [ARGS...]")
	}
	secs, err := strconv.Atoi(args[0])
	ts.Check(err)
	prog := onPath(ts, args[1])
	cmd := exec.Command(prog, args[2:]...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = []string{"PATH=" + ts.Getenv("PATH"), "HOME=" + ts.Getenv("HOME")}
	cmd.Stdout, cmd.Stderr = ts.Stdout(), ts.Stderr()
	start := time.Now()
	ts.Check(cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(time.Duration(secs) * time.Second):
		cmd.Process.Kill()
		<-done
		ts.Fatalf("%s did not exit within %ds", args[1], secs)
	}
	ts.Logf("%s exited after %v: %v", args[1], time.Since(start).Round(time.Millisecond), err)
	var ee *exec.ExitError
	switch {
	case err != nil && !errors.As(err, &ee):
		ts.Fatalf("%v", err)
	case neg && err == nil:
		ts.Fatalf("%s unexpectedly succeeded", args[1])
	case !neg && err != nil:
		ts.Fatalf("%s failed: %v", args[1], err)
	}
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// gone PIDFILE checks that no process listed in PIDFILE is still running
// (a zombie counts as gone: it has stopped and only waits to be reaped).
func cmdGone(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: gone PIDFILE")
	}
	pids := strings.Fields(ts.ReadFile(args[0]))
	if len(pids) == 0 {
		ts.Fatalf("%s lists no process", args[0])
	}
	for _, pid := range pids {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		if i := strings.LastIndexByte(s, ')'); i >= 0 && strings.HasPrefix(s[i+1:], " Z") {
			continue
		}
		ts.Fatalf("process %s is still running: %s", pid, s)
	}
}

// hgrep-rejects-all runs hgrep with every rejected option of the policy
// table, in each spelling, and checks that each exits 2 with one stderr
// line naming the option. Run it with a fake rg first on PATH to prove that
// rg never started.
func cmdRejectsAll(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: hgrep-rejects-all")
	}
	n := 0
	for i := range grep.Options {
		o := &grep.Options[i]
		if o.Action != grep.Reject {
			continue
		}
		var argvs [][]string
		if o.Short != 0 {
			s := "-" + string(o.Short)
			if o.Value {
				argvs = append(argvs, []string{s, "x", "needle"}, []string{"-i" + s[1:] + "x", "needle"})
			} else {
				argvs = append(argvs, []string{s, "needle"}, []string{"-i" + s[1:], "needle"})
			}
		}
		for _, l := range o.Long {
			if o.Value {
				argvs = append(argvs, []string{"--" + l, "x", "needle"}, []string{"--" + l + "=x", "needle"})
			} else {
				argvs = append(argvs, []string{"--" + l, "needle"})
			}
		}
		for _, argv := range argvs {
			err := ts.Exec("hgrep", argv...)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 {
				ts.Fatalf("hgrep %q: %v, want exit status 2", argv, err)
			}
			stderr := ts.ReadFile("stderr")
			name := "--" + strings.SplitN(strings.TrimPrefix(argv[0], "--"), "=", 2)[0]
			if !strings.HasPrefix(argv[0], "--") {
				name = "-" + string(o.Short)
			}
			if !strings.HasPrefix(stderr, "hgrep: usage: "+name+" ") || strings.Count(stderr, "\n") != 1 {
				ts.Fatalf("hgrep %q: stderr %q does not name %s on one line", argv, stderr, name)
			}
			if ts.ReadFile("stdout") != "" {
				ts.Fatalf("hgrep %q printed to stdout", argv)
			}
			n++
		}
	}
	ts.Logf("%d rejected spellings checked", n)
}

// waitfile FILE waits up to ten seconds for FILE to hold a complete line:
// the shell creates the file before it writes to it, so existence alone
// races with the write.
func cmdWaitfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile FILE")
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(ts.MkAbs(args[0])); err == nil && bytes.IndexByte(b, '\n') >= 0 {
			return
		}
	}
	ts.Fatalf("%s did not appear within 10s", args[0])
}

// gencr FILE N [TAIL] writes N rows "line I" each ended by a lone CR, then
// TAIL (a Go-escaped string): one ripgrep line of many verified rows.
func cmdGencr(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: gencr FILE N [TAIL]")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	tail := ""
	if len(args) == 3 {
		tail, err = strconv.Unquote(`"` + args[2] + `"`)
		ts.Check(err)
	}
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "line %d\r", i)
	}
	b.WriteString(tail)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(b.String()), 0o644))
}
