package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/rowkit/rowkit/internal/agenttest"
	"github.com/rowkit/rowkit/internal/tokens"
)

// Figures are what one session cost the model, read from the requests
// the client sent (never from rowkit), in o200k tokens.
type Figures struct {
	Task    string  `json:"task"`
	Config  string  `json:"config"`
	Seconds float64 `json:"seconds,omitempty"`
	// Turns are the model's responses: every model request the played
	// model answered, the final answer included (side requests, such as
	// titles and compaction, are not turns).
	Turns int `json:"turns"`
	// Read is the tokens of the tool outputs as the client handed them
	// to the model, each counted once (the request that first carries
	// it): the client's own wrapper included (Codex's header of a
	// command's output, Claude Code's "Exit code N"), the reminders
	// Claude Code appends to a turn's last result left out (they are the
	// client's, not the tool's).
	Read int `json:"read"`
	// Written is the tokens the model wrote: its text, each call's
	// arguments (JSON) or input (a custom tool's script).
	Written int `json:"written"`
	// Failed are the calls that failed as calls (see failed): a command
	// that ran and exited non-zero because the tests failed is not one.
	Failed int `json:"failed"`
	// Tools is the tokens of the tool definitions the last model request
	// carried (the JSON of its "tools"), which the model reads on every
	// request.
	Tools int `json:"tools_per_request"`
	// Sent is the tokens of every model request's whole body (the JSON
	// the client sent: instructions, tools and the conversation so far),
	// added up: what the model is sent over the session, before any
	// prompt cache.
	Sent  int    `json:"sent"`
	Calls []Call `json:"calls"`
}

// Call is one tool call of a session.
type Call struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Turn    int    `json:"turn"`
	Written int    `json:"written"`
	Read    int    `json:"read"`
	// Lines is the tokens of Read that number or name its lines (see
	// lineIDs): what the output would cost less without them.
	Lines  int  `json:"lines,omitempty"`
	Failed bool `json:"failed,omitempty"`
}

// The prefixes that number (and name) a line in a tool output: rowkit's
// rows ["PATH":]LINE:HASH and an outline's LINE:HASH..LINE:HASH, each with
// the space after it; Claude Code's Read, LINE and a tab; ripgrep's -n
// (a search's or an outline's), [PATH:]LINE: or [PATH-]LINE- for context.
var (
	rowIDs  = regexp.MustCompile(`(?m)^(?:"(?:[^"\\]|\\.)*":)?[0-9]+:[0-9a-f]{4}(?:\.\.[0-9]+:[0-9a-f]{4})? |^ *[0-9]+\t`)
	rgLines = regexp.MustCompile(`(?m)^(?:[^\s:]+[:-])?[0-9]+[:-]`)
)

// lineIDs is the tokens of text that its line prefixes cost: its count
// less the count of the text without them. ripgrep's form is looked for
// in a search's and an outline's output only (a test run prints
// FILE:LINE: too).
func lineIDs(kind, text string) int {
	bare := rowIDs.ReplaceAllString(text, "")
	if kind == "search" || kind == "outline" {
		bare = rgLines.ReplaceAllString(bare, "")
	}
	return tokens.Count(text) - tokens.Count(bare)
}

// figuresOf measures a session from its requests.
func figuresOf(reqs []*agenttest.Request) (*Figures, error) {
	var model []*agenttest.Request
	for _, r := range reqs {
		if r.API != "" && r.Turn >= 0 && !r.Side {
			model = append(model, r)
		}
	}
	sort.Slice(model, func(i, j int) bool { return model[i].Seq < model[j].Seq })
	if len(model) == 0 {
		return nil, fmt.Errorf("the session has no model request")
	}
	f := &Figures{Turns: len(model)}
	calls := map[string]*Call{}
	var order []string
	for _, r := range model {
		f.Sent += tokens.Count(string(r.Body))
		for _, o := range r.Outputs() {
			c, ok := calls[o.CallID]
			if !ok || c.Read >= 0 {
				continue // not the policy's call, or counted already
			}
			c.Read = tokens.Count(o.Delivered())
			c.Lines = lineIDs(c.Kind, o.Delivered())
			c.Failed = failed(c.Kind, o)
			f.Read += c.Read
		}
		if r.Reply == nil {
			continue
		}
		for _, it := range r.Reply.Items {
			n := 0
			switch x := it.(type) {
			case agenttest.Message:
				n = tokens.Count(x.Text)
			case agenttest.Call:
				n = tokens.Count(argsText(x.Args))
				calls[x.ID] = &Call{ID: x.ID, Kind: kindOf(x.ID), Turn: r.Turn, Written: n, Read: -1}
				order = append(order, x.ID)
			case agenttest.CustomCall:
				n = tokens.Count(x.Input)
				calls[x.ID] = &Call{ID: x.ID, Kind: kindOf(x.ID), Turn: r.Turn, Written: n, Read: -1}
				order = append(order, x.ID)
			}
			f.Written += n
		}
	}
	last := model[len(model)-1]
	if ts, ok := last.JSON["tools"]; ok {
		b, _ := json.Marshal(ts)
		f.Tools = tokens.Count(string(b))
	}
	for _, id := range order {
		c := calls[id]
		if c.Read < 0 {
			return nil, fmt.Errorf("call %s: its output never reached the model", id)
		}
		if c.Failed {
			f.Failed++
		}
		f.Calls = append(f.Calls, *c)
	}
	return f, nil
}

