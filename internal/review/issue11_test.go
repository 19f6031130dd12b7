package review

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/errs"
)

// A repository whose path holds newlines (before and after its first
// commit) is inspected like any other: rev-parse's values are read so that
// a newline in the top level cannot be taken for a separator.
func TestInspectNewlineInRepositoryPath(t *testing.T) {
	for _, name := range []string{"nl\nrepo", "ends in newline\n", "\nstarts", "two\n\nlines"} {
		dir := filepath.Join(t.TempDir(), name)
		gitT(t, filepath.Dir(dir), "init", "-q", "-b", "main", dir)
		write(t, filepath.Join(dir, "a"), "a\n")

		r := inspect(t, Options{Repo: dir})
		if r.Repository.Path != dir || !r.Repository.Head.Unborn || r.Repository.Head.Branch != "main" {
			t.Errorf("%q unborn: repository %+v", name, r.Repository)
		}
		equal(t, "untracked", untrackedList(r.Changes.Untracked), []string{"untracked a"})

		gitT(t, dir, "add", "a")
		gitT(t, dir, "commit", "-q", "-m", "first")
		write(t, filepath.Join(dir, "a"), "a\nb\n")
		r = inspect(t, Options{Repo: dir})
		h := r.Repository.Head
		if r.Repository.Path != dir || h.Unborn || h.Branch != "main" || h.Oid != strings.TrimSpace(gitT(t, dir, "rev-parse", "HEAD")) {
			t.Errorf("%q: repository %+v", name, r.Repository)
		}
		equal(t, "unstaged", entries(r.Changes.Unstaged), []string{"modified a +1-0"})
		// A subdirectory finds the same top level.
		os.Mkdir(filepath.Join(dir, "sub\ndir"), 0o755)
		if r := inspect(t, Options{Repo: filepath.Join(dir, "sub\ndir")}); r.Repository.Path != dir {
			t.Errorf("%q from a subdirectory: %q", name, r.Repository.Path)
		}
	}
}

// REPO/.git (or a directory inside it) is not a work tree: the error says
// so and names the work tree to pass instead.
func TestInspectGitDirectoryNamesWorkTree(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	for _, p := range []string{filepath.Join(dir, ".git"), filepath.Join(dir, ".git", "refs")} {
		e := inspectErr(t, Options{Repo: p})
		if e.Code != CodeNotARepo || errs.ExitCode(e) != ExitInspection || !strings.Contains(e.Hint, "pass its work tree "+dir+" instead") {
			t.Errorf("%s: got %v", p, e)
		}
	}
}

// A base ref that was asked for must resolve, whichever scopes were asked
// for (and on an unborn HEAD); one that resolves is not reported without
// the committed scope.
func TestInspectBaseRefAlwaysResolved(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	for _, scopes := range [][]string{{ScopeStaged}, {ScopeUntracked}, {ScopeUnstaged, ScopeUntracked}} {
		e := inspectErr(t, Options{Repo: dir, BaseRef: "nosuchbranch", Scopes: scopes})
		if e.Code != CodeBaseRef || errs.ExitCode(e) != ExitInspection || !strings.Contains(e.Msg, `the base ref "nosuchbranch"`) {
			t.Errorf("%v: got %v", scopes, e)
		}
	}
	r := inspect(t, Options{Repo: dir, BaseRef: "main", Scopes: []string{ScopeStaged}})
	if r.Repository.Base != nil {
		t.Errorf("base %+v without the committed scope", r.Repository.Base)
	}
	unborn := t.TempDir()
	gitT(t, unborn, "init", "-q", "-b", "main")
	if e := inspectErr(t, Options{Repo: unborn, BaseRef: "nosuchbranch"}); e.Code != CodeBaseRef {
		t.Errorf("unborn: got %v", e)
	}
}

// A gitlink in the index is a submodule even without a .gitmodules entry.
func TestInspectGitlinkWithoutGitmodules(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	head := strings.TrimSpace(gitT(t, dir, "rev-parse", "HEAD"))
	r := inspect(t, Options{Repo: dir})
	if hasDiag(r, "W_SUBMODULES") {
		t.Fatal("W_SUBMODULES without a submodule")
	}
	gitT(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+head+",vendored")
	if _, err := os.Lstat(filepath.Join(dir, ".gitmodules")); err == nil {
		t.Fatal("the test needs no .gitmodules")
	}
	for _, scopes := range [][]string{nil, {ScopeCommitted}, {ScopeUntracked}} {
		r := inspect(t, Options{Repo: dir, Scopes: scopes})
		if !hasDiag(r, "W_SUBMODULES") {
			t.Errorf("%v: diagnostics %v", scopes, r.Diagnostics)
		}
	}
	r = inspect(t, Options{Repo: dir, Scopes: []string{ScopeStaged}})
	equal(t, "staged", entries(r.Changes.Staged), []string{"added vendored +1-0"})
}

