package router

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rowkit/rowkit/internal/agent"
	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/patch"
)

// MaxRequestBytes bounds a request body (Codex sends the whole history in
// every request).
const MaxRequestBytes = 64 << 20

// Codes of the router's own failures.
const (
	CodeStartup     = "router_startup"       // a start-up check failed
	CodeUnreachable = "upstream_unreachable" // the upstream did not answer
	CodeTooLarge    = "request_too_large"    // a request body over MaxRequestBytes
)

// Config configures a router.
type Config struct {
	Upstream    *url.URL // the Responses API base, e.g. https://api.openai.com/v1
	Passthrough bool     // forward everything unchanged: the A/B baseline
	Carrier     *Carrier // the carrier of routed calls (unused in passthrough)
	Log         io.Writer
	// Transport reaches the upstream; nil means one of net/http with a
	// 10 s dial timeout and compression left to the client.
	Transport http.RoundTripper
}

// Server is the router's HTTP handler.
type Server struct {
	cfg    Config
	client *http.Client
	logMu  sync.Mutex
}

// NewServer returns the router for cfg.
func NewServer(cfg Config) *Server {
	t := cfg.Transport
	if t == nil {
		t = &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			ForceAttemptHTTP2:   true,
			TLSHandshakeTimeout: 10 * time.Second,
			MaxIdleConnsPerHost: 16,
			IdleConnTimeout:     90 * time.Second,
			// The client's Accept-Encoding is forwarded as it is, and the
			// response bytes with it; a routed request asks for none, so
			// that its stream can be read.
			DisableCompression: true,
		}
	}
	return &Server{cfg: cfg, client: &http.Client{
		Transport: t,
		// A redirect reaches the client as it came.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Preflight checks, before the router listens, that what it will offer can
// run: the binary its carriers name is an executable file, ripgrep (which
// hgrep runs) was found, and the tools are the built-in ones. rg and rgErr
// are exec.LookPath's answer for "rg". Each failure is one line.
func Preflight(c *Carrier, rg string, rgErr error) error {
	fi, err := os.Stat(c.Frontend())
	switch {
	case err != nil:
		return errs.Errorf(CodeStartup, "the rowkit binary the carriers run, %s, cannot be found: %v", errs.Name(c.Frontend()), errors.Unwrap(err))
	case !fi.Mode().IsRegular():
		return errs.Errorf(CodeStartup, "the rowkit binary the carriers run, %s, is not a regular file", errs.Name(c.Frontend()))
	case syscall.Access(c.Frontend(), 1) != nil: // X_OK
		return errs.Errorf(CodeStartup, "the rowkit binary the carriers run, %s, is not executable", errs.Name(c.Frontend()))
	case rgErr != nil || rg == "":
		return errs.New(CodeStartup, "ripgrep (rg) is not on PATH; the shell tool's hgrep runs it: install ripgrep")
	}
	return checkTools()
}

// checkTools checks that the tools the router offers are the built-in
// ones and agree with the carrier, for each tool output policy: the
// grammar, HPATCH/2 in hpatch's description, the output bound the carrier
// sets, and every private command named.
func checkTools() error {
	for _, tokens := range []int{agent.CodexFallbackPolicy, agent.CodexCataloguePolicy} {
		var h, s struct {
			Type, Name, Description string
			Format                  *struct{ Type, Syntax, Definition string }
		}
		hpatch, shell := builtinTools(tokens)
		if json.Unmarshal(hpatch, &h) != nil || json.Unmarshal(shell, &s) != nil {
			return errs.New(CodeStartup, "a built-in tool is not valid JSON")
		}
		switch {
		case h.Name != ToolHpatch || h.Format == nil || h.Format.Definition != Grammar() || !strings.HasPrefix(Grammar(), "start: "):
			return errs.New(CodeStartup, "the hpatch tool does not carry the built-in grammar")
		case h.Description != hpatchDescription || s.Description != shellDescription(tokens) || s.Name != ToolShell:
			return errs.New(CodeStartup, "a tool description is not the built-in one")
		case !strings.Contains(h.Description, patch.Brief):
			return errs.New(CodeStartup, "the hpatch description does not carry HPATCH/2")
		case !strings.Contains(s.Description, errs.Thousands(OutputBound(tokens))+" bytes"):
			return errs.New(CodeStartup, "the shell description does not name the carrier's output bound")
		}
		for _, c := range []string{"hread", "hgrep", "inspect_file", "hsymbol", "hpatch"} {
			if !strings.Contains(s.Description, "`"+c) {
				return errs.Errorf(CodeStartup, "the shell description does not name %s", c)
			}
		}
	}
	return nil
}

// hopByHop are the headers of one connection, never forwarded (RFC 9110
// §7.6.1).
var hopByHop = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func copyHeader(dst, src http.Header) {
	for k, vs := range src {
		dst[k] = append([]string(nil), vs...)
	}
	for _, f := range src.Values("Connection") {
		for _, k := range strings.Split(f, ",") {
			dst.Del(strings.TrimSpace(k))
		}
	}
	for _, k := range hopByHop {
		dst.Del(k)
	}
}

// logLine is what the router logs of one request: never a body, never a
// header (credentials travel in headers).
type logLine struct {
	Time         string `json:"time"`
	Method       string `json:"method"`
	Path         string `json:"path"`
	Status       int    `json:"status"`
	MS           int64  `json:"ms"`
	Routed       bool   `json:"routed"`
	Tools        string `json:"tools,omitempty"`
	Instructions string `json:"instructions,omitempty"`
	Decoded      int    `json:"decoded,omitempty"`
	Explained    int    `json:"explained,omitempty"`
	Carried      int    `json:"carried,omitempty"`
	Refused      int    `json:"refused,omitempty"`
	InBytes      int    `json:"in_bytes"`
	UpBytes      int    `json:"up_bytes"`
	InCRC        string `json:"in_crc32c,omitempty"` // checksums, to compare bodies without logging them
	UpCRC        string `json:"up_crc32c,omitempty"`
	Error        string `json:"error,omitempty"`
}

func (s *Server) log(l *logLine) {
	if s.cfg.Log == nil {
		return
	}
	b, _ := json.Marshal(l)
	s.logMu.Lock()
	defer s.logMu.Unlock()
	s.cfg.Log.Write(append(b, '\n'))
}

// digest is the CRC-32C of b, as 8 hex digits: enough to tell two bodies
// apart in a log, at memory speed (the CPU computes it; SHA-256 took a
// millisecond a megabyte, as long as the whole rewrite).
func digest(b []byte) string {
	return fmt.Sprintf("%08x", crc32.Checksum(b, castagnoli()))
}

// digestParts is digest of the parts put together.
func digestParts(parts [][]byte) string {
	var c uint32
	for _, p := range parts {
		c = crc32.Update(c, castagnoli(), p)
	}
	return fmt.Sprintf("%08x", c)
}

var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// errorJSON answers the client with a JSON error in the API's shape.
func errorJSON(w http.ResponseWriter, status int, typ, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": "rowkit router: " + msg, "type": typ, "code": typ}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// isResponses reports whether a request is one the router rewrites: a POST
// of a Responses request (a compaction is one too).
func isResponses(r *http.Request) bool {
	return r.Method == http.MethodPost && (strings.HasSuffix(r.URL.Path, "/responses") || strings.HasSuffix(r.URL.Path, "/responses/compact"))
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	l := &logLine{Method: r.Method, Path: r.URL.Path}
	digested := func() {}
	defer func() {
		l.Time = start.UTC().Format(time.RFC3339Nano)
		l.MS = time.Since(start).Milliseconds()
		digested()
		s.log(l)
	}()
	body, err := readBody(r)
	if err != nil {
		l.Status, l.Error = http.StatusBadRequest, "reading the request: "+err.Error()
		errorJSON(w, l.Status, "invalid_request", l.Error)
		return
	}
	l.InBytes = len(body)
	if len(body) > MaxRequestBytes {
		l.Status, l.Error = http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than %d bytes", MaxRequestBytes)
		errorJSON(w, l.Status, CodeTooLarge, l.Error)
		return
	}
	// What goes upstream is the body, or its rewrite in parts, sent as
	// they are (never joined: a copy of a megabyte for a long session).
	var up [][]byte
	routed := false
	carrier := s.cfg.Carrier
	if !s.cfg.Passthrough && isResponses(r) {
		rq, parts := s.cfg.Carrier.rewriteParts(body)
		up, routed = parts, rq.Routed
		carrier = s.cfg.Carrier.ForModel(rq.Model)
		l.Routed, l.Tools, l.Instructions, l.Decoded, l.Explained = rq.Routed, rq.Tools, rq.Instructions, rq.Decoded, rq.Explained
	}
	if up == nil {
		up = [][]byte{body}
	}
	if len(body) > 0 {
		// The checksums are for the log line only: taken while the
		// upstream answers, not before the request goes.
		done := make(chan struct{})
		digested = func() { <-done }
		changed := len(up) > 1
		go func() {
			defer close(done)
			l.InCRC = digest(body)
			l.UpCRC = l.InCRC
			if changed {
				l.UpCRC = digestParts(up)
			}
		}()
	}
	for _, p := range up {
		l.UpBytes += len(p)
	}

	u := *s.cfg.Upstream
	u.RawPath = strings.TrimSuffix(s.cfg.Upstream.EscapedPath(), "/") + r.URL.EscapedPath()
	u.Path, _ = url.PathUnescape(u.RawPath)
	u.RawQuery = r.URL.RawQuery
	var rb io.Reader
	if r.Method != http.MethodGet && r.Method != http.MethodHead || l.UpBytes > 0 {
		rb = bytes.NewReader(up[0]) // http sets ContentLength and GetBody
		if len(up) > 1 {
			rb = &partsReader{parts: up}
		}
	}
	// The client going away cancels the upstream request with it.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, r.Method, u.String(), rb)
	if err != nil {
		l.Status, l.Error = http.StatusBadGateway, err.Error()
		errorJSON(w, l.Status, CodeUnreachable, l.Error)
		return
	}
	if pr, ok := rb.(*partsReader); ok {
		req.ContentLength = int64(l.UpBytes)
		req.GetBody = func() (io.ReadCloser, error) {
			return io.NopCloser(&partsReader{parts: pr.parts}), nil
		}
	}
	copyHeader(req.Header, r.Header)
	req.Header.Del("Content-Length")
	if routed {
		req.Header.Del("Accept-Encoding")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		if r.Context().Err() != nil {
			l.Status, l.Error = 499, "the client went away"
			return
		}
		l.Status, l.Error = http.StatusBadGateway, "the upstream did not answer: "+redact(err, s.cfg.Upstream)
		errorJSON(w, l.Status, CodeUnreachable, l.Error)
		return
	}
	defer resp.Body.Close()
	l.Status = resp.StatusCode
	transform := routed && resp.StatusCode/100 == 2 && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	copyHeader(w.Header(), resp.Header)
	if transform {
		w.Header().Del("Content-Length")
	}
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	flush := func() { rc.Flush() }
	if transform {
		st, err := carrier.RewriteStream(w, flush, resp.Body)
		l.Carried, l.Refused = st.Carried, st.Refused
		if err != nil {
			l.Error = err.Error()
		}
		return
	}
	if err := copyFlushing(w, flush, resp.Body); err != nil {
		l.Error = err.Error()
	}
}

// partsReader reads a body given in parts, in order. It never writes to
// them (the log's checksum reads them at the same time, and GetBody reads
// them again from the start).
type partsReader struct {
	parts  [][]byte
	i, off int // the next byte is parts[i][off]
}

func (p *partsReader) Read(b []byte) (int, error) {
	n := 0
	for n < len(b) && p.i < len(p.parts) {
		c := copy(b[n:], p.parts[p.i][p.off:])
		n += c
		if p.off += c; p.off == len(p.parts[p.i]) {
			p.i, p.off = p.i+1, 0
		}
	}
	if n == 0 && len(b) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// readBody reads a request body up to one byte past MaxRequestBytes, in
// one allocation when the client says how long it is.
func readBody(r *http.Request) ([]byte, error) {
	var b bytes.Buffer
	if n := r.ContentLength; n > 0 && n <= MaxRequestBytes {
		b.Grow(int(n) + 1)
	}
	_, err := b.ReadFrom(io.LimitReader(r.Body, MaxRequestBytes+1))
	return b.Bytes(), err
}

// copyFlushing copies a response as it arrives: every read is written and
// flushed at once, so a stream's events reach the client when they come.
func copyFlushing(w io.Writer, flush func(), r io.Reader) error {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			flush()
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// redact keeps the upstream's credentials (a user:password in its URL)
// out of a message.
func redact(err error, u *url.URL) string {
	msg := err.Error()
	if u.User != nil {
		msg = strings.ReplaceAll(msg, u.String(), u.Redacted())
	}
	return msg
}
