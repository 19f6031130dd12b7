package txn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/workspace"
)

var bg = context.Background()

// recoverDir settles dir as the next invocation would: a fresh workspace,
// then Recover.
func recoverDir(t testing.TB, dir string) Recovery {
	t.Helper()
	r, err := workspace.Open(dir)
	must(t, err)
	rec, err := Recover(bg, r)
	must(t, err)
	return rec
}

// txnCase is a three-file transaction with a move and a delete: a.txt
// rewritten, b.txt moved to sub/new/b2.txt (with new content, in new
// directories), c.txt deleted.
type txnCase struct {
	a0, a1, b0, b1, c0 []byte
}

func newTxnCase(r *rand.Rand) txnCase {
	gen := func() []byte {
		n := r.IntN(3000)
		b := make([]byte, n)
		for i := range b {
			b[i] = "abc\n\r xyz"[r.IntN(9)]
		}
		return b
	}
	return txnCase{gen(), gen(), gen(), gen(), gen()}
}

func (c txnCase) setup(t testing.TB) *workspace.Root {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "a.txt"), c.a0, 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "b.txt"), c.b0, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "c.txt"), c.c0, 0o600))
	r, err := workspace.Open(dir)
	must(t, err)
	return r
}

func (c txnCase) changes() []Change {
	return []Change{
		{Target: "a.txt", Data: c.a1, Mode: 0o644, Old: c.a0},
		{Target: "sub/new/b2.txt", Data: c.b1, Mode: 0o755},
		{Target: "b.txt", Delete: true, Old: c.b0},
		{Target: "c.txt", Delete: true, Old: c.c0},
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// snapshot lists every file under dir (but rowkit's .gitignore) with its
// content and mode.
func snapshot(t testing.TB, dir string) map[string]string {
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel != "." && rel != ".rowkit" && !strings.HasPrefix(rel, ".rowkit/") {
				out[rel+"/"] = "dir"
			}
			return nil
		}
		if strings.HasPrefix(rel, ".rowkit/") {
			// rowkit's own state: its .gitignore and lock (the journal and
			// journal.tmp are checked apart, see noLitter).
			return nil
		}
		fi, _ := d.Info()
		if !fi.Mode().IsRegular() {
			out[rel] = fi.Mode().Type().String() // a FIFO is never opened
			return nil
		}
		data, _ := os.ReadFile(p)
		out[rel] = fmt.Sprintf("%o %s", fi.Mode().Perm(), data)
		return nil
	})
	return out
}

func (c txnCase) old() map[string]string {
	return map[string]string{"a.txt": "644 " + string(c.a0), "b.txt": "755 " + string(c.b0), "c.txt": "600 " + string(c.c0)}
}

func (c txnCase) new() map[string]string {
	return map[string]string{"a.txt": "644 " + string(c.a1), "sub/": "dir", "sub/new/": "dir", "sub/new/b2.txt": "755 " + string(c.b1)}
}

func keys(m map[string]string) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, " ")
}

// eachFileWhole checks the invariant at any instant, before recovery: each
// user file is wholly old, wholly new or absent where the transaction
// allows it (staging files may lie around).
func (c txnCase) eachFileWhole(t testing.TB, dir string) {
	t.Helper()
	s := snapshot(t, dir)
	allowed := map[string][]string{
		"a.txt":          {"644 " + string(c.a0), "644 " + string(c.a1)},
		"b.txt":          {"755 " + string(c.b0), ""},
		"c.txt":          {"600 " + string(c.c0), ""},
		"sub/new/b2.txt": {"755 " + string(c.b1), ""},
	}
	for name, vals := range allowed {
		got, ok := s[name]
		okv := false
		for _, v := range vals {
			if ok && got == v || !ok && v == "" {
				okv = true
			}
		}
		if !okv {
			t.Fatalf("%s is neither wholly old nor wholly new: %q", name, got)
		}
	}
}

type crash struct{}

// countSteps runs the transaction once and returns its steps.
func countSteps(t testing.TB, c txnCase) []string {
	var steps []string
	faultHook = func(s string) error { steps = append(steps, s); return nil }
	defer func() { faultHook = nil }()
	r := c.setup(t)
	must(t, Commit(bg, r, c.changes()))
	if got := snapshot(t, r.Dir()); !maps.Equal(got, c.new()) {
		t.Fatalf("after commit: %s", keys(got))
	}
	return steps
}

// runWithFault runs Commit with the k-th step failing (crash false) or
// crashing (crash true: the process stops dead, no cleanup runs).
func runWithFault(r *workspace.Root, c txnCase, k int, crashIt bool) (err error, crashed bool) {
	n := 0
	faultHook = func(s string) error {
		if n++; n-1 == k {
			if crashIt {
				panic(crash{})
			}
			return errors.New("injected failure at " + s)
		}
		return nil
	}
	defer func() {
		faultHook = nil
		if v := recover(); v != nil {
			if _, ok := v.(crash); !ok {
				panic(v)
			}
			crashed = true
		}
	}()
	return Commit(bg, r, c.changes()), false
}

