package grep

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/workspace"
)

// A named file that a FIFO keeps replacing (renamed over it, then the
// regular file renamed back, as fast as possible) while searches run: hgrep
// checks the path, and whatever ripgrep opens afterwards must never block
// the search. Each search answers the file's row or not_regular; a search
// that has not answered within a minute has hung (ripgrep blocked in
// open(2) on the FIFO, which it did within a few searches).
func TestSearchNamedFileSwappedForFIFO(t *testing.T) {
	for _, confined := range []bool{false, true} {
		dir := t.TempDir()
		reg, fifo := filepath.Join(dir, "reg"), filepath.Join(dir, "fifo")
		if err := os.WriteFile(reg, []byte("needle\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(dir, "f.txt")
		os.Link(reg, target)
		var stop atomic.Bool
		swaps := make(chan int)
		go func() {
			n := 0
			for !stop.Load() {
				for _, src := range []string{fifo, reg} {
					tmp := filepath.Join(dir, "tmp")
					os.Remove(tmp)
					if os.Link(src, tmp) == nil && os.Rename(tmp, target) == nil {
						n++
					}
					if src == reg {
						// Long enough for some searches to pass every
						// check before the FIFO is back.
						time.Sleep(300 * time.Microsecond)
					}
				}
			}
			swaps <- n
		}()
		cfg := Config{Dir: dir, LookupEnv: os.LookupEnv}
		if confined {
			root, err := workspace.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			cfg = Config{Root: root, LookupEnv: os.LookupEnv}
		}
		var found, refused int
		for i := 0; i < 300; i++ {
			plan, err := parse([]string{"needle", "f.txt", "-f", "f.txt"})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			var res *Result
			go func() {
				defer close(done)
				res, err = Collect(context.Background(), plan, cfg)
			}()
			select {
			case <-done:
			case <-time.After(time.Minute):
				stop.Store(true)
				t.Fatalf("confined %v: search %d hung with f.txt swapped for a FIFO", confined, i)
			}
			switch {
			case err == nil && len(res.Rows) == 1 && res.Rows[0].Text == "needle":
				found++
			case errs.Code(err) == errs.NotRegular && strings.Contains(err.Error(), "f.txt"):
				refused++
			default:
				stop.Store(true)
				t.Fatalf("confined %v: search %d: %+v %v", confined, i, res, err)
			}
		}
		stop.Store(true)
		t.Logf("confined %v: %d searches found the row, %d refused the FIFO, %d swaps", confined, found, refused, <-swaps)
		if found == 0 {
			t.Errorf("confined %v: no search got past the checks; the race was not exercised", confined)
		}
	}
}

// One line of 40 MB that matches everywhere: ripgrep builds the JSON event
// of all its matches whole, which took it to 2 GB before hgrep could refuse
// the event. Under its address-space limit it fails early, and the search
// says too_large; the largest child this test process ever had stayed
// under the limit.
func TestSearchLineOfMatchesTooLarge(t *testing.T) {
	dir := files(t, map[string]string{"a.txt": strings.Repeat("a", 40<<20) + "\n"})
	_, err := search(t, dir, "a", "a.txt")
	if errs.Code(err) != CodeTooLarge || !strings.Contains(err.Error(), "ran out of its 1024 MiB") {
		t.Fatalf("%v", err)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		t.Fatal(err)
	}
	if ru.Maxrss*1024 > rgMemory {
		t.Errorf("a child reached %d MiB resident", ru.Maxrss>>10)
	}
}
