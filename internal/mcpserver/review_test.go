package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestListToolsWithoutAllowlist(t *testing.T) {
	cs := connect(t, newServer(t, Options{Roots: []string{t.TempDir()}}), nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name == "run_validations" {
			t.Fatal("run_validations is listed without an allowlist")
		}
		if tool.InputSchema == nil || tool.OutputSchema == nil || tool.Annotations == nil {
			t.Errorf("%s: missing schema or annotations", tool.Name)
		}
	}
	ir := toolOf(t, cs, "inspect_repository")
	if ir == nil {
		t.Fatal("inspect_repository is not listed")
	}
	a := ir.Annotations
	if !a.ReadOnlyHint || !a.IdempotentHint || a.DestructiveHint == nil || *a.DestructiveHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
		t.Errorf("inspect_repository annotations %+v, want readOnly, idempotent, not destructive, closed world", a)
	}
}

// allowConfig writes an operator config with the given validations (name
// -> argv), all allowed to MCP callers except those named in deny.
func allowConfig(t testing.TB, vals map[string][]string, deny ...string) string {
	t.Helper()
	type v struct {
		Argv []string `json:"argv"`
	}
	c := struct {
		Validations map[string]v `json:"validations"`
		MCP         struct {
			AllowValidations []string `json:"allowValidations"`
		} `json:"mcp"`
	}{Validations: map[string]v{}}
	c.MCP.AllowValidations = []string{}
	for n, argv := range vals {
		c.Validations[n] = v{argv}
		if !contains(deny, n) {
			c.MCP.AllowValidations = append(c.MCP.AllowValidations, n)
		}
	}
	b, _ := json.Marshal(c)
	p := filepath.Join(t.TempDir(), "rowkit.json")
	write(t, p, string(b))
	return p
}

func TestRunValidationsListedOnlyWithAllowlist(t *testing.T) {
	root := t.TempDir()
	empty := allowConfig(t, map[string][]string{"ok": {"true"}}, "ok")
	cs := connect(t, newServer(t, Options{Roots: []string{root}, Config: empty}), nil)
	if toolOf(t, cs, "run_validations") != nil {
		t.Fatal("run_validations is listed with an empty mcp.allowValidations")
	}
	cfg := allowConfig(t, map[string][]string{"ok": {"true"}, "fail": {"false"}, "secret": {"true"}}, "secret")
	cs = connect(t, newServer(t, Options{Roots: []string{root}, Config: cfg}), nil)
	rv := toolOf(t, cs, "run_validations")
	if rv == nil {
		t.Fatal("run_validations is not listed")
	}
	if rv.Annotations.ReadOnlyHint {
		t.Error("run_validations is marked readOnly")
	}
	b, _ := json.Marshal(rv.InputSchema)
	var s struct {
		Properties map[string]struct {
			Items struct {
				Enum []string `json:"enum"`
			} `json:"items"`
		} `json:"properties"`
		AdditionalProperties any `json:"additionalProperties"`
	}
	json.Unmarshal(b, &s)
	enum := s.Properties["validations"].Items.Enum
	if len(enum) != 2 || contains(enum, "secret") || !contains(enum, "ok") || !contains(enum, "fail") {
		t.Errorf("validations enum %v, want exactly the allowed ok and fail", enum)
	}
	if len(s.Properties) != 2 {
		t.Errorf("input schema %s: want exactly repo_path and validations, nothing that could carry a command", b)
	}
	// The advertised schema leaves out the bounds the server checks
	// anyway (advertised): another property is refused all the same.
	res := call(t, cs, "run_validations", map[string]any{"repo_path": ".", "validations": []string{"ok"}, "cmd": "true"})
	if !res.IsError || !strings.Contains(text(res), "cmd") {
		t.Errorf("an extra property: isError %v, %q", res.IsError, text(res))
	}
}

func TestInspectRepositoryParity(t *testing.T) {
	root := canon(t, t.TempDir())
	repo := filepath.Join(root, "repo")
	os.Mkdir(repo, 0o755)
	newRepo(t, repo)
	// The repository's own config, which neither surface reads: both say so.
	write(t, filepath.Join(repo, "rowkit.json"), `{"validations": {"test": {"argv": ["touch", "pwned"]}}}`)
	cs := connect(t, newServer(t, Options{Roots: []string{root}}), nil)
	tool := toolOf(t, cs, "inspect_repository")
	for _, tc := range []struct {
		args map[string]any
		cli  []string
	}{
		{map[string]any{"repo_path": "repo"}, []string{"--detail", "summary"}},
		{map[string]any{"repo_path": repo, "detail": "full", "base_ref": "main"}, []string{"--detail", "full", "--base-ref", "main"}},
		{map[string]any{"repo_path": "repo/", "scopes": []string{"staged", "untracked"}}, []string{"--detail", "summary", "--scope", "staged,untracked"}},
	} {
		res := call(t, cs, "inspect_repository", tc.args)
		if res.IsError {
			t.Errorf("%v: %s", tc.args, text(res))
			continue
		}
		args := append([]string{"review", "--repo", repo, "--format", "json", "--max-files", "50", "--max-output-bytes", "4096"}, tc.cli...)
		out, code := cli(t, root, args...)
		if code != 0 {
			t.Fatalf("rowkit %v: exit %d", args, code)
		}
		sameJSON(t, strings.Join(tc.cli, " "), dropKeys(structured(t, res), "durationMs"), dropKeys(decodeJSON(t, out), "durationMs"))
		validateOutput(t, tool, res.StructuredContent)
		if !strings.Contains(string(out), `"code": "W_REPO_CONFIG_IGNORED"`) {
			t.Errorf("no W_REPO_CONFIG_IGNORED:\n%s", out)
		}
		if !strings.Contains(text(res), "new.txt") {
			t.Errorf("text content does not list the untracked file:\n%s", text(res))
		}
	}
}

