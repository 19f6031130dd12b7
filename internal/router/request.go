package router

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/rowkit/rowkit/internal/agent"
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
	// Model is the request's model, as its body names it: the carrier
	// for its response is Carrier.ForModel(Model), whose bound the
	// rewritten shell tool names.
	Model string
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
//
// The carrier remembers, within bounds, the carriers it decoded and the
// histories it rewrote (memo.go), so that a session's next request, whose
// history is the last one's with a few items more, costs about a copy of
// its body; what they hold is taken only for the same bytes, and the
// result is the same without them.
//
// Codex sends the whole conversation in every request, so the body grows
// with the session (a megabyte is a few hundred calls), and the rewrite
// costs about a scan and a copy of it: one pass finds the members and the
// history's items, only the items that may change are read (carriers,
// their outputs, routed calls, the first developer message), and the new
// body is the old one spliced with their replacements; nothing else is
// decoded, copied twice or allocated per item.
func (c *Carrier) Rewrite(body []byte) Request {
	r, parts := c.rewriteParts(body)
	if parts != nil {
		r.Body = bytes.Join(parts, nil)
	}
	return r
}

// rewriteParts is Rewrite with the new body left in parts, the pieces of
// the old one between the edits and the edits' replacements, which the
// server sends as they are: the new body is never put together (a copy
// of a megabyte for a long session). parts is nil when nothing changed;
// Body is then the old body.
func (c *Carrier) rewriteParts(body []byte) (Request, [][]byte) {
	w := rewrite{c: c, body: body, r: Request{Body: body}}
	top, ok := w.scan()
	if !ok {
		w.r = Request{Body: body, Tools: "left alone: the body is not a JSON object"}
		return w.r, nil
	}
	if top.model.ok() {
		w.r.Model, _ = str(body[top.model.start:top.model.end])
	}
	var kept [][]byte
	w.r.Tools, kept = qualifies(body, top)
	switch {
	case w.r.Tools == "":
		w.edits = append(w.edits, edit{top.tools.start, top.tools.end, rewriteTools(kept, agent.CodexPolicy(w.r.Model))})
		w.r.Routed = true
		w.r.Instructions = w.instructions(top)
	case noTools(body, top):
		// A request that offers no tool at all (Codex's compaction) names
		// none either way, and with the passages replaced its prefix is
		// the session's routed requests' one, for the prompt cache.
		w.r.Instructions = w.instructions(top)
	}
	if len(w.edits) == 0 {
		return w.r, nil
	}
	return w.r, w.splice()
}

// span is where a value lies in the body: body[start:end].
type span struct{ start, end int }

func (s span) ok() bool { return s.end > 0 }

// topLevel are the spans of the members the rewrite reads (the first of
// each key, as encoding/json's decoder would not, but as the upstream's
// own tools see a duplicate is no concern of the router's).
type topLevel struct {
	stream, previous, tools, toolChoice, instructions, input, model span
}

// edit replaces body[start:end] with repl.
type edit struct {
	start, end int
	repl       []byte
}

// rewrite is one Rewrite in progress.
type rewrite struct {
	c     *Carrier
	body  []byte
	r     Request
	edits []edit // in the order of the body, but for the last few
	// carried are the call ids (raw JSON) of the carriers met whose
	// output has not come yet: outputs follow their calls, so it holds the
	// calls of about one response.
	carried [][]byte
	refused []refusal
	dev     span // the first developer message
	dec     decoder
	args    []byte // a carrier's arguments, unquoted
	buf     []byte // a replacement being written
	block   []byte // where replacements are kept: see keep
}

// room returns an empty slice with room for a replacement of about n
// bytes (more may be appended), in a block of replacements that is never
// moved, so that each costs one copy whatever their number: write it
// there and pass it to kept.
func (w *rewrite) room(n int) []byte {
	n = 2*n + 256 // escapes, and the ids written again
	if cap(w.block)-len(w.block) < n {
		// Blocks grow with the history, up to 64 KiB.
		w.block = make([]byte, 0, max(min(2*cap(w.block), 64<<10), 4<<10, n))
	}
	return w.block[len(w.block):len(w.block)]
}

