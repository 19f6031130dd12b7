package review

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/errs"
)

// probe is a program that records that it ran, then behaves as a filter
// (copies stdin to stdout) so git carries on as if nothing happened.
func probe(t *testing.T) (script, marker string) {
	t.Helper()
	dir := t.TempDir()
	marker = filepath.Join(dir, "ran")
	script = filepath.Join(dir, "probe.sh")
	write(t, script, "#!/bin/sh\necho \"$0 $*\" >> '"+marker+"'\ncat\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	return script, marker
}

func ran(marker string) bool {
	_, err := os.Stat(marker)
	return err == nil
}

// plainGit runs git as a user would, to arm a probe.
func plainGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Run() // the probe is what matters, not git's verdict
}

// Each vector: an armed case, where plain git really runs the probe, then
// the disarmed case, where rowkit review over the same repository does not.
func TestExecConfigVectors(t *testing.T) {
	for _, v := range []struct {
		name  string
		setup func(t *testing.T, dir, script string)
		arm   []string // the plain git command that runs the probe
		keys  []string // the keys the report says were blanked ("" for pinned only)
	}{
		{
			name:  "core.fsmonitor",
			setup: func(t *testing.T, dir, script string) { gitT(t, dir, "config", "core.fsmonitor", script) },
			arm:   []string{"status"},
			keys:  []string{"core.fsmonitor"},
		},
		{
			name: "clean filter chosen by .gitattributes",
			setup: func(t *testing.T, dir, script string) {
				gitT(t, dir, "config", "filter.evil.clean", script)
				gitT(t, dir, "config", "filter.evil.required", "true")
			},
			arm:  []string{"diff"},
			keys: []string{"filter.evil.clean"},
		},
		{
			name: "textconv chosen by .gitattributes",
			setup: func(t *testing.T, dir, script string) {
				gitT(t, dir, "config", "diff.evil.textconv", script)
			},
			arm:  []string{"diff"},
			keys: []string{"diff.evil.textconv"},
		},
		{
			name: "fsmonitor and filter behind include.path",
			setup: func(t *testing.T, dir, script string) {
				write(t, filepath.Join(dir, ".git", "evil.inc"), "[core]\n\tfsmonitor = "+script+"\n[filter \"evil\"]\n\tclean = "+script+"\n")
				gitT(t, dir, "config", "include.path", "evil.inc")
			},
			arm:  []string{"status"},
			keys: []string{"core.fsmonitor", "filter.evil.clean"},
		},
		{
			name: "textconv behind include.path",
			setup: func(t *testing.T, dir, script string) {
				write(t, filepath.Join(dir, ".git", "evil.inc"), "[diff \"evil\"]\n\ttextconv = "+script+"\n")
				gitT(t, dir, "config", "include.path", "evil.inc")
			},
			arm:  []string{"diff"},
			keys: []string{"diff.evil.textconv"},
		},
		{
			name: "external diff",
			setup: func(t *testing.T, dir, script string) {
				gitT(t, dir, "config", "diff.external", script)
			},
			arm:  []string{"diff"},
			keys: []string{"diff.external"},
		},
	} {
		t.Run(v.name, func(t *testing.T) {
			script, marker := probe(t)
			dir := newRepo(t, map[string]string{"a.txt": "one\n", ".gitattributes": "*.txt filter=evil diff=evil\n"})
			v.setup(t, dir, script)
			write(t, filepath.Join(dir, "a.txt"), "two\n") // stat-dirty: git must look at the content

			plainGit(t, dir, v.arm...)
			if !ran(marker) {
				t.Fatalf("armed: plain git %v did not run the probe; the test proves nothing", v.arm)
			}
			os.Remove(marker)

			r := inspect(t, Options{Repo: dir})
			if ran(marker) {
				b, _ := os.ReadFile(marker)
				t.Fatalf("disarmed: rowkit review ran the probe: %s", b)
			}
			d := diag(r, "W_REPO_EXEC_CONFIG_BLANKED")
			for _, k := range v.keys {
				if d == nil || !strings.Contains(d.Message, k) {
					t.Errorf("the report does not name %s as blanked: %v", k, r.Diagnostics)
				}
			}
			// The inspection still sees the change.
			equal(t, "unstaged", entries(r.Changes.Unstaged), []string{"modified a.txt +1-1"})

			// Opting back in lets the repository's programs run, and says so.
			r = inspect(t, Options{Repo: dir, AllowRepoExecConfig: true})
			if diag(r, "W_REPO_EXEC_CONFIG_ALLOWED") == nil {
				t.Errorf("no warning for --allow-repo-exec-config: %v", r.Diagnostics)
			}
		})
	}
}

