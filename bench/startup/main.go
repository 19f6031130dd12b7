// Command startup times short-lived commands interleaved, process start
// included, for bench/startup.sh: each round runs every command once, in
// turn, with stdout read through a pipe (as an agent's shell reads it) and
// stderr discarded, so that the machine's load falls on all of them alike.
//
//	startup -runs N -c 'LABEL|ARG0|ARG1...' ... [-ratio 'A/B<=X'] ...
//
// For each command it prints the median and minimum wall time, the mean CPU
// time (user + system, from the child's rusage: much less sensitive to other
// load than wall time), minor page faults, the exit status and stdout bytes
// of the last run; for each -ratio, the ratio of the medians of A and B (and
// of their minimum wall and mean CPU times) against the target X.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ", ") }
func (l *list) Set(s string) error { *l = append(*l, s); return nil }

type result struct {
	wall, cpu time.Duration
	minflt    int64
	exit      int
	stdout    int64
}

func main() {
	runs := flag.Int("runs", 101, "rounds; each runs every command once")
	var cmds, ratios list
	flag.Var(&cmds, "c", "a command: LABEL|ARG0|ARG1... (repeatable)")
	flag.Var(&ratios, "ratio", "LABEL_A/LABEL_B<=TARGET: report median A over median B (repeatable)")
	flag.Parse()
	type command struct {
		label string
		argv  []string
		res   []result
	}
	var all []*command
	byLabel := map[string]*command{}
	for _, c := range cmds {
		f := strings.Split(c, "|")
		if len(f) < 2 {
			fail("-c %q: want LABEL|ARG0...", c)
		}
		all = append(all, &command{label: f[0], argv: f[1:]})
		byLabel[f[0]] = all[len(all)-1]
	}
	for _, c := range all { // warm the page cache and the binaries
		run(c.argv)
	}
	for range *runs {
		for _, c := range all {
			c.res = append(c.res, run(c.argv))
		}
	}
	fmt.Printf("%-34s %10s %10s %10s %8s %5s %9s\n", "command", "median_ms", "min_ms", "cpu_ms", "minflt", "exit", "stdout")
	median := map[string][3]float64{} // median wall, mean CPU, min wall
	for _, c := range all {
		walls := make([]float64, len(c.res))
		var cpu, flt float64
		for i, r := range c.res {
			walls[i] = ms(r.wall)
			cpu += ms(r.cpu)
			flt += float64(r.minflt)
		}
		slices.Sort(walls)
		n := float64(len(c.res))
		med := walls[len(walls)/2]
		if len(walls)%2 == 0 {
			med = (walls[len(walls)/2-1] + walls[len(walls)/2]) / 2
		}
		median[c.label] = [3]float64{med, cpu / n, walls[0]}
		last := c.res[len(c.res)-1]
		fmt.Printf("%-34s %10.3f %10.3f %10.3f %8.0f %5d %9d\n", c.label, med, walls[0], cpu/n, flt/n, last.exit, last.stdout)
	}
	for _, r := range ratios {
		pair, target, ok := strings.Cut(r, "<=")
		a, b, ok2 := strings.Cut(pair, "/")
		if !ok || !ok2 || byLabel[a] == nil || byLabel[b] == nil {
			fail("-ratio %q: want LABEL_A/LABEL_B<=TARGET with known labels", r)
		}
		x, err := strconv.ParseFloat(target, 64)
		if err != nil {
			fail("-ratio %q: %v", r, err)
		}
		wall := median[a][0] / median[b][0]
		verdict := "met"
		if wall > x {
			verdict = "NOT met"
		}
		fmt.Printf("%s / %s: median wall %.2fx (target <= %gx: %s); min wall %.2fx, mean CPU %.2fx\n",
			a, b, wall, x, verdict, median[a][2]/median[b][2], median[a][1]/median[b][1])
	}
}

func run(argv []string) result {
	r, w, err := os.Pipe()
	if err != nil {
		fail("%v", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout = w
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		fail("%s: %v", argv[0], err)
	}
	w.Close()
	n, _ := io.Copy(io.Discard, r)
	r.Close()
	cmd.Wait()
	wall := time.Since(t0)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return result{
		wall:   wall,
		cpu:    cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(),
		minflt: ru.Minflt,
		exit:   cmd.ProcessState.ExitCode(),
		stdout: n,
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "startup: "+format+"\n", a...)
	os.Exit(2)
}
