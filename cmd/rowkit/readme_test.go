package main

import (
	"os"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/cmd"
)

const (
	exitsBegin = "<!-- exit codes: made from each command's cli.Exit list; TestReadmeExitCodes keeps it equal -->\n"
	exitsEnd   = "<!-- end of exit codes -->\n"
)

// The README's exit-code table is the one `rowkit help COMMAND` prints, so
// the two cannot drift apart; every command documents its statuses.
func TestReadmeExitCodes(t *testing.T) {
	for _, c := range cmd.All {
		if len(c.Exits) == 0 {
			t.Errorf("%s documents no exit statuses (cli.Command.Exits)", c.Name)
		}
	}
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i, j := strings.Index(readme, exitsBegin), strings.Index(readme, exitsEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md has no exit-code block between %q and %q", exitsBegin, exitsEnd)
	}
	got := readme[i+len(exitsBegin) : j]
	if want := cli.ExitTable(cmd.All); got != want {
		if os.Getenv("ROWKIT_UPDATE_README") != "" {
			os.WriteFile("../../README.md", []byte(readme[:i+len(exitsBegin)]+want+readme[j:]), 0o644)
			return
		}
		t.Errorf("README.md's exit-code table is stale (run with ROWKIT_UPDATE_README=1 to rewrite it); want:\n%s", want)
	}
}
