package txn_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// gitRepo makes dir a git repository with files committed.
func gitRepo(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// gitStatus lists the paths git status reports (untracked files one by
// one).
func gitStatus(t *testing.T, dir string) []string {
	out, err := exec.Command("git", "-C", dir, "status", "--porcelain=v1", "-z", "--untracked-files=all").Output()
	if err != nil {
		t.Fatalf("git status: %v", err)
	}
	var paths []string
	for _, e := range strings.Split(string(out), "\x00") {
		if len(e) > 3 {
			paths = append(paths, e[3:])
		}
	}
	return paths
}

// stagingShown returns the paths among ps that are rowkit's: its staging
// files or its state directory.
func stagingShown(ps []string) []string {
	var bad []string
	for _, p := range ps {
		if strings.Contains(p, ".rowkit") {
			bad = append(bad, p)
		}
	}
	return bad
}

// A commit paused at every step in a git repository: git status and
// rowkit review never list a staging file or anything of .rowkit, only the
// script's own paths (old or new).
func TestStagingInvisibleToGit(t *testing.T) {
	bin := rowkitBin(t)
	files := map[string]string{"a.txt": "a=0\n", "sub/b.txt": "b=0\n", "d.txt": "d\n"}
	script := fmt.Sprintf("in a.txt\ntype %s \"a=1\"\nin sub/b.txt\ntype %s \"b=1\"\nnew new/c.txt\ntype \"c\\n\"\nin d.txt\nrm\n", row(1, "a=0"), row(1, "b=0"))
	steps := stepsOf(t, files, script)
	allowed := map[string]bool{"a.txt": true, "sub/b.txt": true, "new/c.txt": true, "d.txt": true}
	for k, s := range steps {
		dir := t.TempDir()
		gitRepo(t, dir, files)
		h := pauseAt(t, dir, script, k)
		shown := gitStatus(t, dir)
		var bad []string
		for _, p := range shown {
			if !allowed[p] {
				bad = append(bad, p)
			}
		}
		if k%4 == 0 {
			r := start(t, rowkit(bin, dir, "rowkit", "", "review", "--repo", ".", "--scope", "worktree", "--format", "json")).wait()
			if r.exit != 0 || strings.Contains(r.out, ".rowkit") {
				bad = append(bad, fmt.Sprintf("rowkit review: exit %d: %s%s", r.exit, r.out, r.errOut))
			}
		}
		rep := h.resume(t)
		if rep.Exit != 0 {
			t.Fatalf("paused at %q: the commit: %+v", s, rep)
		}
		if len(bad) > 0 {
			t.Fatalf("paused at %q: git status lists %v", s, bad)
		}
		if l := litter(dir); len(l) > 0 {
			t.Fatalf("paused at %q: left behind %v", s, l)
		}
	}
}

// The directory holding a target renamed (by another program) while the
// commit is paused at each step: whatever the commit then does (lands,
// or is rejected and rolled back), no staging file is left anywhere, not
// in the renamed directory either.
func TestStagingDirectoryRenamed(t *testing.T) {
	bin := rowkitBin(t)
	files := map[string]string{"a.txt": "a=0\n", "sub/b.txt": "b=0\n", "sub/c.txt": "c=0\n"}
	script := fmt.Sprintf("in a.txt\ntype %s \"a=1\"\nin sub/b.txt\ntype %s \"b=1\"\nin sub/c.txt\nrm\nnew sub/n/n.txt\ntype \"n\"\n", row(1, "a=0"), row(1, "b=0"))
	steps := stepsOf(t, files, script)
	kept := 0
	defer func() { t.Logf("%d steps; %d old contents kept and reported", len(steps), kept) }()
	for k, s := range steps {
		dir := t.TempDir()
		gitRepo(t, dir, files)
		h := pauseAt(t, dir, script, k)
		if err := os.Rename(filepath.Join(dir, "sub"), filepath.Join(dir, "moved")); err != nil {
			t.Fatal(err)
		}
		rep := h.resume(t)
		r := start(t, rowkit(bin, dir, "rowkit", "", "recover")).wait()
		if r.exit != 0 {
			t.Fatalf("sub renamed at %q (commit: %+v): rowkit recover: exit %d %s", s, rep, r.exit, r.errOut)
		}
		// An old content that could not be put back (its directory moved
		// away after its new content replaced it) is kept, and the
		// failure says where: nothing else may be left.
		for _, l := range litter(dir) {
			if !strings.Contains(rep.Msg, "is kept at "+l) {
				t.Fatalf("sub renamed at %q (commit: %+v): left behind %v", s, rep, l)
			}
			kept++
		}
		if bad := stagingShown(gitStatus(t, dir)); len(bad) > 0 {
			t.Fatalf("sub renamed at %q: git status lists %v", s, bad)
		}
	}
}

// hpatch writers committing (and some killed) while git status runs again
// and again in the same repository: git never lists a staging file, and
// nothing is left after the last recovery.
func TestStagingBesideGitStatus(t *testing.T) {
	bin := rowkitBin(t)
	dir := t.TempDir()
	files := map[string]string{"w0.txt": "v=0\n", "w1.txt": "v=0\n", "sub/s.txt": "v=0\n"}
	gitRepo(t, dir, files)
	stop := make(chan struct{})
	var seen atomic.Int64
	var statuses atomic.Int64
	var wg sync.WaitGroup
	var shownMu sync.Mutex
	var shown []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if bad := stagingShown(gitStatus(t, dir)); len(bad) > 0 {
				seen.Add(1)
				shownMu.Lock()
				shown = append(shown, bad...)
				shownMu.Unlock()
			}
			statuses.Add(1)
		}
	}()
	run := 3 * time.Second
	if testing.Short() {
		run = time.Second
	}
	deadline := time.Now().Add(run)
	commits := 0
	for w := 0; time.Now().Before(deadline); w = 1 - w {
		name := fmt.Sprintf("w%d.txt", w)
		if w == 1 && commits%3 == 0 {
			name = "sub/s.txt"
		}
		cur := strings.TrimSuffix(read(dir, name), "\n")
		script := fmt.Sprintf("in %s\ntype %s \"v=%d\"\nnew sub/n%d.txt\ntype \"n\"\n", name, row(1, cur), commits+1, commits)
		p := start(t, rowkit(bin, dir, "hpatch", script))
		if commits%5 == 4 {
			time.AfterFunc(time.Duration(commits%7)*time.Millisecond, func() { p.cmd.Process.Signal(syscall.SIGKILL) })
		}
		r := p.wait()
		if r.exit != 0 && r.exit != -int(syscall.SIGKILL) {
			t.Fatalf("hpatch: exit %d: %s", r.exit, r.errOut)
		}
		if r.exit != 0 {
			if rr := start(t, rowkit(bin, dir, "rowkit", "", "recover")).wait(); rr.exit != 0 {
				t.Fatalf("rowkit recover: %+v", rr)
			}
		}
		commits++
	}
	close(stop)
	wg.Wait()
	if n := seen.Load(); n > 0 {
		t.Fatalf("%d of %d git status runs listed rowkit's files: %v", n, statuses.Load(), shown)
	}
	if l := litter(dir); len(l) > 0 {
		t.Fatalf("left behind: %v", l)
	}
	t.Logf("%d commits, %d git status runs", commits, statuses.Load())
}
