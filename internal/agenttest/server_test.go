package agenttest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

var bodyCases = []struct{ text, body string }{
	{"Wall time: 0.0048 seconds\nOutput:\n1:8ed3 alpha\n", "1:8ed3 alpha\n"},
	{"Wall time: 0.0048 seconds\nOutput:", ""},
	{"Chunk ID: 99b16c\nWall time: 0.0000 seconds\nProcess exited with code 1\nOriginal token count: 3\nOutput:\nx\nOutput:\ny", "x\nOutput:\ny"},
	{"unsupported call: shell", "unsupported call: shell"},
	{"rows\n\n<system-reminder>\nA\n\n</system-reminder>\n\n<system-reminder>\nB\n</system-reminder>", "rows"},
	{"<system-reminder>\nonly\n</system-reminder>", "<system-reminder>\nonly\n</system-reminder>"},
	{"text mentions </system-reminder>", "text mentions </system-reminder>"},
}

func TestBody(t *testing.T) {
	for _, tc := range bodyCases {
		if got := (Output{Text: tc.text}).Body(); got != tc.body {
			t.Errorf("Body(%q) = %q, want %q", tc.text, got, tc.body)
		}
	}
	// Delivered keeps the client's wrapper and drops its reminders.
	for text, want := range map[string]string{
		"Wall time: 0.0048 seconds\nOutput:\nrows\n\n<system-reminder>\nA\n</system-reminder>":                        "Wall time: 0.0048 seconds\nOutput:\nrows",
		"Exit code 1\nFAIL\n\n<system-reminder>\nA\n\n</system-reminder>\n\n<system-reminder>\nB\n</system-reminder>": "Exit code 1\nFAIL",
		"<system-reminder>\nonly\n</system-reminder>":                                                                 "<system-reminder>\nonly\n</system-reminder>",
	} {
		if got := (Output{Text: text}).Delivered(); got != want {
			t.Errorf("Delivered(%q) = %q, want %q", text, got, want)
		}
	}
}

// FuzzBody: whatever a tool printed, Codex's header before it and Claude
// Code's reminder after it come off, and nothing else does.
func FuzzBody(f *testing.F) {
	for _, tc := range bodyCases {
		f.Add(tc.text)
	}
	f.Fuzz(func(t *testing.T, s string) {
		body := (Output{Text: s}).Body()
		if !strings.Contains(s, body) {
			t.Fatalf("Body(%q) = %q is not part of the text", s, body)
		}
		if strings.HasPrefix(s, "Wall time: ") || strings.HasPrefix(s, "Chunk ID: ") {
			return
		}
		if got := (Output{Text: "Wall time: 0.0010 seconds\nOutput:\n" + s}).Body(); got != body {
			t.Fatalf("under Codex's header, Body of %q is %q, want %q", s, got, body)
		}
		if got := (Output{Text: s + "\n\n<system-reminder>\nnote\n</system-reminder>"}).Body(); got != body {
			t.Fatalf("before Claude Code's reminder, Body of %q is %q, want %q", s, got, body)
		}
	})
}

func TestTomlString(t *testing.T) {
	// TOML basic strings share JSON's escapes for these; a JSON decoder is
	// the independent reference.
	for _, s := range []string{"", "plain", `q"uote\back`, "tab\tnl\ncr\r\x00\x1f\x7f", "é€𝄞"} {
		var got string
		if err := json.Unmarshal([]byte(tomlString(s)), &got); err != nil || got != s {
			t.Errorf("tomlString(%q) = %s: decodes to %q, %v", s, tomlString(s), got, err)
		}
	}
}

func TestOutputs(t *testing.T) {
	r := &Request{API: Messages}
	json.Unmarshal([]byte(`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"Bash","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","is_error":true,"content":[{"type":"text","text":"one"},{"type":"image","source":{}},{"type":"text","text":"two"}]}]}]}`), &r.JSON)
	o, ok := r.Output("a")
	if !ok || o.Text != "one\ntwo" || !o.IsError || o.Kind != "tool_result" {
		t.Errorf("Output(a) = %+v, %v", o, ok)
	}
	if r.Input() != "hi" {
		t.Errorf("Input() = %q", r.Input())
	}
	r = &Request{API: Responses}
	json.Unmarshal([]byte(`{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]},{"type":"function_call_output","call_id":"c","output":"out"},
		{"type":"custom_tool_call_output","call_id":"d","output":[{"type":"input_text","text":"x"}]}],"tools":[{"type":"function","name":"f"},{"type":"namespace","name":"mcp__s","tools":[{"name":"g"}]},{"type":"web_search"}]}`), &r.JSON)
	if o, ok := r.Output("d"); !ok || o.Text != "x" || o.Kind != "custom_tool_call_output" {
		t.Errorf("Output(d) = %+v", o)
	}
	if got := r.Tools(); len(got) != 3 || got[0] != "f" || got[1] != "mcp__s.g" || got[2] != "web_search" {
		t.Errorf("Tools() = %v", got)
	}
	if _, ok := r.Tool("mcp__s.g"); !ok {
		t.Error("Tool(mcp__s.g) not found")
	}
	if r.Input() != "go" {
		t.Errorf("Input() = %q", r.Input())
	}
}

// TestSideRequest: a Messages request without tools is answered with
// plain text and takes no step; GET /v1/models lists nothing; every
// request is logged.
func TestSideRequest(t *testing.T) {
	s := NewServer(Reply(Call{ID: "c", Name: "Bash", Args: map[string]any{"command": "true"}}))
	defer s.Close()
	post := func(body string) string {
		res, err := http.Post(s.URL+"/v1/messages", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	side := post(`{"model":"m","stream":true,"messages":[{"role":"user","content":"title?"}]}`)
	if !strings.Contains(side, `{"text":"ok","type":"text_delta"}`) || !strings.Contains(side, `"stop_reason":"end_turn"`) {
		t.Errorf("side request: %s", side)
	}
	turn := post(`{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"go"}]}`)
	if !strings.Contains(turn, `"partial_json":"{\"command\":\"true\"}"`) || !strings.Contains(turn, `"stop_reason":"tool_use"`) {
		t.Errorf("the scripted turn: %s", turn)
	}
	res, err := http.Get(s.URL + "/v1/models")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("GET /v1/models: %v %v", res, err)
	}
	res.Body.Close()
	if log := s.Requests(); len(log) != 3 || log[0].Turn != -1 || log[1].Turn != 0 || log[2].API != "" {
		t.Errorf("log: %d requests", len(log))
	}
	if len(s.Turns()) != 1 {
		t.Errorf("%d turns, want 1", len(s.Turns()))
	}
}
