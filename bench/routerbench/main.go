// Command routerbench measures what rowkit router adds to a Codex request:
// the same requests, against the same scripted upstream, sent straight to
// it, through `rowkit router --passthrough` (the baseline: a proxy that
// changes nothing) and through `rowkit router`, interleaved so that the
// machine's load falls on all three alike. bench/router.sh runs it; see
// bench/README.md.
//
//	routerbench -bin ROWKIT -request calls.json [-n 300] [-rss 5000]
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"
)

func main() {
	bin := flag.String("bin", "", "the rowkit binary")
	request := flag.String("request", "", "a request body Codex sent (internal/router/testdata/codex-0.169/calls.json)")
	n := flag.Int("n", 300, "requests per kind and path")
	rssN := flag.Int("rss", 5000, "requests for the memory run")
	flag.Parse()
	if err := run(*bin, *request, *n, *rssN); err != nil {
		fmt.Fprintln(os.Stderr, "routerbench:", err)
		os.Exit(1)
	}
}

// The scripted upstream's answer: what a model turn streams, with a
// routed call in it. A batch is what the upstream writes between two
// flushes; the first event of each carries the time it was written.
const (
	batches      = 20
	perBatch     = 5
	batchGap     = 2 * time.Millisecond
	routedScript = "in notes.txt\ntype 1:8ed3 \"alpha one\"\nadd EOF <<PATCH\ndelta\nPATCH"
)

func event(v map[string]any) []byte {
	b, _ := json.Marshal(v)
	return []byte(fmt.Sprintf("event: %s\ndata: %s\n\n", v["type"], b))
}

// upstream answers every Responses request with a stream; paced streams
// wait batchGap between batches.
func upstream(paced bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		seq := 0
		emit := func(v map[string]any) {
			v["sequence_number"] = seq
			seq++
			w.Write(event(v))
		}
		emit(map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_b", "status": "in_progress", "output": []any{}}})
		fl.Flush()
		for b := range batches {
			if paced {
				time.Sleep(batchGap)
			}
			for i := range perBatch {
				v := map[string]any{"type": "response.output_text.delta", "item_id": "msg_b", "output_index": 0, "content_index": 0, "delta": "some words of the answer "}
				if i == 0 {
					v["t"] = strconv.FormatInt(time.Now().UnixNano(), 10)
					v["batch"] = b
				}
				emit(v)
			}
			fl.Flush()
		}
		item := map[string]any{"type": "custom_tool_call", "id": "ctc_b", "status": "in_progress", "call_id": "call_b", "name": "hpatch", "input": ""}
		emit(map[string]any{"type": "response.output_item.added", "output_index": 1, "item": item})
		for _, d := range strings.SplitAfter(routedScript, "\n") {
			emit(map[string]any{"type": "response.custom_tool_call_input.delta", "output_index": 1, "item_id": "ctc_b", "delta": d})
		}
		done := map[string]any{"type": "custom_tool_call", "id": "ctc_b", "status": "completed", "call_id": "call_b", "name": "hpatch", "input": routedScript}
		emit(map[string]any{"type": "response.output_item.done", "output_index": 1, "item": done})
		emit(map[string]any{"type": "response.completed", "response": map[string]any{"id": "resp_b", "status": "completed", "output": []any{}}})
		fl.Flush()
	}
}

// startRouter runs rowkit router in front of up and returns its base URL.
func startRouter(bin, up string, passthrough bool) (string, *exec.Cmd, error) {
	args := []string{"router", "--upstream", up + "/v1", "--listen", "127.0.0.1:0"}
	if passthrough {
		args = append(args, "--passthrough")
	}
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	rd := bufio.NewReader(stderr)
	line, err := rd.ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		return "", nil, fmt.Errorf("rowkit router: %v", err)
	}
	go io.Copy(io.Discard, rd) // the log lines
	_, rest, ok := strings.Cut(line, "listening on ")
	addr, _, _ := strings.Cut(rest, " ")
	if !ok {
		cmd.Process.Kill()
		return "", nil, fmt.Errorf("rowkit router said %q", line)
	}
	return addr, cmd, nil
}