// kept adds repl, written where room said, as the replacement of
// body[start:end].
func (w *rewrite) kept(start, end int, repl []byte) {
	if cap(repl) == cap(w.block)-len(w.block) {
		// Written in place: the block's room is taken.
		w.block = w.block[:len(w.block)+len(repl)]
	}
	// Otherwise it outgrew its room and append moved it: it is its own.
	w.edits = append(w.edits, edit{start, end, repl[:len(repl):len(repl)]})
}

// refusal is a routed call that reached Codex as itself, and why.
type refusal struct{ callID, reason string }

// scan reads the top-level members of the body, the history's items as
// it passes them, and reports whether the body is a JSON object.
func (w *rewrite) scan() (topLevel, bool) {
	var top topLevel
	b := w.body
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return top, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return top, skipSpace(b, i+1) == len(b)
	}
	for {
		key, vs, ok := keyAt(b, i)
		if !ok {
			return top, false
		}
		i = vs
		var end int
		if key == "input" && !top.input.ok() && i < len(b) && b[i] == '[' {
			end, ok = w.history(i)
		} else {
			end, ok = skipValue(b, i)
		}
		if !ok {
			return top, false
		}
		v := span{i, end}
		switch key {
		case "stream":
			top.stream = first(top.stream, v)
		case "previous_response_id":
			top.previous = first(top.previous, v)
		case "tools":
			top.tools = first(top.tools, v)
		case "tool_choice":
			top.toolChoice = first(top.toolChoice, v)
		case "instructions":
			top.instructions = first(top.instructions, v)
		case "input":
			top.input = first(top.input, v)
		case "model":
			top.model = first(top.model, v)
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return top, false
		}
		if b[i] == '}' {
			return top, skipSpace(b, i+1) == len(b)
		}
		if b[i] != ',' {
			return top, false
		}
		i = skipSpace(b, i+1)
	}
}

func first(have, v span) span {
	if have.ok() {
		return have
	}
	return v
}

// history passes the items of the input array that starts at body[i],
// rewriting those that need it, and returns the array's end. An input
// that is not an array of values changes nothing.
func (w *rewrite) history(i int) (int, bool) {
	b := w.body
	start := i
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	// The items a recent request had, with this one's first: resumed
	// after them (see histories).
	end := -1
	prev := w.c.histories.take(b, start)
	if prev != nil {
		w.edits = prev.edits
		w.carried = append(w.carried[:0], prev.carried...)
		w.refused = append(w.refused[:0], prev.refused...)
		w.dev, w.r.Decoded, w.r.Explained = prev.dev, prev.decoded, prev.explained
		end = len(prev.head)
	}
	for {
		if end < 0 {
			it, e, ok := scanItem(b, i)
			if !ok {
				break
			}
			w.item(&it, i, e)
			end = e
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			break
		}
		if b[i] == ']' {
			w.remember(prev, start, end)
			return i + 1, true
		}
		if b[i] != ',' {
			break
		}
		i = skipSpace(b, i+1)
		end = -1
	}
	// Not an array of values: its items are not the history's, and the
	// value is left to skipValue as any other.
	w.edits, w.carried, w.refused, w.dev = nil, w.carried[:0], w.refused[:0], span{}
	w.r.Decoded, w.r.Explained = 0, 0
	return skipValue(b, start)
}

// remember keeps the state of the rewrite at body[end], the end of the
// last item of the input array at body[start], for the next request of
// the session: in prev, the state it resumed from, when it did.
func (w *rewrite) remember(prev *history, start, end int) {
	if w.c.histories == nil {
		return
	}
	switch w.body[end-1] {
	case '}', ']', '"':
	default:
		// A bare literal ends where the next byte says: not a function
		// of the bytes before its end.
		return
	}
	h := prev
	if h == nil {
		h = &history{start: start, head: make([]byte, 0, end+end/4)}
	}
	// The entry is this rewrite's alone: its head grows in place.
	h.head = append(h.head, w.body[len(h.head):end]...)
	// The edits made after the history's go to another array.
	w.edits = w.edits[:len(w.edits):len(w.edits)]
	h.edits = w.edits
	h.carried = h.carried[:0]
	for _, id := range w.carried {
		h.carried = append(h.carried, bytes.Clone(id)) // not the body's
	}
	h.refused = append(h.refused[:0], w.refused...)
	h.dev, h.decoded, h.explained = w.dev, w.r.Decoded, w.r.Explained
	w.c.histories.put(h)
}

