package router

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"
)

// longSession is the recorded request with its carried call and output
// repeated to about size bytes: a long session.
func longSession(tb testing.TB, size int) []byte { return longSessionOf(tb, size, 0) }

// longSessionOf is longSession with each output outBytes of verified rows
// long (0: the recorded output, 339 bytes): the more a call prints, the
// fewer calls a megabyte holds.
func longSessionOf(tb testing.TB, size, outBytes int) []byte {
	body := recordedTB(tb, "calls")
	ms, _ := splitObject(body)
	items, _ := splitArray(get(ms, "input"))
	var call, out json.RawMessage
	for _, it := range items {
		if bytes.Contains(it, []byte(`"call_rec_1"`)) && bytes.Contains(it, []byte(`"function_call"`)) {
			call = it
		}
		if bytes.Contains(it, []byte(`"call_rec_1"`)) && bytes.Contains(it, []byte(`"function_call_output"`)) {
			out = it
		}
	}
	if outBytes > 0 {
		text := "Chunk ID: 1f2e3d\nWall time: 0.0102 seconds\nProcess exited with code 0\nOriginal token count: 1000\nOutput:\n"
		for i := 1; len(text) < outBytes; i++ {
			text += fmt.Sprintf("%d:%04x \tif err := check(%q); err != nil {\n", i, i*7919%65536, "row")
		}
		out = joinObject([]member{{"type", quote("function_call_output")}, {"id", quote("fco_01a2")}, {"call_id", quote("call_rec_1")}, {"output", quote(text)}})
	}
	n := len(body)
	for i := 0; n < size; i++ {
		id := []byte(fmt.Sprintf("call_long_%d", i))
		c := bytes.ReplaceAll(call, []byte("call_rec_1"), id)
		o := bytes.ReplaceAll(out, []byte("call_rec_1"), id)
		items = append(items, c, o)
		n += len(c) + len(o) + 2
	}
	return joinObject(set(ms, "input", joinArray(items)))
}

func recordedTB(tb testing.TB, name string) []byte {
	if t, ok := tb.(*testing.T); ok {
		return recorded(t, name)
	}
	b, err := readRecorded(name)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

type namedBody struct {
	name string
	body []byte
}

// rewriteBodies are the bodies the rewrite's benchmarks time: the
// recorded session, and a long one of short and of 4 KiB outputs.
func rewriteBodies(b *testing.B) []namedBody {
	return []namedBody{{"recorded", recordedTB(b, "calls")}, {"long", longSession(b, 1<<20)}, {"long-4k", longSessionOf(b, 1<<20, 4<<10)}}
}

func BenchmarkRewrite(b *testing.B) {
	c := testCarrier(b)
	for _, tc := range rewriteBodies(b) {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.body)))
			for b.Loop() {
				c.Rewrite(tc.body)
			}
		})
		b.Run(tc.name+"-cold", func(b *testing.B) {
			c := c.withoutMemo()
			b.SetBytes(int64(len(tc.body)))
			for b.Loop() {
				c.Rewrite(tc.body)
			}
		})
	}
}

func BenchmarkDigest(b *testing.B) {
	body := longSession(b, 1<<20)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		digest(body)
	}
}

// BenchmarkFloor is what no rewrite of a request can go below, on the
// same bodies as BenchmarkRewrite: a copy of the body into a new buffer
// (the body sent upstream is a new one) and one scan of it at memory
// speed (counting a byte).
func BenchmarkFloor(b *testing.B) {
	for _, tc := range []struct {
		name string
		body []byte
	}{{"recorded", recordedTB(b, "calls")}, {"long", longSession(b, 1<<20)}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.body)))
			n := 0
			for b.Loop() {
				out := append(make([]byte, 0, len(tc.body)), tc.body...)
				n += bytes.Count(out, []byte{'\n'})
			}
		})
	}
}

// BenchmarkRewriteVsFloor times Rewrite and the floor (BenchmarkFloor's
// copy and scan) on the same body in alternation, so that the machine's
// load falls on both alike, and reports Rewrite's time as a multiple of
// the floor's (x-floor), and each per operation. Each body is rewritten
// three ways:
//
//   - again: the same body again and again, resumed after its whole
//     history (see histories);
//   - next (-next): as the next request of a session, the previous one
//     (the body without its last two items) rewritten first, untimed, and
//     the body resumed after its items;
//   - cold (-cold): without the memos, every carrier decoded, as on a
//     router's first request of a session.
func BenchmarkRewriteVsFloor(b *testing.B) {
	for _, tc := range rewriteBodies(b) {
		ms, _ := splitObject(tc.body)
		items, _ := splitArray(get(ms, "input"))
		prev := joinObject(set(slices.Clone(ms), "input", joinArray(items[:len(items)-2])))
		for _, mode := range []string{"", "-next", "-cold"} {
			c := testCarrier(b)
			if mode == "-cold" {
				c = c.withoutMemo()
			}
			b.Run(tc.name+mode, func(b *testing.B) {
				var rewrite, floor time.Duration
				n := 0
				for b.Loop() {
					if mode == "-next" {
						c.histories = &histories{}
						c.Rewrite(prev)
					}
					t0 := time.Now()
					out := append(make([]byte, 0, len(tc.body)), tc.body...)
					n += bytes.Count(out, []byte{'\n'})
					t1 := time.Now()
					c.Rewrite(tc.body)
					rewrite += time.Since(t1)
					floor += t1.Sub(t0)
				}
				b.ReportMetric(float64(rewrite)/float64(floor), "x-floor")
				b.ReportMetric(float64(rewrite.Nanoseconds())/float64(b.N)/1e6, "rewrite-ms/op")
				b.ReportMetric(float64(floor.Nanoseconds())/float64(b.N)/1e6, "floor-ms/op")
			})
		}
	}
}

// withoutMemo is c without the memo of decoded carriers and of
// histories.
func (c *Carrier) withoutMemo() *Carrier {
	d := *c
	d.memo, d.histories = nil, nil
	return &d
}

// BenchmarkServe is the router's own CPU for a whole request, in process:
// the handler reading a long session, rewriting it, sending it to an
// upstream that discards it and answers with a short stream, and taking
// the log's digests; passthrough beside it as the baseline.
func BenchmarkServe(b *testing.B) {
	body := longSession(b, 1<<20)
	events := "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\"}}\n\n" +
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"output\":[]}}\n\n"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, events)
	}))
	defer up.Close()
	base, _ := url.Parse(up.URL + "/v1")
	for _, pass := range []bool{true, false} {
		name := map[bool]string{true: "passthrough", false: "router"}[pass]
		b.Run(name, func(b *testing.B) {
			h := NewServer(Config{Upstream: base, Passthrough: pass, Carrier: testCarrier(b), Log: io.Discard})
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/responses", bytes.NewReader(body))
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatal(w.Code)
				}
			}
		})
	}
}

// BenchmarkRewriteRef is phase 1's rewrite (rewriteRef) on the same
// bodies: what the spliced rewrite replaced.
func BenchmarkRewriteRef(b *testing.B) {
	c := testCarrier(b)
	for _, tc := range rewriteBodies(b) {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.body)))
			for b.Loop() {
				c.rewriteRef(tc.body)
			}
		})
	}
}
