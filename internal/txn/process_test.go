package txn_test

// Tests with other processes: the rowkit binary (built once per run) as
// the reader, the other committer or the recoverer, and this test binary
// re-executed as a helper that commits with a fault hook that pauses it at
// a chosen step (helperPause) or serves MCP with a hook that swaps a file
// for a FIFO mid-commit (helperMCP).

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/patch"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/txn"
	"github.com/rowkit/rowkit/internal/workspace"
)

const helperEnv = "ROWKIT_TXN_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "pause":
		helperPause()
		return
	case "mcp":
		helperMCP()
		return
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// rowkitBin builds the rowkit binary once and links its shell names
// beside it; it returns the directory. ROWKIT_TXN_BIN names a directory
// holding another build (and its names) instead: to run the process tests
// against a baseline, such as the code before the workspace lock.
func rowkitBin(t testing.TB) string {
	if d := os.Getenv("ROWKIT_TXN_BIN"); d != "" {
		return d
	}
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "rowkit-txn-bin"); binErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, "rowkit"), "github.com/rowkit/rowkit/cmd/rowkit").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		for _, n := range []string{"hread", "hpatch", "hgrep", "inspect_file"} {
			if binErr = os.Symlink("rowkit", filepath.Join(binDir, n)); binErr != nil {
				return
			}
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binDir
}

// report is what helperPause prints: the engine's status and error.
type report struct {
	Status string `json:"status"`
	Code   string `json:"code"`
	Msg    string `json:"msg"`
	Exit   int    `json:"exit"`
}

// helperPause applies ROWKIT_TXN_SCRIPT in ROWKIT_TXN_DIR as hpatch does,
// pausing before step ROWKIT_TXN_STEP: it creates SYNC/paused and waits
// for SYNC/go.
func helperPause() {
	dir, script, sync := os.Getenv("ROWKIT_TXN_DIR"), os.Getenv("ROWKIT_TXN_SCRIPT"), os.Getenv("ROWKIT_TXN_SYNC")
	k, _ := strconv.Atoi(os.Getenv("ROWKIT_TXN_STEP"))
	n := 0
	txn.SetFaultHook(func(s string) error {
		if n == k {
			os.WriteFile(filepath.Join(sync, "paused"), []byte(s), 0o644)
			for {
				if _, err := os.Stat(filepath.Join(sync, "go")); err == nil {
					break
				}
				time.Sleep(time.Millisecond)
			}
		}
		n++
		return nil
	})
	var rep report
	root, err := workspace.Open(dir)
	if err == nil {
		var res *patch.Result
		res, err = patch.Apply(context.Background(), root, script, patch.Options{})
		if res != nil {
			rep.Status = res.Status
		}
	}
	if err != nil {
		rep.Code, rep.Msg = errs.Code(err), err.Error()
	}
	rep.Exit = errs.ExitCode(err)
	json.NewEncoder(os.Stdout).Encode(rep)
	os.Exit(rep.Exit)
}

func row(line int, text string) string { return fmt.Sprintf("%d:%s", line, rows.Hash([]byte(text))) }

func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func read(dir, name string) string {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "<missing>"
	}
	return string(b)
}

// stepsOf runs script's commit once in a fresh copy of files and returns
// its steps.
func stepsOf(t *testing.T, files map[string]string, script string) []string {
	return stepsWith(t, func(dir string) { writeFiles(t, dir, files) }, script)
}

// stepsWith is stepsOf in a workspace that setup makes.
func stepsWith(t *testing.T, setup func(dir string), script string) []string {
	dir := t.TempDir()
	setup(dir)
	var got []string
	txn.SetFaultHook(func(s string) error { got = append(got, s); return nil })
	defer txn.SetFaultHook(nil)
	root, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := patch.Apply(context.Background(), root, script, patch.Options{}); err != nil {
		t.Fatal(err)
	}
	return got
}

type run struct {
	out, errOut string
	exit        int
}

// proc is a started process.
type proc struct {
	cmd         *exec.Cmd
	out, errOut strings.Builder
}

