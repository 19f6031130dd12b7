package txn_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// links reads what a workspace of TestLinkOps holds: each link's text (or
// "-" when it is not a link) and the content of the file they lead to.
func links(dir string) string {
	var b strings.Builder
	for _, n := range []string{"CLAUDE.md", "docs/GUIDE.md", "docs/HOWTO.md"} {
		l, err := os.Readlink(filepath.Join(dir, n))
		if err != nil {
			l = "-"
		}
		fmt.Fprintf(&b, "%s=%s ", n, l)
	}
	b.WriteString("AGENTS.md=" + read(dir, "AGENTS.md"))
	return b.String()
}

func linkSetup(t *testing.T) func(dir string) {
	return func(dir string) {
		writeFiles(t, dir, map[string]string{"AGENTS.md": "precious\n", "docs/keep.txt": "k\n"})
		for l, to := range map[string]string{"CLAUDE.md": "AGENTS.md", "docs/GUIDE.md": "../AGENTS.md", "EDIT.md": "AGENTS.md"} {
			if err := os.Symlink(to, filepath.Join(dir, l)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

const (
	linksOld = "CLAUDE.md=AGENTS.md docs/GUIDE.md=../AGENTS.md docs/HOWTO.md=- AGENTS.md=precious\n"
	linksNew = "CLAUDE.md=- docs/GUIDE.md=- docs/HOWTO.md=../AGENTS.md AGENTS.md=gem\n"
)

// A script that removes one symlink, moves another and edits the file
// they lead to through a third, killed (SIGKILL) at every step while
// readers read through the links, then recovered: all of it happened or
// none, the file the links lead to is never deleted or moved, and nothing
// is left.
func TestLinkOpsKilled(t *testing.T) {
	bin := rowkitBin(t)
	setup := linkSetup(t)
	script := fmt.Sprintf("in CLAUDE.md\nrm\nin docs/GUIDE.md\nmv docs/HOWTO.md\nin EDIT.md\ntype %s \"gem\"\n", row(1, "precious"))
	steps := stepsWith(t, setup, script)
	seen := map[string]int{}
	for k, s := range steps {
		dir := t.TempDir()
		setup(dir)
		h := pauseAt(t, dir, script, k)
		for _, rd := range [][]string{{"hread", "EDIT.md"}, {"hread", "docs/GUIDE.md"}, {"rowkit", "read", "CLAUDE.md"}} {
			r := start(t, rowkit(bin, dir, rd[0], "", rd[1:]...)).wait()
			// A link removed or moved at that instant is not_found; else
			// the row is the old or the new line.
			if r.exit != 0 && !strings.Contains(r.errOut, "not_found") && !strings.Contains(r.errOut, "NOT_FOUND") ||
				r.exit == 0 && !strings.Contains(r.out, "precious") && !strings.Contains(r.out, "gem") {
				t.Fatalf("%v while paused at %q: exit %d %q %s", rd, s, r.exit, r.out, r.errOut)
			}
		}
		h.p.cmd.Process.Kill()
		if r := h.p.wait(); r.exit != -int(syscall.SIGKILL) {
			t.Fatalf("killed at %q: %+v", s, r)
		}
		if got := read(dir, "AGENTS.md"); got != "precious\n" && got != "gem\n" {
			t.Fatalf("killed at %q: AGENTS.md %q", s, got)
		}
		r := start(t, rowkit(bin, dir, "rowkit", "", "recover")).wait()
		if r.exit != 0 {
			t.Fatalf("rowkit recover after a kill at %q: %+v", s, r)
		}
		got := links(dir)
		if got != linksOld && got != linksNew {
			t.Fatalf("killed at %q, then %q: %s", s, r.out, got)
		}
		seen[got]++
		if l := litter(dir); len(l) > 0 {
			t.Fatalf("killed at %q: left behind %v", s, l)
		}
	}
	if seen[linksOld] == 0 || seen[linksNew] == 0 {
		t.Fatalf("the kills did not land on both sides of the decision: %v", seen)
	}
	t.Logf("%d kills: %v", len(steps), seen)
}

// The same script paused at every step while another hpatch edits the file
// by its own path (it waits for the lock, then is rejected row-stale with
// the fresh row) and another removes a link of its own: the paused one
// lands whole, the other's link is removed, the file is never lost.
func TestLinkOpsPausedBesideWriters(t *testing.T) {
	bin := rowkitBin(t)
	setup := func(dir string) {
		linkSetup(t)(dir)
		if err := os.Symlink("AGENTS.md", filepath.Join(dir, "MINE.md")); err != nil {
			t.Fatal(err)
		}
	}
	script := fmt.Sprintf("in CLAUDE.md\nrm\nin docs/GUIDE.md\nmv docs/HOWTO.md\nin EDIT.md\ntype %s \"gem\"\n", row(1, "precious"))
	steps := stepsWith(t, setup, script)
	for k, s := range steps {
		dir := t.TempDir()
		setup(dir)
		h := pauseAt(t, dir, script, k)
		edit := start(t, rowkit(bin, dir, "hpatch", fmt.Sprintf("in AGENTS.md\ntype %s \"other\"\n", row(1, "precious"))))
		rm := start(t, rowkit(bin, dir, "hpatch", "in MINE.md\nrm\n"))
		rep := h.resume(t)
		re, rr := edit.wait(), rm.wait()
		if rep.Exit != 0 {
			t.Fatalf("paused at %q: %+v", s, rep)
		}
		if got := links(dir); got != linksNew {
			t.Fatalf("paused at %q: %s", s, got)
		}
		if re.exit != 1 || !strings.Contains(re.errOut, "row-stale") || !strings.Contains(re.errOut, row(1, "gem")+" gem") {
			t.Fatalf("paused at %q: the other edit: exit %d %s", s, re.exit, re.errOut)
		}
		if _, err := os.Lstat(filepath.Join(dir, "MINE.md")); rr.exit != 0 || err == nil {
			t.Fatalf("paused at %q: rm of MINE.md: exit %d %s (%v)", s, rr.exit, rr.errOut, err)
		}
		if l := litter(dir); len(l) > 0 {
			t.Fatalf("paused at %q: left behind %v", s, l)
		}
	}
}