func TestRunValidationsParityAndFailedIsSuccess(t *testing.T) {
	root := canon(t, t.TempDir())
	newRepo(t, root)
	write(t, filepath.Join(root, "rowkit.json"), `{"validations": {"ok": {"argv": ["touch", "pwned"]}}}`)
	cfg := allowConfig(t, map[string][]string{"ok": {"echo", "<fine & dandy>"}, "fail": {"sh", "-c", "echo broken >&2; exit 3"}})
	cs := connect(t, newServer(t, Options{Roots: []string{root}, Config: cfg}), nil)
	tool := toolOf(t, cs, "run_validations")
	res := call(t, cs, "run_validations", map[string]any{"repo_path": ".", "validations": []string{"ok", "fail"}})
	if res.IsError {
		t.Fatalf("a failed validation is an error result: %s", text(res))
	}
	got := structured(t, res)
	if got["ok"] != false {
		t.Errorf("ok = %v, want false", got["ok"])
	}
	out, code := cli(t, root, "review", "--repo", root, "--format", "json", "--detail", "summary", "--max-files", "50",
		"--max-output-bytes", "4096", "--config", cfg, "--validation", "ok", "--validation", "fail")
	if code != 1 {
		t.Fatalf("rowkit review: exit %d, want 1", code)
	}
	sameJSON(t, "run_validations", dropKeys(got, "durationMs"), dropKeys(decodeJSON(t, out), "durationMs"))
	validateOutput(t, tool, res.StructuredContent)
	if !strings.Contains(string(out), `"code": "W_REPO_CONFIG_IGNORED"`) {
		t.Errorf("no W_REPO_CONFIG_IGNORED:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(root, "pwned")); err == nil {
		t.Error("the repository's own config ran")
	}

	// A name outside the allowlist is refused by the schema, before anything runs.
	res = call(t, cs, "run_validations", map[string]any{"repo_path": ".", "validations": []string{"rm"}})
	if code := failureCode(t, res); code != CodeInvalidArguments {
		t.Errorf("unknown validation: code %s", code)
	}
	res = call(t, cs, "run_validations", map[string]any{"repo_path": ".", "validations": []string{"ok"}, "argv": []string{"sh"}})
	if code := failureCode(t, res); code != CodeInvalidArguments {
		t.Errorf("extra argv property: code %s", code)
	}
}

func TestFailureLayers(t *testing.T) {
	root := canon(t, t.TempDir())
	os.Mkdir(filepath.Join(root, "plain"), 0o755)
	cs := connect(t, newServer(t, Options{Roots: []string{root}}), nil)
	tool := toolOf(t, cs, "inspect_repository")
	// Layer 1: the input schema.
	for _, args := range []map[string]any{
		{},
		{"repo_path": ""},
		{"repo_path": 7},
		{"repo_path": ".", "detail": "everything"},
		{"repo_path": ".", "scopes": []string{"stash"}},
		{"repo_path": ".", "unknown": true},
	} {
		res := call(t, cs, "inspect_repository", args)
		if code := failureCode(t, res); code != CodeInvalidArguments {
			t.Errorf("%v: code %s, want %s", args, code, CodeInvalidArguments)
		}
		validateOutput(t, tool, res.StructuredContent)
	}
	// Layer 2: the tool could not do its job; the code is machine-readable.
	for _, tc := range []struct {
		path, code string
	}{
		{"missing", "E_REPO_NOT_FOUND"},
		{"plain", "E_NOT_A_REPO"}, // no .git up to the root, and git is not let search above it
	} {
		res := call(t, cs, "inspect_repository", map[string]any{"repo_path": tc.path})
		if code := failureCode(t, res); code != tc.code {
			t.Errorf("%s: code %s, want %s (%s)", tc.path, code, tc.code, text(res))
		}
		if m := structured(t, res); m["path"] != tc.path {
			t.Errorf("%s: failure path %v", tc.path, m["path"])
		}
		validateOutput(t, tool, res.StructuredContent)
	}
	newRepo(t, filepath.Join(root, "plain"))
	res := call(t, cs, "inspect_repository", map[string]any{"repo_path": "plain", "base_ref": "nosuchbranch"})
	if code := failureCode(t, res); code != "E_BASE_REF_UNKNOWN" {
		t.Errorf("unknown base: code %s (%s)", code, text(res))
	}
}

func TestBaseRefInjection(t *testing.T) {
	root := canon(t, t.TempDir())
	newRepo(t, root)
	cs := connect(t, newServer(t, Options{Roots: []string{root}}), nil)
	marker := filepath.Join(t.TempDir(), "pwned")
	for _, ref := range []string{
		"--output=" + marker, "-o" + marker, "--exec=touch " + marker, "main\n--output=" + marker,
		"main\x00", "-", "--upload-pack=touch " + marker,
	} {
		res := call(t, cs, "inspect_repository", map[string]any{"repo_path": ".", "base_ref": ref, "detail": "full"})
		if !res.IsError {
			t.Errorf("base_ref %q was accepted", ref)
		}
	}
	// What the schema lets through still never reaches git as an option.
	for _, ref := range []string{"main --output=" + marker, "main..--output=" + marker, "HEAD:" + marker} {
		res := call(t, cs, "inspect_repository", map[string]any{"repo_path": ".", "base_ref": ref, "detail": "full"})
		if !res.IsError {
			t.Errorf("base_ref %q resolved: %s", ref, text(res))
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a base_ref made git write a file")
	}
}

// processGone waits until pid no longer exists.
func processGone(pid int, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

func readPid(t testing.TB, path string, within time.Duration) int {
	t.Helper()
	pid := waitPid(path, within)
	if pid == 0 {
		t.Fatalf("%s was not written", path)
	}
	return pid
}

// waitPid reads the pid a test command writes to path, or returns 0.
func waitPid(path string, within time.Duration) int {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(path)
		if err == nil && strings.HasSuffix(string(b), "\n") {
			var pid int
			for _, c := range strings.TrimSpace(string(b)) {
				pid = pid*10 + int(c-'0')
			}
			return pid
		}
		time.Sleep(20 * time.Millisecond)
	}
	return 0
}

func TestCancelMidValidation(t *testing.T) {
	root := canon(t, t.TempDir())
	newRepo(t, root)
	pidFile := filepath.Join(t.TempDir(), "pid")
	// The validation's grandchild writes its pid: cancelling must reach the
	// whole process group, not only the direct child.
	cfg := allowConfig(t, map[string][]string{"slow": {"sh", "-c", "sleep 60 & echo $! > " + pidFile + "; wait"}})
	cs := connect(t, newServer(t, Options{Roots: []string{root}, Config: cfg}), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_validations", Arguments: map[string]any{"repo_path": ".", "validations": []string{"slow"}}})
		done <- err
	}()
	pid := readPid(t, pidFile, 10*time.Second)
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("the cancelled call returned a result")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call did not return")
	}
	if !processGone(pid, 10*time.Second) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the validation's grandchild %d outlived the cancelled call", pid)
	}
	if time.Since(start) > 30*time.Second {
		t.Errorf("cancellation took %v", time.Since(start))
	}
	// The session is still usable.
	if res := call(t, cs, "inspect_repository", map[string]any{"repo_path": "."}); res.IsError {
		t.Errorf("after a cancel: %s", text(res))
	}
}

