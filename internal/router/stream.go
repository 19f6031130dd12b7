package router

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Bounds of one response stream.
const (
	MaxEventBytes = 16 << 20 // one server-sent event, as read
	MaxRouted     = 1024     // routed calls whose output_item.done is pending
)

// CodeRouterLimit is the error code of the response.failed event that ends
// a stream past a bound.
const CodeRouterLimit = "router_limit"

// event is one server-sent event as it came: its bytes (its blank line
// included) and what the rewrite reads of it.
type event struct {
	raw  []byte
	name string // the event field
	data []byte // the data lines, joined with LF
	crlf bool   // its lines end with CRLF
}

// sseReader splits a stream into events. It accepts LF and CRLF line ends,
// comments and multi-line data; what follows the last blank line (a stream
// cut short) comes back as a last event of its own.
type sseReader struct {
	r    *bufio.Reader
	max  int
	buf  []byte
	data []byte
}

func newSSEReader(r io.Reader, max int) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

var errEventTooLarge = errors.New("event too large")

// next returns the next event, io.EOF at the end, errEventTooLarge past
// the bound, or the read error.
func (s *sseReader) next() (event, error) {
	s.buf, s.data = s.buf[:0], s.data[:0]
	var ev event
	hasData := false
	for {
		start := len(s.buf)
		line, err := s.r.ReadSlice('\n')
		for {
			if len(s.buf)+len(line) > s.max {
				return event{}, errEventTooLarge
			}
			s.buf = append(s.buf, line...)
			if err != bufio.ErrBufferFull {
				break
			}
			// A line longer than the buffer: only the bound stops it.
			line, err = s.r.ReadSlice('\n')
		}
		line = s.buf[start:]
		if err != nil && err != io.EOF {
			return event{}, err
		}
		if err == io.EOF {
			if len(s.buf) == 0 {
				return event{}, io.EOF
			}
			ev.raw = s.buf
			return ev, nil
		}
		content := line[:len(line)-1]
		if n := len(content); n > 0 && content[n-1] == '\r' {
			content = content[:n-1]
			ev.crlf = true
		}
		if len(content) == 0 {
			ev.raw = s.buf
			if hasData {
				ev.data = s.data
			}
			return ev, nil
		}
		field, value, _ := bytes.Cut(content, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.name = string(value)
		case "data":
			if hasData {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, value...)
			hasData = true
		}
	}
}

// StreamStats says what a stream rewrite did.
type StreamStats struct {
	Carried int // routed calls sent to Codex as carriers
	Refused int // routed calls that could not be carried (Codex answers "unsupported")
}

// streamEvent is what the rewrite reads of an event's data.
type streamEvent struct {
	Type     string          `json:"type"`
	ItemID   string          `json:"item_id"`
	Seq      json.RawMessage `json:"sequence_number"`
	Item     json.RawMessage `json:"item"`
	Response json.RawMessage `json:"response"`
}

// callItem is what the rewrite reads of an output item.
type callItem struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	Input  string `json:"input"`
}

// pending is a routed call whose output_item.added was held back.
type pending struct {
	added []byte          // the event as it came
	seq   json.RawMessage // its sequence_number
}

