package router

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

// sse writes events as the Responses API does: an event line, one data
// line, a blank line.
func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		var v struct{ Type string }
		if err := json.Unmarshal([]byte(e), &v); err != nil {
			panic(e)
		}
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", v.Type, e)
	}
	return b.String()
}

type streamOut struct {
	events  []event
	raw     string
	flushes int
	stats   StreamStats
	err     error
}

func rewriteStream(t *testing.T, c *Carrier, in string) streamOut {
	t.Helper()
	var out bytes.Buffer
	var o streamOut
	o.stats, o.err = c.RewriteStream(&out, func() { o.flushes++ }, strings.NewReader(in))
	o.raw = out.String()
	rd := newSSEReader(strings.NewReader(o.raw), MaxEventBytes)
	for {
		ev, err := rd.next()
		if err != nil {
			break
		}
		ev.raw, ev.data = bytes.Clone(ev.raw), bytes.Clone(ev.data)
		o.events = append(o.events, ev)
	}
	return o
}

const (
	created   = `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}}`
	completed = `{"type":"response.completed","sequence_number":9,"response":{"id":"resp_1","object":"response","status":"completed","output":[],"usage":{"total_tokens":3}}}`
)

func customAdded(seq int, id, name string) string {
	return fmt.Sprintf(`{"type":"response.output_item.added","sequence_number":%d,"output_index":0,"item":{"type":"custom_tool_call","id":%q,"status":"in_progress","call_id":"call_%s","name":%q,"input":""}}`, seq, id, id, name)
}

func customDelta(seq int, id, delta string) string {
	d, _ := json.Marshal(delta)
	return fmt.Sprintf(`{"type":"response.custom_tool_call_input.delta","sequence_number":%d,"output_index":0,"item_id":%q,"delta":%s}`, seq, id, d)
}

func customDone(seq int, id, name, input string) string {
	in, _ := json.Marshal(input)
	return fmt.Sprintf(`{"type":"response.output_item.done","sequence_number":%d,"output_index":0,"item":{"type":"custom_tool_call","id":%q,"status":"completed","call_id":"call_%s","name":%q,"input":%s}}`, seq, id, id, name, in)
}

// wantCarrier checks that ev is an output_item event of the carrier of
// tool on input for call id.
func wantCarrier(t *testing.T, c *Carrier, ev event, typ, id, tool, input, status string, seq int) {
	t.Helper()
	var v struct {
		Type  string
		Seq   int  `json:"sequence_number"`
		Index *int `json:"output_index"`
		Item  struct {
			ID, Type, Status, Arguments, Name string
			CallID                            string `json:"call_id"`
		}
	}
	if err := json.Unmarshal(ev.data, &v); err != nil {
		t.Fatalf("%s: %v", ev.data, err)
	}
	if v.Type != typ || ev.name != typ || v.Seq != seq || v.Index == nil || v.Item.ID != id || v.Item.Type != "function_call" ||
		v.Item.Name != "exec_command" || v.Item.CallID != "call_"+id || v.Item.Status != status {
		t.Fatalf("not the %s of %s's carrier: %s", typ, id, ev.data)
	}
	if status == "in_progress" {
		if v.Item.Arguments != "" {
			t.Fatalf("added with arguments %q", v.Item.Arguments)
		}
		return
	}
	want, _ := c.Encode(tool, input)
	if v.Item.Arguments != want {
		t.Fatalf("arguments %s, want %s", v.Item.Arguments, want)
	}
	if gt, gi, ok := Decode(v.Item.Arguments); !ok || gt != tool || gi != input {
		t.Fatal("the carrier does not decode to the call")
	}
}