func start(t testing.TB, cmd *exec.Cmd) *proc {
	p := &proc{cmd: cmd}
	cmd.Stdout, cmd.Stderr = &p.out, &p.errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *proc) wait() run {
	err := p.cmd.Wait()
	r := run{out: p.out.String(), errOut: p.errOut.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.exit = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.exit = -int(ws.Signal())
		}
	} else if err != nil {
		r.exit, r.errOut = -1000, r.errOut+err.Error()
	}
	return r
}

// holds reports, within a few seconds, whether process pid has name open:
// a waiter for the lock has .rowkit/lock open while it polls.
func holds(pid int, name string) bool {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			return false
		}
		for _, e := range ents {
			if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name())); err == nil && l == name {
				return true
			}
		}
		time.Sleep(time.Millisecond)
	}
	return false
}

func rowkit(bin, dir, name, stdin string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(bin, name), args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	return cmd
}

// litter lists rowkit's staging files, journal and journal.tmp under dir.
func litter(dir string) []string {
	var bad []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		inState := filepath.Dir(rel) == ".rowkit" && d.Name() != "lock" && d.Name() != ".gitignore"
		if strings.Contains(d.Name(), ".rowkit-") || inState {
			bad = append(bad, rel)
		}
		return nil
	})
	return bad
}

// paused is a helper process stopped at a step of its commit.
type paused struct {
	p    *proc
	sync string
}

func pauseAt(t *testing.T, dir, script string, k int) *paused {
	syncDir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), helperEnv+"=pause", "ROWKIT_TXN_DIR="+dir, "ROWKIT_TXN_SCRIPT="+script, "ROWKIT_TXN_SYNC="+syncDir, "ROWKIT_TXN_STEP="+strconv.Itoa(k))
	h := &paused{p: start(t, cmd), sync: syncDir}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(syncDir, "paused")); err == nil {
			return h
		}
		if time.Now().After(deadline) {
			h.p.cmd.Process.Kill()
			t.Fatalf("step %d: the commit never paused: %+v", k, h.p.wait())
		}
		time.Sleep(time.Millisecond)
	}
}

// resume lets the paused commit go on and returns its report.
func (h *paused) resume(t *testing.T) report {
	os.WriteFile(filepath.Join(h.sync, "go"), nil, 0o644)
	r := h.p.wait()
	var rep report
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatalf("the paused commit: %v: %+v", err, r)
	}
	return rep
}

// other is a process run while a commit is paused.
type other struct {
	name string
	// waits: it takes the workspace lock, so it runs in the background
	// until the paused commit is let go. mustWait says at which steps it
	// must be found waiting for the lock (hpatch on the paused commit's
	// file is rejected without committing once that file was renamed).
	waits    bool
	mustWait func(step string, renamed bool) bool
	cmd      func(bin, dir string) *exec.Cmd
	check    func(dir string, r run) string // "" or what is wrong
}

