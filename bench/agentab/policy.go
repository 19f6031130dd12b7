package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rowkit/rowkit/internal/agenttest"
)

// Config is one of the four ways a client works on a task.
type Config string

const (
	CodexRouter Config = "codex-router" // Codex through rowkit router: hpatch and shell
	CodexPlain  Config = "codex-plain"  // Codex with its own exec_command and apply_patch
	ClaudeMCP   Config = "claude-mcp"   // Claude Code with rowkit mcp: search, read_file, inspect_file, edit
	ClaudePlain Config = "claude-plain" // Claude Code with its own Grep, Read, Edit, Bash
)

// Configs are the four, in the table's order.
var Configs = []Config{CodexRouter, CodexPlain, ClaudeMCP, ClaudePlain}

// Variants of Claude Code + rowkit mcp that load rowkit's tools without
// the ToolSearch turn (issue 26's research, not in the table): the
// server's entry with "alwaysLoad": true, or tool search turned off or
// left to its automatic threshold with ENABLE_TOOL_SEARCH.
const (
	ClaudeMCPAlwaysLoad   Config = "claude-mcp-alwaysload"
	ClaudeMCPNoToolSearch Config = "claude-mcp-notoolsearch"
	ClaudeMCPAutoSearch   Config = "claude-mcp-autosearch"
)

// base is the configuration whose calls c makes.
func (c Config) base() Config {
	if strings.HasPrefix(string(c), string(ClaudeMCP)) {
		return ClaudeMCP
	}
	return c
}

// mcpTools are the rowkit tools a Claude Code session loads with
// ToolSearch before its first call of one.
var mcpTools = []string{"mcp__rowkit__search", "mcp__rowkit__read_file", "mcp__rowkit__inspect_file", "mcp__rowkit__edit"}

// policy plays the model of one session: it renders the plan's turns
// into the configuration's calls as the client's requests come. A plan
// step that cannot be rendered against what the client handed back (an
// edit whose rows were not shown, old lines no longer in the file) stops
// the session: the model answers with the reason, and err keeps it.
type policy struct {
	cfg  Config
	tree string // the task tree, absolute
	// planPath is re-read when the plan has no turn left: in play mode
	// (pending set) the step waits for the plan to grow, having written
	// what the client handed back to pending.
	planPath string
	pending  string
	poll     time.Duration

	mu   sync.Mutex
	plan Plan
	next int // the next plan turn
	// queue holds the current plan turn's responses still to give: one
	// response a plan turn in every configuration, since each client
	// runs the calls of one response so that an edit is in place before
	// a command after it: Claude Code runs its edits and Bash one at a
	// time, in order; Codex runs apply_patch alone (it is not a parallel
	// tool) before the exec_command after it; rowkit's shell runs the
	// edit and the tests in one call.
	queue  [][]Step
	say    string // its text, said with its first response
	calls  map[string]Step
	loaded bool
	done   bool
	err    error
}

func newPolicy(cfg Config, tree, planPath, pending string) (*policy, error) {
	p := &policy{cfg: cfg.base(), tree: tree, planPath: planPath, pending: pending, poll: time.Second, calls: map[string]Step{}}
	var err error
	p.plan, err = LoadPlan(planPath)
	return p, err
}

// Err is the reason the plan stopped applying, nil when it did.
func (p *policy) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Step answers one model request.
func (p *policy) Step(r *agenttest.Request) agenttest.Turn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil || p.done {
		return agenttest.Turn{Items: []agenttest.Item{agenttest.Message{Text: "done."}}}
	}
	if p.cfg == ClaudeMCP && !p.loaded {
		p.loaded = true
		if _, ok := r.Tool(mcpTools[0]); !ok {
			// Deferred: the model loads the schemas first, as Claude
			// Code's prompt tells it to.
			return agenttest.Turn{Items: []agenttest.Item{agenttest.Call{ID: fmt.Sprintf("load-%d-0", r.Turn), Name: "ToolSearch",
				Args: map[string]any{"query": "select:" + strings.Join(mcpTools, ","), "max_results": len(mcpTools)}}}}
		}
	}
	if len(p.queue) == 0 {
		t, ok := p.nextTurn(r)
		if !ok {
			return p.fail(fmt.Errorf("the plan has no turn %d", p.next+1))
		}
		if len(t.Steps) == 0 {
			p.done = true
			return agenttest.Turn{Items: []agenttest.Item{agenttest.Message{Text: t.Say}}}
		}
		p.queue = [][]Step{t.Steps}
		p.say = t.Say
	}
	steps := p.queue[0]
	p.queue = p.queue[1:]
	var items []agenttest.Item
	if p.say != "" {
		items = append(items, agenttest.Message{Text: p.say})
		p.say = ""
	}
	calls, err := p.render(r, steps)
	if err != nil {
		return p.fail(err)
	}
	return agenttest.Turn{Items: append(items, calls...)}
}