func TestCommitFaultInjection(t *testing.T) {
	// Each round faults every step twice (fail, crash); set
	// ROWKIT_FAULT_ROUNDS=100 for thousands of faulted transactions.
	rounds := 6
	if n, err := strconv.Atoi(os.Getenv("ROWKIT_FAULT_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	if testing.Short() {
		rounds = 2
	}
	rng := rand.New(rand.NewPCG(3, 14))
	runs := 0
	for round := range rounds {
		c := newTxnCase(rng)
		steps := countSteps(t, c)
		for k := range steps {
			// A failing step: the commit is rolled back, or (a failure
			// while cleaning up after the decision) it stands.
			r := c.setup(t)
			err, _ := runWithFault(r, c, k, false)
			if err != nil {
				if errs.Code(err) != CodeCommit || errs.ExitCode(err) != 3 {
					t.Fatalf("step %d (%s): error %v, want commit_failed with exit 3", k, steps[k], err)
				}
				if got := snapshot(t, r.Dir()); !maps.Equal(got, c.old()) {
					t.Fatalf("step %d (%s) failed but files are not all old: %s", k, steps[k], keys(got))
				}
			} else {
				c.eachFileWhole(t, r.Dir())
				if _, err := Recover(bg, r); err != nil {
					t.Fatal(err)
				}
				if got := snapshot(t, r.Dir()); !maps.Equal(got, c.new()) {
					t.Fatalf("step %d (%s): commit succeeded, files not all new: %s", k, steps[k], keys(got))
				}
			}
			// A crash at the step, then a recovery that may itself crash.
			r = c.setup(t)
			_, crashed := runWithFault(r, c, k, true)
			if !crashed {
				t.Fatalf("step %d did not run", k)
			}
			c.eachFileWhole(t, r.Dir())
			if round%2 == 1 {
				// Crash the recovery at a random step, then recover again
				// through a fresh Open, as the next invocation would.
				j := rng.IntN(12)
				n := 0
				func() {
					faultHook = func(string) error {
						if n++; n-1 == j {
							panic(crash{})
						}
						return nil
					}
					defer func() { faultHook = nil; recover() }()
					Recover(bg, r)
				}()
				c.eachFileWhole(t, r.Dir())
			}
			rec := recoverDir(t, r.Dir())
			noLitter(t, r.Dir(), fmt.Sprintf("crash at step %d (%s), then %s", k, steps[k], rec))
			got := snapshot(t, r.Dir())
			if !maps.Equal(got, c.old()) && !maps.Equal(got, c.new()) {
				t.Fatalf("crash at step %d (%s): after recovery neither all old nor all new: %s", k, steps[k], keys(got))
			}
			runs += 2
		}
	}
	t.Logf("%d faulted transactions", runs)
}

// TestCommitKilled kills a real process (SIGKILL) at every step of the
// transaction and recovers in a fresh process view.
func TestCommitKilled(t *testing.T) {
	if os.Getenv("ROWKIT_TXN_KILL_AT") != "" {
		return // the child's work is done in TestMain-less helper below
	}
	c := newTxnCase(rand.New(rand.NewPCG(5, 5)))
	steps := countSteps(t, c)
	exe, err := os.Executable()
	must(t, err)
	sawOld, sawNew := 0, 0
	for k := range steps {
		r := c.setup(t)
		cmd := exec.Command(exe, "-test.run=^TestCommitKilledChild$")
		cmd.Env = append(os.Environ(), "ROWKIT_TXN_KILL_AT="+strconv.Itoa(k), "ROWKIT_TXN_DIR="+r.Dir(), "ROWKIT_TXN_SEED=5")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("step %d: child was not killed: %v\n%s", k, err, out)
		}
		c.eachFileWhole(t, r.Dir())
		rec := recoverDir(t, r.Dir())
		noLitter(t, r.Dir(), fmt.Sprintf("killed at step %d (%s), then %s", k, steps[k], rec))
		got := snapshot(t, r.Dir())
		switch {
		case maps.Equal(got, c.old()):
			sawOld++
		case maps.Equal(got, c.new()):
			sawNew++
		default:
			t.Fatalf("killed at step %d (%s): after recovery neither all old nor all new: %s", k, steps[k], keys(got))
		}
	}
	if sawOld == 0 || sawNew == 0 {
		t.Fatalf("kills never landed on both sides of the decision: old %d new %d", sawOld, sawNew)
	}
	t.Logf("%d kills: %d rolled back, %d completed", len(steps), sawOld, sawNew)
}

