package main

import (
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	scriptCmds["rowscript"] = cmdRowScript
}

// rowRefs finds the row references in the output of hread (LINE:HASH TEXT),
// hgrep ("PATH":LINE:HASH TEXT), hpatch's edge rows and inspect_file's JSON
// ("line":"LINE:HASH"), in order.
var rowRefs = regexp.MustCompile(`(?m)(?:^|^"(?:[^"\\]|\\.)*":|"line(?:_end)?":")([1-9][0-9]*:[0-9a-f]{4})`)

// rowscript OUT SCRIPT TEMPLATE writes SCRIPT from the Go-escaped TEMPLATE
// (without quotes), replacing {N} with the N-th row reference found in OUT
// (a file, or stdout/stderr of the last command): how an agent turns what
// it read into edit targets.
func cmdRowScript(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: rowscript OUT SCRIPT TEMPLATE")
	}
	var refs []string
	for _, m := range rowRefs.FindAllStringSubmatch(ts.ReadFile(args[0]), -1) {
		refs = append(refs, m[1])
	}
	tmpl, err := strconv.Unquote(`"` + args[2] + `"`)
	ts.Check(err)
	out := regexp.MustCompile(`\{([0-9]+)\}`).ReplaceAllStringFunc(tmpl, func(s string) string {
		n, _ := strconv.Atoi(strings.Trim(s, "{}"))
		if n < 1 || n > len(refs) {
			ts.Fatalf("%s has %d row references, no %d", args[0], len(refs), n)
		}
		return refs[n-1]
	})
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(out), 0o644))
}