func (p *policy) fail(err error) agenttest.Turn {
	p.err = fmt.Errorf("plan turn %d: %w", p.next, err)
	return agenttest.Turn{Items: []agenttest.Item{agenttest.Message{Text: "stopped: " + p.err.Error()}}}
}

// nextTurn takes the next plan turn, waiting for it in play mode.
func (p *policy) nextTurn(r *agenttest.Request) (PlanTurn, bool) {
	for p.next >= len(p.plan.Turns) {
		if p.pending == "" {
			return PlanTurn{}, false
		}
		if err := os.WriteFile(p.pending, []byte(p.handedBack(r)), 0o644); err != nil {
			p.err = err
			return PlanTurn{}, false
		}
		p.mu.Unlock()
		time.Sleep(p.poll)
		p.mu.Lock()
		plan, err := LoadPlan(p.planPath)
		if err != nil {
			fmt.Fprintf(os.Stderr, "agentab: %v (waiting for a good plan)\n", err)
			continue
		}
		p.plan = plan
	}
	t := p.plan.Turns[p.next]
	p.next++
	return t, true
}

// handedBack is what the client handed the model in r from the calls of
// the last response: what a person playing the model reads.
func (p *policy) handedBack(r *agenttest.Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "request %d (turn %d), plan turn %d next\n", r.Seq, r.Turn, p.next+1)
	if r.Turn == 0 {
		fmt.Fprintf(&b, "prompt: %s\n", r.Input())
	}
	outs := r.Outputs()
	seen := map[string]bool{}
	for _, o := range outs {
		seen[o.CallID] = false
	}
	// The outputs after the last user message are the new ones; show the
	// calls this policy made whose outputs are here, latest response's.
	last := -1
	for _, o := range outs {
		if _, ok := p.calls[o.CallID]; ok {
			if n := callTurn(o.CallID); n > last {
				last = n
			}
		}
	}
	for _, o := range outs {
		if callTurn(o.CallID) != last || seen[o.CallID] {
			continue
		}
		seen[o.CallID] = true
		fmt.Fprintf(&b, "\n=== %s (%s)\n%s\n", o.CallID, o.Kind, o.Text)
	}
	return b.String()
}

// callTurn is the request turn a call id KIND-TURN-I names.
func callTurn(id string) int {
	parts := strings.Split(id, "-")
	if len(parts) < 3 {
		return -1
	}
	n, err := strconv.Atoi(parts[len(parts)-2])
	if err != nil {
		return -1
	}
	return n
}

// render turns one response's steps into calls. Edits of one file
// become one edit (one script, one patch); in the router, edits followed
// by commands become one shell call.
func (p *policy) render(r *agenttest.Request, steps []Step) ([]agenttest.Item, error) {
	var items []agenttest.Item
	id := func(kind string) string {
		return fmt.Sprintf("%s-%d-%d", kind, r.Turn, len(items))
	}
	// Group edits by file, in the order of their first step.
	var files []string
	edits := map[string][]Step{}
	for _, s := range steps {
		if s.Kind() == "edit" {
			if edits[s.Edit] == nil {
				files = append(files, s.Edit)
			}
			edits[s.Edit] = append(edits[s.Edit], s)
		}
	}
	if p.cfg == ClaudePlain {
		// Edit replaces one string a call, and Claude Code runs the
		// calls of a response in order: one call per edit.
		for _, s := range steps {
			text := ""
			if s.Kind() == "edit" {
				var err error
				if text, err = p.editText(r, s.Edit, []Step{s}); err != nil {
					return nil, fmt.Errorf("edit %s: %w", s.Edit, err)
				}
			}
			cid := id(s.Kind())
			p.calls[cid] = s
			items = append(items, p.call(cid, s, text))
		}
		return items, nil
	}
	scripts := map[string]string{}
	for _, f := range files {
		var err error
		if scripts[f], err = p.editText(r, f, edits[f]); err != nil {
			return nil, fmt.Errorf("edit %s: %w", f, err)
		}
	}
	// In the router, edits followed by commands become one shell call, in
	// the place of the first edit: the scripts, then the commands.
	combined := ""
	if p.cfg == CodexRouter && len(files) > 0 {
		var runs []string
		for _, s := range steps {
			if s.Kind() == "run" {
				runs = append(runs, s.Run)
			}
		}
		if len(runs) > 0 {
			var b strings.Builder
			for _, f := range files {
				fmt.Fprintf(&b, "hpatch <<'HPATCH'\n%sHPATCH\n", scripts[f])
			}
			b.WriteString(strings.Join(runs, "\n"))
			combined = b.String()
		}
	}
	done := map[string]bool{}
	for _, s := range steps {
		if combined != "" && (s.Kind() == "edit" || s.Kind() == "run") {
			if s.Kind() == "edit" && !done[""] {
				done[""] = true
				cid := id("edit")
				p.calls[cid] = s
				items = append(items, agenttest.CustomCall{ID: cid, Name: "shell", Input: combined})
			}
			continue
		}
		if s.Kind() == "edit" {
			if done[s.Edit] {
				continue
			}
			done[s.Edit] = true
		}
		cid := id(s.Kind())
		p.calls[cid] = s
		items = append(items, p.call(cid, s, scripts[s.Edit]))
	}
	return items, nil
}

