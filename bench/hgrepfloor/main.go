// Command hgrepfloor is the floor of a program that wraps ripgrep as hgrep
// does: it runs rg --no-config --json --encoding=none ARGS with its stdin
// closed and copies rg's output to its own, with nothing else. Built with
// -tags cgo (and CGO_ENABLED=1) it also links cgo, as rowkit does for
// tree-sitter, to show what a cgo binary's start costs.
//
//	go build -o rgcopy ./bench/hgrepfloor && rgcopy PATTERN [PATH ...]
package main

import (
	"io"
	"os"
	"os/exec"
)

func main() {
	cmd := exec.Command("rg", append([]string{"--no-config", "--json", "--encoding=none"}, os.Args[1:]...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		os.Exit(2)
	}
	if err := cmd.Start(); err != nil {
		os.Exit(2)
	}
	io.Copy(os.Stdout, out)
	if err := cmd.Wait(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			os.Exit(ee.ExitCode())
		}
		os.Exit(2)
	}
}
