package review

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rowkit/rowkit/internal/errs"
)

// A feature branch with a change in every scope: the scopes stay disjoint,
// the union picks one status by precedence, numstat counts lines.
func TestInspectFourScopes(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "1\n2\n3\n", "c.txt": "c\n", "keep.txt": "k\n", ".gitignore": "*.log\n"})
	gitT(t, dir, "checkout", "-q", "-b", "feature")
	write(t, filepath.Join(dir, "a.txt"), "1\n2\n3\n4\n5\n")
	write(t, filepath.Join(dir, "b.bin"), "\x00\x01\x02")
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "feature")
	write(t, filepath.Join(dir, "c.txt"), "c\nc2\n")
	gitT(t, dir, "add", "c.txt")
	os.Remove(filepath.Join(dir, "a.txt"))
	write(t, filepath.Join(dir, "keep.txt"), "")
	write(t, filepath.Join(dir, "new dir/d.txt"), "d\n")
	write(t, filepath.Join(dir, "debug.log"), "ignored\n")

	r := inspect(t, Options{Repo: dir})
	equal(t, "committed", entries(r.Changes.Committed), []string{"modified a.txt +2-0", "added b.bin binary"})
	equal(t, "staged", entries(r.Changes.Staged), []string{"modified c.txt +1-0"})
	equal(t, "unstaged", entries(r.Changes.Unstaged), []string{"deleted a.txt +0-5", "modified keep.txt +0-1"})
	equal(t, "untracked", untrackedList(r.Changes.Untracked), []string{"untracked new dir/d.txt"})
	var files []string
	for _, f := range r.Changes.Files {
		files = append(files, f.Status+" "+string(f.Path)+" "+strings.Join(f.Scopes, ","))
	}
	equal(t, "files", files, []string{
		"deleted a.txt committed,unstaged", "added b.bin committed", "modified c.txt staged",
		"modified keep.txt unstaged", "untracked new dir/d.txt untracked",
	})
	if c := r.Changes.Counts; c != (Counts{Committed: 2, Staged: 1, Unstaged: 2, Untracked: 1, Files: 5}) {
		t.Errorf("counts %+v", c)
	}
	h := r.Repository.Head
	if h.Branch != "feature" || h.Unborn || h.Detached || len(h.Oid) != 40 {
		t.Errorf("head %+v", h)
	}
	if b := r.Repository.Base; b == nil || b.Ref != "main" || b.MergeBase != b.Oid {
		t.Errorf("base %+v", b)
	}
	if len(r.Diagnostics) != 0 || r.Truncation.Applied || !r.OK {
		t.Errorf("diagnostics %v truncation %+v ok %v", r.Diagnostics, r.Truncation, r.OK)
	}

	// Only some scopes: the others are neither listed nor counted.
	r = inspect(t, Options{Repo: dir, Scopes: []string{ScopeUntracked}})
	if r.Changes.Counts.Committed != 0 || r.Changes.Counts.Files != 1 || r.Repository.Base != nil {
		t.Errorf("untracked only: %+v base %v", r.Changes.Counts, r.Repository.Base)
	}

	// Summary detail keeps the union and the counts, not the scope lists.
	r = inspect(t, Options{Repo: dir, Detail: DetailSummary})
	if r.Changes.Committed != nil || r.Changes.Untracked != nil || len(r.Changes.Files) != 5 || r.Changes.Counts.Unstaged != 2 {
		t.Errorf("summary: %+v", r.Changes)
	}

	// A bound on the lists names what it shortened; counts stay true.
	r = inspect(t, Options{Repo: dir, MaxFiles: 1})
	if len(r.Changes.Files) != 1 || r.Changes.Counts.Files != 5 || !r.Truncation.Applied {
		t.Fatalf("max files: %+v %+v", r.Changes, r.Truncation)
	}
	var fields []string
	var sum int64
	for _, f := range r.Truncation.Fields {
		fields = append(fields, f.Field+" "+itoa(f.ItemsRemoved))
		sum += f.BytesRemoved
	}
	equal(t, "truncated", fields, []string{"changes.files 4", "changes.committed 1", "changes.unstaged 1"})
	// {"path":"keep.txt","status":"modified","added":0,"removed":1} and a comma
	if f := r.Truncation.Fields[2]; f.BytesRemoved != 62 || r.Truncation.BytesRemoved != sum {
		t.Errorf("bytes removed: %+v, total %d", f, r.Truncation.BytesRemoved)
	}

	// From a subdirectory, the work tree's top level is inspected.
	r = inspect(t, Options{Repo: filepath.Join(dir, "new dir")})
	if r.Repository.Path != dir || r.Changes.Counts.Files != 5 {
		t.Errorf("from a subdirectory: %s %+v", r.Repository.Path, r.Changes.Counts)
	}
}