// TestCommitKilledChild is the killed process of TestCommitKilled.
func TestCommitKilledChild(t *testing.T) {
	at := os.Getenv("ROWKIT_TXN_KILL_AT")
	if at == "" {
		return // runs only as TestCommitKilled's child
	}
	k, _ := strconv.Atoi(at)
	seed, _ := strconv.Atoi(os.Getenv("ROWKIT_TXN_SEED"))
	c := newTxnCase(rand.New(rand.NewPCG(uint64(seed), uint64(seed))))
	r, err := workspace.Open(os.Getenv("ROWKIT_TXN_DIR"))
	must(t, err)
	n := 0
	faultHook = func(string) error {
		if n++; n-1 == k {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
		return nil
	}
	Commit(bg, r, c.changes())
	t.Fatal("not killed")
}

func TestCommitConcurrentWriter(t *testing.T) {
	c := newTxnCase(rand.New(rand.NewPCG(9, 9)))
	r := c.setup(t)
	// Another writer changes c.txt after the caller read it (longer than
	// it was: the error carries all of it).
	theirs := string(c.c0) + "theirs"
	must(t, os.WriteFile(filepath.Join(r.Dir(), "c.txt"), []byte(theirs), 0o600))
	err := Commit(bg, r, c.changes())
	var ce *ChangedError
	if !errors.As(err, &ce) || ce.Target != "c.txt" || string(ce.Now) != theirs {
		t.Fatalf("got %v, want a ChangedError for c.txt", err)
	}
	want := c.old()
	want["c.txt"] = "600 " + theirs
	if got := snapshot(t, r.Dir()); !maps.Equal(got, want) {
		t.Fatalf("files changed: %s", keys(got))
	}
	// A file created where the transaction creates one.
	r = c.setup(t)
	must(t, os.MkdirAll(filepath.Join(r.Dir(), "sub/new"), 0o755))
	must(t, os.WriteFile(filepath.Join(r.Dir(), "sub/new/b2.txt"), []byte("x"), 0o644))
	if err := Commit(bg, r, c.changes()); !errors.As(err, &ce) || ce.Target != "sub/new/b2.txt" {
		t.Fatalf("got %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(r.Dir(), "a.txt")); !bytes.Equal(data, c.a0) {
		t.Fatal("a.txt was written")
	}
}

// rawSnapshot lists everything under dir, rowkit's state and staging
// files included: path, type, mode, content or link target.
// noLitter checks that no staging file, journal or journal.tmp is left.
func noLitter(t testing.TB, dir, when string) {
	t.Helper()
	for name := range rawSnapshot(t, dir) {
		if isStaging(name) || name == journalName || name == journalTemp {
			t.Fatalf("%s: %s is left", when, name)
		}
	}
}

// isStaging reports whether rel (a path under a workspace) is one of
// rowkit's staging files: in .rowkit, anything but its lock, journal and
// .gitignore; elsewhere, the names staged beside a target.
func isStaging(rel string) bool {
	dir, base := filepath.Split(rel)
	if dir == ".rowkit/" {
		switch base {
		case "lock", "journal", "journal.tmp", ".gitignore":
			return false
		}
		return true
	}
	return strings.Contains(base, ".rowkit-")
}

func rawSnapshot(t testing.TB, dir string) map[string]string {
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		must(t, err)
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			out[rel] = "link " + l
		case fi.IsDir():
			out[rel] = fmt.Sprintf("dir %o", fi.Mode().Perm())
		case !fi.Mode().IsRegular():
			out[rel] = fi.Mode().String()
		default:
			data, _ := os.ReadFile(p)
			out[rel] = fmt.Sprintf("%o %s", fi.Mode().Perm(), data)
		}
		return nil
	})
	return out
}

// copyTree copies src to dst as a clone or an archive would: same names,
// contents, modes and owner, new inodes.
func copyTree(t testing.TB, src, dst string) {
	filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		must(t, err)
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		fi, err := os.Lstat(p)
		must(t, err)
		switch {
		case fi.IsDir():
			must(t, os.MkdirAll(to, fi.Mode().Perm()))
		case fi.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			must(t, os.Symlink(l, to))
		default:
			data, err := os.ReadFile(p)
			must(t, err)
			must(t, os.WriteFile(to, data, fi.Mode().Perm()))
			must(t, os.Chmod(to, fi.Mode().Perm()))
		}
		return nil
	})
}

// stepIndex finds the first step of the transaction that starts with name.
func stepIndex(t testing.TB, steps []string, name string) int {
	for i, s := range steps {
		if strings.HasPrefix(s, name) {
			return i
		}
	}
	t.Fatalf("no step %q in %v", name, steps)
	return -1
}

// crashed leaves a transaction cut short at step k in a fresh workspace.
func crashed(t testing.TB, c txnCase, k int) *workspace.Root {
	r := c.setup(t)
	if _, ok := runWithFault(r, c, k, true); !ok {
		t.Fatalf("step %d did not run", k)
	}
	if _, err := os.Lstat(filepath.Join(r.Dir(), journalName)); err != nil {
		t.Fatalf("no journal after a crash at step %d: %v", k, err)
	}
	return r
}