// The reproduction: a two-file commit paused at every step while
// another process opens the workspace and reads, commits or recovers. The
// paused commit lands whole every time, readers see each file wholly old
// or new, another commit on another file lands after it, one on the same
// file is rejected row-stale with the fresh row, recovery waits and finds
// nothing to do, and nothing is left behind.
func TestCommitPausedBesideOtherProcesses(t *testing.T) {
	bin := rowkitBin(t)
	files := map[string]string{"a.txt": "a=0\n", "b.txt": "b=0\n", "c.txt": "x\n"}
	script := fmt.Sprintf("in a.txt\ntype %s \"a=1\"\nin b.txt\ntype %s \"b=1\"\n", row(1, "a=0"), row(1, "b=0"))
	steps := stepsOf(t, files, script)
	renamedA := -1
	for k, s := range steps {
		if s == "rename a.txt" {
			renamedA = k
		}
	}
	reader := func(name string, args ...string) func(bin, dir string) *exec.Cmd {
		return func(bin, dir string) *exec.Cmd { return rowkit(bin, dir, name, "", args...) }
	}
	oneOf := func(r run, what string, outs ...string) string {
		for _, o := range outs {
			if r.exit == 0 && r.out == o {
				return ""
			}
		}
		return fmt.Sprintf("%s: exit %d, %q, %s", what, r.exit, r.out, r.errOut)
	}
	others := []other{
		{name: "inspect_file", cmd: reader("inspect_file", "a.txt"), check: func(dir string, r run) string {
			if r.exit != 0 || !strings.Contains(r.out, `"path":"a.txt"`) {
				return fmt.Sprintf("inspect_file: exit %d: %s %s", r.exit, r.out, r.errOut)
			}
			return ""
		}},
		{name: "rowkit read", cmd: reader("rowkit", "read", "b.txt"), check: func(dir string, r run) string {
			return oneOf(r, "rowkit read b.txt", row(1, "b=0")+" b=0\n", row(1, "b=1")+" b=1\n")
		}},
		{name: "hread", cmd: reader("hread", "a.txt"), check: func(dir string, r run) string {
			return oneOf(r, "hread a.txt", row(1, "a=0")+" a=0\n", row(1, "a=1")+" a=1\n")
		}},
		{name: "rowkit recover", waits: true, cmd: reader("rowkit", "recover"), check: func(dir string, r run) string {
			return oneOf(r, "rowkit recover", "nothing to recover\n")
		}},
		{name: "hpatch c.txt", waits: true, cmd: func(bin, dir string) *exec.Cmd {
			return rowkit(bin, dir, "hpatch", fmt.Sprintf("in c.txt\ntype %s \"y\"\n", row(1, "x")))
		}, check: func(dir string, r run) string {
			if r.exit != 0 || read(dir, "c.txt") != "y\n" {
				return fmt.Sprintf("hpatch c.txt: exit %d, c.txt %q: %s", r.exit, read(dir, "c.txt"), r.errOut)
			}
			return ""
		}},
		{name: "hpatch a.txt", waits: true, mustWait: func(_ string, renamed bool) bool { return !renamed }, cmd: func(bin, dir string) *exec.Cmd {
			return rowkit(bin, dir, "hpatch", fmt.Sprintf("in a.txt\ntype %s \"a=2\"\n", row(1, "a=0")))
		}, check: func(dir string, r run) string {
			if r.exit != 1 || !strings.Contains(r.errOut, "reason row-stale") || !strings.Contains(r.errOut, row(1, "a=1")+" a=1") {
				return fmt.Sprintf("hpatch a.txt: exit %d (want 1, row-stale with the fresh row), a.txt %q: %s", r.exit, read(dir, "a.txt"), r.errOut)
			}
			return ""
		}},
	}
	for _, o := range others {
		t.Run(strings.ReplaceAll(o.name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			for k, s := range steps {
				dir := t.TempDir()
				writeFiles(t, dir, files)
				h := pauseAt(t, dir, script, k)
				p := start(t, o.cmd(bin, dir))
				var bad []string
				if o.waits && (o.mustWait == nil || o.mustWait(s, k > renamedA)) {
					if !holds(p.cmd.Process.Pid, filepath.Join(dir, ".rowkit/lock")) {
						bad = append(bad, "it did not wait for the workspace lock")
					}
				}
				var r run
				if !o.waits {
					r = p.wait()
				}
				rep := h.resume(t)
				if o.waits {
					r = p.wait()
				}
				if rep.Exit != 0 || rep.Status != patch.StatusApplied {
					bad = append(bad, fmt.Sprintf("the paused commit: exit %d %s %s", rep.Exit, rep.Status, rep.Msg))
				}
				if a, b := read(dir, "a.txt"), read(dir, "b.txt"); a != "a=1\n" || b != "b=1\n" {
					bad = append(bad, fmt.Sprintf("a.txt %q b.txt %q", a, b))
				}
				if why := o.check(dir, r); why != "" {
					bad = append(bad, why)
				}
				if l := litter(dir); len(l) > 0 {
					bad = append(bad, fmt.Sprintf("left behind: %v", l))
				}
				if len(bad) > 0 {
					t.Errorf("%s while the commit was paused at %q: %s", o.name, s, strings.Join(bad, "; "))
				}
			}
		})
	}
}

