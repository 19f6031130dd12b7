package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/rowkit/rowkit/internal/cmd"
)

// TestShellCorpus is the differential test of rowkit shell against the
// system's bash: every script of testdata/shell_corpus.txtar runs under
// bash -lc (as Codex 0.169 runs a model's command) and under rowkit shell
// -c, each in a fresh copy of the fixture at the same path, with the same
// home (whose .profile puts $HOME/bin, where rowkit link made the shell
// names, on PATH), temporary directory, environment and standard input.
// Stdout, stderr, the exit status and the files left must be equal, except
// for what docs/shell.md lists: the line that names what the shell stopped at
// the end of the script, which must then appear exactly when bash left
// something running.
func TestShellCorpus(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash is required: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ar, err := txtar.ParseFile("../../testdata/shell_corpus.txtar")
	if err != nil {
		t.Fatal(err)
	}
	template := t.TempDir()
	var scripts []txtar.File
	for _, f := range ar.Files {
		if rel, ok := strings.CutPrefix(f.Name, "fixture/"); ok {
			writeFixture(t, filepath.Join(template, rel), f.Data)
			continue
		}
		scripts = append(scripts, f)
	}
	if len(scripts) < 300 {
		t.Fatalf("only %d scripts", len(scripts))
	}
	makeFixture(t, template)

	var mu sync.Mutex
	var differ []string
	t.Run("script", func(t *testing.T) {
		for _, s := range scripts {
			name := strings.TrimSuffix(s.Name, ".sh")
			script := strings.TrimSuffix(string(s.Data), "\n")
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				c := &corpusRun{t: t, bash: bash, self: self, template: template, script: script}
				d, onlyNote := c.compare()
				if onlyNote {
					// A process on its way out when the script ends (a
					// process substitution a loaded machine has not run
					// yet) races with both checks: a disagreement on
					// that alone is run again, once.
					t.Logf("run again: %s", d)
					d, _ = c.compare()
				}
				if d != "" {
					mu.Lock()
					differ = append(differ, name)
					mu.Unlock()
					t.Errorf("differs from bash -lc:\n%s\n--- script:\n%s", d, script)
				}
			})
		}
	})
	slices.Sort(differ)
	t.Logf("%d of %d scripts differ from bash -lc: %s", len(differ), len(scripts), strings.Join(differ, " "))
}

// corpusStdin is every script's standard input.
const corpusStdin = "line one\nline two\nline three\n"

// corpusTime is the time of every file of the fixture, and of its commit.
var corpusTime = time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)

func writeFixture(t *testing.T, path string, data []byte) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// makeFixture completes the fixture: an executable test runner, a log of
// 5,000 lines, one commit, and every file's time the same.
func makeFixture(t *testing.T, dir string) {
	if err := os.Chmod(filepath.Join(dir, "run_tests.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&log, "2020-01-02 03:04:%02d level=%s request=%d path=/api/v1/items/%d status=%d\n",
			i%60, []string{"info", "warn", "error", "debug"}[i%4], i, i*7%1000, []int{200, 404, 500}[i%3])
	}
	writeFixture(t, filepath.Join(dir, "logs/big.log"), log.Bytes())
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-qm", "initial import"}} {
		c := exec.Command("git", args...)
		c.Dir = dir
		c.Env = corpusEnv(t.TempDir(), t.TempDir())
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, corpusTime, corpusTime)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// corpusEnv is the environment of both runs: nothing of this process's.
func corpusEnv(home, tmp string) []string {
	date := corpusTime.Format(time.RFC3339)
	return []string{
		"PATH=" + home + "/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + home, "TMPDIR=" + tmp, "LANG=C.UTF-8", "TZ=UTC", "TERM=dumb",
		"USER=" + os.Getenv("USER"), "LOGNAME=" + os.Getenv("USER"),
		"GIT_AUTHOR_NAME=corpus", "GIT_AUTHOR_EMAIL=corpus@example.com", "GIT_AUTHOR_DATE=" + date,
		"GIT_COMMITTER_NAME=corpus", "GIT_COMMITTER_EMAIL=corpus@example.com", "GIT_COMMITTER_DATE=" + date,
		"GIT_CONFIG_NOSYSTEM=1", "PYTHONDONTWRITEBYTECODE=1",
	}
}

// corpusRun is one script's two runs, in one directory.
type corpusRun struct {
	t                        *testing.T
	bash, self, template     string
	script                   string
	root, work, home, tmpdir string
}

// outcome is what a run did.
type outcome struct {
	stdout, stderr []byte
	status         int
	files          map[string]string
	left           bool // processes were left running in its process group
}

