package router

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/agent"
	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/jsonstr"
)

// rewriteRef is the request rewrite as phase 1 of the router wrote it
// (request.go at 7018a4b): every item split, the history decoded item by
// item with encoding/json-like reads, and the object joined again. It is an
// order of magnitude slower on a long history, and the reference the
// spliced rewrite is held to (TestRewriteSameAsReference,
// FuzzRewriteSameAsReference): for a body Codex could send, both give the
// same bytes.
func (c *Carrier) rewriteRef(body []byte) Request {
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
	if items != nil && c.decodeHistoryRef(items, &r) {
		top = set(top, "input", joinArray(items))
		changed = true
	}

	if m := get(top, "model"); m != nil {
		r.Model, _ = str(m)
	}
	r.Tools = qualifiesRef(top)
	if r.Tools == "" {
		tools, _ := splitArray(get(top, "tools"))
		kept := make([]json.RawMessage, 0, len(tools)+2)
		for _, t := range tools {
			if name := toolNameRef(t); name != "apply_patch" && name != "exec_command" {
				kept = append(kept, t)
			}
		}
		hpatch, shell := builtinTools(agent.CodexPolicy(r.Model))
		kept = append(kept, hpatch, shell)
		top = set(top, "tools", joinArray(kept))
		r.Routed, changed = true, true
		if r.Instructions = rewriteInstructionsRef(top, items); r.Instructions == "" {
			// rewriteInstructions changed top or items in place.
			if items != nil {
				top = set(top, "input", joinArray(items))
			}
		}
	}
	if tools := get(top, "tools"); !r.Routed && tools != nil && len(bytes.TrimSpace(tools)) == 2 && tools[0] == '[' {
		// Added in phase 2: a request without tools (a compaction) gets
		// the rewritten instructions too.
		if r.Instructions = rewriteInstructionsRef(top, items); r.Instructions == "" {
			if items != nil {
				top = set(top, "input", joinArray(items))
			}
			changed = true
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
func qualifiesRef(top []member) string {
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
		switch toolNameRef(t) {
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

func toolNameRef(t json.RawMessage) string {
	ms, _ := splitObject(t)
	name, _ := str(get(ms, "name"))
	return name
}

// item is what the history rewrite reads of an input item.
type itemRef struct {
	typ, id, callID, name     string
	hasID                     bool
	status, arguments, output json.RawMessage
	input                     json.RawMessage
}

func readItemRef(raw json.RawMessage) (itemRef, bool) {
	var it itemRef
	ok := eachMember(raw, func(k string, v []byte) {
		switch k {
		case "type":
			it.typ = knownValueRef(v)
		case "id":
			it.id, it.hasID = str(v)
		case "call_id":
			it.callID, _ = str(v)
		case "name":
			it.name = knownValueRef(v)
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
func knownValueRef(v []byte) string {
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
func (c *Carrier) decodeHistoryRef(items []json.RawMessage, r *Request) bool {
	carried := map[string]bool{}
	refused := map[string]string{} // call_id -> the reason the model reads
	changed := false
	for i, raw := range items {
		if !bytes.Contains(raw, []byte(`"function_call`)) && !bytes.Contains(raw, []byte(`"custom_tool_call`)) {
			continue
		}
		it, ok := readItemRef(raw)
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

// rewriteInstructions replaces the base passages in the request's
// instructions, or in its first developer message when it has none, in
// place. It returns why it left them alone, or "".
func rewriteInstructionsRef(top []member, items []json.RawMessage) string {
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
	for _, p := range encodedPassages() {
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

// sameAsReference checks that Rewrite and rewriteRef agree on body.
//
// Rewrite runs three times: without the memo of decoded carriers, with c's
// (which may know some of them), and with c's again (which knows every
// carrier of body): the three must be the same.
func sameAsReference(t *testing.T, c *Carrier, name string, body []byte) {
	t.Helper()
	want := c.rewriteRef(body)
	sameRewrite(t, name+" (without the memo)", c.withoutMemo().Rewrite(body), want)
	sameRewrite(t, name, c.Rewrite(body), want)
	sameRewrite(t, name+" (from the memo)", c.Rewrite(body), want)
}

func sameRewrite(t *testing.T, name string, got, want Request) {
	t.Helper()
	if !bytes.Equal(got.Body, want.Body) {
		i := 0
		for i < len(got.Body) && i < len(want.Body) && got.Body[i] == want.Body[i] {
			i++
		}
		t.Fatalf("%s: the bodies differ at byte %d of %d/%d: got %q, want %q", name, i, len(got.Body), len(want.Body),
			clip(got.Body[min(i, len(got.Body)):]), clip(want.Body[min(i, len(want.Body)):]))
	}
	got.Body, want.Body = nil, nil
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: %+v, want %+v", name, got, want)
	}
}

func clip(b []byte) []byte { return b[:min(len(b), 120)] }

// The recorded requests, a long session and the shapes Codex sends give
// the same bytes as the reference.
func TestRewriteSameAsReference(t *testing.T) {
	c := testCarrier(t)
	for _, name := range []string{"turn", "calls", "resume", "compaction"} {
		sameAsReference(t, c, name, recorded(t, name))
	}
	sameAsReference(t, c, "long", longSession(t, 1<<20))
	gen := session(t, c, []string{"in a.txt\ntype 1:8ed3 \"x\"", "hread a.txt\n", "echo 'q' \"d\" \\ $x\u2028é\x01", "x\x00y"}, 3)
	sameAsReference(t, c, "generated", gen)
	if r := c.Rewrite(gen); !r.Routed || r.Instructions != "" || r.Decoded != 3 || r.Explained != 1 {
		t.Fatalf("the generated session does not exercise every rewrite: %+v", Request{Tools: r.Tools, Instructions: r.Instructions, Decoded: r.Decoded, Explained: r.Explained})
	}
}

// session is a Codex 0.169 request whose history holds, for each script,
// a carrier of it (or the routed call itself, when it cannot be carried)
// with an output, beside a native exec_command call and outputs of every
// shape Codex writes (string, content list, non-Codex ids).
func session(t testing.TB, c *Carrier, scripts []string, seed int) []byte {
	ms, _ := splitObject(smallTurn)
	items, _ := splitArray(get(ms, "input"))
	for i, sc := range scripts {
		tool := []string{ToolHpatch, ToolShell}[(i+seed)%2]
		id := fmt.Sprintf("call_%d_%d", seed, i)
		args, err := c.Encode(tool, sc)
		out := quote(fmt.Sprintf("Chunk ID: 1\nOutput:\n%s %d\n", sc, i))
		if (i+seed)%3 == 1 {
			out = json.RawMessage(`[{"type":"input_text","text":` + string(quote(sc)) + `}]`)
		}
		outID := quote("fco_" + id)
		if (i+seed)%4 == 3 {
			outID = quote("other_" + id)
		}
		if err != nil {
			items = append(items,
				joinObject([]member{{"type", quote("custom_tool_call")}, {"id", quote("ctc_" + id)}, {"status", quote("completed")}, {"call_id", quote(id)}, {"name", quote(tool)}, {"input", quote(sc)}}),
				joinObject([]member{{"type", quote("custom_tool_call_output")}, {"id", quote("ctco_" + id)}, {"call_id", quote(id)}, {"output", quote("unsupported custom tool call: " + tool)}}))
			continue
		}
		items = append(items,
			joinObject([]member{{"type", quote("function_call")}, {"status", quote("completed")}, {"id", quote("ctc_" + id)}, {"name", quote("exec_command")}, {"arguments", quote(args)}, {"call_id", quote(id)}}),
			joinObject([]member{{"type", quote("function_call")}, {"id", quote("fc_" + id)}, {"name", quote("exec_command")}, {"arguments", quote(`{"cmd":"echo carrier x","login":false}`)}, {"call_id", quote("n" + id)}}),
			joinObject([]member{{"type", quote("function_call_output")}, {"id", outID}, {"call_id", quote(id)}, {"output", out}}),
			joinObject([]member{{"type", quote("function_call_output")}, {"id", quote("fco_n" + id)}, {"call_id", quote("n" + id)}, {"output", quote("native")}}))
	}
	return joinObject(set(ms, "input", joinArray(items)))
}

// smallTurn is a first request in Codex 0.169's shape, small enough to
// fuzz with: its base passages in the first developer message, its tools
// cut down to a few.
var smallTurn = func() []byte {
	var text []string
	for _, p := range basePassages {
		text = append(text, "Some words.", p[0])
	}
	dev := joinObject([]member{{"type", quote("message")}, {"role", quote("developer")},
		{"content", json.RawMessage(`[{"type":"input_text","text":` + string(quote(strings.Join(text, "\n"))) + `}]`)}})
	return joinObject([]member{
		{"model", quote("gpt-5.5-codex")}, {"stream", json.RawMessage("true")},
		{"input", joinArray([]json.RawMessage{dev, json.RawMessage(`{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}`)})},
		{"tools", json.RawMessage(`[{"type":"function","name":"exec_command","strict":false,"parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}},{"type":"function","name":"write_stdin","parameters":{}},{"type":"custom","name":"apply_patch","format":{"type":"grammar","syntax":"lark","definition":"start: /x/"}}]`)},
		{"tool_choice", quote("auto")}, {"store", json.RawMessage("false")}, {"prompt_cache_key", quote("k")},
	})
}()

// Whatever the scripts, Codex's shapes give the same bytes as the
// reference.
func FuzzRewriteSameAsReference(f *testing.F) {
	f.Add("in a.txt\ntype 1:8ed3 \"x\"", "hread a.txt\n", 0)
	f.Add("echo 'q' \"d\" \\ $x\u2028é\x01", "x\x00y", 1)
	f.Add("ROWKIT_\nRé", "", 2)
	c := testCarrier(f)
	f.Fuzz(func(t *testing.T, a, b string, seed int) {
		sameAsReference(t, c, "fuzzed", session(t, c, []string{a, b}, seed&7))
	})
}