func TestStreamRoutedCall(t *testing.T) {
	c := testCarrier(t)
	script := "in notes.txt\ntype 1:8ed3 \"x\""
	in := sse(created,
		customAdded(1, "ctc_1", "hpatch"),
		customDelta(2, "ctc_1", "in notes.txt\n"),
		customDelta(3, "ctc_1", "type 1:8ed3 \"x\""),
		`{"type":"response.custom_tool_call_input.done","sequence_number":4,"output_index":0,"item_id":"ctc_1","input":"x"}`,
		customDone(5, "ctc_1", "hpatch", script),
		completed)
	o := rewriteStream(t, c, in)
	if o.err != nil || o.stats != (StreamStats{Carried: 1}) || len(o.events) != 4 {
		t.Fatalf("%v %+v, %d events:\n%s", o.err, o.stats, len(o.events), o.raw)
	}
	if string(o.events[0].raw) != sse(created) || string(o.events[3].raw) != sse(completed) {
		t.Error("the events around the call changed")
	}
	wantCarrier(t, c, o.events[1], "response.output_item.added", "ctc_1", "hpatch", script, "in_progress", 1)
	wantCarrier(t, c, o.events[2], "response.output_item.done", "ctc_1", "hpatch", script, "completed", 5)
	if o.flushes != 4 {
		t.Errorf("%d flushes for 4 events", o.flushes)
	}
}

// A done with no added before it (deltas are optional too) still gets the
// pair; the terminal event's output array carries the carrier as well.
func TestStreamDoneOnly(t *testing.T) {
	c := testCarrier(t)
	done := customDone(3, "ctc_7", "shell", "hread notes.txt 1:2")
	var item json.RawMessage
	var v struct{ Item json.RawMessage }
	json.Unmarshal([]byte(done), &v)
	item = v.Item
	final := `{"type":"response.completed","sequence_number":4,"response":{"id":"resp_1","status":"completed","output":[{"type":"message","id":"m"},` + string(item) + `],"usage":{"total_tokens":3}}}`
	o := rewriteStream(t, c, sse(created, done, final))
	if o.err != nil || len(o.events) != 4 || o.stats.Carried != 1 {
		t.Fatalf("%v %+v:\n%s", o.err, o.stats, o.raw)
	}
	wantCarrier(t, c, o.events[1], "response.output_item.added", "ctc_7", "shell", "hread notes.txt 1:2", "in_progress", 3)
	wantCarrier(t, c, o.events[2], "response.output_item.done", "ctc_7", "shell", "hread notes.txt 1:2", "completed", 3)
	var r struct {
		Response struct {
			Output []json.RawMessage
			Usage  json.RawMessage
		}
	}
	json.Unmarshal(o.events[3].data, &r)
	if len(r.Response.Output) != 2 || string(r.Response.Output[0]) != `{"type":"message","id":"m"}` || string(r.Response.Usage) != `{"total_tokens":3}` {
		t.Fatalf("completed: %s", o.events[3].data)
	}
	args, _ := c.Encode("shell", "hread notes.txt 1:2")
	if want := string(carrierItem(callItem{ID: "ctc_7", CallID: "call_ctc_7"}, args, "completed")); string(r.Response.Output[1]) != want {
		t.Fatalf("output item %s, want %s", r.Response.Output[1], want)
	}
}

// Two routed calls interleaved with text and another custom tool: each
// call gets its pair at its own done, everything else is untouched.
func TestStreamInterleaved(t *testing.T) {
	c := testCarrier(t)
	text := `{"type":"response.output_text.delta","sequence_number":%d,"item_id":"msg_1","output_index":2,"content_index":0,"delta":"hi"}`
	other := `{"type":"response.output_item.done","sequence_number":11,"output_index":3,"item":{"type":"custom_tool_call","id":"ctc_o","call_id":"call_o","name":"apply_patch","input":"*** Begin Patch"}}`
	in := []string{created,
		customAdded(1, "ctc_a", "hpatch"),
		customAdded(2, "ctc_b", "shell"),
		fmt.Sprintf(text, 3),
		customDelta(4, "ctc_b", "ls"),
		customDelta(5, "ctc_a", "in a"),
		fmt.Sprintf(text, 6),
		customDone(7, "ctc_b", "shell", "ls"),
		fmt.Sprintf(text, 8),
		customDone(9, "ctc_a", "hpatch", "in a"),
		other,
		completed,
	}
	o := rewriteStream(t, c, sse(in...))
	if o.err != nil || o.stats.Carried != 2 || len(o.events) != 10 {
		t.Fatalf("%v %+v %d:\n%s", o.err, o.stats, len(o.events), o.raw)
	}
	raw := func(i int) string { return string(o.events[i].raw) }
	if raw(0) != sse(created) || raw(1) != sse(fmt.Sprintf(text, 3)) || raw(2) != sse(fmt.Sprintf(text, 6)) {
		t.Fatalf("order:\n%s", o.raw)
	}
	wantCarrier(t, c, o.events[3], "response.output_item.added", "ctc_b", "shell", "ls", "in_progress", 2)
	wantCarrier(t, c, o.events[4], "response.output_item.done", "ctc_b", "shell", "ls", "completed", 7)
	if raw(5) != sse(fmt.Sprintf(text, 8)) {
		t.Fatal("text delta")
	}
	wantCarrier(t, c, o.events[6], "response.output_item.added", "ctc_a", "hpatch", "in a", "in_progress", 1)
	wantCarrier(t, c, o.events[7], "response.output_item.done", "ctc_a", "hpatch", "in a", "completed", 9)
	if raw(8) != sse(other) || raw(9) != sse(completed) {
		t.Fatal("a custom call of another tool was touched")
	}
}

