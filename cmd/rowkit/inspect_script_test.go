package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	scriptCmds["sparse"] = cmdSparse
	scriptCmds["jsonkeys"] = cmdJSONKeys
	scriptCmds["maxbytes"] = cmdMaxBytes
}

// sparse FILE SIZE creates a sparse file of SIZE bytes: reading it would
// take far longer than any test, so a fast answer proves it was not read.
func cmdSparse(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: sparse FILE SIZE")
	}
	n, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	f, err := os.Create(ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Check(f.Truncate(n))
	ts.Check(f.Close())
}

// jsonkeys FILE N writes a JSON object with N keys, one per line.
func cmdJSONKeys(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: jsonkeys FILE N")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	f, err := os.Create(ts.MkAbs(args[0]))
	ts.Check(err)
	w := bufio.NewWriter(f)
	w.WriteString("{\n")
	for i := range n {
		sep := ","
		if i == n-1 {
			sep = ""
		}
		fmt.Fprintf(w, "  \"key%d\": %d%s\n", i, i, sep)
	}
	w.WriteString("}\n")
	ts.Check(w.Flush())
	ts.Check(f.Close())
}

// maxbytes FILE N checks that FILE (or stdout) has at most N bytes.
func cmdMaxBytes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: maxbytes FILE N")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	if got := len(ts.ReadFile(args[0])); got > n {
		ts.Fatalf("%s has %d bytes, more than %d", args[0], got, n)
	}
}