// longHistory is the recorded request with its carried call and output
// repeated until the body is about size bytes: a long session. With
// outBytes > 0 each output is that long (verified rows, as hread prints
// them), so a megabyte holds fewer calls.
func longHistory(body []byte, size, outBytes int) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, err
	}
	var items []json.RawMessage
	json.Unmarshal(top["input"], &items)
	var call, out json.RawMessage
	for _, it := range items {
		var v struct {
			Type   string
			CallID string `json:"call_id"`
		}
		json.Unmarshal(it, &v)
		if v.CallID == "call_rec_1" && v.Type == "function_call" {
			call = it
		}
		if v.CallID == "call_rec_1" && v.Type == "function_call_output" {
			out = it
		}
	}
	if call == nil || out == nil {
		return nil, fmt.Errorf("the request has no carried call call_rec_1")
	}
	if outBytes > 0 {
		text := "Chunk ID: 1f2e3d\nWall time: 0.0102 seconds\nProcess exited with code 0\nOriginal token count: 1000\nOutput:\n"
		for i := 1; len(text) < outBytes; i++ {
			text += fmt.Sprintf("%d:%04x \tif err := check(%q); err != nil {\n", i, i*7919%65536, "row")
		}
		var err error
		// In Codex's order of members.
		if out, err = marshal(struct {
			Type   string `json:"type"`
			ID     string `json:"id"`
			CallID string `json:"call_id"`
			Output string `json:"output"`
		}{"function_call_output", "fco_01a2", "call_rec_1", text}); err != nil {
			return nil, err
		}
	}
	for i := 0; len(body) < size; i++ {
		id := fmt.Sprintf("call_long_%d", i)
		items = append(items, bytes.ReplaceAll(call, []byte("call_rec_1"), []byte(id)), bytes.ReplaceAll(out, []byte("call_rec_1"), []byte(id)))
		if i%50 == 0 {
			top["input"], _ = marshal(items)
			body, _ = marshal(top)
		}
	}
	top["input"], _ = marshal(items)
	return marshal(top)
}

// growing gives the bodies of a long session's requests as Codex sends
// them, each the one before with one more carried call and its output:
// body(i) is long (from longHistory) without its last n-1-i calls. The
// router resumes each after the history of the one before and decodes
// only the new call; the same body again (the other cases) is its best
// case.
func growing(long []byte, n int) (func(i int) []byte, int, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(long, &top); err != nil {
		return nil, 0, err
	}
	var items []json.RawMessage
	if err := json.Unmarshal(top["input"], &items); err != nil {
		return nil, 0, err
	}
	if len(items) < 2*n+2 {
		return nil, 0, fmt.Errorf("the long session has %d items, fewer than %d", len(items), 2*n+2)
	}
	top["input"] = json.RawMessage(`"@@input@@"`)
	b, err := marshal(top)
	if err != nil {
		return nil, 0, err
	}
	pre, post, ok := bytes.Cut(b, []byte(`"@@input@@"`))
	if !ok {
		return nil, 0, fmt.Errorf("no input in the session")
	}
	var all []byte
	ends := make([]int, len(items))
	for k, it := range items {
		if k > 0 {
			all = append(all, ',')
		}
		all = append(all, it...)
		ends[k] = len(all)
	}
	body := func(i int) []byte {
		m := len(items) - 2*(n-1-i)
		out := make([]byte, 0, len(pre)+ends[m-1]+2+len(post))
		out = append(append(append(out, pre...), '['), all[:ends[m-1]]...)
		return append(append(out, ']'), post...)
	}
	return body, len(body(0)), nil
}

// marshal writes v as Codex writes JSON: without HTML escaping (the
// carriers' heredocs keep their <<).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

type result struct {
	total   time.Duration
	batches []time.Duration // delay from the upstream's write to here, per batch
	carrier bool
}

func post(client *http.Client, base string, body []byte) (result, error) {
	var r result
	start := time.Now()
	resp, err := client.Post(base+"/responses", "application/json", bytes.NewReader(body))
	if err != nil {
		return r, err
	}
	defer resp.Body.Close()
	rd := bufio.NewReaderSize(resp.Body, 64<<10)
	for {
		line, err := rd.ReadBytes('\n')
		if bytes.HasPrefix(line, []byte("data: ")) {
			if i := bytes.Index(line, []byte(`"t":"`)); i >= 0 {
				now := time.Now()
				j := bytes.IndexByte(line[i+5:], '"')
				ns, _ := strconv.ParseInt(string(line[i+5:i+5+j]), 10, 64)
				r.batches = append(r.batches, now.Sub(time.Unix(0, ns)))
			}
			if bytes.Contains(line, []byte(`carrier --max-output`)) {
				r.carrier = true
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return r, err
		}
	}
	r.total = time.Since(start)
	if resp.StatusCode != 200 {
		return r, fmt.Errorf("status %d", resp.StatusCode)
	}
	return r, nil
}

func pct(ds []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(float64(len(s)-1)*p)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f", float64(d)/1e6) }

func rssKB(pid int) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if f, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.Fields(f)[0])
			return kb
		}
	}
	return 0
}