// call is one step as the configuration's tool call; script is an
// edit's text, from editText.
func (p *policy) call(id string, s Step, script string) agenttest.Item {
	abs := func(path string) string { return filepath.Join(p.tree, path) }
	switch p.cfg {
	case CodexPlain:
		switch s.Kind() {
		case "edit":
			return agenttest.CustomCall{ID: id, Name: "apply_patch", Input: script}
		default:
			args := map[string]any{"cmd": shellCommand(p.cfg, s)}
			if s.Kind() == "run" {
				// Tests can take longer than the default 10 s before the
				// call answers with a session to poll.
				args["yield_time_ms"] = 60000
			}
			return agenttest.Call{ID: id, Name: "exec_command", Args: args}
		}
	case CodexRouter:
		if s.Kind() == "edit" {
			return agenttest.CustomCall{ID: id, Name: "hpatch", Input: script}
		}
		return agenttest.CustomCall{ID: id, Name: "shell", Input: shellCommand(p.cfg, s)}
	case ClaudePlain:
		switch s.Kind() {
		case "search", "outline":
			// Claude Code 2.1.328 has no Grep tool ("search file contents
			// with grep via the Bash tool instead", it answers a call of
			// one): ripgrep in Bash, as in Codex.
			return agenttest.Call{ID: id, Name: "Bash", Args: map[string]any{"command": shellCommand(p.cfg, s), "description": "Search the code"}}
		case "read":
			return agenttest.Call{ID: id, Name: "Read", Args: s.window(map[string]any{"file_path": abs(s.Read)})}
		case "edit":
			// script is the JSON of the Edit calls' arguments, one per
			// line: Claude Code's Edit replaces one string a call.
			var args map[string]any
			json.Unmarshal([]byte(script), &args)
			return agenttest.Call{ID: id, Name: "Edit", Args: args}
		default:
			return agenttest.Call{ID: id, Name: "Bash", Args: map[string]any{"command": s.Run, "description": "Run the tests"}}
		}
	case ClaudeMCP:
		switch s.Kind() {
		case "search":
			args := map[string]any{"pattern": s.Search}
			if s.Path != "" {
				args["paths"] = []string{s.Path}
			}
			if s.Context > 0 {
				args["context"] = s.Context
			}
			if s.Glob != "" {
				args["glob"] = []string{s.Glob}
			}
			return agenttest.Call{ID: id, Name: "mcp__rowkit__search", Args: args}
		case "outline":
			return agenttest.Call{ID: id, Name: "mcp__rowkit__inspect_file", Args: map[string]any{"path": s.Outline}}
		case "read":
			return agenttest.Call{ID: id, Name: "mcp__rowkit__read_file", Args: s.window(map[string]any{"path": s.Read})}
		case "edit":
			return agenttest.Call{ID: id, Name: "mcp__rowkit__edit", Args: map[string]any{"script": script}}
		default:
			return agenttest.Call{ID: id, Name: "Bash", Args: map[string]any{"command": s.Run, "description": "Run the tests"}}
		}
	}
	panic("agentab: unknown configuration " + string(p.cfg))
}

