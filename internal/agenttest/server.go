// Package agenttest is a scripted model for tests that drive real agent
// clients (the Codex CLI, Claude Code) offline, as net/http/httptest is a
// scripted peer for HTTP code. A Server listens on 127.0.0.1 and speaks
// the two wire protocols the clients use: the OpenAI Responses API
// (POST /v1/responses, GET /v1/models) and the Anthropic Messages API
// (POST /v1/messages). Each model request is answered with the next Step
// of a script, streamed as the real API streams it; every request is
// logged with its headers and body, so a test asserts on exactly what the
// client sent the model, the outputs of its tools above all (Output).
// Steps are functions of the request, so the scripted model can copy what
// a tool returned into its next call, as a model does.
//
// Codex and Claude start the real clients against a Server, with a
// temporary home, no network and rowkit registered as an MCP server.
//
// The package is general on purpose: a proxy between a client and a
// model (rowkit router) can be tested by pointing the client at the proxy
// and the proxy at a Server, and a Turn can carry reasoning items, custom
// tool calls, raw events or an HTTP error.
//
// A Server can also be played, by a person or a model deciding each turn
// (bench/agentab plays real bug fixes this way): KeepAlive keeps a
// stream alive while a step waits (ReplyFiles waits for a reply file),
// side requests (titles, quota checks, compaction) are answered without
// a step (IsSide), and Record logs every request with its reply, which
// LoadSession reads back to measure the session.
package agenttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// API names the wire protocol of a request.
type API string

const (
	Responses API = "responses" // OpenAI Responses: Codex
	Messages  API = "messages"  // Anthropic Messages: Claude Code
)

// Server is a scripted model on loopback. Its methods are safe to call
// while a client runs; its fields are set before one starts. A Step runs
// on the server's goroutine, so it reports a failure with t.Error, never
// t.Fatal.
type Server struct {
	// URL is the server's base, http://127.0.0.1:PORT, without /v1.
	URL string

	// Side says whether a request is outside the script: it is answered
	// with SideText and takes no step. The default (nil) takes a Messages
	// request without tools as a side request: Claude Code asks for
	// titles and summaries that way.
	Side func(r *Request) bool
	// SideText answers side requests; the default is "ok".
	SideText string
	// Final answers model requests after the script's last step; the
	// default is a message "done.", which ends a client's turn.
	Final Step
	// KeepAlive, when not zero, keeps a model request's stream alive
	// while its step decides (a person, a model or a file it waits for):
	// once a step has taken this long, the response's headers go out and
	// then, every KeepAlive, an event the client reads and ignores (see
	// keepAlive), so that no idle timeout of the client fires.
	KeepAlive time.Duration
	// Record, when set, receives every request as one JSON line once it
	// is answered (see Recorded), secrets left out: a session log that
	// LoadSession reads back.
	Record io.Writer

	// commentKeepAlive keeps streams alive with SSE comments instead: what
	// TestKeepAliveCodex shows does not keep Codex's stream alive.
	commentKeepAlive bool

	hs    *httptest.Server
	mu    sync.Mutex
	steps []Step
	turns int
	log   []*Request
	// recorded are the body members Record has written whole, by name.
	recorded map[string]recordedValue
}

// NewServer starts a scripted model that answers its first model requests
// with steps, in order. Close it when done.
func NewServer(steps ...Step) *Server {
	s := &Server{steps: steps}
	s.hs = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.hs.URL
	return s
}

// Close stops the server, waiting for requests in flight.
func (s *Server) Close() { s.hs.Close() }

// Append adds steps to the end of the script.
func (s *Server) Append(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steps = append(s.steps, steps...)
}

// Requests returns every request so far, in arrival order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.log...)
}

// Turns returns the model requests that took a scripted step (or Final),
// in order: side requests, model listings and other paths left out.
func (s *Server) Turns() []*Request {
	var out []*Request
	for _, r := range s.Requests() {
		if r.Turn >= 0 {
			out = append(out, r)
		}
	}
	return out
}

// Output is the output of tool call callID as the client last sent it
// back to the model, searched from the latest request backwards.
func (s *Server) Output(callID string) (Output, bool) {
	log := s.Requests()
	for i := len(log) - 1; i >= 0; i-- {
		if o, ok := log[i].Output(callID); ok {
			return o, true
		}
	}
	return Output{}, false
}