// RewriteStream copies a response stream from src to dst, rewriting what
// a routed request's stream needs: a routed call's output_item.added and
// input deltas are held back, and at its output_item.done the router sends
// an added and a done that both carry the carrier (the model's call as an
// exec_command, which is what Codex runs). Every other event goes out byte
// for byte, and flush is called after every event written. Past a bound
// the stream ends with a response.failed event.
func (c *Carrier) RewriteStream(dst io.Writer, flush func(), src io.Reader) (StreamStats, error) {
	var st StreamStats
	rd := newSSEReader(src, MaxEventBytes)
	held := map[string]*pending{}
	var respID string
	write := func(events ...[]byte) error {
		for _, b := range events {
			if _, err := dst.Write(b); err != nil {
				return err
			}
			flush()
		}
		return nil
	}
	fail := func(msg string) error {
		b := failedEvent(respID, msg)
		if err := write(b); err != nil {
			return err
		}
		return errors.New(msg)
	}
	for {
		ev, err := rd.next()
		if err == io.EOF {
			return st, nil
		}
		if err == errEventTooLarge {
			return st, fail(fmt.Sprintf("rowkit router: an event of the upstream's stream is larger than %d bytes", MaxEventBytes))
		}
		if err != nil {
			return st, err
		}
		if ev.data == nil || !bytes.Contains(ev.data, []byte("custom_tool_call")) && !bytes.Contains(ev.data, []byte(`"response.created"`)) {
			if err := write(ev.raw); err != nil {
				return st, err
			}
			continue
		}
		var se streamEvent
		if json.Unmarshal(ev.data, &se) != nil {
			if err := write(ev.raw); err != nil {
				return st, err
			}
			continue
		}
		switch se.Type {
		case "response.created":
			var r struct{ ID string }
			json.Unmarshal(se.Response, &r)
			respID = r.ID
		case "response.output_item.added":
			if it, ok := routedItem(se.Item); ok {
				if len(held) >= MaxRouted {
					return st, fail(fmt.Sprintf("rowkit router: more than %d routed calls in one response", MaxRouted))
				}
				held[it.ID] = &pending{added: bytes.Clone(ev.raw), seq: se.Seq}
				continue
			}
		case "response.custom_tool_call_input.delta", "response.custom_tool_call_input.done":
			if _, ok := held[se.ItemID]; ok {
				continue
			}
		case "response.output_item.done":
			it, ok := routedItem(se.Item)
			if !ok {
				break
			}
			p := held[it.ID]
			delete(held, it.ID)
			args, err := c.Encode(it.Name, it.Input)
			if err != nil {
				// Codex answers "unsupported custom tool call"; the next
				// request puts the reason in its place (decodeHistory).
				st.Refused++
				added := p.addedOr(ev, se)
				if err := write(added, ev.raw); err != nil {
					return st, err
				}
				continue
			}
			ms, ok := splitObject(ev.data)
			if !ok {
				break
			}
			seq := se.Seq
			if p != nil && p.seq != nil {
				seq = p.seq
			}
			added := set(set(append([]member(nil), ms...), "type", quote("response.output_item.added")), "item", carrierItem(it, "", "in_progress"))
			if seq != nil {
				added = set(added, "sequence_number", seq)
			}
			done := set(ms, "item", carrierItem(it, args, "completed"))
			st.Carried++
			if err := write(frame("response.output_item.added", ev, joinObject(added)), frame("response.output_item.done", ev, joinObject(done))); err != nil {
				return st, err
			}
			continue
		case "response.completed", "response.incomplete", "response.failed":
			if b, ok := c.rewriteOutput(ev.data, se.Response); ok {
				if err := write(frame(se.Type, ev, b)); err != nil {
					return st, err
				}
				continue
			}
		}
		if err := write(ev.raw); err != nil {
			return st, err
		}
	}
}

// addedOr is the held added event, or one made from the done event when
// the stream had none.
func (p *pending) addedOr(ev event, se streamEvent) []byte {
	if p != nil {
		return p.added
	}
	ms, ok := splitObject(ev.data)
	if !ok {
		return nil
	}
	return frame("response.output_item.added", ev, joinObject(set(ms, "type", quote("response.output_item.added"))))
}

// routedItem reads an output item that is a call of hpatch or shell.
func routedItem(raw json.RawMessage) (callItem, bool) {
	var it callItem
	if len(raw) == 0 || json.Unmarshal(raw, &it) != nil {
		return it, false
	}
	return it, it.Type == "custom_tool_call" && (it.Name == ToolHpatch || it.Name == ToolShell)
}

// carrierItem is the exec_command call that carries it, with arguments.
func carrierItem(it callItem, arguments, status string) json.RawMessage {
	return joinObject([]member{
		{"id", quote(it.ID)},
		{"type", quote("function_call")},
		{"status", quote(status)},
		{"arguments", quote(arguments)},
		{"call_id", quote(it.CallID)},
		{"name", quote("exec_command")},
	})
}

// rewriteOutput maps the routed calls in a terminal event's response.output
// to their carriers, as the stream did; Codex does not read that array, but
// the response stays consistent with the events before it.
func (c *Carrier) rewriteOutput(data []byte, response json.RawMessage) ([]byte, bool) {
	rms, ok := splitObject(response)
	if !ok {
		return nil, false
	}
	items, ok := splitArray(get(rms, "output"))
	if !ok {
		return nil, false
	}
	changed := false
	for i, raw := range items {
		it, ok := routedItem(raw)
		if !ok {
			continue
		}
		args, err := c.Encode(it.Name, it.Input)
		if err != nil {
			continue
		}
		items[i] = carrierItem(it, args, "completed")
		changed = true
	}
	if !changed {
		return nil, false
	}
	ms, ok := splitObject(data)
	if !ok {
		return nil, false
	}
	return joinObject(set(ms, "response", joinObject(set(rms, "output", joinArray(items))))), true
}

// frame writes data as one event in the framing of like: its event field
// (when it had one) and its line ends.
func frame(name string, like event, data []byte) []byte {
	nl := "\n"
	if like.crlf {
		nl = "\r\n"
	}
	var b []byte
	if like.name != "" {
		b = append(b, "event: "+name+nl...)
	}
	b = append(b, "data: "...)
	b = append(b, data...)
	return append(b, nl+nl...)
}

// failedEvent ends a stream past a bound.
func failedEvent(respID, msg string) []byte {
	data := joinObject([]member{
		{"type", quote("response.failed")},
		{"response", joinObject([]member{
			{"id", quote(respID)},
			{"object", quote("response")},
			{"status", quote("failed")},
			{"error", joinObject([]member{{"code", quote(CodeRouterLimit)}, {"message", quote(msg)}})},
		})},
	})
	return frame("response.failed", event{name: "response.failed"}, data)
}