// With --allow-repo-exec-config, a discovered filter really runs: the
// blanking above is what stops it.
func TestAllowRepoExecConfigRunsFilter(t *testing.T) {
	script, marker := probe(t)
	dir := newRepo(t, map[string]string{"a.txt": "one\n", ".gitattributes": "*.txt filter=evil\n"})
	gitT(t, dir, "config", "filter.evil.clean", script)
	write(t, filepath.Join(dir, "a.txt"), "two\n")
	inspect(t, Options{Repo: dir, AllowRepoExecConfig: true})
	if !ran(marker) {
		t.Error("the filter did not run although it was allowed")
	}
}

// A key that cannot be written back as -c KEY= is fatal, never skipped.
func TestExecConfigUnblankable(t *testing.T) {
	for _, sub := range []string{"ev il", "a=b", `q"uote`} {
		script, marker := probe(t)
		dir := newRepo(t, map[string]string{"a.txt": "one\n"})
		gitT(t, dir, "config", "filter."+sub+".clean", script)
		write(t, filepath.Join(dir, "a.txt"), "two\n")
		e := inspectErr(t, Options{Repo: dir})
		if e.Code != CodeRepoExecConfig || errs.ExitCode(e) != ExitInspection || !strings.Contains(e.Msg, fmt.Sprintf("%q", "filter."+sub+".clean")) {
			t.Errorf("%q: got %v", sub, e)
		}
		if ran(marker) {
			t.Errorf("%q: the probe ran", sub)
		}
	}
}

// Operator config (global scope) is left alone: only the repository's own
// keys are blanked.
func TestExecConfigGlobalUntouched(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "one\n"})
	gitT(t, dir, "config", "--global", "diff.lfsish.textconv", "cat")
	defer gitT(t, dir, "config", "--global", "--unset", "diff.lfsish.textconv")
	r := inspect(t, Options{Repo: dir})
	if diag(r, "W_REPO_EXEC_CONFIG_BLANKED") != nil {
		t.Errorf("global config was blanked: %v", r.Diagnostics)
	}
}

// A submodule's own config cannot run code either: rowkit does not look
// inside submodules' work trees, where its filter and fsmonitor would run.
func TestExecConfigInSubmodule(t *testing.T) {
	for _, v := range []struct {
		name string
		key  string
	}{{"fsmonitor", "core.fsmonitor"}, {"clean filter", "filter.evil.clean"}} {
		t.Run(v.name, func(t *testing.T) {
			script, marker := probe(t)
			sub := newRepo(t, map[string]string{"s.txt": "s\n", ".gitattributes": "*.txt filter=evil\n"})
			dir := newRepo(t, map[string]string{"a.txt": "a\n"})
			gitT(t, dir, "submodule", "-q", "add", sub, "mod")
			gitT(t, dir, "commit", "-q", "-m", "submodule")
			gitT(t, filepath.Join(dir, "mod"), "config", v.key, script)
			write(t, filepath.Join(dir, "mod", "s.txt"), "t\n") // same size: git must read the content

			plainGit(t, dir, "status")
			if !ran(marker) {
				t.Fatal("armed: plain git status did not run the submodule's probe")
			}
			os.Remove(marker)

			r := inspect(t, Options{Repo: dir})
			if ran(marker) {
				t.Fatal("disarmed: rowkit review ran the submodule's probe")
			}
			if !hasDiag(r, "W_SUBMODULES") {
				t.Errorf("diagnostics %v", r.Diagnostics)
			}
		})
	}
}

func diag(r *Report, code string) *Diagnostic {
	for i := range r.Diagnostics {
		if r.Diagnostics[i].Code == code {
			return &r.Diagnostics[i]
		}
	}
	return nil
}

func TestIsExecKey(t *testing.T) {
	for key, want := range map[string]bool{
		"core.fsmonitor": true, "filter.x.clean": true, "filter.X Y.smudge": true, "filter.x.process": true,
		"diff.x.textconv": true, "diff.x.command": true, "merge.x.driver": true, "core.hookspath": true,
		"core.sshcommand": true, "credential.helper": true, "credential.https://x.helper": true,
		"core.pager": true, "pager.log": true, "gpg.ssh.program": true, "foo.bar.somecommand": true,
		"filter.x.required": false, "core.autocrlf": false, "user.name": false, "diff.x.binary": false,
		"remote.origin.url": false, "include.path": false,
	} {
		if isExecKey(key) != want {
			t.Errorf("isExecKey(%q) = %v", key, !want)
		}
	}
}