// Request is one HTTP request the server received.
type Request struct {
	API    API // "" for a path that is neither API's model endpoint
	Method string
	Path   string
	Header http.Header
	Body   []byte
	// JSON is the body decoded, nil when it is not a JSON object.
	JSON map[string]any
	// Turn is the index of the step that answered it (len(script) and up
	// for Final), or -1 for a side request or another path.
	Turn int
	// Seq is the request's place in arrival order, from 0.
	Seq int
	// Side says the request was answered as a side request.
	Side bool
	// Reply is the turn that answered a model or side request, nil for
	// another path.
	Reply *Turn
}

// Tools are the names of the tools the request offers the model, in order.
// A Responses namespace (Codex's MCP servers) contributes
// "NAMESPACE.NAME" for each of its tools.
func (r *Request) Tools() []string {
	var out []string
	ts, _ := r.JSON["tools"].([]any)
	for _, t := range ts {
		m, _ := t.(map[string]any)
		name := toolName(m)
		if sub, ok := m["tools"].([]any); ok && m["type"] == "namespace" {
			for _, st := range sub {
				sm, _ := st.(map[string]any)
				sn, _ := sm["name"].(string)
				out = append(out, name+"."+sn)
			}
			continue
		}
		out = append(out, name)
	}
	return out
}

// toolName is the name of an offered tool's JSON m: its name, or its type
// for a built-in tool that has none.
func toolName(m map[string]any) string {
	if name, _ := m["name"].(string); name != "" {
		return name
	}
	name, _ := m["type"].(string)
	return name
}

// Tool returns the JSON of the offered tool named name (for a namespaced
// tool, "NAMESPACE.NAME" as Tools gives it).
func (r *Request) Tool(name string) (map[string]any, bool) {
	ns, sub, nested := strings.Cut(name, ".")
	ts, _ := r.JSON["tools"].([]any)
	for _, t := range ts {
		m, _ := t.(map[string]any)
		if toolName(m) != ns {
			continue
		}
		if !nested {
			return m, true
		}
		subs, _ := m["tools"].([]any)
		for _, st := range subs {
			sm, _ := st.(map[string]any)
			if sm["name"] == sub {
				return sm, true
			}
		}
	}
	return nil, false
}

// Output is a tool's output as the client handed it to the model.
type Output struct {
	CallID string
	// Kind is the item that carried it: function_call_output,
	// custom_tool_call_output or tool_search_output (Responses),
	// tool_result (Messages).
	Kind string
	// Text is what the model reads: the output string, or the text parts
	// of a content list joined by "\n" (the other parts, images, are in
	// Raw only); for tool_search_output, the JSON of the tools found.
	Text string
	// IsError is a Messages tool_result's is_error.
	IsError bool
	// Raw is the whole item as the client sent it.
	Raw json.RawMessage
}

// Body is the tool's own output within Text, without what the client put
// around it: the header Codex writes before it (a "Wall time" line for an
// MCP result; chunk id, wall time, exit code and token count for
// exec_command; each up to a line "Output:"), and the <system-reminder>
// blocks Claude Code appends to the last tool result of a turn. Claude
// Code's Bash drops the output's final newlines; Body does not restore
// them.
func (o Output) Body() string {
	t := o.Delivered()
	if strings.HasPrefix(t, "Wall time: ") || strings.HasPrefix(t, "Chunk ID: ") {
		if _, rest, ok := strings.Cut(t, "\nOutput:\n"); ok {
			t = rest
		} else if strings.HasSuffix(t, "\nOutput:") {
			t = ""
		}
	}
	return t
}

// Delivered is Text without the <system-reminder> blocks Claude Code
// appends to the last tool result of a turn: the tool's output as the
// client delivered it, its own wrapper (Codex's header, Claude Code's
// "Exit code N") included, the client's other messages left out.
func (o Output) Delivered() string {
	t := o.Text
	const reminder = "\n\n<system-reminder>\n"
	for strings.HasSuffix(t, "</system-reminder>") {
		i := strings.LastIndex(t, reminder)
		if i < 0 {
			break
		}
		t = t[:i]
	}
	return t
}