// Inspection writes nothing: the index stays byte for byte and in time
// even when the work tree is stat-dirty.
func TestInspectWritesNothing(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	write(t, filepath.Join(dir, "a.txt"), "b\n")
	index := filepath.Join(dir, ".git", "index")
	before, _ := os.ReadFile(index)
	st, _ := os.Stat(index)
	inspect(t, Options{Repo: dir})
	after, _ := os.ReadFile(index)
	st2, _ := os.Stat(index)
	if !bytes.Equal(before, after) || !st.ModTime().Equal(st2.ModTime()) {
		t.Error("the index changed")
	}
}

func TestInspectRenamesAndCopies(t *testing.T) {
	body := strings.Repeat("a line that stays the same\n", 20)
	dir := newRepo(t, map[string]string{"old.txt": body, "src.txt": body + "x\n"})
	gitT(t, dir, "checkout", "-q", "-b", "f")
	gitT(t, dir, "mv", "old.txt", "new.txt")
	write(t, filepath.Join(dir, "src.txt"), body+"y\n")
	write(t, filepath.Join(dir, "copy.txt"), body+"x\n")
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "move")
	r := inspect(t, Options{Repo: dir})
	equal(t, "committed", entries(r.Changes.Committed), []string{"copied copy.txt<-src.txt +0-0", "renamed new.txt<-old.txt +0-0", "modified src.txt +1-1"})
	for _, e := range r.Changes.Committed {
		if e.Status == "renamed" && e.Score != 100 || e.Status == "copied" && e.Score != 100 {
			t.Errorf("%s score %d", e.Path, e.Score)
		}
	}
	if f := r.Changes.Files[1]; f.Path != "new.txt" || f.OrigPath != "old.txt" || f.Status != "renamed" {
		t.Errorf("union keeps origPath: %+v", f)
	}
}

func TestInspectUnborn(t *testing.T) {
	dir := t.TempDir()
	gitT(t, dir, "init", "-q", "-b", "trunk")
	write(t, filepath.Join(dir, "a.txt"), "a\n")
	gitT(t, dir, "add", "a.txt")
	write(t, filepath.Join(dir, "b.txt"), "b\n")
	r := inspect(t, Options{Repo: dir})
	if h := r.Repository.Head; !h.Unborn || h.Branch != "trunk" || h.Oid != "" {
		t.Errorf("head %+v", h)
	}
	if !hasDiag(r, "W_NO_COMMITS") || r.Repository.Base != nil {
		t.Errorf("diagnostics %v", r.Diagnostics)
	}
	equal(t, "staged", entries(r.Changes.Staged), []string{"added a.txt +1-0"})
	equal(t, "untracked", untrackedList(r.Changes.Untracked), []string{"untracked b.txt"})
}

// HEAD names a branch that does not exist: treated as unborn, not a crash.
func TestInspectHeadAtMissingBranch(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	gitT(t, dir, "symbolic-ref", "HEAD", "refs/heads/gone")
	r := inspect(t, Options{Repo: dir})
	if h := r.Repository.Head; !h.Unborn || h.Branch != "gone" {
		t.Errorf("head %+v", h)
	}
	// Everything in the index is "added" against no commit.
	equal(t, "staged", entries(r.Changes.Staged), []string{"added a.txt +1-0"})
}

