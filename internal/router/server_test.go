package router

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// upstream is an httptest server standing in for the Responses API: it
// records what it receives and answers with handler.
type upstream struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recordedReq
}

type recordedReq struct {
	method, uri string
	header      http.Header
	body        []byte
}

func newUpstream(t *testing.T, handler http.HandlerFunc) *upstream {
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.reqs = append(u.reqs, recordedReq{r.Method, r.RequestURI, r.Header.Clone(), b})
		u.mu.Unlock()
		handler(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) last(t *testing.T) recordedReq {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.reqs) == 0 {
		t.Fatal("the upstream got no request")
	}
	return u.reqs[len(u.reqs)-1]
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newRouter starts a router in front of up (its base path /v1).
func newRouter(t *testing.T, up *upstream, passthrough bool) (*httptest.Server, *syncBuffer) {
	t.Helper()
	base, _ := url.Parse(up.URL + "/v1")
	log := &syncBuffer{}
	srv := httptest.NewServer(NewServer(Config{Upstream: base, Passthrough: passthrough, Carrier: testCarrier(t), Log: log}))
	t.Cleanup(srv.Close)
	return srv, log
}

// logLines waits for the router's log to hold a line per request (the
// line is written when the handler returns, which a client reading a
// response of known length need not wait for) and returns them.
func logLines(t *testing.T, log *syncBuffer) []logLine {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); log.String() == "" && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	var ls []logLine
	for _, line := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		if line == "" {
			continue
		}
		var l logLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		ls = append(ls, l)
	}
	return ls
}

// Anything but a Responses request passes byte for byte: method, path
// under the upstream's base, query, headers but the hop-by-hop ones,
// status, response headers and body.
func TestServerProxy(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Upstream", "yes")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTeapot)
		w.Write([]byte(`{"data":[1,2,3]}`))
	})
	srv, log := newRouter(t, up, false)
	req, _ := http.NewRequest("GET", srv.URL+"/models?client_version=0.169.0&x=%2F", nil)
	req.Header.Set("Authorization", "Bearer sk-secret-123")
	req.Header.Set("X-Custom", "a")
	req.Header.Set("Connection", "keep-alive, X-Hop")
	req.Header.Set("X-Hop", "gone")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot || string(b) != `{"data":[1,2,3]}` || resp.Header.Get("X-Upstream") != "yes" {
		t.Fatalf("response %d %q %v", resp.StatusCode, b, resp.Header)
	}
	got := up.last(t)
	if got.method != "GET" || got.uri != "/v1/models?client_version=0.169.0&x=%2F" {
		t.Fatalf("upstream got %s %s", got.method, got.uri)
	}
	if got.header.Get("Authorization") != "Bearer sk-secret-123" || got.header.Get("X-Custom") != "a" || got.header.Get("X-Hop") != "" {
		t.Fatalf("headers %v", got.header)
	}
	ls := logLines(t, log)
	if len(ls) != 1 || ls[0].Status != http.StatusTeapot || ls[0].Path != "/models" || ls[0].Routed {
		t.Fatalf("log %+v", ls)
	}
	if strings.Contains(log.String(), "sk-secret") {
		t.Fatal("the log holds a credential")
	}
}

// sseHandler answers with the events of a routed call.
func sseHandler(events string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(events))
	}
}

