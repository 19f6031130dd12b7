package mcpserver

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/agenttest"
	"github.com/rowkit/rowkit/internal/tokens"
)

// channelCases are the requests of issue 18's figures, on the Go tree
// (and argparse.py of the Python standard library, given as PYFILE); a
// case with a cmd runs it in the client's shell instead.
var channelCases = []struct {
	name, tool string
	args       map[string]any
	cmd        string
}{
	{"read_argparse.py", "read_file", map[string]any{"path": "PYFILE"}, ""},
	{"hread_argparse.py", "", nil, "hread PYFILE"},
	{"hread_server.go", "", nil, "hread net/http/server.go"},
	{"read_server.go", "read_file", map[string]any{"path": "net/http/server.go"}, ""},
	{"read_server.go_limit200", "read_file", map[string]any{"path": "net/http/server.go", "limit": 200}, ""},
	{"outline_server.go", "inspect_file", map[string]any{"path": "net/http/server.go"}, ""},
	{"outline_ast.go", "inspect_file", map[string]any{"path": "go/ast/ast.go"}, ""},
	{"search_Deprecated_net", "search", map[string]any{"pattern": "Deprecated:", "paths": []string{"net"}}, ""},
	{"refused_etc_passwd", "read_file", map[string]any{"path": "../etc/passwd"}, ""},
	{"missing_file", "read_file", map[string]any{"path": "net/http/missing.go"}, ""},
}

// BenchmarkModelChannel measures what each client hands its model for
// the requests of channelCases, served from $(go env GOROOT)/src by
// rowkit mcp with and without --structured: the o200k tokens of the
// tool's text content (text_tok, the baseline, from the same server
// in-process, told the same client: the same bound), or of the shell
// name's stdout and stderr under the variables the client's shell sets,
// of what the model received, the client's wrapper included (model_tok),
// their ratio (x), and whether the client cut it (cut: a truncation
// marker or a saved-file preview). One client run per client and mode
// serves every case; run it with -benchtime 1x (bench/clients.sh).
func BenchmarkModelChannel(b *testing.B) {
	bin := rowkitBin(b)
	src := goroot(b) + "/src"
	out, err := exec.Command("python3", "-c", "import argparse; print(argparse.__file__)").Output()
	if err != nil {
		b.Fatalf("python3: %v", err)
	}
	pyFile := strings.TrimSpace(string(out))
	pyDir := filepath.Dir(pyFile)
	args := func(a map[string]any) map[string]any {
		if a["path"] == "PYFILE" {
			return map[string]any{"path": pyFile}
		}
		return a
	}
	linkDir := b.TempDir()
	// The real binary links its own path (in-process, it would be this
	// test binary's).
	if out, err := exec.Command(bin, "link", linkDir).CombinedOutput(); err != nil {
		b.Fatalf("rowkit link: %v\n%s", err, out)
	}
	for i, k := range channelCases {
		channelCases[i].cmd = strings.ReplaceAll(k.cmd, "PYFILE", pyFile)
	}
	// texts are rowkit's own answers for a client: its server told the
	// client (and Codex's model), its shell names run with the variable
	// the client's shell sets.
	answers := func(b *testing.B, name, version, model, shellEnv string) map[string]string {
		out := map[string]string{}
		cs := connectAs(b, newTextServer(b, Options{Roots: []string{src, pyDir}}), name, version)
		for _, k := range channelCases {
			if k.cmd == "" {
				out[k.name] = text(callAs(b, cs, boundClient{name: name, version: version, model: model}, k.tool, args(k.args)))
				continue
			}
			cmd := exec.Command(bin, append([]string{"hread"}, strings.Fields(k.cmd)[1:]...)...)
			cmd.Dir = src
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), shellEnv}
			b, _ := cmd.CombinedOutput()
			out[k.name] = string(b)
		}
		return out
	}
	for _, c := range []agentClient{codexClient(), claudeClient()} {
		texts := answers(b, codexName, "0.169.0", "gpt-5.5-codex", "CODEX_THREAD_ID=1")
		if c.name == "claude" {
			texts = answers(b, claudeName, "2.1.328", "", "CLAUDECODE=1")
		}
		for _, mode := range []string{"structured", "text"} {
			var once sync.Once
			var s *agenttest.Server
			session := func(b *testing.B) {
				server := []string{"mcp", "--root", src, "--root", pyDir}
				if mode == "structured" {
					server = append(server, "--structured")
				}
				var items []agenttest.Item
				for _, k := range channelCases {
					if k.cmd != "" {
						items = append(items, c.shell(k.name, k.cmd))
					} else {
						items = append(items, c.mcp(k.name, k.tool, args(k.args)))
					}
				}
				s = agenttest.NewServer(agenttest.Reply(c.find[0]), agenttest.Reply(items...))
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				defer cancel()
				run, err := c.run(ctx, s, src, linkDir, agenttest.MCPServer{Command: bin, Args: server})
				if err != nil || run.Exit != 0 {
					b.Fatalf("%s: %v, exit %d\n%s", c.name, err, run.Exit, run.Stderr)
				}
			}
			for _, k := range channelCases {
				b.Run(c.name+"/"+mode+"/"+k.name, func(b *testing.B) {
					once.Do(func() { session(b) })
					for i := 0; i < b.N; i++ {
					}
					o, ok := s.Output(k.name)
					if !ok {
						b.Fatalf("no output of %s reached the model", k.name)
					}
					cut := 0.0
					for _, m := range cutMarkers {
						if strings.Contains(o.Text, m) {
							cut = 1
						}
					}
					tt, mt := tokens.Count(texts[k.name]), tokens.Count(o.Text)
					// (A structured view holds fewer rows: its JSON fits
					// the client's bound.)
					if cut == 0 && mode == "text" && mt < tt*95/100 {
						b.Errorf("%s: the model got %d of %d tokens and no cut marker:\n%.300s", k.name, mt, tt, o.Text)
					}
					b.ReportMetric(float64(tt), "text_tok")
					b.ReportMetric(float64(mt), "model_tok")
					b.ReportMetric(float64(mt)/float64(tt), "x")
					b.ReportMetric(float64(len(o.Text)), "model_bytes")
					b.ReportMetric(cut, "cut")
				})
			}
		}
	}
}
