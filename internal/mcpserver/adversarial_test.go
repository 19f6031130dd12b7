package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/rows"
)

const secret = "TOPSECRET-0xC0FFEE"

// hostile lays out, beside a root: a sibling whose name extends the root's
// (root-evil), an outside directory, links from inside the root to both,
// and a repository whose .git file points at a repository outside.
func hostile(t *testing.T) (parent, root string) {
	t.Helper()
	parent = canon(t, t.TempDir())
	root = filepath.Join(parent, "root")
	write(t, filepath.Join(root, "ok.txt"), "alpha\n")
	write(t, filepath.Join(parent, "root-evil", "secret.txt"), secret+"\n")
	write(t, filepath.Join(parent, "outside", "secret.txt"), secret+"\n")
	write(t, filepath.Join(parent, "outside", "secret.go"), "package x // "+secret+"\n")
	os.Symlink("../outside", filepath.Join(root, "link-out"))
	os.Symlink("../outside/secret.txt", filepath.Join(root, "secret-link.txt"))
	os.Symlink(filepath.Join(parent, "root-evil", "secret.txt"), filepath.Join(root, "abs-link.txt"))
	outRepo := filepath.Join(parent, "outside-repo")
	os.MkdirAll(outRepo, 0o755)
	newRepo(t, outRepo)
	write(t, filepath.Join(root, "evil", ".git"), "gitdir: ../../outside-repo/.git\n")
	write(t, filepath.Join(root, "evil", "a.go"), "package a\n")
	return parent, root
}

// TestHostilePaths: every path-taking tool refuses each escape, and the
// secret outside never appears in any result.
func TestHostilePaths(t *testing.T) {
	parent, root := hostile(t)
	cs := connect(t, newServer(t, Options{Roots: []string{root}}), nil)
	escapes := []string{
		"../outside/secret.txt",
		"ok/../../outside/secret.txt",
		"/etc/passwd",
		filepath.Join(parent, "outside", "secret.txt"),
		filepath.Join(parent, "root-evil", "secret.txt"),
		root + "-evil/secret.txt",
		filepath.Join(root, "..", "outside", "secret.txt"),
		"link-out/secret.txt",
		"link-out/secret.go",
		"secret-link.txt",
		"abs-link.txt",
		"@shell/secret.txt",
	}
	for _, p := range escapes {
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"inspect_file", map[string]any{"path": p}},
			{"read_file", map[string]any{"path": p}},
			{"search", map[string]any{"pattern": "SECRET", "paths": []string{p}}},
			{"inspect_repository", map[string]any{"repo_path": p}},
		} {
			res := call(t, cs, c.tool, c.args)
			b, _ := json.Marshal(res)
			if !res.IsError || strings.Contains(string(b), secret) {
				t.Errorf("%s %q: isError %v, result %s", c.tool, p, res.IsError, b)
			}
		}
	}
	// A search of the whole root does not follow the links out.
	res := call(t, cs, "search", map[string]any{"pattern": "SECRET|alpha"})
	if b, _ := json.Marshal(res); res.IsError || strings.Contains(string(b), secret) || !strings.Contains(string(b), "alpha") {
		t.Errorf("search of the root: %s", b)
	}
	// File-valued options cannot be smuggled in through globs or types.
	res = call(t, cs, "search", map[string]any{"pattern": "SECRET", "glob": []string{"../outside/*"}})
	if b, _ := json.Marshal(res); strings.Contains(string(b), secret) {
		t.Errorf("glob escape: %s", b)
	}
	// A repository whose .git file points outside is refused before git runs.
	res = call(t, cs, "inspect_repository", map[string]any{"repo_path": "evil"})
	if code := failureCode(t, res); code != "outside_workspace" {
		t.Errorf(".git pointing outside: code %s (%s)", code, text(res))
	}
}

// TestSeveralRoots: relative paths resolve in the first root, absolute
// ones in whichever root holds them.
func TestSeveralRoots(t *testing.T) {
	a, b := canon(t, t.TempDir()), canon(t, t.TempDir())
	write(t, filepath.Join(a, "x.txt"), "in a\n")
	write(t, filepath.Join(b, "x.txt"), "in b\n")
	cs := connect(t, newServer(t, Options{Roots: []string{a, b}}), nil)
	if got := text(call(t, cs, "read_file", map[string]any{"path": "x.txt"})); !strings.Contains(got, "in a") {
		t.Errorf("relative path: %q", got)
	}
	if got := text(call(t, cs, "read_file", map[string]any{"path": filepath.Join(b, "x.txt")})); !strings.Contains(got, "in b") {
		t.Errorf("absolute path in the second root: %q", got)
	}
	res := call(t, cs, "search", map[string]any{"pattern": "in", "paths": []string{"x.txt", filepath.Join(b, "x.txt")}})
	if code := failureCode(t, res); code != "usage" {
		t.Errorf("paths across roots: %s", code)
	}
}

