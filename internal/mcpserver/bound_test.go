package mcpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/agenttest"
	"github.com/rowkit/rowkit/internal/review"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/tokens"
)

// TestClientBytes: each client's bound is under what the client was
// measured to pass whole (internal/agenttest's figures), within a margin
// that leaves most of it to the model.
func TestClientBytes(t *testing.T) {
	for _, tc := range []struct {
		p     peer
		whole int // what the client passes whole, in bytes (or characters)
	}{
		{peer{codexName, "0.169.0", "gpt-5.5-codex"}, agenttest.CodexResultBytes},
		{peer{codexName, "0.169.0", "gpt-5.5"}, agenttest.CodexResultBytes},
		{peer{codexName, "0.169.0", "gpt-5.5-mini"}, agenttest.CodexResultBytes},
		{peer{codexName, "0.169.0", "gpt-6.1-sol"}, agenttest.CodexResultBytes},
		{peer{codexName, "0.169.0", "gpt-4.1"}, agenttest.CodexFallbackResultBytes},
		{peer{codexName, "0.169.0", "gpt-5.2-codex"}, agenttest.CodexFallbackResultBytes},
		{peer{codexName, "0.169.0", "gpt-6-foo"}, agenttest.CodexFallbackResultBytes},
		{peer{codexName, "0.170.0", ""}, agenttest.CodexFallbackResultBytes},
		{peer{claudeName, "2.1.328", ""}, ClaudeMaxResultChars},
		{peer{claudeName, "2.1.400", ""}, ClaudeMaxResultChars},
		{peer{claudeName, "2.2.0", ""}, ClaudeMaxResultChars},
		{peer{claudeName, "3.0.0-beta", ""}, ClaudeMaxResultChars},
		{peer{claudeName, "2.1.327", ""}, agenttest.ClaudeResultChars},
		{peer{claudeName, "1.9.999", ""}, agenttest.ClaudeResultChars},
		{peer{claudeName, "next", ""}, agenttest.ClaudeResultChars},
		{peer{"cursor-vscode", "1.0.0", ""}, min(agenttest.CodexResultBytes, agenttest.ClaudeResultChars)},
		{peer{}, min(agenttest.CodexResultBytes, agenttest.ClaudeResultChars)},
	} {
		got := clientBytes(tc.p)
		if got >= tc.whole || got < tc.whole*95/100 {
			t.Errorf("%+v: bound %d; the client passes %d whole", tc.p, got, tc.whole)
		}
	}
	if ClaudeMaxResultChars > agenttest.ClaudeDeclaredChars {
		t.Errorf("the declared %d characters are more than Claude Code was measured to honour (%d)", ClaudeMaxResultChars, agenttest.ClaudeDeclaredChars)
	}
}

// boundClient is a client of a bound test: who it says it is, and the
// model Codex would name in each call.
type boundClient struct {
	name, version, model string
	bound                int
}

var boundClients = []boundClient{
	{codexName, "0.169.0", "gpt-4.1", codexFallbackBytes},
	{codexName, "0.169.0", "gpt-5.5-codex", codexResultBytes},
	{claudeName, "2.1.328", "", claudeDeclaredBytes},
	{"test", "1", "", defaultResultBytes},
}

func connectAs(t testing.TB, s *Server, name, version string) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: version}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

func callAs(t testing.TB, cs *mcp.ClientSession, c boundClient, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	p := &mcp.CallToolParams{Name: tool, Arguments: args}
	if c.model != "" {
		p.Meta = mcp.Meta{"x-codex-turn-metadata": map[string]any{"model": c.model}}
	}
	res, err := cs.CallTool(context.Background(), p)
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	return res
}

