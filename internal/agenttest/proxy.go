package agenttest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Proxy is a recording proxy on loopback: a client pointed at it reaches
// its target, and every request is logged as the client sent it, so that a
// test compares what the client sent with what a proxy under test (rowkit
// router, between the Proxy and a Server) passed on. Responses stream
// back as they come, flushed per read.
type Proxy struct {
	// URL is the proxy's base, http://127.0.0.1:PORT.
	URL string

	hs     *httptest.Server
	mu     sync.Mutex
	target string
	log    []*Request
}

// NewProxy starts a proxy to target (a base URL: a request's path is
// appended to it). Close it when done.
func NewProxy(target string) *Proxy {
	p := &Proxy{target: target}
	p.hs = httptest.NewServer(http.HandlerFunc(p.serve))
	p.URL = p.hs.URL
	return p
}

// SetTarget sends the requests from now on to target: a client keeps its
// configuration while what is behind the proxy is restarted elsewhere.
func (p *Proxy) SetTarget(target string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target = target
}

// Close stops the proxy, waiting for requests in flight.
func (p *Proxy) Close() { p.hs.Close() }

// Requests returns every request so far as the client sent it, in
// arrival order (Turn is -1: the proxy takes no step).
func (p *Proxy) Requests() []*Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*Request(nil), p.log...)
}

func (p *Proxy) serve(w http.ResponseWriter, hr *http.Request) {
	body, _ := io.ReadAll(hr.Body)
	r := newRequest(hr, body)
	p.mu.Lock()
	p.log = append(p.log, r)
	target := p.target
	p.mu.Unlock()
	req, err := http.NewRequestWithContext(hr.Context(), hr.Method, strings.TrimSuffix(target, "/")+hr.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = hr.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	fl, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			w.Write(buf[:n])
			if fl != nil {
				fl.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

// newRequest is the log entry of a request with its body read.
func newRequest(hr *http.Request, body []byte) *Request {
	r := &Request{Method: hr.Method, Path: hr.URL.Path, Header: hr.Header.Clone(), Body: body, Turn: -1}
	if json.Unmarshal(body, &r.JSON) != nil {
		r.JSON = nil
	}
	path := strings.TrimPrefix(hr.URL.Path, "/v1")
	switch {
	case hr.Method == http.MethodPost && path == "/responses":
		r.API = Responses
	case hr.Method == http.MethodPost && path == "/messages":
		r.API = Messages
	}
	return r
}
