package grep

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/rows"
)

// BenchmarkStream is hgrep's own work on a search, without ripgrep: the
// events of rg --json over the Go source tree, recorded once, turned into
// verified rows printed under the default budget (every reported file
// reopened and read to its rows, as a search does). Patterns: a medium
// one (267 rows in 114 files, within the token limit) and a common one
// (token admission stops it).
func BenchmarkStream(b *testing.B) {
	dir := filepath.Join(runtime.GOROOT(), "src")
	for _, c := range []struct{ name, pattern string }{{"medium", "Deprecated:"}, {"common", "err"}} {
		cmd := exec.Command("rg", "--no-config", "--json", "--encoding=none", c.pattern)
		cmd.Dir = dir
		events, err := cmd.Output()
		if err != nil {
			b.Fatalf("rg: %v", err)
		}
		open := func(p string) (*os.File, error) {
			f, _, err := regfile.Open(os.Stat, os.OpenFile, dir+"/"+p)
			return f, err
		}
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(events)))
			b.ReportAllocs()
			// CPU time is steadier than wall time on a shared machine.
			start := cpuTime()
			defer func() { b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op") }()
			for b.Loop() {
				p := rows.NewPrinter(io.Discard, rows.DefaultBudget)
				st := newStream(open, p, rows.DefaultBudget.MaxRowBytes(), 0, 0)
				if err := st.run(bufio.NewReaderSize(bytes.NewReader(events), 256<<10)); err != nil && err != errFull {
					b.Fatal(err)
				}
				p.Flush()
			}
		})
	}
}

// cpuTime is the CPU time of this process (all its threads, not its
// children) in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