// window adds a read's lines to args as Claude Code's Read and rowkit's
// read_file take them: offset, the first line, and limit, how many.
func (s Step) window(args map[string]any) map[string]any {
	if s.From > 0 {
		args["offset"] = s.From
	}
	if s.To > 0 {
		args["limit"] = s.To - max(s.From, 1) + 1
	}
	return args
}

// shellCommand is a step as a command line in a shell: ripgrep and sed
// for Codex's own shell, rowkit's commands in the router's.
func shellCommand(cfg Config, s Step) string {
	switch s.Kind() {
	case "search":
		args := []string{"rg", "-n"}
		if cfg == CodexRouter {
			args = []string{"hgrep"}
		}
		if s.Context > 0 {
			args = append(args, "-C", strconv.Itoa(s.Context))
		}
		if s.Glob != "" {
			args = append(args, "-g", quote(s.Glob))
		}
		args = append(args, "-e", quote(s.Search))
		if s.Path != "" {
			args = append(args, quote(s.Path))
		}
		return strings.Join(args, " ")
	case "outline":
		if cfg == CodexRouter {
			// As the router's guidance says: the outline as text, a line
			// per entry (the seed's JSON is the default).
			return "inspect_file --text " + quote(s.Outline)
		}
		return "rg -n -e " + quote(outlinePattern(s.Outline)) + " " + quote(s.Outline)
	case "read":
		if cfg == CodexRouter {
			switch {
			case s.From == 0 && s.To == 0:
				return "hread " + quote(s.Read)
			case s.To == 0:
				return fmt.Sprintf("hread %s %d:", quote(s.Read), s.From)
			default:
				return fmt.Sprintf("hread %s %d:%d", quote(s.Read), max(s.From, 1), s.To)
			}
		}
		switch {
		case s.From == 0 && s.To == 0:
			return "cat " + quote(s.Read)
		case s.To == 0:
			return fmt.Sprintf("sed -n '%d,$p' %s", s.From, quote(s.Read))
		default:
			return fmt.Sprintf("sed -n '%d,%dp' %s", max(s.From, 1), s.To, quote(s.Read))
		}
	}
	return s.Run
}

// outlinePattern finds a file's definitions with a search, where a
// configuration has no outline: top-level funcs and types in Go,
// classes and defs in Python.
func outlinePattern(path string) string {
	if strings.HasSuffix(path, ".py") {
		return `^\s*(class|def|async def) `
	}
	return `^(func|type) `
}