// A call that cannot be carried reaches Codex as itself (Codex answers
// "unsupported custom tool call"; the next request explains it).
func TestStreamRefused(t *testing.T) {
	c := testCarrier(t)
	added := customAdded(1, "ctc_n", "shell")
	done := customDone(3, "ctc_n", "shell", "echo \x00")
	o := rewriteStream(t, c, sse(created, added, customDelta(2, "ctc_n", "echo"), done, completed))
	if o.err != nil || o.stats != (StreamStats{Refused: 1}) {
		t.Fatalf("%v %+v", o.err, o.stats)
	}
	if o.raw != sse(created, added, done, completed) {
		t.Fatalf("got:\n%q", o.raw)
	}
	// Without an added before it, one is made from the done.
	o = rewriteStream(t, c, sse(done))
	if len(o.events) != 2 || !strings.Contains(string(o.events[0].data), `"type":"response.output_item.added"`) || string(o.events[1].raw) != sse(done) {
		t.Fatalf("got:\n%s", o.raw)
	}
}

// What is not a routed call passes byte for byte, framing included:
// comments, CRLF, multi-line data, data that is not JSON, fields other
// than data, events without data, a stream cut in the middle of an event.
func TestStreamPassthrough(t *testing.T) {
	c := testCarrier(t)
	in := ": keep-alive\n\n" +
		"event: response.created\r\ndata: " + created + "\r\n\r\n" +
		"data: {\"type\":\"response.output_text.delta\",\ndata: \"delta\":\"a\"}\n\n" +
		"data: not json custom_tool_call\n\n" +
		"id: 7\nretry: 100\nevent: ping\n\n" +
		"data:no space\n\n" +
		"data\n\n" +
		"\n\n" +
		"event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"item\":{\"type\":\"function_call\",\"name\":\"exec_command\"}}\n\n" +
		"data: " + strings.Repeat("x", 200<<10) + "\n\n" +
		"data: {\"type\":\"response.output_text.delta\",\"delta\":\"cut"
	o := rewriteStream(t, c, in)
	if o.err != nil || o.raw != in {
		t.Fatalf("%v; the stream changed:\n%.300q", o.err, o.raw)
	}
	if o.flushes != 12 {
		t.Errorf("%d flushes, want one per event (12)", o.flushes)
	}
	// Multi-line data is read joined with LF.
	rd := newSSEReader(strings.NewReader("data: a\ndata:b\r\ndata:  c\n\n"), 100)
	ev, err := rd.next()
	if err != nil || string(ev.data) != "a\nb\n c" {
		t.Fatalf("data %q, %v", ev.data, err)
	}
}

// Synthesized events keep the stream's framing: CRLF lines, and no event
// line when the stream has none.
func TestStreamFraming(t *testing.T) {
	c := testCarrier(t)
	in := "data: " + customAdded(1, "ctc_1", "shell") + "\r\n\r\n" + "data: " + customDone(2, "ctc_1", "shell", "ls") + "\r\n\r\n"
	o := rewriteStream(t, c, in)
	if len(o.events) != 2 {
		t.Fatalf("got:\n%q", o.raw)
	}
	for _, ev := range o.events {
		if ev.name != "" || !ev.crlf || !bytes.HasPrefix(ev.raw, []byte("data: {")) || !bytes.HasSuffix(ev.raw, []byte("}\r\n\r\n")) {
			t.Errorf("framing %q", ev.raw)
		}
	}
}

