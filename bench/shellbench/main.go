// Command shellbench times commands against each other, interleaved: run
// i of every command comes before run i+1 of any, so that a change in the
// machine's load falls on all of them alike, and each round starts with
// another command. It prints each command's
// median and 90th percentile wall time (fork and exec included), its
// median CPU time (user and system, which a loaded machine disturbs less),
// and their ratios to the first command's. Commands' output goes to
// /dev/null.
//
//	shellbench -runs N -- CMD1 ARGS... -- CMD2 ARGS... [-- ...]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

func main() {
	runs := flag.Int("runs", 200, "runs of each command")
	flag.Parse()
	// flag.Parse took the first "--".
	cmds := [][]string{nil}
	for _, a := range flag.Args() {
		if a == "--" {
			cmds = append(cmds, nil)
			continue
		}
		cmds[len(cmds)-1] = append(cmds[len(cmds)-1], a)
	}
	if slices.ContainsFunc(cmds, func(c []string) bool { return len(c) == 0 }) {
		fmt.Fprintln(os.Stderr, "usage: shellbench -runs N -- CMD ARGS... [-- CMD ARGS...]")
		os.Exit(2)
	}
	times := make([][]time.Duration, len(cmds))
	cpus := make([][]time.Duration, len(cmds))
	for i := 0; i < *runs; i++ {
		// Each round starts with the next command: the first of a round
		// measured slower than the others here, whichever it was.
		for j := range cmds {
			k := (i + j) % len(cmds)
			argv := cmds[k]
			c := exec.Command(argv[0], argv[1:]...)
			start := time.Now()
			// An exit status is the command's own answer (hread of a
			// large file is incomplete: 1); only a failure to run stops.
			if err := c.Run(); err != nil && c.ProcessState == nil {
				fmt.Fprintf(os.Stderr, "%q: %v\n", argv, err)
				os.Exit(1)
			}
			times[k] = append(times[k], time.Since(start))
			cpus[k] = append(cpus[k], c.ProcessState.UserTime()+c.ProcessState.SystemTime())
		}
	}
	var base, baseCPU time.Duration
	fmt.Printf("%-64s %9s %9s %7s %9s %7s\n", "command", "median", "p90", "ratio", "cpu", "ratio")
	for k, argv := range cmds {
		slices.Sort(times[k])
		slices.Sort(cpus[k])
		med, p90, cpu := times[k][len(times[k])/2], times[k][len(times[k])*9/10], cpus[k][len(cpus[k])/2]
		if k == 0 {
			base, baseCPU = med, cpu
		}
		fmt.Printf("%-64s %7.2fms %7.2fms %7.3f %7.2fms %7.3f\n", strings.Join(argv, " "), ms(med), ms(p90), float64(med)/float64(base), ms(cpu), float64(cpu)/float64(baseCPU))
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
