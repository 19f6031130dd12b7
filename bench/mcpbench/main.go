// Command mcpbench measures rowkit mcp from a real MCP client (the Go SDK
// over stdio, a subprocess like any client's): round-trip latency per tool
// against the same work through the CLI, resident memory after many calls,
// and the token cost of inspect_file's text against the file's verified
// rows on whole corpora. bench/mcp.sh runs it; see bench/README.md.
//
//	mcpbench latency -bin ROWKIT -dir DIR -file F -repo R [-tree DIR] [-n 200] [-json OUT]
//	mcpbench rss -bin ROWKIT -dir DIR -file F [-n 10000]
//	mcpbench tokens DIR...
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/inspect"
	"github.com/rowkit/rowkit/internal/lang"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/workspace"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: mcpbench latency|rss|tokens ...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "latency":
		err = latency(os.Args[2:])
	case "rss":
		err = rss(os.Args[2:])
	case "tokens":
		err = tokens(os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpbench:", err)
		os.Exit(1)
	}
}

type common struct {
	bin, dir, file, repo string
	tree                 string // a second root, searched whole
	json                 string // where latency writes each work and its CLI figures
	n                    int
}

func flags(args []string, n int) (*common, error) {
	c := &common{}
	fs := flag.NewFlagSet("mcpbench", flag.ContinueOnError)
	fs.StringVar(&c.bin, "bin", "", "the rowkit binary")
	fs.StringVar(&c.dir, "dir", "", "the root served")
	fs.StringVar(&c.file, "file", "", "the file read and outlined, relative to dir")
	fs.StringVar(&c.repo, "repo", "", "the repository inspected, relative to dir")
	fs.StringVar(&c.tree, "tree", "", "a source tree served as a second root and searched whole (the Go tree)")
	fs.StringVar(&c.json, "json", "", "latency: write each work with its CLI p50/p99 here, for the TypeScript client")
	fs.IntVar(&c.n, "n", n, "calls per tool")
	return c, fs.Parse(args)
}

// session starts rowkit mcp as a subprocess and connects the Go SDK client.
func session(c *common) (*mcp.ClientSession, *exec.Cmd, error) {
	args := []string{"mcp", "--root", c.dir}
	if c.tree != "" {
		args = append(args, "--root", c.tree)
	}
	cmd := exec.Command(c.bin, args...)
	cmd.Dir = c.dir
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpbench", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	return cs, cmd, err
}

type work struct {
	name string // the row's name
	tool string
	args map[string]any
	cli  []string
}

func (c *common) works() []work {
	dirOfFile := filepath.Dir(c.file)
	ws := []work{
		{"read_file", "read_file", map[string]any{"path": c.file}, []string{"read", c.file}},
		{"inspect_file", "inspect_file", map[string]any{"path": c.file}, []string{"inspect", c.file}},
		{"search", "search", map[string]any{"pattern": "func [A-Z]", "paths": []string{dirOfFile}}, []string{"grep", "func [A-Z]", dirOfFile}},
		{"inspect_repository", "inspect_repository", map[string]any{"repo_path": c.repo}, []string{"review", "--repo", c.repo, "--format", "json", "--detail", "summary", "--max-files", "50", "--max-output-bytes", "4096"}},
	}
	if c.tree != "" {
		// The whole Go tree: a rare pattern (13 rows) and a common one
		// (26 KB of rows, every one counted), against hgrep as a process.
		for _, p := range []struct{ name, pattern string }{{"search_tree_rare", `func \(\w+ \*Reader\) Read\b`}, {"search_tree_deprecated", "Deprecated:"}} {
			ws = append(ws, work{p.name, "search", map[string]any{"pattern": p.pattern, "paths": []string{c.tree}}, []string{"grep", p.pattern, c.tree}})
		}
	}
	return ws
}

