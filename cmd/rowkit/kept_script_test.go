package main

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rowkit/rowkit/internal/spool"
)

func init() {
	scriptCmds["keep"] = cmdKeep
	scriptCmds["readkept"] = cmdReadkept
	scriptCmds["keptref"] = cmdKeptref
	scriptCmds["follow"] = cmdFollow
}

// follow MAX WANT NAME ARGS... runs NAME --max-output MAX ARGS... and then
// the command each diagnostic names to continue, under the same bound,
// until one exits 0: each output within MAX bytes, and what they print,
// together, WANT's content.
func cmdFollow(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: follow MAX WANT NAME ARGS...")
	}
	got := readOnAt(ts, args[0], append([]string{args[2], "--max-output", args[0]}, args[3:]...))
	if want := ts.ReadFile(args[1]); got != want {
		ts.Fatalf("the continuations read %d bytes; want %d", len(got), len(want))
	}
}

// keptref FILE REF START finds in FILE (or stdout) the shell bound's note
// that names a kept output, "kept: hread @out/ID N:", checks that N is the
// first line after the head, and sets REF to @out/ID and START to N.
func cmdKeptref(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: keptref FILE REF START")
	}
	out := ts.ReadFile(args[0])
	m := keptRE.FindStringSubmatch(out)
	if m == nil {
		ts.Fatalf("no kept output named in %s", args[0])
	}
	// N is the first line left out: the head before the note has N-1.
	head := out[:strings.Index(out, "[rowkit shell: ")]
	if n, _ := strconv.Atoi(m[2]); strings.Count(head, "\n") != n-1 {
		ts.Fatalf("the note reads on at line %d after a head of %d lines", n, strings.Count(head, "\n"))
	}
	ts.Setenv(args[1], m[1])
	ts.Setenv(args[2], m[2])
}

var keptRE = regexp.MustCompile(`; kept: hread (@out/[0-9a-z]+) ([0-9]+):[;\]]`)

// keep [-age DURATION] KIND FILE VAR keeps FILE's content in the script's
// store of kept outputs (under its TMPDIR) as an output of KIND (text or
// rows), made DURATION ago, and sets VAR to its ID: what a bound that left
// part of an output out keeps.
func cmdKeep(ts *testscript.TestScript, neg bool, args []string) {
	age := time.Duration(0)
	if len(args) > 1 && args[0] == "-age" {
		d, err := time.ParseDuration(args[1])
		ts.Check(err)
		age, args = d, args[2:]
	}
	if neg || len(args) != 3 || args[0] != string(spool.Text) && args[0] != string(spool.Rows) {
		ts.Fatalf("usage: keep [-age DURATION] text|rows FILE VAR")
	}
	s, err := spool.Open(ts.Getenv("TMPDIR"), spool.Options{Now: func() time.Time { return time.Now().Add(-age) }})
	ts.Check(err)
	w, err := s.Create(spool.Kind(args[0]))
	ts.Check(err)
	_, err = io.WriteString(w, ts.ReadFile(args[1]))
	ts.Check(err)
	id, err := w.Commit()
	ts.Check(err)
	ts.Setenv(args[2], id)
}

// readkept MAX REF FILE [START] runs hread REF (from line START:) and then
// the command each diagnostic names to continue, until one exits 0: each
// output within MAX bytes, and the lines read, numbered, the lines of FILE
// (from START on), each once.
func cmdReadkept(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 && len(args) != 4 {
		ts.Fatalf("usage: readkept MAX REF FILE [START]")
	}
	start := 1
	if len(args) == 4 {
		n, err := strconv.Atoi(args[3])
		ts.Check(err)
		start = n
	}
	got := readOnAt(ts, args[0], []string{"hread", "--max-output", args[0], args[1], strconv.Itoa(start) + ":"})
	var want strings.Builder
	for i, line := range strings.Split(strings.TrimSuffix(ts.ReadFile(args[2]), "\n"), "\n") {
		if i+1 >= start {
			fmt.Fprintf(&want, "%d|%s\n", i+1, line)
		}
	}
	if got != want.String() {
		ts.Fatalf("the continuations read %d bytes; want %d", len(got), want.Len())
	}
}

// readOnAt runs argv, then the command each diagnostic names to continue,
// under --max-output MAX, until one exits 0, each output within MAX bytes,
// and returns what they printed on stdout.
func readOnAt(ts *testscript.TestScript, max string, argv []string) string {
	bound, err := strconv.Atoi(max)
	ts.Check(err)
	var got strings.Builder
	for calls := 1; ; calls++ {
		err := ts.Exec(argv[0], argv[1:]...)
		stdout, stderr := ts.ReadFile("stdout"), ts.ReadFile("stderr")
		if n := len(stdout) + len(stderr); n > bound {
			ts.Fatalf("%q: %d bytes, over %d", argv, n, bound)
		}
		got.WriteString(stdout)
		if err == nil {
			ts.Logf("%d calls", calls)
			return got.String()
		}
		_, next, ok := strings.Cut(strings.TrimSuffix(stderr, "\n"), "; continue with: ")
		if !ok || calls > 500 {
			ts.Fatalf("%q: no continuation in %q", argv, stderr)
		}
		f := strings.Fields(next)
		argv = append([]string{f[0], "--max-output", max}, f[1:]...)
	}
}
