package router

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/agent"
	"github.com/rowkit/rowkit/internal/errs"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/codex-0.169")

// recorded reads a request body Codex 0.169 sent (testdata/codex-0.169/
// README.md says how they were recorded).
func recorded(t *testing.T, name string) []byte {
	t.Helper()
	b, err := readRecorded(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readRecorded(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join("testdata/codex-0.169", name+".json"))
}

// The recordings' carriers name /tmp/rowkit; a router with another binary
// path still takes them back.
func testCarrier(t testing.TB) *Carrier { return mustCarrier(t, "/opt/rowkit/bin/rowkit") }

func members(t *testing.T, b []byte) []member {
	t.Helper()
	ms, ok := splitObject(b)
	if !ok {
		t.Fatalf("not a JSON object: %.80s", b)
	}
	return ms
}

func elems(t *testing.T, b json.RawMessage) []json.RawMessage {
	t.Helper()
	es, ok := splitArray(b)
	if !ok {
		t.Fatalf("not a JSON array: %.80s", b)
	}
	return es
}

// golden compares got with testdata/codex-0.169/NAME.want.json.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata/codex-0.169", name+".want.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s (go test -update rewrites it)", name, path)
	}
}

// Codex's first request of a session: tools and instructions rewritten,
// everything else byte for byte.
func TestRewriteTurn(t *testing.T) {
	c := testCarrier(t)
	in := recorded(t, "turn")
	r := c.Rewrite(in)
	if !r.Routed || r.Tools != "" || r.Instructions != "" || r.Decoded != 0 {
		t.Fatalf("Rewrite: %+v", r)
	}
	golden(t, "turn", r.Body)
	orig, got := members(t, in), members(t, r.Body)
	if len(orig) != len(got) {
		t.Fatalf("top-level members: %d, want %d", len(got), len(orig))
	}
	for i := range orig {
		if orig[i].key != got[i].key {
			t.Fatalf("member %d is %q, want %q: the order changed", i, got[i].key, orig[i].key)
		}
		if orig[i].key != "tools" && orig[i].key != "input" && !bytes.Equal(orig[i].raw, got[i].raw) {
			t.Errorf("%s changed", orig[i].key)
		}
	}
	checkRewrittenTools(t, get(orig, "tools"), get(got, "tools"))

	// The input differs in the first developer message only, and there
	// only in the passages that named apply_patch and exec_command.
	oi, gi := elems(t, get(orig, "input")), elems(t, get(got, "input"))
	if len(oi) != len(gi) {
		t.Fatal("input items added or removed")
	}
	for i := 1; i < len(oi); i++ {
		if !bytes.Equal(oi[i], gi[i]) {
			t.Errorf("input item %d changed", i)
		}
	}
	back := gi[0]
	for _, p := range encodedPassages() {
		if bytes.Count(back, p[1]) != 1 {
			t.Fatalf("the replacement %q is not in the developer message once", p[1])
		}
		back = bytes.Replace(back, p[1], p[0], 1)
	}
	if !bytes.Equal(back, oi[0]) {
		t.Error("the developer message differs beyond the base passages")
	}
	var msg struct {
		Content []struct{ Text string }
	}
	json.Unmarshal(gi[0], &msg)
	text := msg.Content[0].Text
	for _, gone := range []string{"apply_patch", "exec_command"} {
		if strings.Contains(text, gone) {
			t.Errorf("the instructions still name %s", gone)
		}
	}
	for _, want := range []string{Guidance, "`hpatch`", "`shell`"} {
		if !strings.Contains(text, want) {
			t.Errorf("the instructions do not name %q", want)
		}
	}
}

// checkRewrittenTools: exactly Codex's tools without apply_patch and exec_command,
// in order and byte for byte, then hpatch and shell.
func checkRewrittenTools(t *testing.T, orig, got json.RawMessage) {
	t.Helper()
	var want []json.RawMessage
	for _, tl := range elems(t, orig) {
		if n := toolName(tl); n != "apply_patch" && n != "exec_command" {
			want = append(want, tl)
		}
	}
	g := elems(t, got)
	if len(g) != len(want)+2 {
		t.Fatalf("%d tools, want %d", len(g), len(want)+2)
	}
	for i := range want {
		if !bytes.Equal(g[i], want[i]) {
			t.Errorf("tool %d (%s) changed", i, toolName(want[i]))
		}
	}
	if hpatch, shell := builtinTools(agent.CodexCataloguePolicy); !bytes.Equal(g[len(want)], hpatch) || !bytes.Equal(g[len(want)+1], shell) {
		t.Error("hpatch and shell are not the last two tools")
	}
	names := map[string]int{}
	for _, tl := range g {
		names[toolName(tl)]++
	}
	if names["apply_patch"] != 0 || names["exec_command"] != 0 || names["hpatch"] != 1 || names["shell"] != 1 || names["write_stdin"] != 1 {
		t.Errorf("tool names: %v", names)
	}
}

