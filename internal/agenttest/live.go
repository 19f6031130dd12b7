package agenttest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// What makes a Server fit to be played by a person or a model as well as
// by a script: a step may take minutes, so the stream is kept alive
// while it decides; the side requests a client makes by itself are
// answered without a step; and every request is recorded with its reply,
// so a session can be read back and measured.

// IsSide is the default Server.Side: the requests a client makes beside
// the model's turns. Claude Code asks for titles, summaries and topic
// checks as Messages requests without tools, and checks its quota with a
// one-token request; Codex compacts a long history with a request whose
// turn metadata names the kind "compaction" (or, before that header, a
// request that offers no tools).
func IsSide(r *Request) bool {
	ts, _ := r.JSON["tools"].([]any)
	switch r.API {
	case Messages:
		if mt, ok := r.JSON["max_tokens"].(float64); ok && mt <= 1 {
			return true
		}
		return len(ts) == 0
	case Responses:
		return strings.Contains(r.Header.Get("X-Codex-Turn-Metadata"), `"request_kind":"compaction"`) || len(ts) == 0
	}
	return false
}

func (r *Request) model() string {
	m, _ := r.JSON["model"].(string)
	return m
}

// decide runs step on r. With KeepAlive set, a step that takes longer
// gets the stream started and kept alive until it answers; started says
// whether that happened. A client that goes away meanwhile ends the wait
// (the step is left to finish on its own), so that Close does not wait
// for a step that waits for a person.
func (s *Server) decide(w http.ResponseWriter, hr *http.Request, r *Request, step Step) (t Turn, started bool) {
	if s.KeepAlive <= 0 {
		return step(r), false
	}
	stream, _ := r.JSON["stream"].(bool)
	if !stream && r.API == Messages {
		return step(r), false
	}
	done := make(chan Turn, 1)
	go func() { done <- step(r) }()
	tick := time.NewTicker(s.KeepAlive)
	defer tick.Stop()
	fl, _ := w.(http.Flusher)
	for {
		select {
		case t := <-done:
			return t, started
		case <-hr.Context().Done():
			return Turn{Status: 499, ErrorBody: `{"error":"the client went away"}`}, started
		case <-tick.C:
			if !started {
				w.Header().Set("Content-Type", "text/event-stream")
				w.Header().Set("Cache-Control", "no-cache")
				w.WriteHeader(http.StatusOK)
				started = true
			}
			var buf bytes.Buffer
			if s.commentKeepAlive {
				buf.WriteString(": keep-alive\n\n")
			} else {
				keepAlive(&buf, r)
			}
			w.Write(buf.Bytes())
			if fl != nil {
				fl.Flush()
			}
		}
	}
}

// keepAlive writes the event that keeps a stream alive: a Messages
// "ping", which the Anthropic API itself sends and its clients skip; a
// Responses "response.in_progress" for the response about to come,
// which Codex reads as a sign of life and otherwise ignores. Comments
// (": ...") would not do: Codex's idle timeout counts events, and a
// comment is none.
func keepAlive(w *bytes.Buffer, r *Request) {
	if r.API == Messages {
		writeEvent(w, "ping", map[string]any{"type": "ping"})
		return
	}
	writeEvent(w, "response.in_progress", map[string]any{"type": "response.in_progress", "sequence_number": 0,
		"response": map[string]any{"id": fmt.Sprintf("resp_%d", r.Turn), "object": "response", "created_at": 1767225600,
			"status": "in_progress", "model": r.model(), "output": []any{}}})
}