// qualifies says why the tools of a request cannot be rewritten, or "".
// The carrier answers through Codex's exec_command, and the history is
// rebuilt from the request alone, so a request needs both; a client that
// already has an hpatch or shell tool keeps its own.
//
// It also returns the tools a rewrite keeps: all but apply_patch and
// exec_command, in order.
func qualifies(body []byte, top topLevel) (string, [][]byte) {
	val := func(s span) []byte { return body[s.start:s.end] }
	if !top.stream.ok() || string(val(top.stream)) != "true" {
		return "left alone: the request does not stream", nil
	}
	if top.previous.ok() && string(val(top.previous)) != "null" {
		return "left alone: the request continues a stored response (previous_response_id)", nil
	}
	if !top.tools.ok() {
		return "left alone: the request has no tools", nil
	}
	exec, other := false, ""
	var kept [][]byte
	isArray := eachElement(val(top.tools), func(t []byte) {
		typ, name := toolTypeName(t)
		switch name {
		case "exec_command":
			exec = exec || typ == "function"
		case ToolHpatch, ToolShell:
			other = "left alone: the request already has a tool named hpatch or shell"
		}
		if name != "apply_patch" && name != "exec_command" {
			kept = append(kept, t)
		}
	})
	switch {
	case !isArray:
		return "left alone: the request has no tools", nil
	case other != "":
		return other, nil
	case !exec:
		return "left alone: the request has no exec_command tool to carry the calls", nil
	}
	if top.toolChoice.ok() {
		if tc := val(top.toolChoice); tc[0] != '"' && string(tc) != "null" {
			var v struct {
				Name  string
				Tools []struct{ Name string }
			}
			if json.Unmarshal(tc, &v) != nil {
				return "left alone: the request's tool_choice is not understood", nil
			}
			names := []string{v.Name}
			for _, t := range v.Tools {
				names = append(names, t.Name)
			}
			for _, n := range names {
				if n == "apply_patch" || n == "exec_command" {
					return "left alone: the request's tool_choice names " + n, nil
				}
			}
		}
	}
	return "", kept
}

// noTools reports whether the request's tools are an empty array.
func noTools(body []byte, top topLevel) bool {
	return top.tools.ok() && eachElement(body[top.tools.start:top.tools.end], func([]byte) {}) &&
		len(bytes.TrimSpace(body[top.tools.start+1:top.tools.end-1])) == 0
}

// toolTypeName reads a tool's type and name, the first of each, and stops
// there: Codex's tools name themselves before their long parameters.
func toolTypeName(t []byte) (typ, name string) {
	var haveType, haveName bool
	firstMembers(t, func(k string, v []byte) bool {
		switch {
		case k == "type" && !haveType:
			typ, _ = str(v)
			haveType = true
		case k == "name" && !haveName:
			name, _ = str(v)
			haveName = true
		}
		return !(haveType && haveName)
	})
	return typ, name
}

