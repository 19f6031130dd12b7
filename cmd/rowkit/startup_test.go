package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// startupBudget bounds what rowkit's own packages allocate in their
// initialisers, which run in every rowkit process, whatever the command
// (issue 19 section 3): a table, pattern, schema or parser a package-level
// variable builds belongs behind sync.OnceValue or where it is used. Before
// they were made lazy, the packages allocated 177,912 bytes in 1,001
// allocations, now under 10 KiB (12.5 KiB under -race); a regular
// expression compiled at start-up costs about 8 KiB, a help table tens.
const (
	startupBytes  = 16 << 10
	startupAllocs = 160
)

// initLine is one line of GODEBUG=inittrace=1 for a package of rowkit.
var initLine = regexp.MustCompile(`(?m)^init (github\.com/rowkit/rowkit/internal/\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)

func TestStartupAllocations(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// TestMain runs this binary as rowkit when it is invoked under that
	// name: the initialisers are those of the real binary's packages.
	rowkit := filepath.Join(t.TempDir(), "rowkit")
	if err := os.Symlink(exe, rowkit); err != nil {
		t.Fatal(err)
	}
	c := exec.Command(rowkit, "--version")
	c.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("rowkit --version: %v\n%s", err, stderr.Bytes())
	}
	lines := initLine.FindAllSubmatch(stderr.Bytes(), -1)
	if len(lines) < 5 {
		t.Fatalf("%d init lines of rowkit's packages in GODEBUG=inittrace=1 output:\n%s", len(lines), stderr.Bytes())
	}
	total, allocs := 0, 0
	for _, m := range lines {
		b, _ := strconv.Atoi(string(m[2]))
		a, _ := strconv.Atoi(string(m[3]))
		total += b
		allocs += a
	}
	if total > startupBytes || allocs > startupAllocs {
		var list bytes.Buffer
		for _, m := range lines {
			list.WriteString("\n  " + string(m[1]) + ": " + string(m[2]) + " bytes, " + string(m[3]) + " allocs")
		}
		t.Errorf("rowkit's packages allocate %d bytes in %d allocations at start-up (at most %d, %d):%s",
			total, allocs, startupBytes, startupAllocs, list.String())
	}
}
