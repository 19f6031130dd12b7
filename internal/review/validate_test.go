package review

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func runT(t *testing.T, timeout time.Duration, argv ...string) Validation {
	t.Helper()
	v, _, _ := runOne(context.Background(), Planned{ID: "t", Argv: argv, Timeout: timeout}, t.TempDir(), validationEnv(os.LookupEnv), timeout, 1024)
	return v
}

func TestRunOutcomes(t *testing.T) {
	v := runT(t, 10*time.Second, "sh", "-c", "echo out; echo err >&2; exit 3")
	if v.Status != StatusFailed || v.ExitCode == nil || *v.ExitCode != 3 || v.Stdout.Text != "out\n" || v.Stderr.Text != "err\n" {
		t.Errorf("failed: %+v", v)
	}
	v = runT(t, 10*time.Second, "true")
	if v.Status != StatusPassed || *v.ExitCode != 0 {
		t.Errorf("passed: %+v", v)
	}
	v = runT(t, 10*time.Second, "/no/such/program")
	if v.Status != StatusSpawnError || v.Reason == "" || v.ExitCode != nil {
		t.Errorf("spawn error: %+v", v)
	}
	v = runT(t, 10*time.Second, "sh", "-c", "kill -SEGV $$")
	if v.Status != StatusFailed || v.Signal != "SIGSEGV" || v.ExitCode != nil {
		t.Errorf("signal: %+v", v)
	}
	// stdin is closed: a command that reads it ends at once.
	v = runT(t, 10*time.Second, "cat")
	if v.Status != StatusPassed || v.DurationMs > 5000 {
		t.Errorf("stdin: %+v", v)
	}
}

func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	// A zombie is dead; in a container nobody may reap it.
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	return !strings.Contains(s[strings.LastIndexByte(s, ')'):], ") Z")
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// A timeout kills the whole group: the command and a double-forked
// grandchild that ignores SIGTERM.
func TestRunTimeoutKillsGrandchildren(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	v := runT(t, 300*time.Millisecond, "sh", "-c", "(trap '' TERM; sleep 300 & echo $! > "+pidFile+") ; sleep 300")
	if v.Status != StatusTimedOut || v.ExitCode != nil || v.Signal == "" {
		t.Errorf("%+v", v)
	}
	if d := time.Since(start); d > 300*time.Millisecond+killGrace+2*time.Second {
		t.Errorf("took %v", d)
	}
	pid := readPid(t, pidFile)
	deadline := time.Now().Add(2 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatal("the grandchild survived the timeout")
	}
}

// A command that exits while a background child still holds its pipes
// returns at once, and the child does not outlive the call.
func TestRunLeftoverChildKilled(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	v := runT(t, 60*time.Second, "sh", "-c", "sleep 300 & echo $! > "+pidFile+"; echo done")
	if v.Status != StatusPassed || v.Stdout.Text != "done\n" {
		t.Errorf("%+v", v)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	pid := readPid(t, pidFile)
	for i := 0; i < 200 && alive(pid); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatal("the background child outlived the call")
	}
}

// 10 MB of output: no hang, head and tail kept, the middle counted.
func TestRunFloodOfOutput(t *testing.T) {
	v, _, _ := runOne(context.Background(), Planned{ID: "t", Argv: []string{"sh", "-c", "echo FIRST; head -c 10000000 /dev/zero | tr '\\0' x; echo; echo LAST; echo err >&2"}}, t.TempDir(), validationEnv(os.LookupEnv), 30*time.Second, 4096)
	if v.Status != StatusPassed {
		t.Fatalf("%+v", v.Status)
	}
	s := v.Stdout
	if !strings.HasPrefix(s.Text, "FIRST\nxxx") || !strings.HasSuffix(s.Text, "xxx\nLAST\n") || !strings.Contains(s.Text, "bytes elided") {
		t.Errorf("head or tail lost: %.60q ... %.60q", s.Text, s.Text[len(s.Text)-60:])
	}
	marker := fmt.Sprintf("\n[... %d bytes elided ...]\n", s.BytesDropped)
	if s.BytesTotal != 10000012 || s.BytesDropped != s.BytesTotal-int64(len(s.Text)-len(marker)) || len(s.Text) > 4096 || len(s.Text) < 4096-1 {
		t.Errorf("total %d dropped %d kept %d", s.BytesTotal, s.BytesDropped, len(s.Text))
	}
	if v.Stderr.Text != "err\n" {
		t.Errorf("stderr %q", v.Stderr.Text)
	}
}