// The request after a response with a carried hpatch call, a native
// exec_command and an hpatch call the router could not carry (its script
// holds a NUL): the carrier and its output become the model's own custom
// call and output, the native call stays, and Codex's "unsupported custom
// tool call" becomes the reason.
func TestRewriteHistory(t *testing.T) {
	c := testCarrier(t)
	in := recorded(t, "calls")
	r := c.Rewrite(in)
	if !r.Routed || r.Decoded != 1 || r.Explained != 1 {
		t.Fatalf("Rewrite: %+v", r)
	}
	golden(t, "calls", r.Body)
	oi, gi := elems(t, get(members(t, in), "input")), elems(t, get(members(t, r.Body), "input"))
	if len(oi) != len(gi) {
		t.Fatal("items added or removed")
	}
	type item struct {
		Type, ID, Status, CallID, Name, Input, Arguments string
		Output                                           string
	}
	decode := func(b json.RawMessage) (it item) {
		var v struct {
			Type      string `json:"type"`
			ID        string `json:"id"`
			Status    string `json:"status"`
			CallID    string `json:"call_id"`
			Name      string `json:"name"`
			Input     string `json:"input"`
			Arguments string `json:"arguments"`
			Output    string `json:"output"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		return item(v)
	}
	changed := 0
	for i := range oi {
		o, g := decode(oi[i]), decode(gi[i])
		switch {
		case o.Type == "function_call" && o.CallID == "call_rec_1":
			want := item{Type: "custom_tool_call", ID: "ctc_rec_1", Status: "completed", CallID: "call_rec_1", Name: "hpatch", Input: "in notes.txt\ntype 2:f44e \"BETA\""}
			if g != want {
				t.Errorf("carrier: got %+v\nwant %+v", g, want)
			}
			if !strings.HasPrefix(string(gi[i]), `{"type":"custom_tool_call","id":"ctc_rec_1","status":"completed","call_id":"call_rec_1","name":"hpatch","input":`) {
				t.Errorf("carrier: key order %s", gi[i])
			}
			changed++
		case o.Type == "function_call_output" && o.CallID == "call_rec_1":
			want := item{Type: "custom_tool_call_output", ID: "ctco_" + strings.TrimPrefix(o.ID, "fco_"), CallID: "call_rec_1", Output: o.Output}
			if g != want || !strings.HasPrefix(o.ID, "fco_") || !strings.Contains(g.Output, "applied: 1 modified") {
				t.Errorf("carrier output: got %+v\nwant %+v", g, want)
			}
			changed++
		case o.Type == "custom_tool_call_output" && o.CallID == "call_rec_3":
			if o.Output != "unsupported custom tool call: hpatch" {
				t.Fatalf("the recording's output is %q", o.Output)
			}
			want := o
			want.Output = "hpatch: not run: the script contains a NUL byte, which a command line cannot carry; remove it and call again"
			if g != want {
				t.Errorf("refused call's output: got %+v\nwant %+v", g, want)
			}
			changed++
		case i == 0:
		default:
			if !bytes.Equal(oi[i], gi[i]) {
				t.Errorf("item %d (%s %s) changed", i, o.Type, o.Name)
			}
		}
	}
	if changed != 3 {
		t.Fatalf("%d items changed, want 3", changed)
	}
	if bytes.Contains(r.Body, []byte(" carrier ")) || bytes.Contains(r.Body, []byte("ROWKIT_")) {
		t.Error("a carrier reached the upstream")
	}
}

// The requests of one session grow item by item, also across
// `codex exec resume`: the rewrite keeps every request's input a prefix of
// the next, and the tools and instructions the same, so the prompt cache
// holds.
func TestRewritePrefixStable(t *testing.T) {
	c := testCarrier(t)
	var prev []json.RawMessage
	var prevTools json.RawMessage
	for _, name := range []string{"turn", "calls", "resume"} {
		r := c.Rewrite(recorded(t, name))
		ms := members(t, r.Body)
		items := elems(t, get(ms, "input"))
		if len(items) < len(prev) {
			t.Fatalf("%s: input shrank", name)
		}
		for i := range prev {
			if !bytes.Equal(prev[i], items[i]) {
				t.Fatalf("%s: input item %d differs from the previous request's", name, i)
			}
		}
		if prevTools != nil && !bytes.Equal(prevTools, get(ms, "tools")) {
			t.Fatalf("%s: the tools changed", name)
		}
		prev, prevTools = items, get(ms, "tools")
	}
	golden(t, "resume", c.Rewrite(recorded(t, "resume")).Body)
}

// Codex's compaction request has no tools and the whole history: the
// history is decoded, the rest is left alone.
func TestRewriteCompaction(t *testing.T) {
	c := testCarrier(t)
	in := recorded(t, "compaction")
	r := c.Rewrite(in)
	if r.Routed || r.Decoded != 1 || r.Explained != 1 || !strings.Contains(r.Tools, "no exec_command") || r.Instructions != "" {
		t.Fatalf("Rewrite: %+v", r)
	}
	golden(t, "compaction", r.Body)
	orig, got := members(t, in), members(t, r.Body)
	for i := range orig {
		if orig[i].key != "input" && !bytes.Equal(orig[i].raw, got[i].raw) {
			t.Errorf("%s changed", orig[i].key)
		}
	}
	if string(get(got, "tools")) != "[]" {
		t.Errorf("tools %s", get(got, "tools"))
	}
	// Its tools are none, so it names hpatch and shell in its base
	// instructions as the session's routed requests do: the same prefix.
	oi, gi := elems(t, get(orig, "input")), elems(t, get(got, "input"))
	back := gi[0]
	for _, p := range encodedPassages() {
		if bytes.Count(back, p[1]) != 1 {
			t.Fatalf("the replacement %q is not in the compaction's developer message once", p[1])
		}
		back = bytes.Replace(back, p[1], p[0], 1)
	}
	if !bytes.Equal(back, oi[0]) {
		t.Error("the compaction's developer message differs beyond the base passages")
	}
	if bytes.Contains(r.Body, []byte("ROWKIT_")) {
		t.Error("a carrier reached the upstream")
	}
}

// A request that does not qualify keeps its tools; when nothing else
// applies either, its bytes go out as they came.
func TestRewriteLeftAlone(t *testing.T) {
	c := testCarrier(t)
	turn := recorded(t, "turn")
	edit := func(key string, raw string) []byte {
		ms := members(t, turn)
		if raw == "" {
			var out []member
			for _, m := range ms {
				if m.key != key {
					out = append(out, m)
				}
			}
			return joinObject(out)
		}
		return joinObject(set(ms, key, json.RawMessage(raw)))
	}
	withoutExec := func() string {
		var kept []json.RawMessage
		for _, tl := range elems(t, get(members(t, turn), "tools")) {
			if toolName(tl) != "exec_command" {
				kept = append(kept, tl)
			}
		}
		return string(joinArray(kept))
	}
	withShell := func() string {
		ts := elems(t, get(members(t, turn), "tools"))
		return string(joinArray(append(ts, json.RawMessage(`{"type":"function","name":"shell","parameters":{}}`))))
	}
	for _, tc := range []struct {
		name, why string
		body      []byte
	}{
		{"stream false", "does not stream", edit("stream", "false")},
		{"no stream", "does not stream", edit("stream", "")},
		{"previous_response_id", "previous_response_id", edit("previous_response_id", `"resp_1"`)},
		{"no exec_command", "no exec_command", edit("tools", withoutExec())},
		{"a shell tool", "already has a tool named hpatch or shell", edit("tools", withShell())},
		{"tool_choice apply_patch", "tool_choice names apply_patch", edit("tool_choice", `{"type":"custom","name":"apply_patch"}`)},
		{"tool_choice exec_command", "tool_choice names exec_command", edit("tool_choice", `{"type":"function","name":"exec_command"}`)},
		{"allowed_tools", "tool_choice names exec_command", edit("tool_choice", `{"type":"allowed_tools","mode":"auto","tools":[{"type":"function","name":"exec_command"}]}`)},
		{"no tools", "no tools", edit("tools", "")},
	} {
		r := c.Rewrite(tc.body)
		if r.Routed || !strings.Contains(r.Tools, tc.why) {
			t.Errorf("%s: %+v, want a reason with %q", tc.name, r, tc.why)
		}
		if &r.Body[0] != &tc.body[0] || len(r.Body) != len(tc.body) {
			t.Errorf("%s: the body was re-encoded although nothing changed", tc.name)
		}
	}
	// A tool_choice that names a kept tool, or a mode, still qualifies.
	for _, tc := range []string{`"auto"`, `"required"`, `{"type":"function","name":"write_stdin"}`, "null"} {
		if r := c.Rewrite(edit("tool_choice", tc)); !r.Routed {
			t.Errorf("tool_choice %s: %+v", tc, r)
		}
	}
	for _, body := range []string{``, `[]`, `{"a":`, `"x"`, `{"input":[1,2]} x`} {
		if r := c.Rewrite([]byte(body)); r.Routed || string(r.Body) != body {
			t.Errorf("Rewrite(%q) = %+v", body, r)
		}
	}
}

// Instructions in the request's own field are rewritten there; other
// instructions are left alone, with the reason.
func TestRewriteInstructions(t *testing.T) {
	c := testCarrier(t)
	turn := members(t, recorded(t, "turn"))
	var dev struct {
		Content []struct{ Text string }
	}
	json.Unmarshal(elems(t, get(turn, "input"))[0], &dev)
	base := dev.Content[0].Text

	// In "instructions": rewritten there, the developer messages not.
	withField := joinObject(set(append([]member(nil), turn...), "instructions", quote(base)))
	r := c.Rewrite(withField)
	var got struct{ Instructions string }
	json.Unmarshal(r.Body, &got)
	if r.Instructions != "" || strings.Contains(got.Instructions, "apply_patch") || !strings.Contains(got.Instructions, Guidance) {
		t.Fatalf("instructions field: %+v", r.Instructions)
	}
	if !bytes.Equal(elems(t, get(members(t, r.Body), "input"))[0], elems(t, get(turn, "input"))[0]) {
		t.Error("the developer message changed although the request had instructions")
	}
	// Another Codex version's words: left alone, with the reason.
	other := bytes.Replace(recorded(t, "turn"), []byte("Use `apply_patch` for manual code edits."), []byte("Use `apply_patch` for code edits."), 1)
	r = c.Rewrite(other)
	if !r.Routed || !strings.Contains(r.Instructions, "is not in the first developer message") {
		t.Fatalf("other instructions: %+v", r)
	}
	if !bytes.Equal(elems(t, get(members(t, r.Body), "input"))[0], elems(t, get(members(t, other), "input"))[0]) {
		t.Error("instructions without every passage were changed")
	}
}

// Whatever the body, Rewrite does not fail; what it makes of JSON is
// JSON, and what it leaves alone goes out as it came.
func FuzzRewrite(f *testing.F) {
	for _, name := range []string{"turn", "calls", "compaction"} {
		b, err := os.ReadFile(filepath.Join("testdata/codex-0.169", name+".json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"stream":true,"tools":[{"type":"function","name":"exec_command"}],"input":[]}`))
	f.Add([]byte(`{"input":[{"type":"custom_tool_call","name":"shell","call_id":"c","input":"\u0000"},{"type":"custom_tool_call_output","call_id":"c","output":"unsupported custom tool call: shell"}]}`))
	f.Add([]byte(`[1]`))
	c := testCarrier(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		r := c.Rewrite(body)
		if !r.Routed && r.Decoded == 0 && r.Explained == 0 {
			if !bytes.Equal(r.Body, body) {
				t.Fatal("changed a body it had nothing to do with")
			}
			return
		}
		// A body that is not JSON (a value skipped whole, such as {""})
		// goes on as it came, for the upstream to refuse.
		if json.Valid(body) && !json.Valid(r.Body) {
			t.Fatalf("not JSON: %.200s", r.Body)
		}
	})
}

// toolName is a tool's name, as the rewrite reads it.
func toolName(t json.RawMessage) string {
	_, name := toolTypeName(t)
	return name
}

// The shell tool a request gets names the bound of its model's carriers,
// and the carriers for its response ask for the model's tool output policy:
// the largest output Codex then passes whole (TestCodex, TestCodexFallback).
func TestRewriteForModel(t *testing.T) {
	body := recorded(t, "turn")
	for _, tc := range []struct {
		model, bound, tokens string
	}{
		{"gpt-5.5-codex", "39600", "10000"},
		{"gpt-6-sol", "39600", "10000"},
		{"gpt-4.1", "9600", "2500"},
		{"gpt-5.2-codex", "9600", "2500"},
	} {
		b := bytes.Replace(body, []byte(`"model":"gpt-5.5-codex"`), []byte(`"model":"`+tc.model+`"`), 1)
		r := testCarrier(t).Rewrite(b)
		if !r.Routed || r.Model != tc.model {
			t.Fatalf("%s: routed %v, model %q", tc.model, r.Routed, r.Model)
		}
		var shell struct{ Description string }
		for _, tl := range elems(t, get(members(t, r.Body), "tools")) {
			if toolName(tl) == "shell" {
				json.Unmarshal(tl, &shell)
			}
		}
		n, _ := strconv.Atoi(tc.bound)
		if !strings.Contains(shell.Description, "Output over "+errs.Thousands(n)+" bytes") {
			t.Errorf("%s: the shell tool says %q", tc.model, shell.Description)
		}
		args, err := testCarrier(t).ForModel(tc.model).Encode(ToolShell, "true")
		if err != nil || !strings.Contains(args, " carrier --max-output "+tc.bound+" shell ") || !strings.HasSuffix(args, `"max_output_tokens":`+tc.tokens+`}`) {
			t.Errorf("%s: the carrier %s, %v", tc.model, args, err)
		}
	}
}
