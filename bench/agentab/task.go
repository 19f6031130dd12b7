package main

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rowkit/rowkit/internal/proc"
)

// Task is one bug fix from a repository's history: the tree at the
// fix's parent with the fix's test files, and the command that fails
// there and passes after the fix.
type Task struct {
	Name string `json:"-"`
	Dir  string `json:"-"` // bench/agentab/tasks/NAME
	// Repo names the repository: its git directory is the environment
	// variable repoVars[Repo] names.
	Repo   string   `json:"repo"`
	Fix    string   `json:"fix"`
	Tests  []string `json:"tests"`
	Test   string   `json:"test"`
	Prompt string   `json:"prompt"`
	// GitDir, when set, is the repository's git directory in place of
	// the variable's (a test's own repository).
	GitDir string `json:"-"`
}

// repoVars name the variable that holds each repository's git directory
// (a clone, or a snapshot from the search tool's fetch), and its default
// on the project's machines.
var repoVars = map[string][2]string{
	"cobra":    {"AGENTAB_COBRA_GIT", "/work/.mirror/spf13+cobra/repo"},
	"sqlparse": {"AGENTAB_SQLPARSE_GIT", "/work/.mirror/andialbrecht+sqlparse/repo"},
}

func loadTask(benchDir, name string) (*Task, error) {
	dir := filepath.Join(benchDir, "tasks", name)
	b, err := os.ReadFile(filepath.Join(dir, "task.json"))
	if err != nil {
		return nil, err
	}
	t := &Task{Name: name, Dir: dir}
	if err := json.Unmarshal(b, t); err != nil {
		return nil, fmt.Errorf("%s/task.json: %w", dir, err)
	}
	if _, ok := repoVars[t.Repo]; !ok {
		return nil, fmt.Errorf("%s/task.json: unknown repo %q", dir, t.Repo)
	}
	return t, nil
}

// taskNames are the tasks under benchDir/tasks, sorted.
func taskNames(benchDir string) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(benchDir, "tasks"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if _, err := os.Stat(filepath.Join(benchDir, "tasks", e.Name(), "task.json")); err == nil {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

func (t *Task) gitDir() (string, error) {
	if t.GitDir != "" {
		return t.GitDir, nil
	}
	v := repoVars[t.Repo]
	dir := os.Getenv(v[0])
	if dir == "" {
		dir = v[1]
	}
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("task %s needs the %s repository's git directory in %s (default %s): %v", t.Name, t.Repo, v[0], v[1], err)
	}
	return dir, nil
}

// clientEnv is the environment the clients and their shells get: Go
// from /usr/local/go with the machine's module and build caches (so that
// no session downloads or rebuilds the world), Debian's python3 (which
// has python3-pytest), ripgrep, node.
func clientEnv() []string {
	env := []string{"PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "GOTOOLCHAIN=local"}
	for _, k := range []string{"GOMODCACHE", "GOCACHE", "GOPATH"} {
		if out, err := goEnv(k); err == nil && out != "" {
			env = append(env, k+"="+out)
		}
	}
	return env
}

func goEnv(key string) (string, error) {
	var out bytes.Buffer
	_, err := proc.Run(context.Background(), proc.Spec{Path: "go", Args: []string{"env", key}, Dir: "/", Env: os.Environ(), Stdout: &out})
	return strings.TrimSpace(out.String()), err
}

// Setup builds the task's tree in dir (which must be empty or missing):
// the fix's parent, then the fix's test files; it warms the build cache
// (Go) and checks that the test command fails there.
func (t *Task) Setup(ctx context.Context, dir string) error {
	git, err := t.gitDir()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	archive, err := run(ctx, git, nil, "git", "archive", "--format=tar", t.Fix+"^")
	if err != nil {
		return err
	}
	if err := untar(archive, dir); err != nil {
		return err
	}
	for _, f := range t.Tests {
		b, err := run(ctx, git, nil, "git", "show", t.Fix+":"+f)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			return err
		}
	}
	env := append(os.Environ(), clientEnv()...)
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
		if _, err := run(ctx, dir, env, "go", "test", "-count=1", "-run", "^$", "./..."); err != nil {
			return fmt.Errorf("warming the build cache: %w", err)
		}
	}
	if code, out := t.RunTest(ctx, dir); code == 0 {
		return fmt.Errorf("task %s: the test passes before the fix:\n%s", t.Name, out)
	}
	return nil
}

// RunTest runs the task's test command in dir: its exit status and
// output.
func (t *Task) RunTest(ctx context.Context, dir string) (int, string) {
	var out bytes.Buffer
	res, err := proc.Run(ctx, proc.Spec{Path: "bash", Args: []string{"-c", t.Test}, Dir: dir, Env: append(os.Environ(), clientEnv()...), Stdout: &out, Stderr: &out})
	if err != nil {
		return -1, err.Error()
	}
	return res.Code(), out.String()
}

func run(ctx context.Context, dir string, env []string, name string, args ...string) ([]byte, error) {
	if env == nil {
		env = os.Environ()
	}
	var out, errb bytes.Buffer
	res, err := proc.Run(ctx, proc.Spec{Path: name, Args: args, Dir: dir, Env: env, Stdout: &out, Stderr: &errb})
	if err != nil {
		return nil, err
	}
	if res.Code() != 0 {
		return nil, fmt.Errorf("%s %s: exit %d: %s", name, strings.Join(args, " "), res.Code(), strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), nil
}

func untar(b []byte, dir string) error {
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(p, filepath.Clean(dir)+string(filepath.Separator)) {
			return fmt.Errorf("archive entry %q outside the tree", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				return err
			}
			if err := os.WriteFile(p, data, os.FileMode(h.Mode)&0o777|0o600); err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := os.Symlink(h.Linkname, p); err != nil {
				return err
			}
		}
	}
}