// A Responses request from Codex: the upstream gets the rewritten body,
// Codex gets the carrier; one log line says what happened, without bodies.
func TestServerRouted(t *testing.T) {
	script := "in notes.txt\ntype 1:8ed3 \"secret-script\""
	events := sse(created, customAdded(1, "ctc_1", "hpatch"), customDelta(2, "ctc_1", "in"), customDone(3, "ctc_1", "hpatch", script), completed)
	up := newUpstream(t, sseHandler(events))
	srv, log := newRouter(t, up, false)
	body := recorded(t, "calls")
	req, _ := http.NewRequest("POST", srv.URL+"/responses", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer sk-secret-123")
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	got := up.last(t)
	if want := testCarrier(t).Rewrite(body).Body; !bytes.Equal(got.body, want) {
		t.Fatal("the upstream did not get the rewritten body")
	}
	if got.header.Get("Accept-Encoding") != "" {
		t.Error("a routed request asked the upstream for compression")
	}
	if got.uri != "/v1/responses" {
		t.Fatalf("uri %s", got.uri)
	}
	// The carrier for the request's model (gpt-5.5-codex: Codex passes
	// 40,000 bytes whole).
	o := rewriteStream(t, testCarrier(t).ForModel("gpt-5.5-codex"), events)
	if string(out) != o.raw || !strings.Contains(o.raw, `carrier --max-output 39600 hpatch`) || !strings.Contains(o.raw, `\"max_output_tokens\":10000}`) {
		t.Fatalf("Codex got:\n%s\nwant:\n%s", out, o.raw)
	}
	ls := logLines(t, log)
	if len(ls) != 1 {
		t.Fatalf("%d log lines", len(ls))
	}
	l := ls[0]
	if !l.Routed || l.Decoded != 1 || l.Explained != 1 || l.Carried != 1 || l.Status != 200 || l.InBytes != len(body) || l.UpBytes != len(got.body) ||
		l.InCRC != digest(body) || l.UpCRC != digest(got.body) {
		t.Fatalf("log %+v", l)
	}
	for _, secret := range []string{"sk-secret", "secret-script", "notes.txt", "edit notes"} {
		if strings.Contains(log.String(), secret) {
			t.Fatalf("the log holds %q", secret)
		}
	}
}

// --passthrough: the upstream gets exactly what Codex sent, and Codex
// exactly what the upstream answered, routed calls included.
func TestServerPassthrough(t *testing.T) {
	events := sse(created, customAdded(1, "ctc_1", "hpatch"), customDone(3, "ctc_1", "hpatch", "in a"), completed)
	up := newUpstream(t, sseHandler(events))
	srv, log := newRouter(t, up, true)
	body := recorded(t, "calls")
	resp, err := http.Post(srv.URL+"/responses", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(up.last(t).body, body) || string(out) != events {
		t.Fatal("passthrough changed a byte")
	}
	if l := logLines(t, log)[0]; l.Routed || l.InCRC != l.UpCRC || l.Tools != "" {
		t.Fatalf("log %+v", l)
	}
}

// The upstream's errors reach Codex as they came (Codex retries them).
func TestServerUpstreamErrors(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(`{"error":{"message":"slow down","type":"rate_limit"}}`))
	})
	srv, _ := newRouter(t, up, false)
	resp, err := http.Post(srv.URL+"/responses", "application/json", bytes.NewReader(recorded(t, "turn")))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" || string(out) != `{"error":{"message":"slow down","type":"rate_limit"}}` {
		t.Fatalf("%d %v %s", resp.StatusCode, resp.Header, out)
	}

	// An upstream that is not there: 502 with a JSON error.
	up.Close()
	resp, err = http.Post(srv.URL+"/responses", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	out, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	var e struct {
		Error struct{ Message, Type string }
	}
	if resp.StatusCode != http.StatusBadGateway || json.Unmarshal(out, &e) != nil || e.Error.Type != CodeUnreachable || !strings.HasPrefix(e.Error.Message, "rowkit router: the upstream did not answer") {
		t.Fatalf("%d %s", resp.StatusCode, out)
	}
}

