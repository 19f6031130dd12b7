package main

import (
	"os/exec"
	"strings"
	"testing"
)

// Engines are libraries: no engine may import the CLI's packages, so that
// the MCP server and embedders get the same engines without the CLI.
func TestEnginesDoNotImportAdapters(t *testing.T) {
	engines := []string{"hread", "grep", "inspect", "read", "review", "patch", "lang", "rows", "workspace", "txn", "proc", "errs", "regfile", "jsonstr"}
	for _, e := range engines {
		pkg := "github.com/rowkit/rowkit/internal/" + e
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			switch dep {
			case "github.com/rowkit/rowkit/internal/cli", "github.com/rowkit/rowkit/internal/cmd", "github.com/rowkit/rowkit/internal/mcpserver":
				t.Errorf("%s imports %s", pkg, dep)
			}
		}
	}
}
