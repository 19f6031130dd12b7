package main

import (
	"encoding/json"
	"errors"
	"os/exec"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	scriptCmds["exits"] = cmdExits
	scriptCmds["streams"] = cmdStreams
}

// exits CODE PROG [ARGS...] runs PROG like exec and checks its exit code,
// keeping its stdout and stderr for the checks that follow.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("usage: exits CODE PROG [ARGS...]")
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// streams FILE MIN MAX reads FILE (or stdout), a rowkit review JSON report,
// and checks that the kept stdout text of every validation, as JSON writes
// it, has MIN to MAX bytes.
func cmdStreams(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: streams FILE MIN MAX")
	}
	lo, err1 := strconv.Atoi(args[1])
	hi, err2 := strconv.Atoi(args[2])
	if err1 != nil || err2 != nil {
		ts.Fatalf("usage: streams FILE MIN MAX")
	}
	var r struct {
		Validations []struct {
			ID     string
			Stdout struct{ Text string }
		}
	}
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[0])), &r))
	if len(r.Validations) == 0 {
		ts.Fatalf("%s has no validations", args[0])
	}
	for _, v := range r.Validations {
		j, _ := json.Marshal(v.Stdout.Text)
		if n := len(j) - 2; n < lo || n > hi {
			ts.Fatalf("validation %s kept %d bytes of stdout, want %d..%d", v.ID, n, lo, hi)
		}
	}
}