func TestValidationProgress(t *testing.T) {
	old := progressEvery
	progressEvery = 100 * time.Millisecond
	defer func() { progressEvery = old }()
	root := canon(t, t.TempDir())
	newRepo(t, root)
	cfg := allowConfig(t, map[string][]string{"slow": {"sleep", "0.6"}})
	// Notifications are handled asynchronously and may still arrive
	// after the result: collect them under a lock, never into a channel
	// that could be closed.
	var mu sync.Mutex
	var got []*mcp.ProgressNotificationParams
	cs := connect(t, newServer(t, Options{Roots: []string{root}, Config: cfg}), &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, req.Params)
			mu.Unlock()
		},
	})
	params := &mcp.CallToolParams{Name: "run_validations", Arguments: map[string]any{"repo_path": ".", "validations": []string{"slow"}}}
	params.SetProgressToken("tok")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("%v %s", err, text(res))
	}
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	// The client may handle notifications out of order: check the values
	// the server sent, sorted, are distinct.
	sort.Slice(got, func(i, j int) bool { return got[i].Progress < got[j].Progress })
	n, last := 0, -1.0
	for _, p := range got {
		if p.ProgressToken != "tok" || p.Progress <= last {
			t.Errorf("progress %+v after %v", p, last)
		}
		last = p.Progress
		n++
	}
	// One as the validation starts, one as it ends, and ticks between.
	if n < 4 {
		t.Errorf("%d progress notifications for a 0.6 s validation at 100 ms", n)
	}
	if n > 0 && !strings.Contains(got[n-1].Message, "validation 1 of 1 (slow): passed") {
		t.Errorf("last progress message %q", got[n-1].Message)
	}
}

var _ = exec.Command
