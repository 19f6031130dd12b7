package router

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/jsonstr"
)

// Request is what the rewrite of one request body did.
type Request struct {
	Body []byte // what goes upstream: the original bytes when nothing changed

	// Routed says the request offers hpatch and shell in place of
	// apply_patch and exec_command, so its response stream is rewritten.
	Routed bool
	// Tools says why the tools were left alone ("" when they were
	// rewritten, or when the body is not a Responses request).
	Tools string
	// Instructions says why the base instructions were left alone ("" when
	// they were rewritten or the tools were not).
	Instructions string
	// Decoded counts the carriers in the history turned back into the
	// model's own calls; Explained the refusals put back in place of
	// Codex's "unsupported custom tool call".
	Decoded, Explained int
}

// Rewrite rewrites one Responses request body (see the package comment and
// the README): carriers in the history become the model's own calls again
// in every request; a request that qualifies offers hpatch and shell in
// place of apply_patch and exec_command, and its base instructions name
// them. It is a pure function of the body and the carrier. A body that is
// not a JSON object is returned as it is.
func (c *Carrier) Rewrite(body []byte) Request {
	r := Request{Body: body}
	top, ok := splitObject(body)
	if !ok {
		r.Tools = "left alone: the body is not a JSON object"
		return r
	}
	changed := false
	input := get(top, "input")
	var items []json.RawMessage
	if len(input) > 0 && input[0] == '[' {
		items, _ = splitArray(input)
	}
	if items != nil && c.decodeHistory(items, &r) {
		top = set(top, "input", joinArray(items))
		changed = true
	}

	r.Tools = qualifies(top)
	if r.Tools == "" {
		tools, _ := splitArray(get(top, "tools"))
		kept := make([]json.RawMessage, 0, len(tools)+2)
		for _, t := range tools {
			if name := toolName(t); name != "apply_patch" && name != "exec_command" {
				kept = append(kept, t)
			}
		}
		kept = append(kept, hpatchTool, shellTool)
		top = set(top, "tools", joinArray(kept))
		r.Routed, changed = true, true
		if r.Instructions = rewriteInstructions(top, items); r.Instructions == "" {
			// rewriteInstructions changed top or items in place.
			if items != nil {
				top = set(top, "input", joinArray(items))
			}
		}
	}
	if changed {
		r.Body = joinObject(top)
	}
	return r
}

// qualifies says why the tools of a request cannot be rewritten, or "".
// The carrier answers through Codex's exec_command, and the history is
// rebuilt from the request alone, so a request needs both; a client that
// already has an hpatch or shell tool keeps its own.
func qualifies(top []member) string {
	if s := get(top, "stream"); string(s) != "true" {
		return "left alone: the request does not stream"
	}
	if p := get(top, "previous_response_id"); p != nil && string(p) != "null" {
		return "left alone: the request continues a stored response (previous_response_id)"
	}
	tools, ok := splitArray(get(top, "tools"))
	if !ok {
		return "left alone: the request has no tools"
	}
	exec := false
	for _, t := range tools {
		switch toolName(t) {
		case "exec_command":
			ms, _ := splitObject(t)
			typ, _ := str(get(ms, "type"))
			exec = exec || typ == "function"
		case ToolHpatch, ToolShell:
			return "left alone: the request already has a tool named hpatch or shell"
		}
	}
	if !exec {
		return "left alone: the request has no exec_command tool to carry the calls"
	}
	if tc := get(top, "tool_choice"); len(tc) > 0 && tc[0] != '"' && string(tc) != "null" {
		var v struct {
			Name  string
			Tools []struct{ Name string }
		}
		if json.Unmarshal(tc, &v) != nil {
			return "left alone: the request's tool_choice is not understood"
		}
		names := []string{v.Name}
		for _, t := range v.Tools {
			names = append(names, t.Name)
		}
		for _, n := range names {
			if n == "apply_patch" || n == "exec_command" {
				return "left alone: the request's tool_choice names " + n
			}
		}
	}
	return ""
}

func toolName(t json.RawMessage) string {
	ms, _ := splitObject(t)
	name, _ := str(get(ms, "name"))
	return name
}

// item is what the history rewrite reads of an input item.
type item struct {
	typ, id, callID, name     string
	hasID                     bool
	status, arguments, output json.RawMessage
	input                     json.RawMessage
}

func readItem(raw json.RawMessage) (item, bool) {
	var it item
	ok := eachMember(raw, func(k string, v []byte) {
		switch k {
		case "type":
			it.typ = knownValue(v)
		case "id":
			it.id, it.hasID = str(v)
		case "call_id":
			it.callID, _ = str(v)
		case "name":
			it.name = knownValue(v)
		case "status":
			it.status = v
		case "arguments":
			it.arguments = v
		case "input":
			it.input = v
		case "output":
			it.output = v
		}
	})
	return it, ok
}

// knownValue reads the string values the history rewrite branches on
// without an allocation; any other value reads as "".
func knownValue(v []byte) string {
	switch string(v) {
	case `"function_call"`:
		return "function_call"
	case `"function_call_output"`:
		return "function_call_output"
	case `"custom_tool_call"`:
		return "custom_tool_call"
	case `"custom_tool_call_output"`:
		return "custom_tool_call_output"
	case `"exec_command"`:
		return "exec_command"
	case `"hpatch"`:
		return ToolHpatch
	case `"shell"`:
		return ToolShell
	}
	return ""
}