// TestClientRootsNarrowed: the client's roots inside the --root confine
// the session; a client root outside every --root is ignored.
func TestClientRootsNarrowed(t *testing.T) {
	parent, root := hostile(t)
	sub := filepath.Join(root, "sub")
	write(t, filepath.Join(sub, "s.txt"), "in sub\n")
	var log strings.Builder
	s := newServer(t, Options{Roots: []string{root}, Log: &syncWriter{w: &log}})
	// Roots are asked for with roots/list, which protocol 2026-07-28
	// forbids a server to send: the client speaks the version before.
	const version = "2025-11-25"
	cs := connectVersion(t, s, nil, version, sub, filepath.Join(parent, "outside"))
	if got := text(call(t, cs, "read_file", map[string]any{"path": "s.txt"})); !strings.Contains(got, "in sub") {
		t.Errorf("relative to the client's root: %q", got)
	}
	for _, p := range []string{"../ok.txt", filepath.Join(root, "ok.txt"), filepath.Join(parent, "outside", "secret.txt")} {
		res := call(t, cs, "read_file", map[string]any{"path": p})
		if b, _ := json.Marshal(res); !res.IsError || strings.Contains(string(b), secret) {
			t.Errorf("%s outside the narrowed roots: %s", p, b)
		}
	}
	if !strings.Contains(log.String(), "ignoring client root "+filepath.Join(parent, "outside")) {
		t.Errorf("log does not name the ignored client root:\n%s", log.String())
	}
	// A client root that contains the --root narrows to the --root.
	cs = connectVersion(t, s, nil, version, parent)
	if got := text(call(t, cs, "read_file", map[string]any{"path": "ok.txt"})); !strings.Contains(got, "alpha") {
		t.Errorf("client root above the --root: %q", got)
	}
	if res := call(t, cs, "read_file", map[string]any{"path": filepath.Join(parent, "outside", "secret.txt")}); !res.IsError {
		t.Error("a client root above the --root widened it")
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// TestConcurrentCalls: 50 calls of every tool at once on one session.
func TestConcurrentCalls(t *testing.T) {
	root := fileRoot(t)
	newRepo(t, filepath.Join(root, "repo"))
	cs := connect(t, newServer(t, Options{Roots: []string{root}}), nil)
	calls := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read_file", map[string]any{"path": "b.txt"}, "1:8ed3 alpha"},
		{"inspect_file", map[string]any{"path": "a.go"}, "method (*T).M"},
		{"search", map[string]any{"pattern": "alpha", "paths": []string{"sub"}}, "alpha again"},
		{"inspect_repository", map[string]any{"repo_path": "repo"}, "new.txt"},
		{"read_file", map[string]any{"path": "../nope"}, "OUTSIDE_ALLOWED_ROOTS"},
	}
	var wg sync.WaitGroup
	errc := make(chan string, 50)
	for i := 0; i < 50; i++ {
		c := calls[i%len(calls)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
			if err != nil {
				errc <- fmt.Sprintf("%s: %v", c.tool, err)
				return
			}
			b, _ := json.Marshal(res)
			if !strings.Contains(string(b), c.want) {
				errc <- fmt.Sprintf("%s %v: %s", c.tool, c.args, b)
			}
		}()
	}
	wg.Wait()
	close(errc)
	for e := range errc {
		t.Error(e)
	}
}

// TestCancelMidSearch: cancelling a search stops ripgrep's process group.
// The rg on PATH is a stand-in that records its pid and hangs, so the call
// is certainly still running when it is cancelled.
func TestCancelMidSearch(t *testing.T) {
	root := fileRoot(t)
	bin := t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "pid")
	write(t, filepath.Join(bin, "rg"), "#!/bin/sh\necho $$ > "+pidFile+"\nexec sleep 60\n")
	os.Chmod(filepath.Join(bin, "rg"), 0o755)
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	cs := connect(t, newServer(t, Options{Roots: []string{root}}), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"pattern": "alpha"}})
		done <- err
	}()
	pid := readPid(t, pidFile, 10*time.Second)
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled search did not return")
	}
	if !processGone(pid, 10*time.Second) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("rg (%d) outlived the cancelled search", pid)
	}
}

