package mcpserver

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/agenttest"
)

// keptNoteIn is the note of a cut search in what a client delivered,
// which may have dropped the final newline.
var keptNoteIn = regexp.MustCompile(`\n\[search: output_incomplete\] [^\n]* limit reached; continue with: read_file \{"path":"(@out/[0-9a-z]{10})","offset":([0-9]+)\}\n?$`)

// TestAgentClientsSearchKept: through the real clients, a search that
// finds more than the client's bound shows ends with the read_file call
// that reads the rest on; the scripted model makes it, exactly as named,
// then each one the views name, until the rows end. What the clients hand
// back is every row real ripgrep finds, each once, none cut by the
// client. Codex runs with a model it has metadata for (tool search
// first) and with gpt-4.1, whose bound is a quarter.
func TestAgentClientsSearchKept(t *testing.T) {
	bin := rowkitBin(t)
	ws := keptRoot(t)
	want := rgRows(t, ws, "needle")
	for _, c := range []agentClient{codexClient(), codexModelClient("gpt-4.1"), claudeClient()} {
		name := c.name
		if c.find == nil {
			name += "-gpt-4.1"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var calls []string
			var refs []string
			step := func(r *agenttest.Request) agenttest.Turn {
				id := "kept-" + strconv.Itoa(len(calls))
				if len(calls) == 0 {
					calls = append(calls, id)
					return agenttest.Turn{Items: []agenttest.Item{c.mcp(id, "search", map[string]any{"pattern": "needle"})}}
				}
				o, ok := r.Output(calls[len(calls)-1])
				if !ok || len(calls) > 60 {
					return agenttest.Turn{Items: []agenttest.Item{agenttest.Message{Text: "lost"}}}
				}
				body := o.Body()
				ref, offset := "", ""
				if len(calls) == 1 {
					if m := keptNoteIn.FindStringSubmatch(body); m != nil {
						ref, offset = m[1], m[2]
						refs = append(refs, ref)
					}
				} else if m := keptContinueRE.FindStringSubmatch(strings.TrimRight(body, "\n") + "\n"); m != nil {
					ref, offset = m[1], m[4]
				}
				if ref == "" {
					return agenttest.Turn{Items: []agenttest.Item{agenttest.Message{Text: "finished"}}}
				}
				n, _ := strconv.Atoi(offset)
				calls = append(calls, id)
				return agenttest.Turn{Items: []agenttest.Item{c.mcp(id, "read_file", map[string]any{"path": ref, "offset": n})}}
			}
			var steps []agenttest.Step
			if len(c.find) > 0 {
				steps = append(steps, agenttest.Reply(c.find[0]))
			}
			s := agenttest.NewServer(steps...)
			s.Final = step
			defer s.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			run, err := c.run(ctx, s, ws, t.TempDir(), agenttest.MCPServer{Command: bin, Args: []string{"mcp", "--root", ws}})
			if err != nil {
				t.Fatal(err)
			}
			if run.Exit != 0 || !strings.Contains(string(run.Stdout), "finished") {
				t.Fatalf("exit %d\nstdout %s\nstderr %.2000s", run.Exit, run.Stdout, run.Stderr)
			}
			if len(calls) < 2 {
				t.Fatalf("the search named no kept rows to read on")
			}
			var all []string
			for i, id := range calls {
				o, _ := s.Output(id)
				for _, m := range cutMarkers {
					if strings.Contains(o.Text, m) {
						t.Errorf("%s: the client cut the output (%q)", id, m)
					}
				}
				body := strings.TrimRight(o.Body(), "\n") + "\n"
				if i == 0 {
					body = ungroup(t, body)
					body = body[:len(body)-len(keptNoteIn.FindString(body))] + "\n"
				} else if m := keptContinueRE.FindString(body); m != "" {
					body = body[:len(body)-len(m)] + "\n"
				}
				for _, l := range strings.Split(body, "\n") {
					if l != "" {
						all = append(all, l)
					}
				}
			}
			if got := slices.Sorted(slices.Values(all)); !slices.Equal(got, want) {
				t.Fatalf("%d calls handed back %d rows; ripgrep finds %d (%s)", len(calls), len(got), len(want), firstDiff(got, want))
			}
			t.Logf("%s: %d rows in a search and %d reads of %s", name, len(all), len(calls)-1, refs[0])
		})
	}
}