// expectIgnored opens dir, which holds a journal that is not provably
// rowkit's own: nothing may change, the journal is reported, and a commit
// beside it is refused.
func expectIgnored(t *testing.T, dir, why string) {
	t.Helper()
	before := rawSnapshot(t, dir)
	r, err := workspace.Open(dir)
	if err != nil {
		t.Fatalf("%s: Open failed: %v", why, err)
	}
	rec, err := Recover(bg, r)
	if err != nil {
		t.Fatalf("%s: Recover failed: %v", why, err)
	}
	if msg := rec.String(); rec.Action != Ignored || !strings.Contains(msg, "ignored .rowkit/journal") || !strings.Contains(msg, why) {
		t.Fatalf("Recover() = %+v %q, want it to report the ignored journal (%s)", rec, msg, why)
	}
	if errs.Code(rec.Err()) != CodeJournal || !strings.HasSuffix(rec.Err().Error(), "it was left alone") {
		t.Fatalf("%s: Err() = %v", why, rec.Err())
	}
	if after := rawSnapshot(t, dir); !maps.Equal(before, after) {
		t.Fatalf("%s: the workspace changed: %s -> %s", why, keys(before), keys(after))
	}
	err = Commit(bg, r, []Change{{Target: "z.txt", Data: []byte("z"), Mode: 0o644}})
	if errs.Code(err) != CodeJournal || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("%s: Commit beside a foreign journal: %v", why, err)
	}
	if after := rawSnapshot(t, dir); !maps.Equal(before, after) {
		t.Fatalf("%s: the refused commit changed the workspace: %s", why, keys(after))
	}
}

// A transaction cut short and then copied (a clone of a repository that
// ships rowkit's staging files, an archive) is not acted on in the copy:
// every name, mode, content and the owner match, only the inodes differ.
// The original still recovers.
func TestRecoverIgnoresCopiedJournal(t *testing.T) {
	c := newTxnCase(rand.New(rand.NewPCG(21, 21)))
	steps := countSteps(t, c)
	tried := 0
	for k := range steps {
		orig := c.setup(t)
		if _, ok := runWithFault(orig, c, k, true); !ok {
			t.Fatalf("step %d did not run", k)
		}
		if _, err := os.Lstat(filepath.Join(orig.Dir(), journalName)); err != nil {
			continue // no journal yet, or none any more
		}
		tried++
		clone := t.TempDir()
		copyTree(t, orig.Dir(), clone)
		expectIgnored(t, clone, "it is a copy")
		rec := recoverDir(t, orig.Dir())
		if rec.Action != RolledBack && rec.Action != Completed {
			t.Fatalf("crash at %s: the original was not recovered: %+v", steps[k], rec)
		}
		if got := snapshot(t, orig.Dir()); !maps.Equal(got, c.old()) && !maps.Equal(got, c.new()) {
			t.Fatalf("crash at %s: after recovery neither all old nor all new: %s", steps[k], keys(got))
		}
	}
	if tried < 20 {
		t.Fatalf("only %d crash points left a journal", tried)
	}
}

// A journal that names paths outside the root, or anything but rowkit's
// staging files beside clean targets, is never executed, even when it
// carries its own true inode.
func TestRecoverIgnoresJournalOutsideRoot(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "ws")
	must(t, os.MkdirAll(filepath.Join(dir, ".rowkit"), 0o755))
	must(t, os.WriteFile(filepath.Join(parent, "x"), []byte("outside"), 0o644))
	must(t, os.WriteFile(filepath.Join(parent, ".x.rowkit-000000000000.tmp"), []byte("evil"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("mine"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "other.txt"), []byte("evil"), 0o644))
	home, err := os.Lstat(filepath.Join(dir, ".rowkit"))
	must(t, err)
	for _, ops := range []string{
		`[{"target":"../x","temp":"../.x.rowkit-000000000000.tmp"}]`,
		`[{"target":"/etc/x","temp":"/etc/.x.rowkit-000000000000.tmp"}]`,
		`[{"target":"keep.txt","temp":"other.txt"}]`,
		`[{"target":"keep.txt/../../x","temp":"keep.txt/../../.x.rowkit-000000000000.tmp"}]`,
	} {
		// The journal file written in place, so that it can name its own
		// inode and its directory's.
		p := filepath.Join(dir, ".rowkit/journal")
		os.Remove(p)
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		must(t, err)
		fi, err := f.Stat()
		must(t, err)
		self, _ := idOf(fi)
		hid, _ := idOf(home)
		fmt.Fprintf(f, `{"id":"000000000000","state":"commit","ops":%s,"self":{"dev":%d,"ino":%d},"home":{"dev":%d,"ino":%d}}`, ops, self.Dev, self.Ino, hid.Dev, hid.Ino)
		must(t, f.Close())
		expectIgnored(t, dir, "names paths outside")
		if data, _ := os.ReadFile(filepath.Join(parent, "x")); string(data) != "outside" {
			t.Fatalf("%s: the file outside the root changed: %q", ops, data)
		}
	}
}