// rewriteTools is the tools array of kept, with hpatch and shell for a
// tool output policy of tokens at its end.
func rewriteTools(kept [][]byte, tokens int) []byte {
	hpatch, shell := builtinTools(tokens)
	n := len(hpatch) + len(shell) + 3
	for _, t := range kept {
		n += len(t) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for _, t := range kept {
		b = append(append(b, t...), ',')
	}
	return append(append(append(append(b, hpatch...), ','), shell...), ']')
}

// item is what the history rewrite reads of an input item: its strings
// as their raw JSON (id and callID nil when they are not strings), decoded
// only where they are written out again.
type item struct {
	typ, name, role           string
	members                   int       // how many
	order                     [4]string // the keys of the first four
	id, callID                json.RawMessage
	status, arguments, output json.RawMessage
	input                     json.RawMessage
}

// stringValue is v when it is a JSON string, or nil.
func stringValue(v []byte) json.RawMessage {
	if canonical(v) {
		return v
	}
	if _, ok := unquoteBytes(v); ok {
		return v
	}
	return nil
}

// canonical reports whether v is a JSON string as jsonstr writes it, so
// that writing its value again is copying v: no escape, no control
// character, valid UTF-8 without U+2028 or U+2029. Ids are.
func canonical(v []byte) bool {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return false
	}
	for i, c := range v[1 : len(v)-1] {
		if c < 0x20 || c == '"' || c == '\\' {
			return false
		}
		if c >= 0x80 {
			// Not ASCII: the rest as jsonstr would write it.
			rest := v[1+i : len(v)-1]
			return utf8.Valid(rest) && !bytes.ContainsAny(rest, "\"\\\u2028\u2029") && !hasControl(rest)
		}
	}
	return true
}

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// appendString appends the string value v (raw JSON) as jsonstr writes
// it; a value that is not a string (nil) is "".
func appendString(b, v []byte) []byte {
	if canonical(v) {
		return append(b, v...)
	}
	s, _ := unquoteBytes(v)
	return jsonstr.AppendBytes(b, s)
}

// sameString reports whether the string values a and b are equal.
func sameString(a, b []byte) bool {
	if canonical(a) && canonical(b) {
		return bytes.Equal(a, b)
	}
	x, _ := unquoteBytes(a)
	y, _ := unquoteBytes(b)
	return bytes.Equal(x, y)
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
	case `"message"`:
		return "message"
	case `"developer"`:
		return "developer"
	case `"exec_command"`:
		return "exec_command"
	case `"hpatch"`:
		return ToolHpatch
	case `"shell"`:
		return ToolShell
	}
	return ""
}

// carrierMarker is in every carrier's arguments as Codex echoes them (a
// JSON encoder escapes no space or letter): an exec_command call without
// it is an ordinary command, not read further.
var carrierMarker = []byte(" carrier ")

// item rewrites the history's item it, body[s:e], when it needs it: a
// carrier becomes the model's own call again and its output a custom tool
// output, and the reason takes the place of Codex's answer to a routed
// call that could not be carried.
func (w *rewrite) item(it *item, s, e int) {
	switch it.typ {
	case "function_call":
		if it.name == "exec_command" && bytes.Contains(it.arguments, carrierMarker) {
			w.carrier(it, s, e)
		}
	case "function_call_output":
		if len(w.carried) > 0 {
			w.output(it, s, e)
		}
	case "custom_tool_call":
		if it.name != ToolHpatch && it.name != ToolShell {
			return
		}
		// A routed call that reached Codex as itself: the router refused
		// to carry it, or its request offered no exec_command.
		input, _ := str(it.input)
		callID, _ := str(it.callID)
		reason := it.name + ": not run: that request offered no exec_command to carry it"
		if e, ok := errs.As(Carriable(it.name, input)); ok {
			reason = e.Msg
		}
		w.refused = append(w.refused, refusal{callID, reason})
	case "custom_tool_call_output":
		if len(w.refused) > 0 {
			w.explain(it, s, e)
		}
	case "message":
		if !w.dev.ok() && it.role == "developer" {
			w.dev = span{s, e}
		}
	}
}

// scanItem finds the end of the value at b[i], as skipValue does, and,
// when it is an object, reads on the way what the rewrite needs of an
// item.
func scanItem(b []byte, i int) (item, int, bool) {
	var it item
	if i >= len(b) || b[i] != '{' {
		end, ok := skipValue(b, i)
		return it, end, ok
	}
	start := i
	fail := func() (item, int, bool) {
		// Not an object of members: as skipValue takes it (a stray
		// bracket inside is still matched), but no item.
		end, ok := skipValue(b, start)
		return item{}, end, ok
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return it, i + 1, true
	}
	typeFirst := false
	for {
		key, vs, ok := keyAt(b, i)
		if !ok {
			return fail()
		}
		end, ok := skipValue(b, vs)
		if !ok {
			return fail()
		}
		v := b[vs:end:end]
		if it.members < len(it.order) {
			it.order[it.members] = key
		}
		it.members++
		switch key {
		case "type":
			// The first member's type, as Codex writes every item, or
			// the last one, as readItemRef reads it.
			if it.members == 1 {
				typeFirst = true
				it.typ = knownValue(v)
			} else if !typeFirst {
				it.typ = knownValue(v)
			}
		case "id":
			it.id = v // stringValue where it is written
		case "call_id":
			it.callID = v
		case "name":
			it.name = knownValue(v)
		case "role":
			if it.role == "" {
				it.role = knownValue(v)
			}
		case "status":
			it.status = v
		case "arguments":
			it.arguments = v
		case "input":
			it.input = v
		case "output":
			it.output = v
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return fail()
		}
		if b[i] == '}' {
			return it, i + 1, true
		}
		if b[i] != ',' {
			return fail()
		}
		i = skipSpace(b, i+1)
	}
}