// in a.txt / mv b.txt with a reader during every step, the rename
// included: the file ends at exactly one path, b.txt, and hpatch says so.
func TestMovePausedBesideReader(t *testing.T) {
	bin := rowkitBin(t)
	files := map[string]string{"a.txt": "a=0\n", "c.txt": "x\n"}
	script := "in a.txt\nmv b.txt\n"
	steps := stepsOf(t, files, script)
	for _, name := range []string{"inspect_file", "rowkit read"} {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			for k, s := range steps {
				dir := t.TempDir()
				writeFiles(t, dir, files)
				h := pauseAt(t, dir, script, k)
				var r run
				if name == "rowkit read" {
					r = start(t, rowkit(bin, dir, "rowkit", "", "read", "c.txt")).wait()
				} else {
					r = start(t, rowkit(bin, dir, name, "", "c.txt")).wait()
				}
				rep := h.resume(t)
				var bad []string
				if r.exit != 0 {
					bad = append(bad, fmt.Sprintf("the reader exited %d: %s", r.exit, r.errOut))
				}
				a, b := read(dir, "a.txt"), read(dir, "b.txt")
				if rep.Exit != 0 || b != "a=0\n" || a != "<missing>" {
					bad = append(bad, fmt.Sprintf("hpatch exit %d (%s); a.txt %q b.txt %q", rep.Exit, rep.Msg, a, b))
				}
				if l := litter(dir); len(l) > 0 {
					bad = append(bad, fmt.Sprintf("left behind: %v", l))
				}
				if len(bad) > 0 {
					t.Errorf("%s while the move was paused at %q: %s", name, s, strings.Join(bad, "; "))
				}
			}
		})
	}
}

// snapshotAll lists every entry under dir with its type, mode and content
// (a FIFO is never opened).
func snapshotAll(dir string) map[string]string {
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		v := fi.Mode().String()
		if fi.Mode().IsRegular() {
			data, _ := os.ReadFile(p)
			v += " " + string(data)
		}
		out[rel] = v
		return nil
	})
	return out
}

// A commit killed (SIGKILL) at every step leaves a transaction pending:
// every read-only command, hpatch --dry-run included, leaves the disk
// exactly as it is; rowkit recover then settles it, all old or all new,
// and says what it did.
func TestReadersLeaveAKilledTransaction(t *testing.T) {
	bin := rowkitBin(t)
	// c.txt moves with an edit: its new content is rendered from its
	// backup at the new path.
	files := map[string]string{"a.txt": "a=0\n", "b.txt": "b=0\n", "c.txt": "c=0\nkeep\n"}
	script := fmt.Sprintf("in a.txt\ntype %s \"a=1\"\nin b.txt\ntype %s \"b=1\"\nnew d/n.txt\ntype \"n\"\nin c.txt\ntype %s \"c=1\"\nmv m/c2.txt\n", row(1, "a=0"), row(1, "b=0"), row(1, "c=0"))
	steps := stepsOf(t, files, script)
	readers := [][]string{
		{"hread", "a.txt"}, {"hgrep", "="}, {"inspect_file", "b.txt"}, {"rowkit", "read", "a.txt"},
		{"rowkit", "read", "."}, {"hpatch", "--dry-run"},
	}
	counts := map[string]int{}
	for k, s := range steps {
		dir := t.TempDir()
		writeFiles(t, dir, files)
		h := pauseAt(t, dir, script, k)
		h.p.cmd.Process.Kill()
		if r := h.p.wait(); r.exit != -int(syscall.SIGKILL) {
			t.Fatalf("killed at %q: %+v", s, r)
		}
		before := snapshotAll(dir)
		for _, rd := range readers {
			stdin := ""
			if rd[0] == "hpatch" {
				stdin = fmt.Sprintf("in a.txt\ntype %s \"a=2\"\n", row(1, "a=0"))
			}
			r := start(t, rowkit(bin, dir, rd[0], stdin, rd[1:]...)).wait()
			if r.exit == -1000 || r.exit < 0 {
				t.Fatalf("%v after a kill at %q: %+v", rd, s, r)
			}
			if after := snapshotAll(dir); !maps.Equal(before, after) {
				t.Fatalf("%v after a kill at %q changed the workspace:\n%v\n->\n%v", rd, s, before, after)
			}
		}
		r := start(t, rowkit(bin, dir, "rowkit", "", "recover")).wait()
		if r.exit != 0 {
			t.Fatalf("rowkit recover after a kill at %q: %+v", s, r)
		}
		verb, _, _ := strings.Cut(r.out, " ")
		counts[verb]++
		a, b, n := read(dir, "a.txt"), read(dir, "b.txt"), read(dir, "d/n.txt")
		c, c2 := read(dir, "c.txt"), read(dir, "m/c2.txt")
		old := a == "a=0\n" && b == "b=0\n" && n == "<missing>" && c == "c=0\nkeep\n" && c2 == "<missing>"
		new := a == "a=1\n" && b == "b=1\n" && n == "n" && c == "<missing>" && c2 == "c=1\nkeep\n"
		// "nothing": killed before the first journal or after the last.
		if !old && !new || old && verb == "completed" || new && verb != "completed" && verb != "nothing" {
			t.Fatalf("killed at %q, then %q: a.txt %q b.txt %q d/n.txt %q c.txt %q m/c2.txt %q", s, r.out, a, b, n, c, c2)
		}
		if l := litter(dir); len(l) > 0 {
			t.Fatalf("killed at %q, then %q: left behind %v", s, r.out, l)
		}
	}
	if counts["completed"] == 0 || counts["rolled"] == 0 || counts["removed"] == 0 {
		t.Fatalf("the kills did not reach every kind of recovery: %v", counts)
	}
	t.Logf("%d kills, recoveries: %v", len(steps), counts)
}