// writeStreamError writes an HTTP error turn into a stream already
// started: as the API reports a failure after its headers.
func writeStreamError(w *bytes.Buffer, api API, t Turn) {
	msg := fmt.Sprintf("status %d: %s", t.Status, t.ErrorBody)
	if api == Messages {
		writeEvent(w, "error", map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": msg}})
		return
	}
	writeEvent(w, "response.failed", map[string]any{"type": "response.failed", "sequence_number": 0,
		"response": map[string]any{"id": "resp_failed", "object": "response", "status": "failed",
			"error": map[string]any{"code": "server_error", "message": msg}, "output": []any{}}})
}

// answered keeps t as r's reply and records r.
func (s *Server) answered(r *Request, t Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.API != "" {
		r.Reply = &t
	}
	if s.Record == nil {
		return
	}
	if s.recorded == nil {
		s.recorded = map[string]recordedValue{}
	}
	b, err := json.Marshal(recordOf(r, s.recorded))
	if err != nil {
		panic(fmt.Sprintf("agenttest: recording request %d: %v", r.Seq, err))
	}
	s.Record.Write(append(b, '\n'))
}

// Recorded is one line of a session log: a request as the client sent it
// (headers that carry credentials left out) and the turn that answered
// it.
type Recorded struct {
	Seq    int             `json:"seq"`
	API    API             `json:"api,omitempty"`
	Method string          `json:"method"`
	Path   string          `json:"path"`
	Turn   int             `json:"turn"`
	Side   bool            `json:"side,omitempty"`
	Header http.Header     `json:"header"`
	Body   json.RawMessage `json:"body,omitempty"`
	// Same are the body's members left out of Body because they equal
	// the same member of an earlier request's body, by name: the seq of
	// the request whose log line has it. Clients send their instructions
	// and tool definitions whole on every request; the log keeps them
	// once.
	Same map[string]int `json:"same,omitempty"`
	// Text is a body that is not JSON.
	Text  string          `json:"text,omitempty"`
	Reply json.RawMessage `json:"reply,omitempty"`
}

// recordedValue is a body member as a log line last wrote it whole.
type recordedValue struct {
	seq int
	raw []byte
}

// sameMin is the size from which a body member repeated from an earlier
// request is written as a reference.
const sameMin = 1024

// secretHeader says whether a log leaves out the header name: anything
// that may carry a credential. (A function, not a package-level regexp:
// cmd/rowkit's tests link this package and bound what start-up allocates.)
func secretHeader(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"auth", "key", "token", "secret", "cookie", "session"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// recordOf is r's log line; seen are the body members written whole so
// far, by name, which it updates.
func recordOf(r *Request, seen map[string]recordedValue) Recorded {
	rec := Recorded{Seq: r.Seq, API: r.API, Method: r.Method, Path: r.Path, Turn: r.Turn, Side: r.Side, Header: http.Header{}}
	for k, vs := range r.Header {
		if !secretHeader(k) {
			rec.Header[k] = vs
		}
	}
	var members map[string]json.RawMessage
	switch {
	case len(r.Body) == 0:
	case json.Unmarshal(r.Body, &members) == nil:
		for k, v := range members {
			var buf bytes.Buffer
			json.Compact(&buf, v)
			v = buf.Bytes()
			members[k] = v
			if len(v) < sameMin {
				continue
			}
			if last, ok := seen[k]; ok && bytes.Equal(last.raw, v) {
				if rec.Same == nil {
					rec.Same = map[string]int{}
				}
				rec.Same[k] = last.seq
				delete(members, k)
				continue
			}
			seen[k] = recordedValue{r.Seq, v}
		}
		rec.Body, _ = json.Marshal(members)
	case json.Valid(r.Body):
		var buf bytes.Buffer
		json.Compact(&buf, r.Body)
		rec.Body = buf.Bytes()
	default:
		rec.Text = string(r.Body)
	}
	if r.Reply != nil {
		rec.Reply = EncodeTurn(*r.Reply)
	}
	return rec
}

// LoadSession reads a session log (gzipped or not) back into its
// requests, in arrival order, each with its Reply.
func LoadSession(rd io.Reader) ([]*Request, error) {
	br := bufio.NewReader(rd)
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		br = bufio.NewReader(zr)
	}
	dec := json.NewDecoder(br)
	var out []*Request
	bodies := map[int]map[string]json.RawMessage{}
	for {
		var rec Recorded
		err := dec.Decode(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("session log, after %d requests: %w", len(out), err)
		}
		r := &Request{API: rec.API, Method: rec.Method, Path: rec.Path, Header: rec.Header, Turn: rec.Turn, Seq: rec.Seq, Side: rec.Side, Body: rec.Body}
		if rec.Body == nil {
			r.Body = []byte(rec.Text)
		}
		var members map[string]json.RawMessage
		if json.Unmarshal(rec.Body, &members) == nil {
			for k, seq := range rec.Same {
				v, ok := bodies[seq][k]
				if !ok {
					return nil, fmt.Errorf("session log, request %d: %q refers to request %d, which has none before it", rec.Seq, k, seq)
				}
				members[k] = v
			}
			bodies[rec.Seq] = members
			if len(rec.Same) > 0 {
				r.Body, _ = json.Marshal(members)
			}
		}
		if json.Unmarshal(r.Body, &r.JSON) != nil {
			r.JSON = nil
		}
		if rec.Reply != nil {
			t, err := DecodeTurn(rec.Reply)
			if err != nil {
				return nil, fmt.Errorf("session log, request %d: %w", rec.Seq, err)
			}
			r.Reply = &t
		}
		out = append(out, r)
	}
	// Recorded as answered: back to arrival order.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Seq < out[j-1].Seq; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, nil
}

// itemJSON is an Item in a reply file or a session log.
type itemJSON struct {
	Type             string          `json:"type"` // message, call, custom, reasoning, object, raw
	Text             string          `json:"text,omitempty"`
	ID               string          `json:"id,omitempty"`
	Name             string          `json:"name,omitempty"`
	Namespace        string          `json:"namespace,omitempty"`
	Args             json.RawMessage `json:"args,omitempty"`
	Input            string          `json:"input,omitempty"`
	Summary          string          `json:"summary,omitempty"`
	EncryptedContent string          `json:"encrypted_content,omitempty"`
	Object           map[string]any  `json:"object,omitempty"`
	Event            string          `json:"event,omitempty"`
	Data             json.RawMessage `json:"data,omitempty"`
}

type turnJSON struct {
	Items     []itemJSON `json:"items"`
	Usage     *Usage     `json:"usage,omitempty"`
	Status    int        `json:"status,omitempty"`
	ErrorBody string     `json:"error_body,omitempty"`
}

// EncodeTurn is t as JSON: {"items":[{"type":"message","text":...},
// {"type":"call","id":...,"name":...,"namespace":...,"args":{...}},
// {"type":"custom","name":...,"input":...}, ...]}, the form DecodeTurn
// reads (a reply file).
func EncodeTurn(t Turn) json.RawMessage {
	tj := turnJSON{Items: []itemJSON{}, Status: t.Status, ErrorBody: t.ErrorBody}
	if t.Usage != (Usage{}) {
		u := t.Usage
		tj.Usage = &u
	}
	for _, it := range t.Items {
		switch x := it.(type) {
		case Message:
			tj.Items = append(tj.Items, itemJSON{Type: "message", Text: x.Text})
		case Call:
			tj.Items = append(tj.Items, itemJSON{Type: "call", ID: x.ID, Name: x.Name, Namespace: x.Namespace, Args: json.RawMessage(jsonText(x.Args))})
		case CustomCall:
			tj.Items = append(tj.Items, itemJSON{Type: "custom", ID: x.ID, Name: x.Name, Input: x.Input})
		case Reasoning:
			tj.Items = append(tj.Items, itemJSON{Type: "reasoning", Summary: x.Summary, EncryptedContent: x.EncryptedContent})
		case Object:
			tj.Items = append(tj.Items, itemJSON{Type: "object", Object: x})
		case Raw:
			tj.Items = append(tj.Items, itemJSON{Type: "raw", Event: x.Event, Data: json.RawMessage(jsonText(x.Data))})
		}
	}
	b, err := json.Marshal(tj)
	if err != nil {
		panic(fmt.Sprintf("agenttest: encoding a turn: %v", err))
	}
	return b
}

// DecodeTurn reads a turn in EncodeTurn's form.
func DecodeTurn(b []byte) (Turn, error) {
	var tj turnJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&tj); err != nil {
		return Turn{}, fmt.Errorf("a turn: %w", err)
	}
	t := Turn{Status: tj.Status, ErrorBody: tj.ErrorBody}
	if tj.Usage != nil {
		t.Usage = *tj.Usage
	}
	for i, it := range tj.Items {
		switch it.Type {
		case "message":
			t.Items = append(t.Items, Message{Text: it.Text})
		case "call":
			if it.Name == "" {
				return Turn{}, fmt.Errorf("a turn: item %d: a call without a name", i)
			}
			args := it.Args
			if len(args) == 0 {
				args = json.RawMessage("{}")
			}
			t.Items = append(t.Items, Call{ID: it.ID, Name: it.Name, Namespace: it.Namespace, Args: args})
		case "custom":
			if it.Name == "" {
				return Turn{}, fmt.Errorf("a turn: item %d: a custom call without a name", i)
			}
			t.Items = append(t.Items, CustomCall{ID: it.ID, Name: it.Name, Input: it.Input})
		case "reasoning":
			t.Items = append(t.Items, Reasoning{Summary: it.Summary, EncryptedContent: it.EncryptedContent})
		case "object":
			t.Items = append(t.Items, Object(it.Object))
		case "raw":
			t.Items = append(t.Items, Raw{Event: it.Event, Data: it.Data})
		default:
			return Turn{}, fmt.Errorf("a turn: item %d: unknown type %q (message, call, custom, reasoning, object, raw)", i, it.Type)
		}
	}
	if len(t.Items) == 0 && t.Status == 0 {
		return Turn{}, fmt.Errorf("a turn: no items and no status")
	}
	return t, nil
}

// ReplyFiles is a step that answers the model request of turn N with
// the turn in the file dir/N.json (EncodeTurn's form), waiting for it to
// appear: a person or a model writes it after reading the request, which
// the step first writes to dir/N.request.json. Keep the stream alive with
// Server.KeepAlive. A file that does not decode is answered as an HTTP
// 500 carrying the error, and the step waits for the file again on the
// client's retry.
func ReplyFiles(dir string, poll time.Duration) Step {
	return func(r *Request) Turn {
		base := filepath.Join(dir, fmt.Sprint(r.Turn))
		if err := os.WriteFile(base+".request.json", r.Body, 0o644); err != nil {
			return Turn{Status: 500, ErrorBody: fmt.Sprintf(`{"error":{"message":%q}}`, err.Error())}
		}
		for {
			b, err := os.ReadFile(base + ".json")
			if err == nil {
				t, err := DecodeTurn(b)
				if err != nil {
					return Turn{Status: 500, ErrorBody: fmt.Sprintf(`{"error":{"message":%q}}`, err.Error())}
				}
				return t
			}
			time.Sleep(poll)
		}
	}
}