// shown is what an agent client shows its model of res: the JSON of its
// structuredContent when it has one, else its text.
func shown(t testing.TB, res *mcp.CallToolResult) string {
	if res.StructuredContent == nil {
		return text(res)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res.StructuredContent); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// boundRoot holds files larger than every client's bound: a 5,000-line Go
// file of 90-byte lines (440 KB) and a repository with 600 changed paths.
func boundRoot(t testing.TB) (root string, lines []string) {
	root = canon(t, t.TempDir())
	var b strings.Builder
	b.WriteString("package big\n")
	for i := 2; i <= 5000; i++ {
		fmt.Fprintf(&b, "func F%04d(x int) int { return x * %d } // the function with the number %04d\n", i, i, i)
	}
	write(t, filepath.Join(root, "big.go"), b.String())
	return root, strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

// row is line n (one-based) of lines as a verified row, computed here.
func row(lines []string, n int) string {
	h := sha256.Sum256([]byte(lines[n-1]))
	return fmt.Sprintf("%d:%s %s", n, hex.EncodeToString(h[:2]), lines[n-1])
}

var continueRE = regexp.MustCompile(`\n\n\[read:continue\] [^\n]*read offset ([0-9]+)\n$`)

// TestReadFileWithinClientBound: every view of a file larger than the
// client's bound fits the bound, rows and notes together; it ends at a
// whole row and its continuation; followed, the continuations read every
// row of the file exactly once, to the end.
func TestReadFileWithinClientBound(t *testing.T) {
	root, lines := boundRoot(t)
	for _, structured := range []bool{false, true} {
		s := newTextServer(t, Options{Roots: []string{root}, Structured: structured})
		for _, c := range boundClients {
			cs := connectAs(t, s, c.name, c.version)
			next, views := 1, 0
			for next <= len(lines) {
				res := callAs(t, cs, c, "read_file", map[string]any{"path": "big.go", "offset": next})
				views++
				size := len(shown(t, res))
				if size > c.bound {
					t.Fatalf("%s %s structured=%v: the view at %d is %d bytes, over %d", c.name, c.model, structured, next, size, c.bound)
				}
				body := text(res)
				m := continueRE.FindStringSubmatch(body)
				rowsPart := body
				if m != nil {
					rowsPart = body[:len(body)-len(m[0])+1]
				} else if i := strings.Index(body, "\n\n"); i >= 0 {
					rowsPart = body[:i+1]
				}
				got := strings.Split(strings.TrimSuffix(rowsPart, "\n"), "\n")
				for i, r := range got {
					if r != row(lines, next+i) {
						t.Fatalf("%s: view at %d, row %d is %q, want %q", c.name, next, i, r, row(lines, next+i))
					}
				}
				next += len(got)
				if m == nil {
					break
				}
				if m[1] != fmt.Sprint(next) {
					t.Fatalf("%s: the continuation reads on at %s after row %d", c.name, m[1], next-1)
				}
				// As large as fits: the bound or the token rule stopped
				// it, not a guess at the room the notes take.
				if tok := tokens.Count(rowsPart); size < c.bound-1024 && tok < rows.TokenLimit-100 {
					t.Errorf("%s %s structured=%v: the view at %d is %d bytes and %d tokens; more rows fit", c.name, c.model, structured, next, size, tok)
				}
			}
			if next != len(lines)+1 {
				t.Errorf("%s: the views ended at row %d of %d", c.name, next-1, len(lines))
			}
			t.Logf("%s %s structured=%v: %d views", c.name, c.model, structured, views)
		}
	}
}

// TestSearchWithinClientBound: a search matching every row stops within
// the bound, at a whole row, and says the byte bound stopped it.
func TestSearchWithinClientBound(t *testing.T) {
	root, lines := boundRoot(t)
	for _, structured := range []bool{false, true} {
		s := newTextServer(t, Options{Roots: []string{root}, Structured: structured})
		for _, c := range boundClients {
			cs := connectAs(t, s, c.name, c.version)
			res := callAs(t, cs, c, "search", map[string]any{"pattern": "func F", "paths": []string{"big.go"}})
			if got := len(shown(t, res)); got > c.bound {
				t.Errorf("%s structured=%v: %d bytes, over %d", c.name, structured, got, c.bound)
			}
			body := text(res)
			if !strings.HasPrefix(body, "big.go\n") {
				t.Fatalf("%s structured=%v: the search starts %q, not with its file's heading", c.name, structured, body[:min(len(body), 100)])
			}
			body = ungroup(t, body)
			// The rows left out are kept: the note names the read_file
			// call that reads them on from the first one left out.
			m := keptNoteRE.FindStringSubmatch(body)
			if m == nil {
				t.Fatalf("%s structured=%v: the search ends %q", c.name, structured, tail(body, 200))
			}
			byBytes := m[1] == thousands(c.bound)+"-byte output"
			if !byBytes && m[1] != "15,000-token" {
				t.Errorf("%s structured=%v: stopped by the %s limit", c.name, structured, m[1])
			}
			rowsPart := body[:len(body)-len(m[0])]
			got := strings.Split(rowsPart, "\n")
			if m[3] != fmt.Sprint(len(got)+1) {
				t.Errorf("%s structured=%v: %d rows shown, the continuation reads on at %s", c.name, structured, len(got), m[3])
			}
			for i, r := range got {
				if r != `"big.go":`+row(lines, i+2) {
					t.Fatalf("%s: row %d is %q", c.name, i, r)
				}
			}
			// The bound that stopped it is the one reached.
			if tok := tokens.Count(rowsPart + "\n"); byBytes && tok >= rows.TokenLimit || !byBytes && tok < rows.TokenLimit {
				t.Errorf("%s structured=%v: %d tokens of rows, stopped by bytes: %v", c.name, structured, tok, byBytes)
			}
			if size := len(shown(t, res)); byBytes && size < c.bound-1024 {
				t.Errorf("%s structured=%v: stopped by the bound at %d bytes of %d", c.name, structured, size, c.bound)
			}
		}
	}
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestInspectFileWithinClientBound: an outline larger than the bound keeps
// its longest prefix that fits and says after how many entries it was cut.
func TestInspectFileWithinClientBound(t *testing.T) {
	root, _ := boundRoot(t)
	for _, structured := range []bool{false, true} {
		s := newTextServer(t, Options{Roots: []string{root}, Structured: structured})
		for _, c := range boundClients {
			cs := connectAs(t, s, c.name, c.version)
			res := callAs(t, cs, c, "inspect_file", map[string]any{"path": "big.go"})
			out := shown(t, res)
			if len(out) > c.bound || res.IsError {
				t.Errorf("%s structured=%v: %d bytes, over %d (error %v)", c.name, structured, len(out), c.bound, res.IsError)
			}
			head, _, _ := strings.Cut(text(res), "\n")
			entries := strings.Count(text(res), "\n") - 1
			if want := fmt.Sprintf(", outline truncated after %d entries", entries); !strings.HasSuffix(head, want) {
				t.Errorf("%s structured=%v: header %q, want it to end %q", c.name, structured, head, want)
			}
			if structured && structured2(t, res)["truncated"] != true {
				t.Errorf("%s: the outline's JSON is not marked truncated", c.name)
			}
			// As long as fits: the bound, or the engine's own 64 KiB
			// bound on its document, stopped it.
			cliOut, _ := cli(t, root, "inspect", "big.go")
			var doc struct {
				Truncation struct {
					AfterEntries int `json:"after_entries"`
				} `json:"truncation"`
			}
			json.Unmarshal(cliOut, &doc)
			if len(out) < c.bound-200 && entries != doc.Truncation.AfterEntries {
				t.Errorf("%s structured=%v: %d entries in %d bytes; the CLI's document holds %d", c.name, structured, entries, len(out), doc.Truncation.AfterEntries)
			}
		}
	}
}

func structured2(t testing.TB, res *mcp.CallToolResult) map[string]any { return structured(t, res) }

// TestEditWithinClientBound: the report of an edit of 1,000 rows lists
// the edits that fit the bound and says how many it left out.
func TestEditWithinClientBound(t *testing.T) {
	for _, structured := range []bool{false, true} {
		for _, c := range boundClients {
			root, lines := boundRoot(t)
			var script strings.Builder
			script.WriteString("in big.go\n")
			for n := 2; n <= 2000; n += 2 {
				ref, _, _ := strings.Cut(row(lines, n), " ")
				fmt.Fprintf(&script, "type %s %q\n", ref, lines[n-1]+" // edited")
			}
			s := newTextServer(t, Options{Roots: []string{root}, Structured: structured})
			cs := connectAs(t, s, c.name, c.version)
			res := callAs(t, cs, c, "edit", map[string]any{"script": script.String()})
			if res.IsError {
				t.Fatalf("%s: %s", c.name, text(res))
			}
			if got := len(shown(t, res)); got > c.bound {
				t.Errorf("%s structured=%v: %d bytes, over %d", c.name, structured, got, c.bound)
			}
			if !regexp.MustCompile(`\n[0-9]+ more edits left out: output incomplete: [0-9,]+-(byte output|token) limit reached\n$`).MatchString(text(res)) {
				t.Errorf("%s structured=%v: the report ends %q", c.name, structured, tail(text(res), 120))
			}
			if structured && structured2(t, res)["truncated"] == nil {
				t.Errorf("%s: the structured report does not say what it left out", c.name)
			}
			b, _ := os.ReadFile(filepath.Join(root, "big.go"))
			if strings.Count(string(b), " // edited\n") != 1000 {
				t.Errorf("%s: the edit did not apply", c.name)
			}
		}
	}
}

// TestReviewWithinClientBound: a repository report larger than the bound
// keeps the longest lists that fit; its counts stay true and its
// truncation says what each list lost.
func TestReviewWithinClientBound(t *testing.T) {
	root := canon(t, t.TempDir())
	repo := filepath.Join(root, "repo")
	newRepo(t, repo)
	for i := 0; i < 300; i++ {
		write(t, filepath.Join(repo, "untracked", fmt.Sprintf("a-rather-long-directory-name-%03d", i), "and-a-long-file-name.txt"), "x\n")
		write(t, filepath.Join(repo, fmt.Sprintf("staged-%03d.txt", i)), "x\n")
	}
	gitT(t, repo, "add", "staged-*")
	s := newTextServer(t, Options{Roots: []string{root}})
	for _, c := range boundClients {
		cs := connectAs(t, s, c.name, c.version)
		for _, detail := range []string{"summary", "full"} {
			res := callAs(t, cs, c, "inspect_repository", map[string]any{"repo_path": "repo", "detail": detail})
			out := shown(t, res)
			if len(out) > c.bound || res.IsError {
				t.Errorf("%s %s: %d bytes, over %d (error %v)", c.name, detail, len(out), c.bound, res.IsError)
			}
			var rep review.Report
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%s %s: %v", c.name, detail, err)
			}
			if rep.Changes.Counts.Files != 604 || rep.Changes.Counts.Untracked != 301 {
				t.Errorf("%s %s: counts %+v", c.name, detail, rep.Changes.Counts)
			}
			removed := map[string]int{}
			for _, f := range rep.Truncation.Fields {
				removed[f.Field] = f.ItemsRemoved
			}
			if !rep.Truncation.Applied || len(rep.Changes.Files)+removed["changes.files"] != 604 {
				t.Errorf("%s %s: %d files listed, truncation %+v", c.name, detail, len(rep.Changes.Files), rep.Truncation)
			}
			if detail == "full" && len(rep.Changes.Untracked)+removed["changes.untracked"] != 301 {
				t.Errorf("%s %s: %d untracked listed, truncation %+v", c.name, detail, len(rep.Changes.Untracked), rep.Truncation)
			}
		}
	}
}

// TestOperatorBound: rowkit mcp --max-output bounds every result whatever
// the client; NoOutputBound leaves the token rule alone.
func TestOperatorBound(t *testing.T) {
	root, _ := boundRoot(t)
	claude := boundClients[2]
	for _, tc := range []struct {
		bytes, max, min int
	}{
		{5000, 5000, 4000},
		{NoOutputBound, 70_000, 40_000},
	} {
		s := newTextServer(t, Options{Roots: []string{root}, OutputBytes: tc.bytes})
		cs := connectAs(t, s, claude.name, claude.version)
		got := len(text(callAs(t, cs, claude, "read_file", map[string]any{"path": "big.go"})))
		if got > tc.max || got < tc.min {
			t.Errorf("--max-output %d: a view of %d bytes", tc.bytes, got)
		}
	}
}

// TestToolsDeclareResultSize: every tool tells Claude Code the size of
// result it may pass whole.
func TestToolsDeclareResultSize(t *testing.T) {
	cs := connect(t, newTextServer(t, Options{Roots: []string{t.TempDir()}, Config: allowConfig(t, map[string][]string{"ok": {"true"}})}), nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if v, ok := tool.Meta["anthropic/maxResultSizeChars"].(float64); !ok || int(v) != ClaudeMaxResultChars {
			t.Errorf("%s: _meta %v", tool.Name, tool.Meta)
		}
	}
	if len(res.Tools) != 7 {
		t.Errorf("%d tools", len(res.Tools))
	}
}
