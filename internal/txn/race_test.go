package txn_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// An external writer (not rowkit: no lock) appends lines to a file in
// place, a few per hpatch commit, while hpatch edits the file's first line
// again and again. A commit whose baseline misses a line is rejected row-stale
// (and retried); what remains is the window between the last check and the
// rename: a line written through a descriptor opened before the rename and
// written after the final recheck goes to the replaced file and is lost.
// The share of lines lost is logged; the code before the pre-rename check
// lost 4.9 to 6.4% (issue 17). ROWKIT_TXN_SOAK=N makes the run N times as
// long (8 s by default).
func TestExternalWriterRace(t *testing.T) {
	bin := rowkitBin(t)
	run := 8 * time.Second
	if n, err := strconv.Atoi(os.Getenv("ROWKIT_TXN_SOAK")); err == nil && n > 0 {
		run *= time.Duration(n)
	}
	if testing.Short() {
		run = 3 * time.Second
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "a.txt")
	writeFiles(t, dir, map[string]string{"a.txt": "n=0\n"})

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	written := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(7, 7))
		for {
			select {
			case <-stop:
				return
			default:
			}
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Error(err)
				return
			}
			_, err = fmt.Fprintf(f, "w%d\n", written)
			f.Close()
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			written++
			mu.Unlock()
			// About one write per commit: many fall near one, and
			// still about half the commits land.
			time.Sleep(time.Duration(rng.IntN(20000)) * time.Microsecond)
		}
	}()

	applied, stale := 0, 0
	begin := time.Now()
	// For the run's time, and on (when a loaded machine slows hpatch)
	// until there are enough lines that 1% is several of them and enough
	// commits to race, up to six times as long.
	enough := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return written >= 300 && applied >= 50
	}
	for (time.Since(begin) < run || !enough() && time.Since(begin) < 6*run) && !t.Failed() {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(data), "\n")
		n, err := strconv.Atoi(strings.TrimPrefix(first, "n="))
		if err != nil {
			t.Fatalf("a.txt's first line is %q", first)
		}
		r := start(t, rowkit(bin, dir, "hpatch", fmt.Sprintf("in a.txt\ntype %s \"n=%d\"\n", row(1, first), n+1))).wait()
		switch {
		case r.exit == 0:
			applied++
		case r.exit == 1 && strings.Contains(r.errOut, "reason row-stale"):
			stale++
		default:
			t.Fatalf("hpatch: exit %d: %s", r.exit, r.errOut)
		}
	}
	close(stop)
	wg.Wait()
	elapsed := time.Since(begin)

	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(string(data), "\n")
	if got[0] != fmt.Sprintf("n=%d", applied) {
		t.Errorf("a.txt's first line is %q after %d applied edits: an acknowledged edit was lost", got[0], applied)
	}
	present := map[string]int{}
	for _, l := range got[1:] {
		if l != "" {
			present[l]++
		}
	}
	lost := 0
	for i := range written {
		switch present[fmt.Sprintf("w%d", i)] {
		case 0:
			lost++
		case 1:
		default:
			t.Errorf("w%d is there %d times", i, present[fmt.Sprintf("w%d", i)])
		}
	}
	if l := litter(dir); len(l) > 0 {
		t.Errorf("left behind: %v", l)
	}
	share := float64(lost) / float64(max(written, 1))
	t.Logf("%v: %d edits applied, %d rejected row-stale; the external writer wrote %d lines, %d overwritten (%.3f%%)",
		elapsed.Round(time.Millisecond), applied, stale, written, lost, 100*share)
	if !enough() {
		t.Fatalf("%d lines written beside %d commits: not the race this measures", written, applied)
	}
	// Without the pre-rename check this was 5% and more; the window left is
	// microseconds wide, so a share above 1% means it is open again.
	if share > 0.01 {
		t.Errorf("%.3f%% of the external writer's lines were overwritten", 100*share)
	}
}