func run(bin, request string, n, rssN int) error {
	recorded, err := os.ReadFile(request)
	if err != nil {
		return err
	}
	long, err := longHistory(recorded, 1<<20, 0)
	if err != nil {
		return err
	}
	long4k, err := longHistory(recorded, 1<<20, 4<<10)
	if err != nil {
		return err
	}
	// Calls of their own, so that none is in the router's memo from the
	// long session before.
	grow, first, err := growing(bytes.ReplaceAll(long, []byte("call_long_"), []byte("call_grow_")), n+20)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}}
	for _, paced := range []bool{false, true} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		srv := &http.Server{Handler: upstream(paced)}
		go srv.Serve(ln)
		up := "http://" + ln.Addr().String()
		pass, pcmd, err := startRouter(bin, up, true)
		if err != nil {
			return err
		}
		defer pcmd.Process.Kill() // when a measurement fails
		routed, rcmd, err := startRouter(bin, up, false)
		if err != nil {
			return err
		}
		defer rcmd.Process.Kill()
		paths := []struct{ name, base string }{{"direct", up + "/v1"}, {"passthrough", pass}, {"router", routed}}
		bodies := []struct {
			name string
			b    []byte
			next func(int) []byte // the body of request i, when they differ
		}{{fmt.Sprintf("recorded request (%d bytes)", len(recorded)), recorded, nil}, {fmt.Sprintf("long session (%d bytes)", len(long)), long, nil},
			{fmt.Sprintf("long session of calls printing 4 KB (%d bytes)", len(long4k)), long4k, nil},
			{fmt.Sprintf("long session growing by one call a request (%d to %d bytes)", first, len(grow(n+19))), nil, grow}}
		if paced {
			bodies = bodies[:1]
		}
		for _, body := range bodies {
			totals := make([][]time.Duration, len(paths))
			delays := make([][]time.Duration, len(paths))
			for i := 0; i < n+20; i++ {
				b := body.b
				if body.next != nil {
					b = body.next(i)
				}
				for k, p := range paths {
					r, err := post(client, p.base, b)
					if err != nil {
						return fmt.Errorf("%s: %v", p.name, err)
					}
					if (p.name == "router") != r.carrier {
						return fmt.Errorf("%s: carrier %v", p.name, r.carrier)
					}
					if i >= 20 { // warm-up
						totals[k] = append(totals[k], r.total)
						delays[k] = append(delays[k], r.batches[1:]...)
					}
				}
			}
			if !paced {
				fmt.Printf("\nper request, %s, %d requests each (ms):\n\n| path | p50 | p99 | p50 added over passthrough |\n| --- | ---: | ---: | ---: |\n", body.name, n)
				for k, p := range paths {
					fmt.Printf("| %s | %s | %s | %s |\n", p.name, ms(pct(totals[k], .5)), ms(pct(totals[k], .99)), ms(pct(totals[k], .5)-pct(totals[1], .5)))
				}
			} else {
				fmt.Printf("\nper streamed event batch (upstream write to client read; %d batches of %d events, %s apart), %d requests each (ms):\n\n| path | p50 | p99 | p50 added over passthrough |\n| --- | ---: | ---: | ---: |\n", batches, perBatch, batchGap, n)
				for k, p := range paths {
					fmt.Printf("| %s | %s | %s | %s |\n", p.name, ms(pct(delays[k], .5)), ms(pct(delays[k], .99)), ms(pct(delays[k], .5)-pct(delays[1], .5)))
				}
			}
		}
		if !paced && rssN > 0 {
			fmt.Printf("\nrowkit router's resident memory over %d long-session requests (KB):\n\n| requests | VmRSS |\n| ---: | ---: |\n", rssN)
			for i := 1; i <= rssN; i++ {
				if _, err := post(client, routed, long); err != nil {
					return err
				}
				if i == 1 || i%(rssN/5) == 0 {
					fmt.Printf("| %d | %d |\n", i, rssKB(rcmd.Process.Pid))
				}
			}
		}
		pcmd.Process.Signal(os.Interrupt)
		rcmd.Process.Signal(os.Interrupt)
		pcmd.Wait()
		rcmd.Wait()
		srv.Close()
	}
	return nil
}