// jsonWork is a work as latency writes it for the TypeScript client.
type jsonWork struct {
	Name   string         `json:"name"`
	Tool   string         `json:"tool"`
	Args   map[string]any `json:"args"`
	CLIP50 float64        `json:"cli_p50_ms"`
	CLIP99 float64        `json:"cli_p99_ms"`
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(p*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

func ms(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) }

func latency(args []string) error {
	c, err := flags(args, 200)
	if err != nil {
		return err
	}
	cs, _, err := session(c)
	if err != nil {
		return err
	}
	defer cs.Close()
	fmt.Printf("%-24s %10s %10s %10s %10s %8s\n", "tool (Go client)", "mcp_p50", "mcp_p99", "cli_p50", "cli_p99", "p50_x")
	var out []jsonWork
	for _, w := range c.works() {
		var mcpT, cliT []time.Duration
		for i := 0; i < c.n+5; i++ {
			t0 := time.Now()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: w.tool, Arguments: w.args})
			d := time.Since(t0)
			if err != nil {
				return fmt.Errorf("%s: %v", w.name, err)
			}
			if res.IsError {
				return fmt.Errorf("%s: tool error %v", w.name, res.Content)
			}
			if i >= 5 { // the first calls warm caches on both sides
				mcpT = append(mcpT, d)
			}
		}
		for i := 0; i < c.n; i++ {
			cmd := exec.Command(c.bin, w.cli...)
			cmd.Dir = c.dir
			t0 := time.Now()
			cmd.Run() // exit 1 (an incomplete or failed result) is still the same work
			cliT = append(cliT, time.Since(t0))
		}
		m50, c50, c99 := percentile(mcpT, 0.5), percentile(cliT, 0.5), percentile(cliT, 0.99)
		fmt.Printf("%-24s %10s %10s %10s %10s %8.2f\n", w.name, ms(m50), ms(percentile(mcpT, 0.99)), ms(c50), ms(c99), float64(m50)/float64(c50))
		out = append(out, jsonWork{w.name, w.tool, w.args, float64(c50) / 1e6, float64(c99) / 1e6})
	}
	if c.json != "" {
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		return os.WriteFile(c.json, b, 0o644)
	}
	return nil
}

func rss(args []string) error {
	c, err := flags(args, 10000)
	if err != nil {
		return err
	}
	cs, cmd, err := session(c)
	if err != nil {
		return err
	}
	defer cs.Close()
	works := c.works()[:3] // the file tools; a review spawns git, which is not the server's memory
	t0 := time.Now()
	for i := 0; i < c.n; i++ {
		w := works[i%len(works)]
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: w.tool, Arguments: w.args}); err != nil {
			return fmt.Errorf("call %d (%s): %v", i, w.name, err)
		}
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		return err
	}
	var rssKB, hwmKB string
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			rssKB = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB"))
		}
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			hwmKB = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB"))
		}
	}
	fmt.Printf("after %d calls (read_file, inspect_file, search in turn, %.1f s): VmRSS %s KB, peak VmHWM %s KB\n", c.n, time.Since(t0).Seconds(), rssKB, hwmKB)
	return nil
}

// tokens compares, over every file inspect_file outlines under each
// directory, the o200k_base tokens of the model-facing outline (the compact
// text, and for reference the JSON envelope) with the tokens of the file's
// verified rows as hread prints them.
func tokens(dirs []string) error {
	fmt.Printf("%-44s %7s %12s %10s %7s %10s %7s\n", "corpus", "files", "rows_tokens", "text_tok", "text%", "json_tok", "json%")
	for _, dir := range dirs {
		root, err := workspace.Open(dir)
		if err != nil {
			return err
		}
		var files, rowsTok, textTok, jsonTok int
		type acc struct{ files, rows, text, json int }
		byKind := map[string]*acc{}
		err = filepath.WalkDir(root.Dir(), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() && (d.Name() == "site-packages" || d.Name() == "dist-packages") {
				// Third-party packages installed beside the standard
				// library are not part of it.
				return filepath.SkipDir
			}
			if err != nil || d.IsDir() || lang.Lookup(d.Name()) == nil || !d.Type().IsRegular() {
				return nil
			}
			rel := p[len(root.Dir())+1:]
			res, err := inspect.Inspect(context.Background(), root, rel)
			if err != nil {
				return nil // not UTF-8, too large: not an outline a model would see
			}
			src, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			var printed []byte
			line := 0
			if err := rows.Lines(src, func(start, n int) {
				line++
				printed = rows.AppendRow(printed, line, src[start:start+n])
			}); err != nil {
				return nil
			}
			r, x, j := rows.CountTokens(string(printed)), rows.CountTokens(inspect.OutlineText(res)), rows.CountTokens(string(res.AppendJSON(nil)))
			files++
			rowsTok, textTok, jsonTok = rowsTok+r, textTok+x, jsonTok+j
			k := byKind[res.Data.Kind]
			if k == nil {
				k = &acc{}
				byKind[res.Data.Kind] = k
			}
			k.files, k.rows, k.text, k.json = k.files+1, k.rows+r, k.text+x, k.json+j
			return nil
		})
		if err != nil {
			return err
		}
		fmt.Printf("%-44s %7d %12d %10d %6.2f%% %10d %6.2f%%\n", dir, files, rowsTok, textTok, pct(textTok, rowsTok), jsonTok, pct(jsonTok, rowsTok))
		for _, kind := range []string{inspect.KindCode, inspect.KindMarkdown, inspect.KindJSON} {
			if k := byKind[kind]; k != nil {
				fmt.Printf("  %-42s %7d %12d %10d %6.2f%% %10d %6.2f%%\n", "kind "+kind, k.files, k.rows, k.text, pct(k.text, k.rows), k.json, pct(k.json, k.rows))
			}
		}
	}
	return nil
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}