// A journal that is a symlink (even to rowkit's own journal of a real
// transaction), in a .rowkit that is a symlink, with a mode other than
// 0600, or owned by someone else, is ignored.
func TestRecoverIgnoresUnprovenJournal(t *testing.T) {
	c := newTxnCase(rand.New(rand.NewPCG(23, 23)))
	steps := countSteps(t, c)
	k := stepIndex(t, steps, "rename a.txt")

	r := crashed(t, c, k)
	j := filepath.Join(r.Dir(), journalName)
	must(t, os.Rename(j, j+".real"))
	must(t, os.Symlink("journal.real", j))
	expectIgnored(t, r.Dir(), "it is a symlink")

	r = crashed(t, c, k)
	elsewhere := filepath.Join(t.TempDir(), "state")
	must(t, os.Rename(filepath.Join(r.Dir(), ".rowkit"), elsewhere))
	must(t, os.Symlink(elsewhere, filepath.Join(r.Dir(), ".rowkit")))
	expectIgnored(t, r.Dir(), ".rowkit is not a directory")

	r = crashed(t, c, k)
	must(t, os.Chmod(filepath.Join(r.Dir(), journalName), 0o644))
	expectIgnored(t, r.Dir(), "its mode is 0644")

	if os.Geteuid() == 0 {
		r = crashed(t, c, k)
		must(t, os.Chown(filepath.Join(r.Dir(), journalName), 65534, 65534))
		expectIgnored(t, r.Dir(), "owned by another user")
	}

	// A staged file swapped for another after the decision.
	r = crashed(t, c, k)
	matches, _ := filepath.Glob(filepath.Join(r.Dir(), ".rowkit/*.1.new"))
	if len(matches) != 1 {
		t.Fatalf("staged files: %v", matches)
	}
	data, err := os.ReadFile(matches[0])
	must(t, err)
	// Written beside it and renamed over it: a new inode (removing it
	// first would let the file system hand the same number out again).
	must(t, os.WriteFile(matches[0]+".new", data, 0o755))
	must(t, os.Rename(matches[0]+".new", matches[0]))
	expectIgnored(t, r.Dir(), "is not the file the transaction staged")
}

// hookAt runs f before the first step named step (or starting with it),
// once.
func hookAt(step string, f func()) func() {
	done := false
	faultHook = func(s string) error {
		if !done && strings.HasPrefix(s, step) {
			done = true
			f()
		}
		return nil
	}
	return func() { faultHook = nil }
}

// Another writer changes a target right before the commit renames or
// removes it, in place or by replacing the file: the commit is rolled back
// with a *ChangedError, nothing of it is written, and the other writer's
// content stays.
func TestCommitExternalWriterBeforeRename(t *testing.T) {
	c := newTxnCase(rand.New(rand.NewPCG(31, 31)))
	for _, tc := range []struct {
		step, target string
		write        func(p string) error
	}{
		{"rename a.txt", "a.txt", func(p string) error { // in place, as echo > a.txt does
			return os.WriteFile(p, []byte("theirs"), 0o644)
		}},
		{"rename a.txt", "a.txt", func(p string) error { // in place, same size: only the content tells
			data, _ := os.ReadFile(p)
			return os.WriteFile(p, bytes.Repeat([]byte("z"), len(data)), 0o644)
		}},
		{"rename a.txt", "a.txt", func(p string) error { // replaced, as an editor saves
			os.WriteFile(p+".new", []byte("theirs"), 0o644)
			return os.Rename(p+".new", p)
		}},
		{"remove c.txt", "c.txt", func(p string) error {
			return os.WriteFile(p, []byte("theirs"), 0o600)
		}},
		{"remove c.txt", "c.txt", func(p string) error {
			os.WriteFile(p+".new", []byte("theirs"), 0o600)
			return os.Rename(p+".new", p)
		}},
		{"rename sub/new/b2.txt", "sub/new/b2.txt", func(p string) error { // created first by another
			return os.WriteFile(p, []byte("theirs"), 0o644)
		}},
	} {
		r := c.setup(t)
		p := filepath.Join(r.Dir(), tc.target)
		var werr error
		undo := hookAt(tc.step, func() { werr = tc.write(p) })
		err := Commit(bg, r, c.changes())
		undo()
		must(t, werr)
		var ce *ChangedError
		if !errors.As(err, &ce) || ce.Target != tc.target {
			t.Fatalf("%s: %v, want a ChangedError for %s", tc.step, err, tc.target)
		}
		if string(ce.Now) != "theirs" && !bytes.HasPrefix(ce.Now, []byte("zz")) {
			t.Fatalf("%s: Now = %q", tc.step, ce.Now)
		}
		want := c.old()
		data, _ := os.ReadFile(p)
		fi, _ := os.Stat(p)
		want[tc.target] = fmt.Sprintf("%o %s", fi.Mode().Perm(), data)
		if tc.target == "sub/new/b2.txt" {
			want["sub/"], want["sub/new/"] = "dir", "dir"
		}
		if got := snapshot(t, r.Dir()); !maps.Equal(got, want) {
			t.Fatalf("%s: after the rollback: %s, want %s", tc.step, keys(got), keys(want))
		}
		if string(data) != "theirs" && !bytes.HasPrefix(data, []byte("zz")) {
			t.Fatalf("%s: the other writer's content was lost: %q", tc.step, data)
		}
		noLitter(t, r.Dir(), tc.step)
	}
	// A write through a descriptor opened before the rename, landing after
	// it but before the recheck, goes to the replaced file: the recheck
	// finds it in the backup and the transaction is undone.
	r := c.setup(t)
	var f *os.File
	faultHook = func(s string) error {
		switch {
		case s == "rename a.txt" && f == nil:
			f, _ = os.OpenFile(filepath.Join(r.Dir(), "a.txt"), os.O_WRONLY|os.O_APPEND, 0)
		case s == "recheck a.txt" && f != nil:
			f.WriteString("late")
			f.Close()
		}
		return nil
	}
	err := Commit(bg, r, c.changes())
	faultHook = nil
	var ce *ChangedError
	if !errors.As(err, &ce) || ce.Target != "a.txt" || string(ce.Now) != string(c.a0)+"late" {
		t.Fatalf("a write after the rename: %v", err)
	}
	want := c.old()
	want["a.txt"] += "late"
	if got := snapshot(t, r.Dir()); !maps.Equal(got, want) {
		t.Fatalf("a write after the rename: files %s", keys(got))
	}
	noLitter(t, r.Dir(), "a write after the rename")
}

