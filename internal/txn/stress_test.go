package txn_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// stressStats are one writer's outcomes.
type stressStats struct {
	attempts, acked, stale, busy, killed, failed3, falseClaims int
}

// TestStress runs 2, 4 and 8 hpatch writers and two readers on one tree,
// about a thousand commits in all (ROWKIT_TXN_SOAK=N runs N times as many),
// SIGKILLing hpatch processes at random moments. Each writer edits two
// files of its own, always to the same value (a torn pair shows), and
// sometimes appends a line to a file all writers share (contention: the
// loser is rejected row-stale). Invariants, checked as it runs and at the
// end: a writer's files never hold anything but its last acknowledged
// value (or, after a kill, the killed attempt's), both the same; every
// acknowledged shared line is there exactly once; every reader exits 0 with
// a well-formed row; no exit 3 whose "every file is as it was" is false; no
// more transactions settled than processes killed (none under a live
// writer); and nothing left behind.
func TestStress(t *testing.T) {
	bin := rowkitBin(t)
	soak := 1
	if n, err := strconv.Atoi(os.Getenv("ROWKIT_TXN_SOAK")); err == nil && n > 0 {
		soak = n
	}
	total := 1000 * soak
	if testing.Short() {
		total = 150
	}
	for _, writers := range []int{2, 4, 8} {
		t.Run(fmt.Sprintf("%d_writers", writers), func(t *testing.T) {
			stress(t, bin, writers, total/3/writers, int64(writers))
		})
	}
}

var settledRE = regexp.MustCompile(`(completed|rolled back) the interrupted transaction ([0-9a-f]{12})`)

