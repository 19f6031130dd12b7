// Package hreadrun is hread for the floor programs of bench/startup.sh:
// what internal/cmd's hread does for one path, without the command table,
// so that each program links only the packages it names.
package hreadrun

import (
	"bytes"
	"context"
	"os"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/read"
	"github.com/rowkit/rowkit/internal/rows"
)

// Main prints os.Args[1] as verified rows under the default budget and
// exits as hread does (1 on a failure or an incomplete output).
func Main() { MainBudget(rows.DefaultBudget) }

// MainBudget is Main under budget b.
func MainBudget(b rows.Budget) {
	if len(os.Args) != 2 {
		os.Stderr.WriteString("usage: hread FILE\n")
		os.Exit(2)
	}
	var out bytes.Buffer
	p := rows.NewPrinter(&out, b)
	err := read.Stream(context.Background(), os.Args[1], read.All, p, read.StreamOptions{})
	p.Flush()
	out.WriteTo(os.Stdout)
	if err != nil {
		os.Stderr.WriteString("hread: " + cli.Diagnostic(err) + "\n")
		os.Exit(1)
	}
}