// A FIFO or a device swapped in for a target, between the caller's read
// and the commit or at any later step before its rename, fails the commit
// at once: nothing blocks on it, nothing reads it without bound.
func TestCommitSpecialFileSwappedIn(t *testing.T) {
	c := newTxnCase(rand.New(rand.NewPCG(37, 37)))
	kinds := []struct {
		name string
		make func(p string) error
	}{
		{"a FIFO", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
	}
	if os.Geteuid() == 0 {
		// /dev/zero's numbers: read without bound it never ends.
		kinds = append(kinds, struct {
			name string
			make func(p string) error
		}{"a device", func(p string) error { return syscall.Mknod(p, syscall.S_IFCHR|0o644, 1<<8|5) }})
	} else {
		t.Log("not root: only the FIFO case runs (mknod needs root)")
	}
	for _, k := range kinds {
		for _, at := range []string{"", "journal prepare", "link a.txt", "rename a.txt"} {
			r := c.setup(t)
			p := filepath.Join(r.Dir(), "a.txt")
			swap := func() {
				must(t, os.Remove(p))
				must(t, k.make(p))
			}
			if at == "" {
				swap()
			}
			undo := hookAt(at, swap)
			done := make(chan error, 1)
			go func() { done <- Commit(bg, r, c.changes()) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s swapped in at %q: the commit blocked", k.name, at)
			}
			undo()
			var ce *ChangedError
			if !errors.As(err, &ce) || ce.Target != "a.txt" || ce.Kind != k.name {
				t.Fatalf("%s swapped in at %q: %v", k.name, at, err)
			}
			fi, lerr := os.Lstat(p)
			if lerr != nil || fi.Mode().IsRegular() {
				t.Fatalf("%s swapped in at %q: the special file is gone: %v", k.name, at, lerr)
			}
			got := snapshot(t, r.Dir())
			delete(got, "a.txt")
			want := c.old()
			delete(want, "a.txt")
			if !maps.Equal(got, want) {
				t.Fatalf("%s swapped in at %q: files changed: %s", k.name, at, keys(got))
			}
			noLitter(t, r.Dir(), k.name+" at "+at)
		}
	}
}

// A journal removed or replaced under a running commit (by something
// outside rowkit's protocol) stops it: commit_failed, exit 3, and a
// statement of every file that is true on disk, never "every file is as it
// was" unless it is.
func TestCommitJournalNotOwn(t *testing.T) {
	c := newTxnCase(rand.New(rand.NewPCG(41, 41)))
	steps := countSteps(t, c)
	tried := 0
	for _, what := range []string{"remove journal", "replace journal", "replace lock"} {
		for k, s := range steps {
			r := c.setup(t)
			dir := r.Dir()
			n := 0
			faultHook = func(string) error {
				if n++; n-1 == k {
					switch what {
					case "remove journal":
						os.Remove(filepath.Join(dir, journalName))
					// A copy renamed over it: a new inode, as removing it
					// first would not promise.
					case "replace journal":
						data, err := os.ReadFile(filepath.Join(dir, journalName))
						if err == nil {
							os.WriteFile(filepath.Join(dir, journalName+".new"), data, 0o600)
							os.Rename(filepath.Join(dir, journalName+".new"), filepath.Join(dir, journalName))
						}
					case "replace lock":
						os.WriteFile(filepath.Join(dir, lockName+".new"), nil, 0o600)
						os.Rename(filepath.Join(dir, lockName+".new"), filepath.Join(dir, lockName))
					}
				}
				return nil
			}
			err := Commit(bg, r, c.changes())
			faultHook = nil
			if err == nil {
				// The journal was already gone (or not yet written) at
				// that step, or the lock was replaced after the work was
				// done: the commit must then have landed.
				if got := snapshot(t, dir); !maps.Equal(got, c.new()) {
					t.Fatalf("%s at %s: nil error, files %s", what, s, keys(got))
				}
				// The backups are dropped; a replaced journal is not
				// this transaction's to remove.
				for name := range rawSnapshot(t, dir) {
					if isStaging(name) {
						t.Fatalf("%s at %s: %s is left", what, s, name)
					}
				}
				continue
			}
			tried++
			if errs.Code(err) != CodeCommit || errs.ExitCode(err) != 3 {
				t.Fatalf("%s at %s: %v", what, s, err)
			}
			msg := err.Error()
			got := snapshot(t, dir)
			files := map[string]string{}
			for name, v := range got {
				switch {
				case v == "dir":
					if !strings.Contains(msg, name) || !strings.Contains(msg, "the directories it created are there") {
						t.Fatalf("%s at %s: %s is there, but the message says %q", what, s, name, msg)
					}
					continue
				case strings.Contains(name, ".rowkit-"):
					if !strings.Contains(msg, "staging files") {
						t.Fatalf("%s at %s: %s is left, but the message says %q", what, s, name, msg)
					}
					continue
				}
				files[name] = v
			}
			allOld := maps.Equal(files, c.old())
			if strings.Contains(msg, "every file is as it was") != allOld {
				t.Fatalf("%s at %s: %q, but all old is %v (%s)", what, s, msg, allOld, keys(got))
			}
			if !allOld {
				for name, state := range map[string]string{"a.txt": "644 " + string(c.a1), "sub/new/b2.txt": "755 " + string(c.b1)} {
					if got[name] == state && !strings.Contains(msg, name+" has its new content") {
						t.Fatalf("%s at %s: %s is new but the message says %q", what, s, name, msg)
					}
				}
				if _, ok := got["c.txt"]; !ok && !strings.Contains(msg, "c.txt is deleted") {
					t.Fatalf("%s at %s: c.txt is deleted but the message says %q", what, s, msg)
				}
			}
		}
	}
	if tried < len(steps) {
		t.Fatalf("only %d of %d steps failed", tried, 3*len(steps))
	}
}

// The lock excludes goroutines of one process as it does processes: two
// commits at once on different files both land, on the same file one
// lands and the other is refused with a *ChangedError.
func TestCommitGoroutines(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"x.txt", "y.txt", "s.txt"} {
		must(t, os.WriteFile(filepath.Join(dir, n), []byte("0"), 0o644))
	}
	r, err := workspace.Open(dir)
	must(t, err)
	const rounds = 100
	var wg sync.WaitGroup
	results := make([][]error, 2)
	for g, own := range []string{"x.txt", "y.txt"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each goroutine opens the workspace itself, as the shell's
			// commands will.
			r, err := workspace.Open(dir)
			if err != nil {
				results[g] = append(results[g], err)
				return
			}
			for i := range rounds {
				f, err := r.Load(own)
				if err != nil {
					results[g] = append(results[g], err)
					continue
				}
				s, err := r.Load("s.txt")
				if err != nil {
					results[g] = append(results[g], err)
					continue
				}
				next := []byte(strconv.Itoa(i + 1))
				err = Commit(bg, r, []Change{
					{Target: own, Data: next, Mode: 0o644, Old: f.Data},
					{Target: "s.txt", Data: append(append([]byte(nil), s.Data...), byte('a'+g)), Mode: 0o644, Old: s.Data},
				})
				results[g] = append(results[g], err)
			}
		}()
	}
	wg.Wait()
	_ = r
	landed := 0
	for g, own := range []string{"x.txt", "y.txt"} {
		last := 0
		for i, err := range results[g] {
			var ce *ChangedError
			switch {
			case err == nil:
				last = i + 1
				landed++
			case errors.As(err, &ce):
			default:
				t.Fatalf("goroutine %d, commit %d: %v", g, i, err)
			}
		}
		data, _ := os.ReadFile(filepath.Join(dir, own))
		if string(data) != strconv.Itoa(last) {
			t.Fatalf("%s holds %q, but the last commit that landed wrote %d", own, data, last)
		}
	}
	// Every landed commit appended one letter to s.txt: none was lost.
	s, _ := os.ReadFile(filepath.Join(dir, "s.txt"))
	if len(s)-1 != landed {
		t.Fatalf("s.txt holds %d appends, %d commits landed", len(s)-1, landed)
	}
	if landed < rounds {
		t.Fatalf("only %d of %d commits landed", landed, 2*rounds)
	}
	noLitter(t, dir, "after the goroutines")
	t.Logf("%d of %d commits landed, the rest refused as stale", landed, 2*rounds)
}

