package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/agent"
	"github.com/rowkit/rowkit/internal/agenttest"
)

// codexCalls is how many calls TestCodexShellBound makes: 200 in the
// suite (about a minute); issue 28 measured 1,000 (-codex-calls 1000,
// about four minutes on two busy cores).
var codexCalls = flag.Int("codex-calls", 200, "calls of hread through Codex in TestCodexShellBound")

const turns, perTurn = 2, 25

// TestCodexShellBound is issue 28's "Codex's full bound", with the real
// Codex CLI 0.169 and a model it has metadata for: the shell names bound
// their output by the 40,000 bytes exec_command passes whole, and their
// diagnostic, written after the rows, comes last in what the model gets
// although Codex reads stdout and stderr in 8,192-byte chunks from two
// pipes (cli.Drained). Sessions of 50 calls each (the history each
// request carries stays small), run a few at once, make codexCalls calls of
// hread that fill the bound, from varied lines of a file of about 180
// KB; every output must be exactly what hread prints, stdout then
// stderr, and no call may have been cut by Codex. The same number of
// calls of a program that writes as much to stdout and then a line to
// stderr at once measures what the order was without the wait.
func TestCodexShellBound(t *testing.T) {
	bin := rowkitBin(t)
	ws := t.TempDir()
	var big strings.Builder
	for i := 1; i <= 4000; i++ {
		fmt.Fprintf(&big, "\tif err := writeRecord(ctx, records[%d]); err != nil { return err }\n", i)
	}
	write(t, ws, "big.go", big.String())
	links := t.TempDir()
	if out, err := exec.Command(bin, "link", links).CombinedOutput(); err != nil {
		t.Fatalf("rowkit link: %v\n%s", err, out)
	}
	sessions := *codexCalls / (turns * perTurn)
	type call struct{ id, cmd string }
	var mu sync.Mutex
	var all []call
	naive := `python3 -c "import os,sys; os.write(1, (b'z'*79+b'\n')*480); os.write(2, b'naive: the line after\n')"`
	run := func(s int, cmdOf func(i int) string) {
		var steps []agenttest.Step
		for k := range turns {
			var items []agenttest.Item
			for j := range perTurn {
				i := (s*turns+k)*perTurn + j
				c := call{fmt.Sprintf("c%d", i), cmdOf(i)}
				items = append(items, agenttest.Call{ID: c.id, Name: "exec_command", Args: map[string]any{"cmd": c.cmd}})
				mu.Lock()
				all = append(all, c)
				mu.Unlock()
			}
			steps = append(steps, agenttest.Reply(items...))
		}
		srv := agenttest.NewServer(append(steps, agenttest.Reply(agenttest.Message{Text: "finished"}))...)
		defer srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cx := &agenttest.Codex{HomeFiles: map[string]string{".profile": "PATH=" + links + ":$PATH\n"}}
		r, err := cx.Run(ctx, srv.URL, ws, "read")
		if err != nil || r.Exit != 0 {
			t.Errorf("session %d: %v, exit %d\n%.2000s", s, err, r.Exit, r.Stderr)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, c := range all {
			if o, ok := srv.Output(c.id); ok {
				outputs[c.id] = o
			}
		}
	}
	outputs = map[string]agenttest.Output{}
	start := time.Now()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 3)
	for s := range sessions {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			run(s, func(i int) string { return fmt.Sprintf("hread big.go %d:", 1+i*7%3000) })
		}()
	}
	wg.Wait()
	t.Logf("%d hread calls through Codex in %v", len(all), time.Since(start))

	// What hread prints for each call, under the bound Codex's model gets.
	wants := map[string][2]string{}
	for _, c := range all {
		if wants[c.cmd] != [2]string{} {
			continue
		}
		cmd := exec.Command(filepath.Join(links, "hread"), strings.Fields(c.cmd)[1:]...)
		cmd.Dir = ws
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), fmt.Sprintf("ROWKIT_MAX_OUTPUT=%d", agent.CodexShellBytes)}
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.Run()
		wants[c.cmd] = [2]string{stdout.String(), stderr.String()}
	}
	misordered, cut, rowsSeen := 0, 0, 0
	for _, c := range all {
		o, ok := outputs[c.id]
		if !ok {
			t.Errorf("%s: no output reached the model", c.id)
			continue
		}
		w := wants[c.cmd]
		body := o.Body()
		switch {
		case strings.Contains(o.Text, "truncated"):
			cut++
		case body == w[0]+w[1]:
			rowsSeen += strings.Count(w[0], "\n")
		default:
			misordered++
			if misordered <= 3 {
				t.Errorf("%s (%s): the model got %d bytes, not hread's %d of rows then its diagnostic %q; the diagnostic at %d",
					c.id, c.cmd, len(body), len(w[0]), w[1], strings.Index(body, "hread: "))
			}
		}
		if len(w[0])+len(w[1]) > agent.CodexShellBytes || len(w[0])+len(w[1]) < agent.CodexShellBytes-200 || !strings.HasPrefix(w[1], "hread: output incomplete: 40,000-byte") {
			t.Fatalf("%s: hread printed %d + %d bytes: %s", c.cmd, len(w[0]), len(w[1]), w[1])
		}
	}
	if len(all) != sessions*turns*perTurn || misordered > 0 || cut > 0 {
		t.Errorf("%d calls: %d with the diagnostic out of place, %d cut by Codex", len(all), misordered, cut)
	}
	t.Logf("%d calls of hread through Codex: every diagnostic last; %.0f rows a call", len(all), float64(rowsSeen)/float64(len(all)))

	// The same without the wait: a program that writes about as much to
	// stdout and then a line to stderr at once.
	all = nil
	outputs = map[string]agenttest.Output{}
	for s := range max(sessions/5, 1) {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			run(s, func(int) string { return naive })
		}()
	}
	wg.Wait()
	out := strings.Repeat(strings.Repeat("z", 79)+"\n", 480)
	naiveMisordered := 0
	for _, c := range all {
		if o := outputs[c.id]; o.Body() != out+"naive: the line after\n" {
			naiveMisordered++
		}
	}
	t.Logf("without the wait: %d of %d calls had the stderr line before the end of %d bytes of stdout", naiveMisordered, len(all), len(out))
}

var outputs map[string]agenttest.Output
