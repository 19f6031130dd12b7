// Command shellfloor is the floor of a shell that runs the system's bash
// under a process of its own, as rowkit shell does: a Go program that does
// nothing but start bash -lc SCRIPT (found on PATH) in a session of its
// own, with its own streams, wait for it and exit with its status. What
// rowkit shell costs above it is rowkit's own: its larger start-up, the
// directory of its commands, the guardian, the end of the script's group.
//
//	shellfloor SCRIPT
package main

import (
	"os"
	"os/exec"
	"syscall"
)

func main() {
	if len(os.Args) != 2 {
		os.Stderr.WriteString("usage: shellfloor SCRIPT\n")
		os.Exit(2)
	}
	c := exec.Command("bash", "-lc", os.Args[1])
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err := c.Run()
	if c.ProcessState == nil {
		os.Stderr.WriteString("shellfloor: " + err.Error() + "\n")
		os.Exit(127)
	}
	os.Exit(c.ProcessState.ExitCode())
}