// carrier puts the model's own call in place of the carrier body[s:e],
// when it is one.
func (w *rewrite) carrier(it *item, s, e int) {
	if repl := w.c.memo.get(w.body[s:e]); repl != nil {
		// The same bytes were decoded and verified before, and this is
		// what that wrote.
		w.edits = append(w.edits, edit{s, e, repl})
		w.carried = append(w.carried, stringValue(it.callID))
		w.r.Decoded++
		return
	}
	if w.args == nil {
		w.args = make([]byte, 0, 4<<10)
	}
	args, ok := unquoteInto(w.args[:0], it.arguments)
	if !ok {
		return
	}
	w.args = args
	tool, input, ok := w.dec.transient(args)
	if !ok {
		return
	}
	it.id, it.callID = stringValue(it.id), stringValue(it.callID)
	b := w.room(e - s + len(input))
	b = append(b, `{"type":"custom_tool_call"`...)
	if it.id != nil {
		b = append(b, `,"id":`...)
		b = appendString(b, it.id)
	}
	if it.status != nil {
		b = append(b, `,"status":`...)
		b = append(b, it.status...)
	}
	b = append(b, `,"call_id":`...)
	b = appendString(b, it.callID)
	b = append(b, `,"name":`...)
	b = jsonstr.Append(b, tool)
	b = append(b, `,"input":`...)
	b = jsonstr.Append(b, input)
	b = append(b, '}')
	w.kept(s, e, b)
	w.c.memo.put(w.body[s:e], b)
	w.carried = append(w.carried, it.callID)
	w.r.Decoded++
}

// output turns the function_call_output it, body[s:e], of a carrier into
// the custom tool output the model's call gets.
func (w *rewrite) output(it *item, s, e int) {
	k := slices.IndexFunc(w.carried, func(id []byte) bool { return sameString(id, it.callID) })
	if k < 0 {
		return
	}
	// A call has one output: the list stays as short as one response's
	// calls.
	w.carried = slices.Delete(w.carried, k, k+1)
	it.id, it.callID = stringValue(it.id), stringValue(it.callID)
	// Codex writes {"type":"function_call_output","id":"fco_…","call_id":
	// …,"output":…}: then only the type and the id's prefix change, and
	// the output (often most of the item) goes through untouched.
	const from = `{"type":"function_call_output","id":"fco_`
	if it.members == 4 && it.order == [4]string{"type", "id", "call_id", "output"} && bytes.HasPrefix(w.body[s:e], []byte(from)) &&
		canonical(it.id) && canonical(it.callID) &&
		e-s == len(`{"type":"function_call_output","id":,"call_id":,"output":}`)+len(it.id)+len(it.callID)+len(it.output) {
		w.edits = append(w.edits, edit{s, s + len(from), customOutput})
		return
	}
	b := w.room(e - s + 16)
	b = append(b, `{"type":"custom_tool_call_output"`...)
	// Codex names its own outputs fco_ (function) and ctco_ (custom); any
	// other id is not Codex's and is dropped.
	if id, _ := str(it.id); strings.HasPrefix(id, "fco_") {
		b = append(b, `,"id":`...)
		b = jsonstr.Append(b, "ctco_"+id[len("fco_"):])
	}
	b = append(b, `,"call_id":`...)
	b = appendString(b, it.callID)
	b = append(b, `,"output":`...)
	b = append(b, it.output...)
	w.kept(s, e, append(b, '}'))
}