// decodeHistory turns the carriers of items back into the model's own
// calls and their outputs into custom tool outputs, and puts the reason
// in place of Codex's answer to a routed call that could not be carried.
// It reports whether an item changed.
func (c *Carrier) decodeHistory(items []json.RawMessage, r *Request) bool {
	carried := map[string]bool{}
	refused := map[string]string{} // call_id -> the reason the model reads
	changed := false
	for i, raw := range items {
		if !bytes.Contains(raw, []byte(`"function_call`)) && !bytes.Contains(raw, []byte(`"custom_tool_call`)) {
			continue
		}
		it, ok := readItem(raw)
		if !ok {
			continue
		}
		switch it.typ {
		case "function_call":
			if it.name != "exec_command" {
				continue
			}
			args, ok := unquoteBytes(it.arguments)
			if !ok {
				continue
			}
			tool, input, ok := decodeArguments(args)
			if !ok {
				continue
			}
			b := make([]byte, 0, len(input)+len(it.id)+len(it.callID)+len(it.status)+96)
			b = append(b, `{"type":"custom_tool_call"`...)
			if it.hasID {
				b = append(b, `,"id":`...)
				b = jsonstr.Append(b, it.id)
			}
			if it.status != nil {
				b = append(b, `,"status":`...)
				b = append(b, it.status...)
			}
			b = append(b, `,"call_id":`...)
			b = jsonstr.Append(b, it.callID)
			b = append(b, `,"name":`...)
			b = jsonstr.Append(b, tool)
			b = append(b, `,"input":`...)
			b = jsonstr.Append(b, input)
			items[i] = append(b, '}')
			carried[it.callID] = true
			r.Decoded++
			changed = true
		case "function_call_output":
			if !carried[it.callID] {
				continue
			}
			b := make([]byte, 0, len(it.output)+len(it.id)+len(it.callID)+80)
			b = append(b, `{"type":"custom_tool_call_output"`...)
			if it.hasID {
				// Codex names its own outputs fco_ (function) and ctco_
				// (custom); any other id is not Codex's and is dropped.
				if rest, ok := strings.CutPrefix(it.id, "fco_"); ok {
					b = append(b, `,"id":`...)
					b = jsonstr.Append(b, "ctco_"+rest)
				}
			}
			b = append(b, `,"call_id":`...)
			b = jsonstr.Append(b, it.callID)
			b = append(b, `,"output":`...)
			b = append(b, it.output...)
			items[i] = append(b, '}')
			changed = true
		case "custom_tool_call":
			if it.name != ToolHpatch && it.name != ToolShell {
				continue
			}
			// A routed call that reached Codex as itself: the router
			// refused to carry it, or its request offered no exec_command.
			input, _ := str(it.input)
			if e, ok := errs.As(Carriable(it.name, input)); ok {
				refused[it.callID] = e.Msg
			} else {
				refused[it.callID] = it.name + ": not run: that request offered no exec_command to carry it"
			}
		case "custom_tool_call_output":
			reason, ok := refused[it.callID]
			if !ok {
				continue
			}
			out, isStr := str(it.output)
			if !isStr || !strings.HasPrefix(out, "unsupported custom tool call: ") {
				continue
			}
			ms, _ := splitObject(raw)
			items[i] = joinObject(set(ms, "output", quote(reason)))
			r.Explained++
			changed = true
		}
	}
	return changed
}

// basePassages are the passages of Codex 0.169's base instructions that
// tell the model to edit with apply_patch and to run commands with
// exec_command, and what the router puts in their place: rowkit's
// central guidance, and the same sentences naming hpatch and shell.
var basePassages = [][2]string{
	{"- Use `apply_patch` for manual code edits. Do not create or edit files with `cat` or other shell write tricks. Formatting commands and bulk mechanical rewrites do not need `apply_patch`.",
		"- " + Guidance},
	{"- Do not use Python to read or write files when a simple shell command or `apply_patch` is enough.",
		"- Do not use Python to read or write files when `hread` or `hpatch` is enough."},
	{"Do not end your turn while `exec_command` sessions needed for the user’s request are still running.",
		"Do not end your turn while `shell` calls needed for the user’s request are still running."},
}

// encodedPassages are basePassages as they appear inside a JSON string:
// the replacement works on the raw bytes of the request, so every byte
// around a passage stays as Codex wrote it.
var encodedPassages = func() [][2][]byte {
	var ps [][2][]byte
	for _, p := range basePassages {
		ps = append(ps, [2][]byte{inner(p[0]), inner(p[1])})
	}
	return ps
}()

func inner(s string) []byte {
	b := jsonstr.Append(nil, s)
	return b[1 : len(b)-1]
}

// rewriteInstructions replaces the base passages in the request's
// instructions, or in its first developer message when it has none, in
// place. It returns why it left them alone, or "".
func rewriteInstructions(top []member, items []json.RawMessage) string {
	where := "request's instructions"
	at := -1
	raw := get(top, "instructions")
	if s, ok := str(raw); !ok || s == "" {
		where = "first developer message"
		raw = nil
		for i, it := range items {
			if !bytes.Contains(it, []byte(`"developer"`)) {
				continue
			}
			ms, _ := splitObject(it)
			typ, _ := str(get(ms, "type"))
			role, _ := str(get(ms, "role"))
			if typ == "message" && role == "developer" {
				raw, at = it, i
				break
			}
		}
		if raw == nil {
			return "left alone: the request has no instructions and no developer message"
		}
	}
	out := raw
	for _, p := range encodedPassages {
		if !bytes.Contains(out, p[0]) {
			return "left alone: a passage of Codex 0.169's base instructions naming apply_patch or exec_command is not in the " + where
		}
		out = bytes.ReplaceAll(out, p[0], p[1])
	}
	if at >= 0 {
		items[at] = out
	} else {
		for i := range top {
			if top[i].key == "instructions" {
				top[i].raw = out
			}
		}
	}
	return ""
}