// compare runs the script both ways and says how they differ ("" when
// they do not); onlyNote when the clean-up note is all that differs.
func (c *corpusRun) compare() (diff string, onlyNote bool) {
	c.root = c.t.TempDir()
	c.work, c.home, c.tmpdir = filepath.Join(c.root, "work"), filepath.Join(c.root, "home"), filepath.Join(c.root, "tmp")
	want := c.run(exec.Command(c.bash, "-lc", c.script), "bash")
	got := c.run(exec.Command(c.self, "shell", "-c", c.script), "rowkit")
	var d []string
	if !bytes.Equal(got.stdout, want.stdout) {
		d = append(d, "stdout: "+firstDifference(got.stdout, want.stdout))
	}
	stderr, notes := withoutNotes(got.stderr)
	if !bytes.Equal(stderr, want.stderr) {
		d = append(d, "stderr: "+firstDifference(stderr, want.stderr))
	}
	if notes > 0 != want.left {
		d = append(d, fmt.Sprintf("the clean-up note: %d, but bash left processes running: %v", notes, want.left))
		onlyNote = len(d) == 1
	}
	if got.status != want.status {
		d = append(d, fmt.Sprintf("status: %d, bash %d", got.status, want.status))
	}
	for _, k := range sortedUnion(got.files, want.files) {
		if got.files[k] != want.files[k] {
			d = append(d, fmt.Sprintf("file %s: %q, bash %q", k, got.files[k], want.files[k]))
		}
	}
	return strings.Join(d, "\n"), onlyNote && len(d) == 1
}

// run runs c (argv[0] named argv0) in a fresh copy of the fixture.
func (c *corpusRun) run(cmd *exec.Cmd, argv0 string) outcome {
	t := c.t
	for _, d := range []string{c.work, c.home, c.tmpdir} {
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.CopyFS(c.work, os.DirFS(c.template)); err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(c.work, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			os.Chtimes(p, corpusTime, corpusTime)
		}
		return err
	})
	for _, d := range []string{filepath.Join(c.home, "bin"), c.tmpdir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// What a user who ran rowkit link ~/bin has: the shell names on PATH.
	for _, name := range shellNames() {
		if err := os.Symlink(c.self, filepath.Join(c.home, "bin", name)); err != nil {
			t.Fatal(err)
		}
	}
	writeFixture(t, filepath.Join(c.home, ".profile"), []byte("PATH=\"$HOME/bin:$PATH\"\n"))

	stdin := c.file("stdin", []byte(corpusStdin))
	stdout, stderr := c.file("stdout", nil), c.file("stderr", nil)
	defer stdin.Close()
	cmd.Args[0] = argv0
	cmd.Dir, cmd.Env = c.work, corpusEnv(c.home, c.tmpdir)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-time.After(60 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		werr = <-done
		t.Errorf("%s did not end within 60 s", argv0)
	}
	var o outcome
	o.left = leftRunning(cmd.Process.Pid)
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	var ee *exec.ExitError
	switch {
	case errors.As(werr, &ee):
		o.status = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			o.status = 128 + int(ws.Signal())
		}
	case werr != nil:
		t.Fatal(werr)
	}
	o.stdout, o.stderr = c.read(stdout), c.read(stderr)
	o.files = snapshot(t, c.work)
	return o
}

// leftRunning reports whether a process of group pgid still runs 100 ms
// after its leader exited: what a script left running, not what was on its
// way out when it ended (a process substitution, a job it killed).
func leftRunning(pgid int) bool {
	deadline := time.Now().Add(100 * time.Millisecond)
	for {
		running := false
		if syscall.Kill(-pgid, 0) == nil {
			ents, _ := os.ReadDir("/proc")
			for _, e := range ents {
				b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
				if i := bytes.LastIndexByte(b, ')'); err == nil && i > 0 {
					f := strings.Fields(string(b[i+1:]))
					running = running || len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid)
				}
			}
		}
		if !running || time.Now().After(deadline) {
			return running
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (c *corpusRun) file(name string, data []byte) *os.File {
	p := filepath.Join(c.root, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		c.t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		c.t.Fatal(err)
	}
	return f
}

func (c *corpusRun) read(f *os.File) []byte {
	defer f.Close()
	b, err := os.ReadFile(f.Name())
	if err != nil {
		c.t.Fatal(err)
	}
	return b
}

// shellNames are the names rowkit link makes, and rowkit itself.
func shellNames() []string {
	names := []string{"rowkit"}
	for _, c := range cmd.All {
		names = append(names, c.Aliases...)
	}
	return names
}

// snapshot describes every file under dir but .git: its kind, mode and
// content.
func snapshot(t *testing.T, dir string) map[string]string {
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == ".git" {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			files[rel] = "symlink " + target
		case d.IsDir():
			files[rel] = fmt.Sprintf("dir %o", info.Mode().Perm())
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files[rel] = fmt.Sprintf("file %o %x", info.Mode().Perm(), sha256.Sum256(b))
		default:
			files[rel] = "special " + d.Type().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// stoppedNote is the line rowkit shell adds when it stopped what a script
// left running.
var stoppedNote = regexp.MustCompile(`(?m)^\[rowkit shell: stopped [^\n]*\]\n`)

func withoutNotes(b []byte) ([]byte, int) {
	n := len(stoppedNote.FindAllIndex(b, -1))
	return stoppedNote.ReplaceAll(b, nil), n
}

func sortedUnion(a, b map[string]string) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// firstDifference shows where got first differs from want.
func firstDifference(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	start := max(0, bytes.LastIndexByte(got[:i], '\n')+1)
	clip := func(b []byte) string {
		if start > len(b) {
			return ""
		}
		b = b[start:]
		if len(b) > 200 {
			b = b[:200]
		}
		return fmt.Sprintf("%q", b)
	}
	return fmt.Sprintf("at byte %d (of %d, bash %d): %s, bash %s", i, len(got), len(want), clip(got), clip(want))
}
