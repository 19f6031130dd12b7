package mcpserver

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SIGTERM or SIGINT to a real rowkit mcp cancels the calls it is running: a
// search in progress is stopped, its ripgrep group with it, and the server
// exits at once (it used to wait for the search to finish, 10 to 15 s on
// a large tree). The search here is a ripgrep stand-in that would take a
// minute.
func TestSignalStopsRunningSearch(t *testing.T) {
	bin := rowkitBin(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			root, fake := t.TempDir(), t.TempDir()
			write(t, filepath.Join(root, "a.txt"), "needle\n")
			pidFile := filepath.Join(fake, "rg.pid")
			write(t, filepath.Join(fake, "rg"), "#!/bin/sh\necho $$ > '"+pidFile+"'\nexec sleep 60\n")
			os.Chmod(filepath.Join(fake, "rg"), 0o755)

			cmd := exec.Command(bin, "mcp", "--root", root)
			cmd.Env = append(os.Environ(), "PATH="+fake+":"+os.Getenv("PATH"))
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			lines := bufio.NewReader(stdout)
			send := func(msg string) {
				if _, err := io.WriteString(stdin, msg+"\n"); err != nil {
					t.Fatal(err)
				}
			}
			send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
			if l, err := lines.ReadString('\n'); err != nil || !strings.Contains(l, `"id":1`) {
				t.Fatalf("initialize: %q, %v", l, err)
			}
			send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"pattern":"needle"}}}`)
			var rgPid int
			for deadline := time.Now().Add(20 * time.Second); rgPid == 0; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the search never started ripgrep")
				}
				b, _ := os.ReadFile(pidFile)
				rgPid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			}

			start := time.Now()
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			took := time.Since(start)
			t.Logf("%v: rowkit mcp exited %v after %v", sig, err, took)
			if err != nil {
				t.Errorf("exit: %v, want 0", err)
			}
			// Well under a second on a quiet machine; the bound leaves room
			// for a loaded one and is still far below the search's minute.
			if took > 5*time.Second {
				t.Errorf("rowkit mcp took %v to exit after %v", took, sig)
			}
			for deadline := time.Now().Add(3 * time.Second); syscall.Kill(rgPid, 0) == nil; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("ripgrep (pid %d) outlived the server", rgPid)
				}
			}
		})
	}
}