// TestStdioSurvivesBadFrames: malformed, oversized and non-JSON-RPC lines
// each get a JSON-RPC error, and the server answers the next request.
func TestStdioSurvivesBadFrames(t *testing.T) {
	root := fileRoot(t)
	s := newServer(t, Options{Roots: []string{root}})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- s.ServeStdio(context.Background(), inR, outW); outW.Close() }()
	responses := bufio.NewReaderSize(outR, 1<<20)
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() map[string]any {
		t.Helper()
		line, err := responses.ReadBytes('\n')
		if err != nil {
			t.Fatalf("reading a response: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("response %q: %v", line, err)
		}
		return m
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := recv(); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	huge := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"` + strings.Repeat("a", MaxFrameBytes) + `"}}}`
	for _, bad := range []struct {
		line string
		code float64
		id   any
	}{
		{"this is not json", -32700, nil},
		{`{"jsonrpc":"2.0","id":3,"method":`, -32700, nil},
		{`[{"jsonrpc":"2.0","id":4,"method":"ping"}]`, -32600, nil},
		{`{"jsonrpc":"1.0","id":5,"method":"ping"}`, -32600, 5.0},
		{`{"id":6}`, -32600, 6.0},
		{`42`, -32600, nil},
		{huge, -32600, nil},
	} {
		send(bad.line)
		m := recv()
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != bad.code || m["id"] != bad.id {
			t.Errorf("%.60q: %v, want error %v with id %v", bad.line, m, bad.code, bad.id)
		}
	}
	// A request the SDK rejects (unknown method, params of the wrong
	// shape) is answered and the session goes on.
	send(`{"jsonrpc":"2.0","id":7,"method":"no/such/method"}`)
	if m := recv(); m["id"] != 7.0 || m["error"] == nil {
		t.Errorf("unknown method: %v", m)
	}
	send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":"nonsense"}`)
	if m := recv(); m["id"] != 8.0 || m["error"] == nil {
		t.Errorf("bad params: %v", m)
	}
	send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"b.txt"}}}`)
	m := recv()
	if m["id"] != 9.0 || !strings.Contains(fmt.Sprint(m["result"]), "8ed3") {
		t.Errorf("the call after the bad frames: %v", m)
	}
	inW.Close()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio did not return when stdin ended")
	}
}

// TestConcurrentEdits: edits arriving at once are applied one after the
// other, each against the file as the previous one left it.
func TestConcurrentEdits(t *testing.T) {
	root := fileRoot(t)
	cs := connect(t, newServer(t, Options{Roots: []string{root}}), nil)
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "edit",
				Arguments: map[string]any{"script": fmt.Sprintf("in sub/c.txt\nadd EOF \"line %d\\n\"\n", i)}})
			if err != nil || res.IsError {
				t.Errorf("edit %d: %v %s", i, err, text(res))
			}
		}()
	}
	wg.Wait()
	b, _ := os.ReadFile(filepath.Join(root, "sub", "c.txt"))
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 11 || lines[0] != "alpha again" {
		t.Fatalf("after 10 concurrent edits:\n%s", b)
	}
	seen := map[string]bool{}
	for _, l := range lines[1:] {
		seen[l] = true
	}
	for i := 0; i < 10; i++ {
		if !seen[fmt.Sprintf("line %d", i)] {
			t.Errorf("line %d is missing:\n%s", i, b)
		}
	}
}

// Arguments the schema rejects are answered with a bounded usage message:
// the validator quotes the offending value, and an oversized script came
// back whole (15 MB for a 15 MB edit script over the schema's maxLength).
func TestInvalidArgumentsBounded(t *testing.T) {
	root := t.TempDir()
	cs := connect(t, newServer(t, Options{Roots: []string{root}}), nil)
	huge := strings.Repeat("add EOF \"x\\n\"\n", 40000)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"edit", map[string]any{"script": "in a\n", "dry_run": huge}},
		{"read_file", map[string]any{"path": "a", "offset": huge}},
		{"search", map[string]any{"pattern": "a", "case": huge}},
	} {
		res := call(t, cs, c.tool, c.args)
		if code := failureCode(t, res); code != "usage" {
			t.Errorf("%s: code %q, want usage", c.tool, code)
		}
		b, _ := json.Marshal(res)
		if len(b) > 8<<10 {
			t.Errorf("%s: a %d-byte answer to invalid arguments", c.tool, len(b))
		}
		if !strings.Contains(text(res), "bytes left out") {
			t.Errorf("%s: %q does not say what it left out", c.tool, text(res)[:min(len(text(res)), 300)])
		}
	}
}

// An edit against a file with a 20 MB line: the rejection's repair rows and
// the dry run's diff show the line clamped, and the whole answer, text and
// structured, stays within the verified-row budget (a rejection against a
// 100 MB line answered 100 MB, a dry run on a 200 MB line 629 MB).
func TestEditHugeLineBounded(t *testing.T) {
	root := canon(t, t.TempDir())
	huge := strings.Repeat("x", 20<<20)
	write(t, filepath.Join(root, "f.txt"), "alpha\n"+huge+"\nomega\n")
	cs := connect(t, newServer(t, Options{Roots: []string{root}}), nil)
	hugeRow := rows.RefOf(2, []byte(huge)).String()
	// 2,000 failures, each with the huge line among its repair rows.
	var many strings.Builder
	many.WriteString("in f.txt\n")
	for range 2000 {
		many.WriteString("type 3:0000 \"x\"\n")
	}
	for _, c := range []struct {
		name, script string
		dry          bool
	}{
		{"rejection", "in f.txt\ntype 3:0000 \"x\"\n", false},
		{"many rejections", many.String(), false},
		{"dry run", "in f.txt\ntype " + hugeRow + " \"y\"\n", true},
	} {
		res := call(t, cs, "edit", map[string]any{"script": c.script, "dry_run": c.dry})
		sc, _ := json.Marshal(res.StructuredContent)
		txt := text(res)
		if n := rows.CountTokens(txt); n > rows.DefaultBudget.Ceiling+100 {
			t.Errorf("%s: text of %d tokens", c.name, n)
		}
		// The structured result carries what the text admitted.
		if len(sc) > 2*len(txt)+4096 {
			t.Errorf("%s: structuredContent of %d bytes for %d of text", c.name, len(sc), len(txt))
		}
		if !c.dry && (!strings.Contains(txt, hugeRow+" xxx") || !strings.Contains(string(sc), `"hash":"`+hugeRow[2:]+`"`) || !strings.Contains(string(sc), `"clamped":true`)) {
			t.Errorf("%s: the huge row %s is not shown clamped: %.300s", c.name, hugeRow, txt)
		}
		if c.dry && !strings.Contains(txt, "\\ clamped: 2000 of 20971520 characters shown") {
			t.Errorf("%s: %.300s", c.name, txt)
		}
		m := structured(t, res)
		if c.name == "many rejections" {
			tr, _ := m["truncated"].(map[string]any)
			kept, _ := m["failures"].([]any)
			if tr == nil || int(tr["failures"].(float64))+len(kept) != 2000 || !strings.Contains(txt, "more failures left out") {
				t.Errorf("%s: kept %d failures, truncated %v", c.name, len(kept), tr)
			}
		}
	}
}

// The root directory is replaced by a symlink to another directory in the
// middle of a session (renamed away, a link put in its place): no call may
// reach the other directory. The file tools keep serving the directory the
// server opened; the repository tool, which runs git by path, refuses.
func TestRootSwappedForSymlink(t *testing.T) {
	parent := canon(t, t.TempDir())
	root, other := filepath.Join(parent, "root"), filepath.Join(parent, "other")
	write(t, filepath.Join(root, "a.txt"), "inside\n")
	write(t, filepath.Join(root, "a.md"), "# inside\n")
	newRepo(t, root)
	write(t, filepath.Join(other, "a.txt"), secret+"\n")
	write(t, filepath.Join(other, "a.md"), "# "+secret+"\n")
	newRepo(t, other)
	cs := connect(t, newServer(t, Options{Roots: []string{root}}), nil)
	if res := call(t, cs, "read_file", map[string]any{"path": "a.txt"}); !strings.Contains(text(res), "inside") {
		t.Fatalf("before the swap: %s", text(res))
	}
	if err := os.Rename(root, root+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, root); err != nil {
		t.Fatal(err)
	}
	row := rows.RefOf(1, []byte("inside")).String()
	for _, c := range []struct {
		tool string
		args map[string]any
		want string // in the result; "" for a refusal
	}{
		{"read_file", map[string]any{"path": "a.txt"}, "inside"},
		{"read_file", map[string]any{"path": filepath.Join(root, "a.txt")}, "inside"},
		{"inspect_file", map[string]any{"path": "a.md"}, "inside"},
		{"search", map[string]any{"pattern": "inside|" + secret}, "inside"},
		{"search", map[string]any{"pattern": "inside|" + secret, "paths": []string{"a.txt"}}, "inside"},
		{"edit", map[string]any{"script": "in a.txt\ntype " + row + " \"edited\"\n"}, "modified"},
		{"read_file", map[string]any{"path": "a.txt"}, "edited"},
		{"inspect_repository", map[string]any{"repo_path": "."}, ""},
	} {
		res := call(t, cs, c.tool, c.args)
		b, _ := json.Marshal(res)
		switch {
		case strings.Contains(string(b), secret):
			t.Errorf("%s %v reached the other directory: %s", c.tool, c.args, b)
		case c.want == "" && failureCode(t, res) != "outside_workspace":
			t.Errorf("%s %v: %s", c.tool, c.args, b)
		case c.want != "" && (res.IsError || !strings.Contains(text(res), c.want)):
			t.Errorf("%s %v: want %q: %s", c.tool, c.args, c.want, b)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(other, "a.txt")); string(got) != secret+"\n" {
		t.Errorf("the other directory was written: %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(root+".moved", "a.txt")); string(got) != "edited\n" {
		t.Errorf("the served directory holds %q", got)
	}
}