// quote is s quoted for bash when it needs it.
func quote(s string) string {
	if regexp.MustCompile(`^[A-Za-z0-9_./:=,+-]+$`).MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// editText renders the edits of one file: an HPATCH/2 script addressed
// by the rows the client handed back (rowkit configurations), an
// apply_patch envelope (Codex), or the JSON of Edit's arguments (Claude
// Code, one edit a call).
func (p *policy) editText(r *agenttest.Request, path string, edits []Step) (string, error) {
	data, err := os.ReadFile(filepath.Join(p.tree, path))
	if err != nil {
		return "", err
	}
	content := string(data)
	type hunk struct {
		first, last int
		s           Step
	}
	var hs []hunk
	for _, e := range edits {
		first, last, err := span(content, e.Old)
		if err != nil {
			return "", err
		}
		hs = append(hs, hunk{first, last, e})
	}
	sort.Slice(hs, func(i, j int) bool { return hs[i].first < hs[j].first })
	switch p.cfg {
	case ClaudePlain:
		args, _ := json.Marshal(map[string]any{"file_path": filepath.Join(p.tree, path),
			"old_string": strings.TrimSuffix(edits[0].Old, "\n"), "new_string": strings.TrimSuffix(edits[0].New, "\n")})
		return string(args), nil
	case CodexPlain:
		file := lines(content)
		var b strings.Builder
		fmt.Fprintf(&b, "*** Begin Patch\n*** Update File: %s\n", path)
		prevEnd := 0 // the last line already written, 1-based
		for i, h := range hs {
			if h.first <= prevEnd {
				return "", fmt.Errorf("edits overlap at line %d", h.first)
			}
			start := max(h.first-3, prevEnd+1)
			if i == 0 || start > prevEnd+1 {
				b.WriteString("@@\n")
			}
			for n := start; n < h.first; n++ {
				fmt.Fprintf(&b, " %s\n", file[n-1])
			}
			for _, l := range lines(h.s.Old) {
				fmt.Fprintf(&b, "-%s\n", l)
			}
			for _, l := range lines(h.s.New) {
				fmt.Fprintf(&b, "+%s\n", l)
			}
			end := min(h.last+3, len(file))
			if i+1 < len(hs) {
				end = min(end, hs[i+1].first-1)
			}
			for n := h.last + 1; n <= end; n++ {
				fmt.Fprintf(&b, " %s\n", file[n-1])
			}
			prevEnd = end
		}
		b.WriteString("*** End Patch\n")
		return b.String(), nil
	}
	// rowkit: every row of each replaced span must have been handed back.
	shown := p.rowsShown(r, path)
	file := lines(content)
	var b strings.Builder
	fmt.Fprintf(&b, "in %s\n", path)
	for _, h := range hs {
		for n := h.first; n <= h.last; n++ {
			row, ok := shown[n]
			if !ok {
				return "", fmt.Errorf("row %d of %s (%q) was not handed back by rowkit: the plan edits what the model has not seen", n, path, file[n-1])
			}
			if row.text != file[n-1] {
				return "", fmt.Errorf("row %d of %s was last handed back as %q, but the line is %q: the model's rows are stale", n, path, row.text, file[n-1])
			}
		}
		target := fmt.Sprintf("%d:%s", h.first, shown[h.first].hash)
		if h.last > h.first {
			target += fmt.Sprintf("..%d:%s", h.last, shown[h.last].hash)
		}
		nl := lines(h.s.New)
		if len(nl) == 0 {
			fmt.Fprintf(&b, "type %s \"\"\n", target)
			continue
		}
		for _, l := range nl {
			if l == "PATCH" {
				return "", fmt.Errorf("a new line is the heredoc's terminator PATCH")
			}
		}
		fmt.Fprintf(&b, "type %s <<PATCH\n%s\nPATCH\n", target, strings.Join(nl, "\n"))
	}
	return b.String(), nil
}

// row is a verified row as the client handed it back.
type row struct{ hash, text string }

// editHeading starts an edit report's rows: "command N OP:", or with the
// file's path when the script changed several files ("gofmt" for gofmt's).
var editHeading = regexp.MustCompile(`^(?:command \d+ \w+|gofmt)( "(?:[^"\\]|\\.)*")?:$`)

var rowLine = regexp.MustCompile(`^(?:"((?:[^"\\]|\\.)*)":)?(\d+):([0-9a-f]{4}) (.*)$`)

// rowsShown are the rows of path in the outputs r carries, the latest
// for each line: rows of hread and read_file (whose path is the call's),
// of hgrep (which names it on each row), of edit reports (the edit's path,
// or the one a report of several files names above an edit's rows) and of
// MCP search (which names it once, on a line above its rows). A line whose
// hash does not match its text (an outline entry) is not a row.
func (p *policy) rowsShown(r *agenttest.Request, path string) map[int]row {
	out := map[int]row{}
	for _, o := range r.Outputs() {
		s, ok := p.calls[o.CallID]
		if !ok || s.Kind() == "outline" {
			continue
		}
		def := s.Read
		if s.Kind() == "edit" {
			def = s.Edit
		}
		heading := "" // MCP search's: the path above a file's rows
		for _, l := range strings.Split(o.Body(), "\n") {
			m := rowLine.FindStringSubmatch(l)
			if m == nil {
				if h := editHeading.FindStringSubmatch(l); s.Kind() == "edit" && h != nil {
					// A report of several files names each edit's file.
					heading = ""
					if h[1] != "" {
						json.Unmarshal([]byte(h[1]), &heading)
					}
				}
				if s.Kind() == "search" && l != "" && l != "--" && !strings.HasPrefix(l, "[") {
					heading = l
					if strings.HasPrefix(l, `"`) && json.Unmarshal([]byte(l), &heading) != nil {
						heading = ""
					}
				}
				continue
			}
			f := def
			if heading != "" {
				f = heading
			}
			if m[1] != "" {
				var q string
				if json.Unmarshal([]byte(`"`+m[1]+`"`), &q) != nil {
					continue
				}
				f = q
			}
			if filepath.Clean(f) != filepath.Clean(path) {
				continue
			}
			sum := sha256.Sum256([]byte(m[4]))
			if hex.EncodeToString(sum[:2]) != m[3] {
				continue
			}
			n, _ := strconv.Atoi(m[2])
			out[n] = row{m[3], m[4]}
		}
	}
	return out
}
