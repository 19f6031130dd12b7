package review

import (
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/errs"
)

// TestMain gives every git call of the tests, rowkit's included, a private
// HOME and fixed identities, so the machine's own git config plays no part.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "review-home-")
	if err != nil {
		panic(err)
	}
	for k, v := range map[string]string{
		"HOME": home, "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com",
		"GIT_COMMITTER_NAME": "C", "GIT_COMMITTER_EMAIL": "c@example.com",
		"GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
	} {
		os.Setenv(k, v)
	}
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[protocol \"file\"]\n\tallow = always\n[init]\n\tdefaultBranch = main\n"), 0o644)
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// gitT runs plain git (no rowkit hardening) in dir, as a user would.
func gitT(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newRepo is a repository with one commit on main holding files.
func newRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	gitT(t, dir, "init", "-q", "-b", "main")
	for p, c := range files {
		write(t, filepath.Join(dir, p), c)
	}
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "--allow-empty", "-m", "base")
	return dir
}

func inspect(t testing.TB, o Options) *Report {
	t.Helper()
	o.LookupEnv = os.LookupEnv
	r, err := Inspect(context.Background(), o)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	return r
}

func inspectErr(t testing.TB, o Options) *errs.Error {
	t.Helper()
	o.LookupEnv = os.LookupEnv
	r, err := Inspect(context.Background(), o)
	e, ok := errs.As(err)
	if !ok {
		t.Fatalf("Inspect: want an *errs.Error, got report %v, err %v", r != nil, err)
	}
	return e
}

// entries renders a scope as "status path[<-orig] +a-r" lines for compact
// comparisons.
func entries(es []Entry) []string {
	var out []string
	for _, e := range es {
		s := e.Status + " " + string(e.Path)
		if e.OrigPath != "" {
			s += "<-" + string(e.OrigPath)
		}
		if e.Added == nil {
			s += " binary"
		} else {
			s += " +" + itoa(*e.Added) + "-" + itoa(*e.Removed)
		}
		out = append(out, s)
	}
	return out
}

// untrackedList renders the untracked scope as "untracked path[ (kind)]".
func untrackedList(us []Untracked) []string {
	var out []string
	for _, u := range us {
		s := u.Status + " " + string(u.Path)
		if u.Kind != "" {
			s += " (" + u.Kind + ")"
		}
		out = append(out, s)
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

func hasDiag(r *Report, code string) bool {
	for _, d := range r.Diagnostics {
		if d.Code == code {
			return true
		}
	}
	return false
}

func equal(t testing.TB, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func sortStrings(s []string) { sort.Strings(s) }

func base64Decode(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }
