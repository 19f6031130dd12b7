// Package shell owns rowkit's shell: bash scripts parsed and interpreted
// in-process (mvdan.cc/sh), in which a caller's private commands run as Go
// functions with the interpreter's streams, directory and environment,
// and every other command runs through internal/proc in its own process
// group. It owns what a script may leave behind (nothing: background jobs
// are stopped at its end, and a guardian process stops them when the
// shell itself is killed) and the bound on what a script prints (Output).
package shell
