package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rowkit/rowkit/internal/rows"
)

func init() {
	scriptCmds["outsize"] = cmdOutsize
	scriptCmds["readon"] = cmdReadon
	scriptCmds["codexsession"] = cmdCodexSession
}

// codexsession MODEL writes the file Codex 0.169 keeps for a session of
// MODEL under $WORK/codex (the turn context that names the model after
// the session's first record) and sets what Codex's shell gives a
// command: CODEX_HOME, CODEX_THREAD_ID and CODEX_VERSION.
func cmdCodexSession(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: codexsession MODEL")
	}
	home := ts.MkAbs("codex")
	now := time.Now()
	ms := fmt.Sprintf("%012x", now.UnixMilli())
	thread := ms[:8] + "-" + ms[8:] + "-7abc-8def-0123456789ab"
	dir := filepath.Join(home, "sessions", now.Format("2006/01/02"))
	ts.Check(os.MkdirAll(dir, 0o755))
	body := `{"type":"session_meta","payload":{"id":"` + thread + `"}}` + "\n" +
		`{"type":"turn_context","payload":{"turn_id":"1","model":"` + args[0] + `"}}` + "\n"
	ts.Check(os.WriteFile(filepath.Join(dir, "rollout-"+now.Format("2006-01-02T15-04-05")+"-"+thread+".jsonl"), []byte(body), 0o644))
	ts.Setenv("CODEX_HOME", home)
	ts.Setenv("CODEX_THREAD_ID", thread)
	ts.Setenv("CODEX_VERSION", "0.169.0")
}

// outsize MIN MAX checks that the last command's stdout and stderr
// together hold MIN to MAX bytes, as an agent's shell shows them.
func cmdOutsize(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: outsize MIN MAX")
	}
	lo, err1 := strconv.Atoi(args[0])
	hi, err2 := strconv.Atoi(args[1])
	if err1 != nil || err2 != nil {
		ts.Fatalf("usage: outsize MIN MAX")
	}
	n := len(ts.ReadFile("stdout")) + len(ts.ReadFile("stderr"))
	if n < lo || n > hi {
		ts.Fatalf("the output is %d bytes, want %d..%d", n, lo, hi)
	}
}

// readon MAX FILE runs hread FILE and then the command each diagnostic
// names to continue, as a model would, until one exits 0. Each output,
// stdout and stderr together, must fit MAX bytes, and the rows read must
// be the rows of FILE (LF-terminated lines), each once, to the end.
func cmdReadon(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: readon MAX FILE")
	}
	bound, err := strconv.Atoi(args[0])
	ts.Check(err)
	var got strings.Builder
	argv := []string{"hread", args[1]}
	for calls := 1; ; calls++ {
		err := ts.Exec(argv[0], argv[1:]...)
		stdout, stderr := ts.ReadFile("stdout"), ts.ReadFile("stderr")
		if n := len(stdout) + len(stderr); n > bound {
			ts.Fatalf("%q: %d bytes, over %d", argv, n, bound)
		}
		got.WriteString(stdout)
		var ee *exec.ExitError
		if err == nil {
			ts.Logf("%d calls", calls)
			break
		}
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || calls > 50 {
			ts.Fatalf("%q: %v: %s", argv, err, stderr)
		}
		_, next, ok := strings.Cut(strings.TrimSuffix(stderr, "\n"), "; continue with: ")
		if !ok {
			ts.Fatalf("%q: no continuation in %q", argv, stderr)
		}
		argv = strings.Fields(next)
	}
	var want []byte
	for i, line := range strings.Split(strings.TrimSuffix(ts.ReadFile(args[1]), "\n"), "\n") {
		want = rows.AppendRow(want, i+1, []byte(line))
	}
	if got.String() != string(want) {
		ts.Fatalf("the continuations read %d bytes of rows; %s has %d", got.Len(), args[1], len(want))
	}
}
