package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rowkit/rowkit/internal/router"
)

func init() {
	scriptCmds["carry"] = cmdCarry
}

// carry CODE TOOL FILE runs FILE's script as a routed TOOL call reaches
// Codex: the carrier's command, naming the rowkit on PATH, through /bin/sh
// -c, as Codex's exec_command runs it. It checks the exit code; stdout and
// stderr are checked as for exec.
func cmdCarry(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: carry CODE TOOL FILE")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	bin, err := exec.LookPath("rowkit")
	ts.Check(err)
	bin, err = filepath.Abs(bin)
	ts.Check(err)
	c, err := router.NewCarrier(bin)
	ts.Check(err)
	cmd, err := c.Command(args[1], ts.ReadFile(args[2]))
	ts.Check(err)
	got := 0
	if err := ts.Exec(router.CarrierShell, "-c", cmd); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("carry: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("the carrier exited %d, want %d", got, want)
	}
}