func TestInspectDetached(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	gitT(t, dir, "checkout", "-q", "--detach")
	r := inspect(t, Options{Repo: dir})
	if !r.Repository.Head.Detached || r.Repository.Head.Branch != "" || !hasDiag(r, "W_DETACHED_HEAD") {
		t.Errorf("head %+v diagnostics %v", r.Repository.Head, r.Diagnostics)
	}
}

func TestInspectBaseDetection(t *testing.T) {
	// No candidate at all.
	dir := t.TempDir()
	gitT(t, dir, "init", "-q", "-b", "dev")
	gitT(t, dir, "commit", "-q", "--allow-empty", "-m", "1")
	r := inspect(t, Options{Repo: dir})
	if r.Repository.Base != nil || !hasDiag(r, "W_NO_BASE_REF") || r.Changes.Counts.Committed != 0 {
		t.Errorf("no base: %+v %v", r.Repository.Base, r.Diagnostics)
	}

	// origin/HEAD wins over main and reports the branch it points at.
	dir = newRepo(t, map[string]string{"a.txt": "a\n"})
	base := strings.TrimSpace(gitT(t, dir, "rev-parse", "HEAD"))
	gitT(t, dir, "update-ref", "refs/remotes/origin/trunk", base)
	gitT(t, dir, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk")
	write(t, filepath.Join(dir, "b.txt"), "b\n")
	gitT(t, dir, "add", "b.txt")
	gitT(t, dir, "commit", "-q", "-m", "on main")
	r = inspect(t, Options{Repo: dir})
	if b := r.Repository.Base; b == nil || b.Ref != "origin/trunk" || b.Oid != base || b.Requested != "" {
		t.Fatalf("origin/HEAD: %+v", b)
	}
	equal(t, "committed", entries(r.Changes.Committed), []string{"added b.txt +1-0"})

	// An explicit base overrides, and is reported as requested.
	r = inspect(t, Options{Repo: dir, BaseRef: "HEAD~1"})
	if b := r.Repository.Base; b == nil || b.Requested != "HEAD~1" || b.Oid != base {
		t.Errorf("explicit: %+v", b)
	}
	if e := inspectErr(t, Options{Repo: dir, BaseRef: "no-such-branch"}); e.Code != CodeBaseRef {
		t.Errorf("unknown base: %v", e)
	}
}

func TestInspectUnrelatedHistories(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	gitT(t, dir, "checkout", "-q", "--orphan", "other")
	gitT(t, dir, "commit", "-q", "-m", "unrelated")
	r := inspect(t, Options{Repo: dir})
	if !hasDiag(r, "W_NO_MERGE_BASE") || r.Repository.Base == nil || r.Repository.Base.MergeBase != "" || r.Changes.Counts.Committed != 0 {
		t.Errorf("base %+v diagnostics %v", r.Repository.Base, r.Diagnostics)
	}
}

func TestInspectConflict(t *testing.T) {
	dir := newRepo(t, map[string]string{"f.txt": "base\n"})
	gitT(t, dir, "checkout", "-q", "-b", "other")
	write(t, filepath.Join(dir, "f.txt"), "other\n")
	gitT(t, dir, "commit", "-q", "-am", "other")
	gitT(t, dir, "checkout", "-q", "main")
	write(t, filepath.Join(dir, "f.txt"), "mine\n")
	gitT(t, dir, "commit", "-q", "-am", "mine")
	if err := exec.Command("git", "-C", dir, "merge", "-q", "other").Run(); err == nil {
		t.Fatal("the merge did not conflict")
	}
	r := inspect(t, Options{Repo: dir})
	if !hasDiag(r, "W_UNMERGED_PATHS") || len(r.Changes.Files) != 1 || r.Changes.Files[0].Status != "unmerged" {
		t.Errorf("files %+v diagnostics %v", r.Changes.Files, r.Diagnostics)
	}
}

func TestInspectEmbeddedRepoAndSubmodule(t *testing.T) {
	sub := newRepo(t, map[string]string{"s.txt": "s\n"})
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	gitT(t, dir, "submodule", "-q", "add", sub, "mod")
	gitT(t, dir, "commit", "-q", "-m", "add submodule")
	emb := filepath.Join(dir, "embedded")
	os.Mkdir(emb, 0o755)
	gitT(t, emb, "init", "-q")
	write(t, filepath.Join(emb, "inner.txt"), "x\n")
	// A new commit inside the submodule is reported; its files are not.
	write(t, filepath.Join(dir, "mod", "s.txt"), "changed\n")
	gitT(t, filepath.Join(dir, "mod"), "commit", "-q", "-am", "inside")
	write(t, filepath.Join(dir, "mod", "s.txt"), "dirty\n")

	r := inspect(t, Options{Repo: dir})
	equal(t, "untracked", untrackedList(r.Changes.Untracked), []string{"untracked embedded/ (directory)"})
	equal(t, "unstaged", entries(r.Changes.Unstaged), []string{"modified mod +1-1"})
	if !hasDiag(r, "W_SUBMODULES") {
		t.Errorf("diagnostics %v", r.Diagnostics)
	}
}

func TestInspectLinkedWorktree(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	wt := filepath.Join(t.TempDir(), "wt")
	gitT(t, dir, "worktree", "add", "-q", "-b", "side", wt)
	write(t, filepath.Join(wt, "a.txt"), "changed\n")
	r := inspect(t, Options{Repo: wt})
	if r.Repository.Path != wt || r.Repository.Head.Branch != "side" {
		t.Errorf("repository %+v", r.Repository)
	}
	equal(t, "unstaged", entries(r.Changes.Unstaged), []string{"modified a.txt +1-1"})
}

func TestInspectRefusals(t *testing.T) {
	bare := t.TempDir()
	gitT(t, bare, "init", "-q", "--bare")
	for _, c := range []struct {
		name string
		o    Options
		code string
		exit int
	}{
		{"bare", Options{Repo: bare}, CodeBareRepo, ExitInspection},
		{"not a repository", Options{Repo: t.TempDir()}, CodeNotARepo, ExitInspection},
		{"missing", Options{Repo: filepath.Join(t.TempDir(), "nope")}, CodeRepoNotFound, ExitInspection},
		{"dash ref", Options{Repo: bare, BaseRef: "--output=x"}, CodeUsage, ExitUsage},
		{"control ref", Options{Repo: bare, BaseRef: "main\n--output=x"}, CodeUsage, ExitUsage},
		{"unknown scope", Options{Repo: bare, Scopes: []string{"everything"}}, CodeUsage, ExitUsage},
		{"unknown detail", Options{Repo: bare, Detail: "some"}, CodeUsage, ExitUsage},
		{"empty argv", Options{Repo: bare, Validations: []Planned{{ID: "x"}}}, CodeUsage, ExitUsage},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := inspectErr(t, c.o)
			if e.Code != c.code || errs.ExitCode(e) != c.exit {
				t.Errorf("got %v (exit %d), want %s exit %d", e, errs.ExitCode(e), c.code, c.exit)
			}
		})
	}
}