// Outputs are the tool outputs the request carries, in order.
func (r *Request) Outputs() []Output {
	var out []Output
	switch r.API {
	case Responses:
		items, _ := r.JSON["input"].([]any)
		for _, it := range items {
			m, _ := it.(map[string]any)
			kind, _ := m["type"].(string)
			id, _ := m["call_id"].(string)
			raw, _ := json.Marshal(m)
			switch kind {
			case "function_call_output", "custom_tool_call_output":
				out = append(out, Output{CallID: id, Kind: kind, Text: contentText(m["output"]), Raw: raw})
			case "tool_search_output":
				tools, _ := json.Marshal(m["tools"])
				out = append(out, Output{CallID: id, Kind: kind, Text: string(tools), Raw: raw})
			}
		}
	case Messages:
		msgs, _ := r.JSON["messages"].([]any)
		for _, msg := range msgs {
			mm, _ := msg.(map[string]any)
			blocks, _ := mm["content"].([]any)
			for _, b := range blocks {
				bm, _ := b.(map[string]any)
				if bm["type"] != "tool_result" {
					continue
				}
				id, _ := bm["tool_use_id"].(string)
				isErr, _ := bm["is_error"].(bool)
				raw, _ := json.Marshal(bm)
				out = append(out, Output{CallID: id, Kind: "tool_result", Text: contentText(bm["content"]), IsError: isErr, Raw: raw})
			}
		}
	}
	return out
}

// Output is the output of call callID in this request.
func (r *Request) Output(callID string) (Output, bool) {
	for _, o := range r.Outputs() {
		if o.CallID == callID {
			return o, true
		}
	}
	return Output{}, false
}

// Input is the latest user text of the request: the prompt on the first
// turn.
func (r *Request) Input() string {
	var items []any
	switch r.API {
	case Responses:
		items, _ = r.JSON["input"].([]any)
	case Messages:
		items, _ = r.JSON["messages"].([]any)
	}
	for i := len(items) - 1; i >= 0; i-- {
		m, _ := items[i].(map[string]any)
		if m["role"] != "user" {
			continue
		}
		if t := contentText(m["content"]); t != "" {
			return t
		}
	}
	return ""
}

// contentText is the text of an output or content value: a string, or a
// list of parts whose text parts are joined by "\n".
func contentText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var parts []string
		for _, p := range x {
			pm, _ := p.(map[string]any)
			if t, ok := pm["text"].(string); ok {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

func (s *Server) serve(w http.ResponseWriter, hr *http.Request) {
	body, _ := io.ReadAll(hr.Body)
	r := newRequest(hr, body)
	path := strings.TrimPrefix(hr.URL.Path, "/v1")
	step, side := s.take(r)
	switch {
	case hr.Method == http.MethodGet && path == "/models":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[],"models":[]}`)
	case hr.Method == http.MethodPost && path == "/messages/count_tokens":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"input_tokens":%d}`, len(body)/4)
	case r.API == "":
		http.NotFound(w, hr)
	case side:
		t := Turn{Items: []Item{Message{Text: s.sideText()}}}
		s.answered(r, t)
		s.answer(w, r, t, false)
	default:
		t, started := s.decide(w, hr, r, step)
		s.answered(r, t)
		s.answer(w, r, t, started)
	}
	if r.API == "" {
		s.answered(r, Turn{})
	}
}

// take logs r and, for a model request, picks its step.
func (s *Server) take(r *Request) (Step, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Seq = len(s.log)
	s.log = append(s.log, r)
	if r.API == "" {
		return nil, false
	}
	side := false
	if s.Side != nil {
		side = s.Side(r)
	} else {
		side = IsSide(r)
	}
	if side {
		r.Side = true
		return nil, true
	}
	r.Turn = s.turns
	s.turns++
	if r.Turn < len(s.steps) {
		return s.steps[r.Turn], false
	}
	if s.Final != nil {
		return s.Final, false
	}
	return Reply(Message{Text: "done."}), false
}

func (s *Server) sideText() string {
	if s.SideText != "" {
		return s.SideText
	}
	return "ok"
}

// answer writes t; started says keepAlive already sent the stream's
// headers, so that an HTTP error can only go out as an error event.
func (s *Server) answer(w http.ResponseWriter, r *Request, t Turn, started bool) {
	if started {
		var buf bytes.Buffer
		if t.Status != 0 {
			writeStreamError(&buf, r.API, t)
		} else if r.API == Responses {
			writeResponse(&buf, r.Turn, r.model(), t)
		} else {
			writeMessage(&buf, r.Turn, r.model(), t)
		}
		w.Write(buf.Bytes())
		return
	}
	if t.Status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(t.Status)
		io.WriteString(w, t.ErrorBody)
		return
	}
	model, _ := r.JSON["model"].(string)
	if stream, _ := r.JSON["stream"].(bool); !stream && r.API == Messages {
		w.Header().Set("Content-Type", "application/json")
		w.Write(messageJSON(r.Turn, model, t))
		return
	}
	var buf bytes.Buffer
	if r.API == Responses {
		writeResponse(&buf, r.Turn, model, t)
	} else {
		writeMessage(&buf, r.Turn, model, t)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(buf.Bytes())
}