func TestStreamBounds(t *testing.T) {
	c := testCarrier(t)
	// An event over 16 MiB ends the stream with response.failed.
	big := "data: {\"type\":\"response.output_text.delta\",\"delta\":\"" + strings.Repeat("a", MaxEventBytes) + "\"}\n\n"
	o := rewriteStream(t, c, sse(created)+big+sse(completed))
	if o.err == nil || len(o.events) != 2 || string(o.events[0].raw) != sse(created) {
		t.Fatalf("%v; %d events", o.err, len(o.events))
	}
	checkFailed(t, o.events[1], "resp_1", "larger than 16777216 bytes")

	// More than 1,024 routed calls held at once.
	var in []string
	for i := range MaxRouted + 1 {
		in = append(in, customAdded(i, fmt.Sprintf("ctc_%d", i), "shell"))
	}
	o = rewriteStream(t, c, sse(in...))
	if o.err == nil || len(o.events) != 1 {
		t.Fatalf("%v; %d events", o.err, len(o.events))
	}
	checkFailed(t, o.events[0], "", "more than 1024 routed calls")
	// 1,024 are fine, and each done frees its place.
	in = in[:MaxRouted]
	for i := range MaxRouted {
		in = append(in, customDone(i, fmt.Sprintf("ctc_%d", i), "shell", "ls"))
	}
	in = append(in, in[:MaxRouted]...)
	o = rewriteStream(t, c, sse(in...))
	if o.err != nil || o.stats.Carried != MaxRouted {
		t.Fatalf("%v %+v", o.err, o.stats)
	}
}

func checkFailed(t *testing.T, ev event, id, msg string) {
	t.Helper()
	var v struct {
		Type     string
		Response struct {
			ID, Status string
			Error      struct{ Code, Message string }
		}
	}
	if err := json.Unmarshal(ev.data, &v); err != nil || v.Type != "response.failed" || ev.name != "response.failed" ||
		v.Response.ID != id || v.Response.Status != "failed" || v.Response.Error.Code != CodeRouterLimit || !strings.Contains(v.Response.Error.Message, msg) {
		t.Fatalf("not the failure: %s", ev.raw)
	}
}

// The reader loses nothing: its events put together are the stream.
func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{"", "\n", "data: a\n\n", ": c\r\n\r\ndata: x\r\ndata: y\r\n\r\n", "data: cut", "event: e\n\n\n\n", "\r\n\r\n\r"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		rd := newSSEReader(strings.NewReader(in), 1<<10)
		var all []byte
		for {
			ev, err := rd.next()
			if err == io.EOF {
				break
			}
			if err == errEventTooLarge {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(ev.raw) == 0 {
				t.Fatal("an empty event")
			}
			all = append(all, ev.raw...)
		}
		if string(all) != in {
			t.Fatalf("events %q, stream %q", all, in)
		}
	})
}

// Whatever the upstream sends, the rewrite does not fail, and a stream
// with no custom tool call in it passes unchanged.
func FuzzRewriteStream(f *testing.F) {
	f.Add(sse(created, customAdded(1, "c", "shell"), customDone(2, "c", "shell", "ls"), completed))
	f.Add(sse(created, customDone(2, "c", "hpatch", "in a\x00"), completed))
	f.Add("data: {\"type\":\"response.output_item.done\",\"item\":{\"type\":\"custom_tool_call\",\"name\":\"shell\",\"input\":1}}\n\n")
	f.Add(": x\r\n\r\ndata: [1,2]\n\n")
	c := testCarrier(f)
	f.Fuzz(func(t *testing.T, in string) {
		var out bytes.Buffer
		_, err := c.RewriteStream(&out, func() {}, strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(in, "custom_tool_call") && out.String() != in {
			t.Fatalf("changed:\n%q\n%q", in, out.String())
		}
	})
}