// A body over 64 MiB is refused with a clear error, and nothing is sent.
func TestServerRequestBound(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {})
	srv, log := newRouter(t, up, false)
	resp, err := http.Post(srv.URL+"/responses", "application/json", io.LimitReader(zeros{}, MaxRequestBytes+1))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(out), "larger than 67108864 bytes") || !strings.Contains(string(out), CodeTooLarge) {
		t.Fatalf("%d %s", resp.StatusCode, out)
	}
	if len(up.reqs) != 0 {
		t.Fatal("the upstream got the request")
	}
	if l := logLines(t, log); len(l) != 1 || l[0].Status != 413 {
		t.Fatalf("log %+v", l)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// Events reach Codex as they come, one flush each, routed or not; and
// Codex going away cancels the upstream's request.
func TestServerStreamingAndCancel(t *testing.T) {
	for _, passthrough := range []bool{false, true} {
		next := make(chan struct{})
		cancelled := make(chan struct{})
		up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			for i, e := range []string{created, customAdded(1, "ctc_1", "shell"), customDone(2, "ctc_1", "shell", "ls")} {
				w.Write([]byte(sse(e)))
				w.(http.Flusher).Flush()
				if i == 0 || i == 2 {
					select {
					case <-next:
					case <-r.Context().Done():
						close(cancelled)
						return
					}
				}
			}
			<-r.Context().Done()
			close(cancelled)
		})
		srv, _ := newRouter(t, up, passthrough)
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/responses", bytes.NewReader(recorded(t, "turn")))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		rd := bufio.NewReader(resp.Body)
		readEvent := func() string {
			var b strings.Builder
			for {
				line, err := rd.ReadString('\n')
				if err != nil {
					t.Fatalf("reading: %v", err)
				}
				b.WriteString(line)
				if line == "\n" {
					return b.String()
				}
			}
		}
		if ev := readEvent(); ev != sse(created) {
			t.Fatalf("first event %q", ev)
		}
		next <- struct{}{} // the first event arrived before the upstream sent more
		ev := readEvent()
		if passthrough {
			if ev != sse(customAdded(1, "ctc_1", "shell")) {
				t.Fatalf("passthrough event %q", ev)
			}
			readEvent()
		} else if !strings.Contains(ev, `"arguments":""`) || !strings.Contains(readEvent(), "carrier") {
			t.Fatalf("routed events %q", ev)
		}
		next <- struct{}{}
		cancel()
		resp.Body.Close()
		select {
		case <-cancelled:
		case <-time.After(10 * time.Second):
			t.Fatalf("passthrough %v: the upstream request was not cancelled", passthrough)
		}
	}
}

func TestPreflight(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "rowkit")
	os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)
	plain := filepath.Join(dir, "plain")
	os.WriteFile(plain, []byte("x"), 0o644)
	c := func(p string) *Carrier { return mustCarrier(t, p) }
	if err := Preflight(c(exe), "/usr/bin/rg", nil); err != nil {
		t.Fatalf("a good setup: %v", err)
	}
	for _, tc := range []struct {
		c     *Carrier
		rg    string
		rgErr error
		want  string
	}{
		{c(filepath.Join(dir, "missing")), "/usr/bin/rg", nil, "cannot be found"},
		{c(dir), "/usr/bin/rg", nil, "is not a regular file"},
		{c(plain), "/usr/bin/rg", nil, "is not executable"},
		{c(exe), "", os.ErrNotExist, "ripgrep (rg) is not on PATH"},
	} {
		err := Preflight(tc.c, tc.rg, tc.rgErr)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), CodeStartup+": ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", tc.want, err)
		}
	}
}

// The rewritten body goes upstream in parts: read in reads of any size, and
// read again from the same parts (GetBody), it is the parts joined, and the
// parts are left as they were.
func TestPartsReader(t *testing.T) {
	parts := [][]byte{[]byte("ab"), []byte(""), []byte("cde"), []byte("f"), []byte("ghijklmnop")}
	want := string(bytes.Join(parts, nil))
	for size := 1; size <= len(want)+1; size++ {
		for range 2 {
			r := &partsReader{parts: parts}
			var got []byte
			buf := make([]byte, size)
			for {
				n, err := r.Read(buf)
				got = append(got, buf[:n]...)
				if err == io.EOF {
					break
				}
				if err != nil || n == 0 {
					t.Fatalf("size %d: read %d, %v", size, n, err)
				}
			}
			if string(got) != want {
				t.Fatalf("size %d: read %q, want %q", size, got, want)
			}
		}
	}
	if digestParts(parts) != digest([]byte(want)) {
		t.Fatalf("digestParts %s, digest %s", digestParts(parts), digest([]byte(want)))
	}
}