// Secrets in rowkit's environment are not visible to validations.
func TestRunEnvironmentAllowlist(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "ghp_secret")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws_secret")
	t.Setenv("GIT_DIR", "/elsewhere")
	t.Setenv("LANG", "C.UTF-8")
	v, _, _ := runOne(context.Background(), Planned{ID: "t", Argv: []string{"env"}}, t.TempDir(), validationEnv(os.LookupEnv), 10*time.Second, 1<<16)
	env := v.Stdout.Text
	for _, bad := range []string{"secret", "GIT_DIR", "GITHUB", "AWS"} {
		if strings.Contains(env, bad) {
			t.Errorf("%s leaked:\n%s", bad, env)
		}
	}
	for _, good := range []string{"CI=1\n", "NO_COLOR=1\n", "TERM=dumb\n", "PATH=", "LANG=C.UTF-8\n"} {
		if !strings.Contains(env, good) {
			t.Errorf("%s missing:\n%s", good, env)
		}
	}
}

// The total budget stops the run: the current command times out, the rest
// are skipped, and the exit code is 4.
func TestRunTotalBudget(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	r := inspect(t, Options{Repo: dir, TotalBudget: 300 * time.Millisecond, Validations: []Planned{
		{ID: "a", Argv: []string{"true"}, Timeout: time.Minute},
		{ID: "b", Argv: []string{"sleep", "30"}, Timeout: time.Minute},
		{ID: "c", Argv: []string{"true"}, Timeout: time.Minute},
	}})
	var got []string
	for _, v := range r.Validations {
		got = append(got, v.ID+" "+v.Status)
	}
	equal(t, "statuses", got, []string{"a passed", "b timed_out", "c skipped"})
	if r.OK {
		t.Error("ok after a timeout")
	}
	if !strings.Contains(r.Validations[1].Reason, "total") {
		t.Errorf("reason %q", r.Validations[1].Reason)
	}
	// Validations run in the work tree's top level.
	r = inspect(t, Options{Repo: dir, Validations: []Planned{{ID: "pwd", Argv: []string{"pwd"}, Timeout: time.Minute}}})
	if r.Validations[0].Stdout.Text != dir+"\n" || !r.OK {
		t.Errorf("pwd %+v", r.Validations[0])
	}
	r = inspect(t, Options{Repo: dir, Validations: []Planned{{ID: "f", Argv: []string{"false"}, Timeout: time.Minute}}})
	if r.OK || r.Validations[0].Status != StatusFailed {
		t.Error("a failed validation is not a failure")
	}
}

// A command that ignores SIGTERM gets SIGKILL after the grace period.
func TestRunTermThenKill(t *testing.T) {
	old := killGrace
	killGrace = 200 * time.Millisecond
	defer func() { killGrace = old }()
	start := time.Now()
	v := runT(t, 100*time.Millisecond, "sh", "-c", "trap '' TERM; echo armed; while :; do sleep 0.05; done")
	if v.Status != StatusTimedOut || v.Signal != "SIGKILL" || v.Stdout.Text != "armed\n" {
		t.Errorf("%+v", v)
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 3*time.Second {
		t.Errorf("took %v, want the timeout plus the grace period", d)
	}
}

// An interrupt (a cancelled context) stops the running validation's whole
// group and skips the rest.
func TestRunInterrupted(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	r, err := Inspect(ctx, Options{Repo: dir, LookupEnv: os.LookupEnv, Validations: []Planned{
		{ID: "long", Argv: []string{"sh", "-c", "sleep 300 & echo $! > " + pidFile + "; wait"}, Timeout: time.Minute},
		{ID: "next", Argv: []string{"true"}, Timeout: time.Minute},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if v := r.Validations[0]; v.Status != StatusTimedOut || v.Reason != "rowkit was interrupted" {
		t.Errorf("%+v", v)
	}
	if v := r.Validations[1]; v.Status != StatusSkipped {
		t.Errorf("%+v", v)
	}
	pid := readPid(t, pidFile)
	for i := 0; i < 200 && alive(pid); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatal("the child survived the interrupt")
	}
}
