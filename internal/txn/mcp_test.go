package txn_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/mcpserver"
	"github.com/rowkit/rowkit/internal/txn"
)

// helperMCP serves MCP on stdio for ROWKIT_TXN_DIR. Before the first step
// named ROWKIT_TXN_SWAP_STEP of a commit, it replaces a.txt with a FIFO or
// (ROWKIT_TXN_SWAP_KIND=device) a device: between the edit's read and its
// commit, where a blocking open used to hang the server.
func helperMCP() {
	dir, at, kind := os.Getenv("ROWKIT_TXN_DIR"), os.Getenv("ROWKIT_TXN_SWAP_STEP"), os.Getenv("ROWKIT_TXN_SWAP_KIND")
	done := false
	txn.SetFaultHook(func(s string) error {
		if !done && s == at {
			done = true
			p := filepath.Join(dir, "a.txt")
			os.Remove(p)
			if kind == "device" {
				syscall.Mknod(p, syscall.S_IFCHR|0o644, 1<<8|5) // /dev/zero's numbers
			} else {
				syscall.Mkfifo(p, 0o644)
			}
		}
		return nil
	})
	srv, err := mcpserver.New(mcpserver.Options{Roots: []string{dir}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := srv.ServeStdio(context.Background(), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// mcpClient speaks JSON-RPC over a server's stdio, one line per message.
type mcpClient struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan string
}

func (c *mcpClient) send(v any) {
	data, _ := json.Marshal(v)
	if _, err := c.in.Write(append(data, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

// call sends a request and waits (at most d) for its response.
func (c *mcpClient) call(id int, method string, params any, d time.Duration) map[string]any {
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	timeout := time.After(d)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("%s: the server closed its output", method)
			}
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["id"] == float64(id) {
				return m
			}
		case <-timeout:
			c.t.Fatalf("%s: no answer within %v", method, d)
		}
	}
}

// An MCP edit whose target is swapped for a FIFO or a device between its
// read and its commit answers at once (rejected row-stale), a later edit
// still answers and lands, and the server exits when stdin ends.
func TestMCPEditSpecialFileSwappedIn(t *testing.T) {
	kinds := []string{"fifo"}
	if os.Geteuid() == 0 {
		kinds = append(kinds, "device")
	} else {
		t.Log("not root: only the FIFO case runs (mknod needs root)")
	}
	for _, kind := range kinds {
		for _, at := range []string{"journal prepare", "link a.txt", "rename a.txt"} {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"a.txt": "a=0\n", "b.txt": "b=0\n"})
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(exe)
			cmd.Env = append(os.Environ(), helperEnv+"=mcp", "ROWKIT_TXN_DIR="+dir, "ROWKIT_TXN_SWAP_STEP="+at, "ROWKIT_TXN_SWAP_KIND="+kind)
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			c := &mcpClient{t: t, in: in, lines: make(chan string, 16)}
			go func() {
				sc := bufio.NewScanner(out)
				sc.Buffer(nil, 16<<20)
				for sc.Scan() {
					c.lines <- sc.Text()
				}
				close(c.lines)
			}()
			c.call(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "txn-test", "version": "1"}}, 10*time.Second)
			c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
			edit := func(id int, script string) map[string]any {
				res := c.call(id, "tools/call", map[string]any{"name": "edit", "arguments": map[string]any{"script": script}}, 10*time.Second)
				r, _ := res["result"].(map[string]any)
				if r == nil {
					t.Fatalf("%s at %s: edit %d: %v", kind, at, id, res)
				}
				return r
			}
			r := edit(2, fmt.Sprintf("in a.txt\ntype %s \"a=1\"\n", row(1, "a=0")))
			sc, _ := r["structuredContent"].(map[string]any)
			fails, _ := sc["failures"].([]any)
			if r["isError"] != true || len(fails) != 1 || !strings.Contains(fmt.Sprint(fails[0]), "row-stale") {
				t.Fatalf("%s swapped in at %s: the edit answered %v", kind, at, r)
			}
			r = edit(3, fmt.Sprintf("in b.txt\ntype %s \"b=1\"\n", row(1, "b=0")))
			if r["isError"] == true || read(dir, "b.txt") != "b=1\n" {
				t.Fatalf("%s swapped in at %s: the next edit answered %v, b.txt %q", kind, at, r, read(dir, "b.txt"))
			}
			in.Close()
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case err := <-exited:
				if err != nil {
					t.Fatalf("%s at %s: the server exited with %v: %s", kind, at, err, stderr.String())
				}
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("%s at %s: the server did not exit when stdin ended", kind, at)
			}
			if l := litter(dir); len(l) > 0 {
				t.Fatalf("%s at %s: left behind %v", kind, at, l)
			}
		}
	}
}