// A ref that git would read as an option never reaches git as one: nothing
// is written, whatever form the injection takes.
func TestRefInjection(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	target := filepath.Join(t.TempDir(), "pwned")
	for _, ref := range []string{"--output=" + target, "-o" + target, "main --output=" + target, "main\x00--output=" + target} {
		_, err := Inspect(t.Context(), Options{Repo: dir, BaseRef: ref, LookupEnv: os.LookupEnv})
		if err == nil {
			t.Errorf("%q was accepted", ref)
		}
		if _, err := os.Stat(target); err == nil {
			t.Fatalf("%q created %s", ref, target)
		}
	}
}

// A repository owned by someone else is reported as such, with the fix.
func TestInspectDubiousOwnership(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give the repository another owner")
	}
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	if err := exec.Command("chown", "-R", "65534:65534", dir).Run(); err != nil {
		t.Fatal(err)
	}
	e := inspectErr(t, Options{Repo: dir})
	if e.Code != CodeUnsafeRepo || !strings.Contains(e.Hint, "safe.directory") || errs.ExitCode(e) != ExitInspection {
		t.Errorf("got %v", e)
	}
}

// Hostile names survive byte for byte, in git's -z output and in the JSON,
// sorted by bytes.
func TestInspectHostileNames(t *testing.T) {
	names := []string{
		"with space.txt", "new\nline.txt", "tab\there.txt", `quote"d.txt`, `back\slash.txt`,
		"ünïcødé.txt", "-leading-dash.txt", "HEAD", "--output=x", strings.Repeat("n", 251) + ".txt", "bad\xffutf8.txt", "pipe|and`tick.txt",
	}
	dir := newRepo(t, nil)
	gitT(t, dir, "checkout", "-q", "-b", "f")
	for i, n := range names {
		if i%2 == 0 {
			write(t, filepath.Join(dir, n), "x\n")
		}
	}
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "hostile")
	for i, n := range names {
		if i%2 == 1 {
			write(t, filepath.Join(dir, n), "x\n")
		}
	}
	r := inspect(t, Options{Repo: dir})
	var got []string
	for _, f := range r.Changes.Files {
		got = append(got, string(f.Path))
	}
	want := append([]string{}, names...)
	sortStrings(want)
	equal(t, "files", got, want)
	if r.Changes.Counts.Committed != 6 || r.Changes.Counts.Untracked != 6 {
		t.Errorf("counts %+v", r.Changes.Counts)
	}

	js, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Changes struct {
			Files []struct {
				Path       string `json:"path"`
				PathBase64 string `json:"pathBase64"`
			} `json:"files"`
		} `json:"changes"`
	}
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	for i, f := range back.Changes.Files {
		s := f.Path
		if f.PathBase64 != "" {
			b, _ := base64Decode(f.PathBase64)
			s = string(b)
			if utf8.ValidString(s) || f.Path != strings.ToValidUTF8(s, "\uFFFD") {
				t.Errorf("path %d: %q beside the base64 of %q", i, f.Path, s)
			}
		}
		if s != want[i] {
			t.Errorf("JSON path %d: %q, want %q", i, s, want[i])
		}
	}
	md := string(r.Markdown())
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "| ") && strings.Count(strings.ReplaceAll(l, `\|`, ""), "|") != 4 && strings.Count(l, "|") != 3 {
			t.Errorf("a path broke a table row: %q", l)
		}
	}
}

// The caller's GIT_* variables do not reach rowkit's git: they cannot
// point the inspection at another repository, index or config.
func TestInspectIgnoresGitEnvironment(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	write(t, filepath.Join(dir, "mine.txt"), "x\n")
	other := newRepo(t, map[string]string{"b.txt": "b\n"})
	write(t, filepath.Join(other, "theirs.txt"), "x\n")
	script, marker := probe(t)
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	t.Setenv("GIT_WORK_TREE", other)
	t.Setenv("GIT_INDEX_FILE", filepath.Join(other, ".git", "index"))
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
	t.Setenv("GIT_CONFIG_VALUE_0", script)
	t.Setenv("GIT_CONFIG_PARAMETERS", "'core.fsmonitor'='"+script+"'")
	// Armed: plain git in dir follows the environment.
	if out, _ := exec.Command("git", "-C", dir, "ls-files", "--others").Output(); string(out) != "theirs.txt\n" {
		t.Fatalf("plain git was not redirected (%q); the test proves nothing", out)
	}
	os.Remove(marker)
	r := inspect(t, Options{Repo: dir})
	if r.Repository.Path != dir {
		t.Errorf("inspected %s", r.Repository.Path)
	}
	equal(t, "untracked", untrackedList(r.Changes.Untracked), []string{"untracked mine.txt"})
	if ran(marker) {
		t.Error("a config from the environment ran")
	}
}