// A validation's captured streams stay within the bound, elision marker
// included.
func TestInspectStreamBoundIncludesMarker(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	for _, max := range []int{64, 100, 1000} {
		r := inspect(t, Options{Repo: dir, MaxOutputBytes: max, Validations: []Planned{
			{ID: "loud", Argv: []string{"sh", "-c", "seq 1 5000; seq 1 5000 >&2"}, Timeout: time.Minute},
		}})
		v := r.Validations[0]
		for _, s := range []Stream{v.Stdout, v.Stderr} {
			if len(s.Text) > max || s.BytesDropped == 0 || !strings.Contains(s.Text, "bytes elided") || !strings.HasSuffix(s.Text, "5000\n") {
				t.Errorf("max %d: %d bytes kept: %q", max, len(s.Text), s.Text)
			}
		}
	}
}

// An embedded repository is listed as the seed says: a path ending in "/"
// with kind "directory", in JSON and in the union.
func TestInspectEmbeddedRepositoryPath(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	emb := filepath.Join(dir, "inner")
	gitT(t, dir, "init", "-q", emb)
	write(t, filepath.Join(emb, "x.txt"), "x\n")
	r := inspect(t, Options{Repo: dir})
	js, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Changes struct {
			Untracked []map[string]any `json:"untracked"`
			Files     []map[string]any `json:"files"`
		} `json:"changes"`
	}
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"path": "inner/", "kind": "directory", "status": "untracked"}
	if len(back.Changes.Untracked) != 1 || !sameJSON(back.Changes.Untracked[0], want) {
		t.Errorf("untracked %v", back.Changes.Untracked)
	}
	want["scopes"] = []any{"untracked"}
	if len(back.Changes.Files) != 1 || !sameJSON(back.Changes.Files[0], want) {
		t.Errorf("files %v", back.Changes.Files)
	}
	if md := string(r.Markdown()); !strings.Contains(md, "| untracked | `inner/` (repository, not inspected) |  |") {
		t.Errorf("markdown:\n%s", md)
	}
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// Engine errors name what was asked for, never a command-line flag.
func TestEngineErrorsNameNoFlags(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	var got []error
	for _, o := range []Options{
		{Repo: dir, BaseRef: "-x"}, {Repo: dir, BaseRef: "a\x01"},
		{Repo: dir, BaseRef: "nosuch"}, {Repo: filepath.Join(dir, "nope")}, {Repo: filepath.Join(dir, "a.txt")},
		{Repo: dir, GitTimeout: time.Nanosecond},
	} {
		o.LookupEnv = os.LookupEnv
		_, err := Inspect(context.Background(), o)
		got = append(got, err)
	}
	_, err := Tokenize("a;b")
	got = append(got, err)
	_, err = Tokenize("")
	got = append(got, err)
	_, err = (&Config{Validations: map[string]ConfigValidation{"t": {Argv: []string{"true"}}}}).Plan("x", time.Second)
	got = append(got, err)
	for _, err := range got {
		e, ok := errs.As(err)
		if !ok {
			t.Errorf("not coded: %v", err)
			continue
		}
		for _, flag := range []string{"--repo", "--base-ref", "--scope", "--detail", "--validate", "--validation", "--config",
			"--git-timeout", "--timeout", "--budget", "--max-output-bytes", "--max-files", "--allow-repo-exec-config", "--allow-repo-config"} {
			if strings.Contains(e.Msg+" "+e.Hint, flag) {
				t.Errorf("names %s: %v", flag, e)
			}
		}
	}
}

// git output past its bound stops the call with a coded error instead of
// reading on.
func TestGitOutputBound(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 50; i++ {
		files[fmt.Sprintf("file-with-a-long-name-%03d.txt", i)] = "x\n"
	}
	dir := newRepo(t, files)
	old := maxGitOutput
	maxGitOutput = 512
	defer func() { maxGitOutput = old }()
	e := inspectErr(t, Options{Repo: dir, Scopes: []string{ScopeStaged}})
	if e.Code != CodeGitFailed || !strings.Contains(e.Msg, "git ls-files wrote more than 512 bytes") || errs.ExitCode(e) != ExitInspection {
		t.Errorf("got %v", e)
	}
}