// A reader beside a commit that is alive and paused between its renames
// (its lock held) says the edit is being committed, not
// that it was interrupted, and names no command to run; once the commit
// ends, nothing.
func TestReaderBesideLiveCommit(t *testing.T) {
	bin := rowkitBin(t)
	files := map[string]string{"a.txt": "a=0\n", "b.txt": "b=0\n"}
	script := fmt.Sprintf("in a.txt\ntype %s \"a=1\"\nin b.txt\ntype %s \"b=1\"\n", row(1, "a=0"), row(1, "b=0"))
	steps := stepsOf(t, files, script)
	dir := t.TempDir()
	writeFiles(t, dir, files)
	h := pauseAt(t, dir, script, stepIndex(t, steps, "rename b.txt"))
	// The reader also in a PID namespace of its own, with its own /proc,
	// as Codex runs every command (bubblewrap): the writer's process is
	// not visible from it, its lock is.
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Fatal("no unshare (util-linux): ", err)
	}
	sandboxed := exec.Command(unshare, "--user", "--map-root-user", "--pid", "--fork", "--mount-proc", filepath.Join(bin, "hread"), "b.txt")
	sandboxed.Dir = dir
	for _, cmd := range []*exec.Cmd{rowkit(bin, dir, "hread", "", "b.txt"), sandboxed} {
		r := start(t, cmd).wait()
		if r.exit != 0 || r.out != row(1, "b=0")+" b=0\n" ||
			!strings.HasPrefix(r.errOut, "hread: pending_edit: an edit of a.txt, b.txt is being committed in this workspace by another rowkit process (transaction ") ||
			strings.Contains(r.errOut, "rowkit recover") {
			t.Fatalf("%v while the commit is paused: %+v", cmd.Args, r)
		}
	}
	if rep := h.resume(t); rep.Exit != 0 {
		t.Fatalf("the paused commit: %+v", rep)
	}
	if r := start(t, rowkit(bin, dir, "hread", "", "b.txt")).wait(); r.exit != 0 || r.errOut != "" {
		t.Fatalf("hread after the commit: %+v", r)
	}
}

// stepIndex finds the first step named name.
func stepIndex(t *testing.T, steps []string, name string) int {
	for i, s := range steps {
		if s == name {
			return i
		}
	}
	t.Fatalf("no step %q in %v", name, steps)
	return -1
}
