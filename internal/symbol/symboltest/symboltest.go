// Package symboltest finds the language servers rowkit's tests run: the
// pinned gopls scripts/test builds into .tools/bin, and pyright and
// TypeScript from package-lock.json in node_modules/.bin. A test that
// needs them fails, naming the command that installs them, when they are
// missing: a missing server is never a skipped test.
package symboltest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Repo is the repository's top directory.
func Repo() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// Bins are the directories holding the servers, for the front of PATH.
func Bins() []string {
	r := Repo()
	return []string{filepath.Join(r, ".tools", "bin"), filepath.Join(r, "node_modules", ".bin")}
}

// Missing says which server is not installed, nil when none is.
func Missing() error {
	for _, s := range []struct{ dir, name string }{{".tools/bin", "gopls"}, {"node_modules/.bin", "pyright-langserver"}, {"node_modules/.bin", "tsc"}} {
		if _, err := os.Stat(filepath.Join(Repo(), s.dir, s.name)); err != nil {
			return fmt.Errorf("%s is not installed in %s: run scripts/test once (it builds gopls from tools/go.mod into .tools/bin and runs npm ci, which installs pyright and typescript)", s.name, s.dir)
		}
	}
	return nil
}

// Require fails t unless every server is installed.
func Require(t testing.TB) {
	t.Helper()
	if err := Missing(); err != nil {
		t.Fatal(err)
	}
}

var goEnv = sync.OnceValue(func() map[string]string {
	out, _ := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH", "GOROOT").Output()
	f := strings.Split(strings.TrimSpace(string(out)), "\n")
	m := map[string]string{}
	for i, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOROOT"} {
		if i < len(f) {
			m[k] = f[i]
		}
	}
	return m
})

// Env is an environment in which the servers are found and work: PATH
// with Bins first, HOME, and the go command's caches (gopls runs go
// list). TMPDIR is given when not empty.
func Env(t testing.TB) map[string]string {
	t.Helper()
	Require(t)
	return Vars()
}

// Vars is Env without the check.
func Vars() map[string]string {
	env := map[string]string{
		"PATH": strings.Join(append(Bins(), os.Getenv("PATH")), string(filepath.ListSeparator)),
		"HOME": os.Getenv("HOME"),
	}
	for k, v := range goEnv() {
		env[k] = v
	}
	return env
}

// Lookup turns an environment into a LookupEnv.
func Lookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}
}

// Copy copies the tree src (a fixture) into dst.
func Copy(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