// explain puts the reason in place of Codex's "unsupported custom tool
// call" in the output body[s:e] of a routed call that was not carried.
func (w *rewrite) explain(it *item, s, e int) {
	raw := w.body[s:e:e]
	callID, _ := str(it.callID)
	k := slices.IndexFunc(w.refused, func(r refusal) bool { return r.callID == callID })
	if k < 0 {
		return
	}
	out, isStr := str(it.output)
	if !isStr || !strings.HasPrefix(out, "unsupported custom tool call: ") {
		return
	}
	ms, _ := splitObject(raw)
	w.edits = append(w.edits, edit{s, e, joinObject(set(ms, "output", quote(w.refused[k].reason)))})
	w.r.Explained++
}

var customOutput = []byte(`{"type":"custom_tool_call_output","id":"ctco_`)

// splice is the body with every edit made, in parts: the bytes between
// the edits, as they came, and the edits' replacements, in order.
func (w *rewrite) splice() [][]byte {
	// The history's edits come in order; the few made after the scan
	// (tools, instructions) are put in their place.
	cmp := func(a, b edit) int { return a.start - b.start }
	for i := 1; i < len(w.edits); i++ {
		if w.edits[i].start < w.edits[i-1].start {
			late := slices.Clone(w.edits[i:])
			w.edits = w.edits[:i]
			for _, e := range late {
				at, _ := slices.BinarySearchFunc(w.edits, e, cmp)
				w.edits = slices.Insert(w.edits, at, e)
			}
			break
		}
	}
	parts := make([][]byte, 0, 2*len(w.edits)+1)
	last := 0
	for _, e := range w.edits {
		if e.start > last {
			parts = append(parts, w.body[last:e.start])
		}
		if len(e.repl) > 0 {
			parts = append(parts, e.repl)
		}
		last = e.end
	}
	return append(parts, w.body[last:])
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
// around a passage stays as Codex wrote it. Built on first use, by rowkit
// router only.
var encodedPassages = sync.OnceValue(func() [][2][]byte {
	var ps [][2][]byte
	for _, p := range basePassages {
		ps = append(ps, [2][]byte{inner(p[0]), inner(p[1])})
	}
	return ps
})

func inner(s string) []byte {
	b := jsonstr.Append(nil, s)
	return b[1 : len(b)-1]
}

// instructions replaces the base passages in the request's instructions,
// or in its first developer message when it has none. It returns why it
// left them alone, or "".
func (w *rewrite) instructions(top topLevel) string {
	where := "request's instructions"
	at := top.instructions
	if !at.ok() {
		at = span{}
	} else if s, ok := str(w.body[at.start:at.end]); !ok || s == "" {
		at = span{}
	}
	if !at.ok() {
		where = "first developer message"
		if at = w.dev; !at.ok() {
			return "left alone: the request has no instructions and no developer message"
		}
	}
	raw := w.body[at.start:at.end:at.end]
	ps := encodedPassages()
	next := make([]int, len(ps)) // where each passage occurs next
	for i, p := range ps {
		if next[i] = bytes.Index(raw, p[0]); next[i] < 0 {
			return "left alone: a passage of Codex 0.169's base instructions naming apply_patch or exec_command is not in the " + where
		}
	}
	// Every occurrence replaced, as one copy of the text.
	out := make([]byte, 0, len(raw)+512)
	pos := 0
	for {
		i := -1
		for j, at := range next {
			if at >= 0 && (i < 0 || at < next[i]) {
				i = j
			}
		}
		if i < 0 {
			break
		}
		out = append(append(out, raw[pos:next[i]]...), ps[i][1]...)
		pos = next[i] + len(ps[i][0])
		for j := range next {
			if next[j] >= 0 && next[j] < pos {
				if k := bytes.Index(raw[pos:], ps[j][0]); k >= 0 {
					next[j] = pos + k
				} else {
					next[j] = -1
				}
			}
		}
	}
	out = append(out, raw[pos:]...)
	w.edits = append(w.edits, edit{at.start, at.end, out})
	return ""
}
