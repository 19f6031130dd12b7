package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rowkit/rowkit/internal/rows"
)

// TestMain lets the test binary run as rowkit and as each shell name, so the
// scripts exercise the real dispatch on argv[0].
func TestMain(m *testing.M) {
	names := map[string]func(){"rowkit": main}
	for _, c := range commands {
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
}

// scriptConds are the conditions scripts may test with [NAME].
var scriptConds = map[string]func() bool{
	"root": func() bool { return os.Geteuid() == 0 },
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "../../testdata/script",
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
