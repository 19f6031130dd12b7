package main

import (
	"bytes"
	"os"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() { scriptCmds["repeat"] = cmdRepeat }

// repeat FILE N GO-STRING [GO-STRING] writes the first Go-escaped string N
// times, then the second once, for long runs of one character.
func cmdRepeat(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 || len(args) > 4 {
		ts.Fatalf("usage: repeat FILE N GO-STRING [GO-STRING]")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	unit, err := strconv.Unquote(`"` + args[2] + `"`)
	ts.Check(err)
	tail := ""
	if len(args) == 4 {
		tail, err = strconv.Unquote(`"` + args[3] + `"`)
		ts.Check(err)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), append(bytes.Repeat([]byte(unit), n), tail...), 0o644))
}