func stress(t *testing.T, bin string, writers, attempts int, seed int64) {
	dir := t.TempDir()
	files := map[string]string{"shared.txt": "shared\n"}
	for w := range writers {
		files[fmt.Sprintf("w%da.txt", w)] = "v=0\n"
		files[fmt.Sprintf("w%db.txt", w)] = "v=0\n"
	}
	writeFiles(t, dir, files)
	lock := filepath.Join(dir, ".rowkit", "lock")

	var mu sync.Mutex
	settled := map[string]bool{}
	var acked []string // shared lines acknowledged
	noteSettled := func(out string) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range settledRE.FindAllStringSubmatch(out, -1) {
			settled[m[2]] = true
		}
	}
	var errsMu sync.Mutex
	var problems []string
	problem := func(format string, args ...any) {
		errsMu.Lock()
		defer errsMu.Unlock()
		if len(problems) < 20 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}

	stop := make(chan struct{})
	var readerRuns, changedReads atomic.Int64
	var readers sync.WaitGroup
	for r := range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			rng := rand.New(rand.NewPCG(uint64(seed), uint64(r)))
			for {
				// Paced, so that readers do not take the CPU the writers
				// need on a small machine.
				select {
				case <-stop:
					return
				case <-time.After(time.Duration(5+rng.IntN(10)) * time.Millisecond):
				}
				name := fmt.Sprintf("w%d%c.txt", rng.IntN(writers), "ab"[rng.IntN(2)])
				var cmd []string
				switch rng.IntN(3) {
				case 0:
					cmd = []string{"hread", name}
				case 1:
					cmd = []string{"inspect_file", name}
				default:
					cmd = []string{"rowkit", "read", name}
				}
				res := start(t, rowkit(bin, dir, cmd[0], "", cmd[1:]...)).wait()
				readerRuns.Add(1)
				if res.exit == 1 && strings.Contains(res.errOut, "rowkit read: changed: ") {
					// rowkit read's own check: the commit's backup link and
					// its removal change the file's ctime while it is read.
					changedReads.Add(1)
					continue
				}
				if res.exit != 0 {
					problem("reader %v: exit %d: %s", cmd, res.exit, res.errOut)
					continue
				}
				if cmd[0] == "hread" {
					line := strings.TrimSuffix(res.out, "\n")
					id, text, _ := strings.Cut(line, " ")
					if !strings.HasPrefix(text, "v=") || id != row(1, text) || strings.Contains(line, "\n") {
						problem("hread %s printed %q", name, res.out)
					}
				}
			}
		}()
	}

	stats := make([]stressStats, writers)
	var wg sync.WaitGroup
	begin := time.Now()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := &stats[w]
			rng := rand.New(rand.NewPCG(uint64(seed), uint64(100+w)))
			a, b := fmt.Sprintf("w%da.txt", w), fmt.Sprintf("w%db.txt", w)
			last := 0     // the last acknowledged value
			unknown := -1 // after a kill or a partial failure: the attempted value, which may have landed
			for range attempts {
				if unknown >= 0 {
					// Settle (this writer's killed process or anybody's),
					// then take what is on disk as the current value.
					r := start(t, rowkit(bin, dir, "rowkit", "", "recover")).wait()
					noteSettled(r.out)
					if r.exit != 0 {
						problem("writer %d: rowkit recover: exit %d: %s", w, r.exit, r.errOut)
						return
					}
					va, vb := read(dir, a), read(dir, b)
					if va != vb || va != fmt.Sprintf("v=%d\n", last) && va != fmt.Sprintf("v=%d\n", unknown) {
						problem("writer %d after a kill: %s %q, %s %q; acknowledged v=%d, attempted v=%d", w, a, va, b, vb, last, unknown)
						return
					}
					last, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(va, "v="), "\n"))
					unknown = -1
				}
				cur := fmt.Sprintf("v=%d", last)
				if va, vb := read(dir, a), read(dir, b); va != cur+"\n" || vb != cur+"\n" {
					problem("writer %d: %s %q, %s %q, but the last acknowledged edit wrote %q", w, a, va, b, vb, cur)
					return
				}
				next := last + 1
				script := fmt.Sprintf("in %s\ntype %s \"v=%d\"\nin %s\ntype %s \"v=%d\"\n", a, row(1, cur), next, b, row(1, cur), next)
				line := ""
				if rng.IntN(3) == 0 {
					line = fmt.Sprintf("w%d-%d", w, next)
					script += fmt.Sprintf("in shared.txt\nadd EOF \"%s\\n\"\n", line)
				}
				st.attempts++
				p := start(t, rowkit(bin, dir, "hpatch", script))
				exited := make(chan struct{})
				var kill *time.Timer
				switch rng.IntN(12) {
				case 0:
					// At a random moment of its life.
					kill = time.AfterFunc(time.Duration(rng.IntN(30000))*time.Microsecond, func() { p.cmd.Process.Signal(syscall.SIGKILL) })
				case 1:
					// At a random moment once it has the lock file open:
					// waiting for it, or committing.
					d := time.Duration(rng.IntN(4000)) * time.Microsecond
					go func() {
						if holds(p.cmd.Process.Pid, lock) {
							time.Sleep(d)
							p.cmd.Process.Signal(syscall.SIGKILL)
						}
					}()
				case 2:
					// At a random moment once its commit has staged a
					// file: mid-transaction.
					d := time.Duration(rng.IntN(2000)) * time.Microsecond
					go func() {
						for {
							if m, _ := filepath.Glob(filepath.Join(dir, ".rowkit", "*.new")); len(m) > 0 {
								time.Sleep(d)
								p.cmd.Process.Signal(syscall.SIGKILL)
								return
							}
							select {
							case <-exited:
								return
							case <-time.After(200 * time.Microsecond):
							}
						}
					}()
				}
				r := p.wait()
				close(exited)
				if kill != nil {
					kill.Stop()
				}
				noteSettled(r.errOut)
				switch {
				case r.exit == -int(syscall.SIGKILL):
					st.killed++
					unknown = next
				case r.exit == 0:
					if !strings.HasPrefix(r.out, "applied: ") {
						problem("writer %d: exit 0 but %q", w, r.out)
					}
					st.acked++
					last = next
					if line != "" {
						mu.Lock()
						acked = append(acked, line)
						mu.Unlock()
					}
				case r.exit == 1 && strings.Contains(r.errOut, "reason row-stale"):
					st.stale++
					if line == "" || !strings.Contains(r.errOut, `path "shared.txt", reason row-stale`) {
						problem("writer %d: rejected row-stale on its own files: %s", w, r.errOut)
					}
				case r.exit == 1 && strings.Contains(r.errOut, "another rowkit process is committing here"):
					st.busy++
				case r.exit == 3:
					st.failed3++
					if strings.Contains(r.errOut, "every file is as it was") {
						if va := read(dir, a); va != cur+"\n" {
							st.falseClaims++
							problem("writer %d: exit 3 said every file is as it was, but %s holds %q: %s", w, a, va, r.errOut)
						}
					} else {
						unknown = next
					}
				default:
					problem("writer %d: hpatch exit %d: %s", w, r.exit, r.errOut)
					return
				}
			}
			if unknown >= 0 {
				r := start(t, rowkit(bin, dir, "rowkit", "", "recover")).wait()
				noteSettled(r.out)
				va, vb := read(dir, a), read(dir, b)
				if va != vb || va != fmt.Sprintf("v=%d\n", last) && va != fmt.Sprintf("v=%d\n", unknown) {
					problem("writer %d at the end: %s %q, %s %q; acknowledged v=%d, attempted v=%d", w, a, va, b, vb, last, unknown)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	elapsed := time.Since(begin)

	r := start(t, rowkit(bin, dir, "rowkit", "", "recover")).wait()
	noteSettled(r.out)
	if r.exit != 0 {
		problem("the final rowkit recover: exit %d: %s", r.exit, r.errOut)
	}
	shared := read(dir, "shared.txt")
	for _, l := range acked {
		if n := strings.Count(shared, "\n"+l+"\n"); n != 1 {
			problem("the acknowledged shared line %q is there %d times", l, n)
		}
	}
	if l := litter(dir); len(l) > 0 {
		problem("left behind: %v", l)
	}
	var sum stressStats
	for _, s := range stats {
		sum.attempts += s.attempts
		sum.acked += s.acked
		sum.stale += s.stale
		sum.busy += s.busy
		sum.killed += s.killed
		sum.failed3 += s.failed3
		sum.falseClaims += s.falseClaims
	}
	if len(settled) > sum.killed {
		problem("%d transactions were settled by recovery, but only %d processes were killed: a live writer's was settled", len(settled), sum.killed)
	}
	if sum.acked == 0 || sum.killed == 0 {
		problem("nothing was acknowledged (%d) or killed (%d)", sum.acked, sum.killed)
	}
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("%d writers, %v: %d hpatch runs: %d acknowledged, %d row-stale on the shared file, %d busy, %d killed (%d of them settled by recovery), %d exit 3 (%d false \"every file is as it was\"); %d reader runs (%d rowkit read changed, CHANGED_DURING_READ in its JSON); %d shared lines",
		writers, elapsed.Round(time.Millisecond), sum.attempts, sum.acked, sum.stale, sum.busy, sum.killed, len(settled), sum.failed3, sum.falseClaims, readerRuns.Load(), changedReads.Load(), len(acked))
}