// A lock held by another open file (another process, another goroutine) is
// waited for: Recover reports Busy and Commit refuses with code journal
// after the wait; ctx ends the wait early; once the holder lets go, both
// proceed.
func TestLockBusy(t *testing.T) {
	c := newTxnCase(rand.New(rand.NewPCG(43, 43)))
	r := c.setup(t)
	old := lockWait
	lockWait = 300 * time.Millisecond
	defer func() { lockWait = old }()
	// Taken the way another process would: its own open file, flock(2).
	must(t, os.MkdirAll(filepath.Join(r.Dir(), ".rowkit"), 0o755))
	f, err := os.OpenFile(filepath.Join(r.Dir(), lockName), os.O_RDWR|os.O_CREATE, 0o600)
	must(t, err)
	must(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX))
	start := time.Now()
	rec, err := Recover(bg, r)
	if err != nil || rec.Action != Busy || errs.Code(rec.Err()) != CodeJournal || !strings.Contains(rec.Err().Error(), "another rowkit process is committing here") {
		t.Fatalf("Recover beside a held lock: %+v %v %v", rec, err, rec.Err())
	}
	if d := time.Since(start); d < lockWait {
		t.Fatalf("Recover gave up after %v, before the wait of %v", d, lockWait)
	}
	err = Commit(bg, r, c.changes())
	if errs.Code(err) != CodeJournal || errs.ExitCode(err) != 1 || !strings.Contains(err.Error(), "another rowkit process is committing here") || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("Commit beside a held lock: %v", err)
	}
	ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
	lockWait = time.Minute
	start = time.Now()
	err = Commit(ctx, r, c.changes())
	cancel()
	if errs.Code(err) != errs.Cancelled || time.Since(start) > 5*time.Second {
		t.Fatalf("Commit with a cancelled context: %v after %v", err, time.Since(start))
	}
	if got := snapshot(t, r.Dir()); !maps.Equal(got, c.old()) {
		t.Fatalf("files changed while the lock was held elsewhere: %s", keys(got))
	}
	// Released while a commit waits: it proceeds.
	go func() { time.Sleep(100 * time.Millisecond); f.Close() }()
	must(t, Commit(bg, r, c.changes()))
	if got := snapshot(t, r.Dir()); !maps.Equal(got, c.new()) {
		t.Fatalf("after the holder let go: %s", keys(got))
	}
}

