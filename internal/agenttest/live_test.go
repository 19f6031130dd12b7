package agenttest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func post(t *testing.T, url, body string, header ...string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// events are the event names of a stream, in order.
func events(stream string) []string {
	var out []string
	for _, l := range strings.Split(stream, "\n") {
		if name, ok := strings.CutPrefix(l, "event: "); ok {
			out = append(out, name)
		}
	}
	return out
}

// TestKeepAlive: a step that takes several KeepAlive periods gets its
// stream started and kept alive with events the APIs themselves send, then
// its turn; a step quicker than KeepAlive gets none; an HTTP error after
// the stream started goes out as an error event.
func TestKeepAlive(t *testing.T) {
	slow := func(t Turn) Step {
		return func(*Request) Turn { time.Sleep(350 * time.Millisecond); return t }
	}
	ok := Turn{Items: []Item{Message{Text: "late"}}}
	s := NewServer(slow(ok), slow(ok), Reply(Message{Text: "quick"}), slow(Turn{Status: 529, ErrorBody: `{"error":"overloaded"}`}))
	defer s.Close()
	s.KeepAlive = 100 * time.Millisecond
	msg := `{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"go"}]}`

	got := events(post(t, s.URL+"/v1/messages", msg))
	if len(got) < 3 || got[0] != "ping" || got[1] != "ping" || !strings.Contains(strings.Join(got, " "), "ping message_start content_block_start") {
		t.Errorf("Messages, a slow step: events %v, want pings then the message", got)
	}
	got = events(post(t, s.URL+"/v1/responses", `{"model":"m","stream":true,"tools":[{"type":"function","name":"f"}],"input":"go"}`))
	if len(got) < 3 || got[0] != "response.in_progress" || !strings.Contains(strings.Join(got, " "), "response.in_progress response.created") {
		t.Errorf("Responses, a slow step: events %v, want response.in_progress then the response", got)
	}
	if got := events(post(t, s.URL+"/v1/messages", msg)); got[0] != "message_start" {
		t.Errorf("a quick step: events %v, want no ping", got)
	}
	body := post(t, s.URL+"/v1/messages", msg)
	if got := events(body); got[len(got)-1] != "error" || !strings.Contains(body, "status 529") {
		t.Errorf("an error after the stream started: %v %q", got, body)
	}
}

// TestRecord: every request is logged with its reply and without its
// credentials, and LoadSession reads the log back, gzipped or not, in
// arrival order, Outputs and Reply as the server saw them.
func TestRecord(t *testing.T) {
	var log bytes.Buffer
	var mu sync.Mutex
	s := NewServer(Reply(Message{Text: "hello"}, Call{ID: "c1", Name: "Bash", Args: map[string]any{"command": "ls"}}))
	defer s.Close()
	s.Record = writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return log.Write(p) })
	// Tool definitions above sameMin, sent again unchanged: logged once.
	tools := `[{"name":"Bash","description":"` + strings.Repeat("runs a command; ", 100) + `"}]`
	post(t, s.URL+"/v1/messages", `{"model":"m","stream":true,"tools":`+tools+`,"messages":[{"role":"user","content":"go"}]}`,
		"Authorization", "Bearer sk-secret", "X-Api-Key", "secret", "Anthropic-Version", "2023-06-01")
	post(t, s.URL+"/v1/messages", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"quota"}]}`)
	post(t, s.URL+"/v1/messages", `{"model":"m","stream":true,"tools":`+tools+`,"messages":[{"role":"user","content":"go"},
		{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"Bash","input":{"command":"ls"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"a.txt"}]}]}`)
	http.Get(s.URL + "/v1/models")
	if strings.Contains(log.String(), "secret") {
		t.Errorf("the log carries a credential: %s", log.String())
	}
	if n := strings.Count(log.String(), strings.Repeat("runs a command; ", 100)); n != 1 || !strings.Contains(log.String(), `"same":{"tools":0}`) {
		t.Errorf("the tool definitions are in the log %d times, want once and then a reference", n)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(log.Bytes())
	zw.Close()
	for name, data := range map[string][]byte{"plain": log.Bytes(), "gzip": gz.Bytes()} {
		reqs, err := LoadSession(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(reqs) != 4 {
			t.Fatalf("%s: %d requests, want 4", name, len(reqs))
		}
		for i, r := range reqs {
			if r.Seq != i {
				t.Errorf("%s: request %d has Seq %d", name, i, r.Seq)
			}
		}
		if r := reqs[0]; r.Turn != 0 || r.Side || r.Reply == nil || r.Header.Get("Anthropic-Version") != "2023-06-01" || r.Header.Get("Authorization") != "" {
			t.Errorf("%s: the first request: turn %d side %v reply %v header %v", name, r.Turn, r.Side, r.Reply, r.Header)
		} else if c, ok := r.Reply.Items[1].(Call); !ok || c.ID != "c1" || string(c.Args.(json.RawMessage)) != `{"command":"ls"}` {
			t.Errorf("%s: the first reply: %#v", name, r.Reply.Items)
		}
		if r := reqs[1]; !r.Side || r.Turn != -1 || r.Reply == nil || r.Reply.Items[0].(Message).Text != "ok" {
			t.Errorf("%s: the quota check was not a side request answered ok: %+v", name, r)
		}
		if o, ok := reqs[2].Output("c1"); !ok || o.Text != "a.txt" || reqs[2].Turn != 1 {
			t.Errorf("%s: the third request: %+v %v", name, o, ok)
		}
		var want any
		json.Unmarshal([]byte(tools), &want)
		if got, _ := json.Marshal(reqs[2].JSON["tools"]); !bytes.Equal(got, must(json.Marshal(want))) {
			t.Errorf("%s: the third request's tools came back as %.200s", name, got)
		}
		if r := reqs[3]; r.API != "" || r.Method != http.MethodGet || r.Reply != nil {
			t.Errorf("%s: GET /v1/models: %+v", name, r)
		}
	}
	if _, err := LoadSession(strings.NewReader(`{"seq":0,"reply":{"items":[{"type":"bogus"}]}}`)); err == nil {
		t.Error("a log with an unknown item type loaded")
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestTurnJSON(t *testing.T) {
	in := Turn{Items: []Item{
		Message{Text: "hi"},
		Call{ID: "a", Name: "read_file", Namespace: "mcp__rowkit", Args: map[string]any{"path": "x"}},
		CustomCall{ID: "b", Name: "hpatch", Input: "in x\n"},
		Reasoning{Summary: "s", EncryptedContent: "E"},
		Object{"type": "tool_search_call", "call_id": "c"},
		Raw{Event: "response.in_progress", Data: map[string]any{"type": "response.in_progress"}},
	}, Usage: Usage{Input: 5}}
	out, err := DecodeTurn(EncodeTurn(in))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(EncodeTurn(out), EncodeTurn(in)) {
		t.Errorf("round trip:\n%s\n%s", EncodeTurn(in), EncodeTurn(out))
	}
	if c := out.Items[1].(Call); c.Namespace != "mcp__rowkit" || string(c.Args.(json.RawMessage)) != `{"path":"x"}` {
		t.Errorf("the call came back as %#v", c)
	}
	for _, bad := range []string{`{"items":[]}`, `{"items":[{"type":"call"}]}`, `{"items":[{"type":"custom","input":"x"}]}`,
		`{"items":[{"type":"message","text":"x","extra":1}]}`, `{"items":[{"type":"tool"}]}`, `not json`} {
		if _, err := DecodeTurn([]byte(bad)); err == nil {
			t.Errorf("DecodeTurn(%s) accepted", bad)
		}
	}
	if tr, err := DecodeTurn([]byte(`{"items":[{"type":"call","name":"Bash"}]}`)); err != nil || string(tr.Items[0].(Call).Args.(json.RawMessage)) != "{}" {
		t.Errorf("a call without args: %v %v", tr, err)
	}
}

// TestReplyFiles: the step writes the request, waits for the reply file
// (the stream kept alive meanwhile), answers with it; a reply file that
// does not decode is an HTTP 500 naming the error.
func TestReplyFiles(t *testing.T) {
	dir := t.TempDir()
	s := NewServer()
	defer s.Close()
	s.Final = ReplyFiles(dir, 20*time.Millisecond)
	s.KeepAlive = 50 * time.Millisecond
	go func() {
		for {
			if _, err := os.Stat(filepath.Join(dir, "0.request.json")); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond)
		os.WriteFile(filepath.Join(dir, "0.json"), EncodeTurn(Turn{Items: []Item{Message{Text: "from the file"}}}), 0o644)
	}()
	body := post(t, s.URL+"/v1/messages", `{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"go"}]}`)
	if !strings.Contains(body, "from the file") || events(body)[0] != "ping" {
		t.Errorf("the reply: %s", body)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "0.request.json")); err != nil || !strings.Contains(string(b), `"content":"go"`) {
		t.Errorf("the request file: %s %v", b, err)
	}
	// A client that goes away while the step waits ends the wait.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/v1/messages",
		strings.NewReader(`{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"go"}]}`))
	if res, err := http.DefaultClient.Do(req); err == nil {
		io.ReadAll(res.Body)
		res.Body.Close()
	}
	cancel()
	gaveUp := time.Now()
	for len(s.Requests()) < 2 || s.Requests()[1].Reply == nil {
		if time.Since(gaveUp) > 5*time.Second {
			t.Fatal("the step still holds the request 5 s after its client went away")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r := s.Requests()[1]; r.Reply.Status != 499 {
		t.Errorf("the abandoned request's reply: %+v", r.Reply)
	}
	os.WriteFile(filepath.Join(dir, "2.json"), []byte(`{"items":[{"type":"nope"}]}`), 0o644)
	s.KeepAlive = 0
	res, err := http.Post(s.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"go"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 500 || !strings.Contains(string(b), "nope") {
		t.Errorf("a bad reply file: %d %s", res.StatusCode, b)
	}
}

func TestIsSide(t *testing.T) {
	for _, tc := range []struct {
		api    API
		header string
		body   string
		side   bool
	}{
		{Messages, "", `{"messages":[],"tools":[{"name":"Bash"}],"max_tokens":32000}`, false},
		{Messages, "", `{"messages":[],"max_tokens":512}`, true},
		{Messages, "", `{"messages":[],"tools":[{"name":"Bash"}],"max_tokens":1}`, true},
		{Responses, "", `{"input":[],"tools":[{"type":"function","name":"exec_command"}]}`, false},
		{Responses, `{"request_kind":"compaction"}`, `{"input":[],"tools":[{"type":"function","name":"exec_command"}]}`, true},
		{Responses, "", `{"input":[]}`, true},
	} {
		r := &Request{API: tc.api, Header: http.Header{}}
		r.Header.Set("X-Codex-Turn-Metadata", tc.header)
		json.Unmarshal([]byte(tc.body), &r.JSON)
		if got := IsSide(r); got != tc.side {
			t.Errorf("IsSide(%s %s %s) = %v", tc.api, tc.header, tc.body, got)
		}
	}
}

// TestKeepAliveCodex: the real Codex, with a stream idle timeout of 1.5 s
// and no retries, lives through a step of 4 s when the server keeps the
// stream alive with events, and fails when it sends SSE comments instead
// (which Codex's idle timer does not count): the events are what carry
// it.
func TestKeepAliveCodex(t *testing.T) {
	for _, events := range []bool{true, false} {
		s := NewServer(func(*Request) Turn {
			time.Sleep(4 * time.Second)
			return Turn{Items: []Item{Message{Text: "thought it over"}}}
		})
		s.KeepAlive = 300 * time.Millisecond
		s.commentKeepAlive = !events
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		c := &Codex{Args: []string{"-c", "model_providers.agenttest.stream_idle_timeout_ms=1500",
			"-c", "model_providers.agenttest.stream_max_retries=0", "-c", "model_providers.agenttest.request_max_retries=0"}}
		run, err := c.Run(ctx, s.URL, t.TempDir(), "think")
		cancel()
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		finished := run.Exit == 0 && strings.Contains(string(run.Stdout), "thought it over")
		if finished != events {
			t.Errorf("keep-alive events %v: codex exec exit %d, stdout %q, stderr %s", events, run.Exit, run.Stdout, head(string(run.Stderr), 2000))
		}
	}
}

// TestKeepAliveClaude: Claude Code reads pings before message_start (its
// idle timeout cannot be set below 300 s, so this checks that the
// keep-alive does no harm, where TestKeepAliveCodex checks that it helps).
func TestKeepAliveClaude(t *testing.T) {
	s := NewServer(func(*Request) Turn {
		time.Sleep(2 * time.Second)
		return Turn{Items: []Item{Message{Text: "thought it over"}}}
	})
	defer s.Close()
	s.KeepAlive = 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := (&Claude{}).Run(ctx, s.URL, t.TempDir(), "think")
	if err != nil {
		t.Fatal(err)
	}
	if run.Exit != 0 || !strings.Contains(string(run.Stdout), "thought it over") {
		t.Errorf("claude -p: exit %d, stdout %q, stderr %s", run.Exit, run.Stdout, head(string(run.Stderr), 2000))
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