// argsText is a call's arguments as the model wrote them.
func argsText(v any) string {
	switch x := v.(type) {
	case json.RawMessage:
		return string(x)
	case string:
		return x
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// kindOf is the step kind a policy call id KIND-TURN-I names.
func kindOf(id string) string {
	k, _, _ := strings.Cut(id, "-")
	return k
}

var exitLine = regexp.MustCompile(`(?m)^Process exited with code (\d+)$`)

// failed says whether a call failed as a call: an error result (Claude
// Code's is_error, an MCP isError), a command that exited non-zero
// (Codex's header, Claude Code's "Exit code N"), an apply_patch that did
// not apply. A step that runs the tests never fails as a call: failing
// tests are what the model asked to see.
func failed(kind string, o agenttest.Output) bool {
	if kind == "run" {
		return false
	}
	if o.IsError {
		return true
	}
	if m := exitLine.FindStringSubmatch(o.Text); m != nil {
		n, _ := strconv.Atoi(m[1])
		// A combined edit and test run fails as a call only when the edit
		// did not apply.
		if kind == "edit" && o.Kind == "custom_tool_call_output" && strings.Contains(o.Text, "applied:") {
			return false
		}
		return n != 0
	}
	return o.Kind == "custom_tool_call_output" && (strings.Contains(o.Text, "verification failed") || strings.HasPrefix(o.Text, "apply_patch"))
}

// show is a session as the model saw it: per request, the tool outputs
// it carries for the first time, then the reply.
func show(reqs []*agenttest.Request) string {
	var b strings.Builder
	seen := map[string]bool{}
	for _, r := range reqs {
		if r.API == "" {
			fmt.Fprintf(&b, "## %d %s %s\n", r.Seq, r.Method, r.Path)
			continue
		}
		kind := "model"
		if r.Side {
			kind = "side"
		}
		fmt.Fprintf(&b, "## %d %s request (turn %d)\n", r.Seq, kind, r.Turn)
		for _, o := range r.Outputs() {
			if seen[o.CallID] {
				continue
			}
			seen[o.CallID] = true
			fmt.Fprintf(&b, "=== output %s (%s, %d tokens)\n%s\n", o.CallID, o.Kind, tokens.Count(o.Delivered()), o.Text)
		}
		if r.Reply != nil {
			fmt.Fprintf(&b, "=== reply\n%s\n", agenttest.EncodeTurn(*r.Reply))
		}
	}
	return b.String()
}

// costs is what a session's first and last model requests carry besides
// the conversation, in o200k tokens: each tool definition (the JSON the
// client sent), all of them, and the instructions (Claude Code's system,
// Codex's instructions or its first developer message).
func costs(reqs []*agenttest.Request) string {
	var model []*agenttest.Request
	for _, r := range reqs {
		if r.API != "" && r.Turn >= 0 && !r.Side {
			model = append(model, r)
		}
	}
	if len(model) == 0 {
		return "no model request\n"
	}
	var b strings.Builder
	for _, r := range []*agenttest.Request{model[0], model[len(model)-1]} {
		ts, _ := r.JSON["tools"].([]any)
		all, _ := json.Marshal(ts)
		fmt.Fprintf(&b, "request %d (turn %d): %d tools, %d tokens; instructions %d tokens; whole body %d tokens\n",
			r.Seq, r.Turn, len(ts), tokens.Count(string(all)), tokens.Count(instructions(r)), tokens.Count(string(r.Body)))
		for _, t := range ts {
			m, _ := t.(map[string]any)
			j, _ := json.Marshal(t)
			name, _ := m["name"].(string)
			if name == "" {
				name, _ = m["type"].(string)
			}
			fmt.Fprintf(&b, "    %-32s %6d\n", name, tokens.Count(string(j)))
		}
	}
	return b.String()
}

// instructions are the request's instructions as text.
func instructions(r *agenttest.Request) string {
	if r.API == agenttest.Messages {
		b, _ := json.Marshal(r.JSON["system"])
		return string(b)
	}
	if s, ok := r.JSON["instructions"].(string); ok && s != "" {
		return s
	}
	items, _ := r.JSON["input"].([]any)
	for _, it := range items {
		m, _ := it.(map[string]any)
		if m["role"] == "developer" {
			b, _ := json.Marshal(m["content"])
			return string(b)
		}
	}
	return ""
}