// A journal.tmp that a kill left while the journal was being written (no
// journal beside it: it decided nothing) is removed by recovery, which
// says so; a foreign-looking one (another mode) is left.
func TestRecoverRemovesStaleJournalTemp(t *testing.T) {
	c := newTxnCase(rand.New(rand.NewPCG(47, 47)))
	steps := countSteps(t, c)
	// Killed while writing the first journal: only journal.tmp is there.
	k := stepIndex(t, steps, "fsync .rowkit/journal.tmp")
	r := c.setup(t)
	if _, ok := runWithFault(r, c, k, true); !ok {
		t.Fatalf("step %d did not run", k)
	}
	if _, err := os.Lstat(filepath.Join(r.Dir(), journalTemp)); err != nil {
		t.Fatalf("no journal.tmp after a crash at %s: %v", steps[k], err)
	}
	rec := recoverDir(t, r.Dir())
	if rec.Action != None || !rec.StaleTemp || !strings.Contains(rec.String(), "removed .rowkit/journal.tmp") {
		t.Fatalf("Recover: %+v %q", rec, rec)
	}
	noLitter(t, r.Dir(), "after the recovery")
	if got := snapshot(t, r.Dir()); !maps.Equal(got, c.old()) {
		t.Fatalf("files: %s", keys(got))
	}
	must(t, os.WriteFile(filepath.Join(r.Dir(), journalTemp), []byte("{}"), 0o644))
	if rec := recoverDir(t, r.Dir()); rec.StaleTemp {
		t.Fatalf("a journal.tmp of mode 0644 was removed: %+v", rec)
	}
}

// An acknowledged commit whose cleanup failed leaves its journal deciding
// commit; whatever other writers do afterwards (write into a replaced file
// through an old descriptor, create a file where one was deleted), the
// recovery completes the cleanup and never undoes the acknowledged edit.
func TestRecoverNeverUndoesAcknowledged(t *testing.T) {
	c := newTxnCase(rand.New(rand.NewPCG(53, 53)))
	r := c.setup(t)
	faultHook = func(s string) error {
		if strings.HasPrefix(s, "drop backup") {
			return errors.New("injected")
		}
		return nil
	}
	err := Commit(bg, r, c.changes())
	faultHook = nil
	must(t, err)
	olds, _ := filepath.Glob(filepath.Join(r.Dir(), ".rowkit/*.0.old"))
	if len(olds) != 1 {
		t.Fatalf("backups: %v", olds)
	}
	f, err := os.OpenFile(olds[0], os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	f.WriteString("late")
	f.Close()
	must(t, os.WriteFile(filepath.Join(r.Dir(), "c.txt"), []byte("theirs"), 0o600))
	rec := recoverDir(t, r.Dir())
	if rec.Action != Completed {
		t.Fatalf("Recover: %+v", rec)
	}
	want := c.new()
	want["c.txt"] = "600 theirs"
	if got := snapshot(t, r.Dir()); !maps.Equal(got, want) {
		t.Fatalf("files: %s", keys(got))
	}
	noLitter(t, r.Dir(), "after the recovery")
}
