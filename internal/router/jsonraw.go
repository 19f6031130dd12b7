package router

import (
	"bytes"
	"encoding/json"

	"github.com/rowkit/rowkit/internal/jsonstr"
)

// The request and the stream are rewritten in place: a JSON value is split
// into its members as raw bytes, the few that change are replaced, and
// everything else keeps its bytes and its order, so that what the router
// does not mean to change reaches the upstream exactly as Codex sent it.

// member is one member of a JSON object, its value as raw bytes.
type member struct {
	key string
	raw json.RawMessage
}

// splitObject returns the members of the JSON object b in order, or false
// when b is not one.
func splitObject(b []byte) ([]member, bool) {
	d := json.NewDecoder(bytes.NewReader(b))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var ms []member
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, false
		}
		k, ok := t.(string)
		if !ok {
			return nil, false
		}
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return nil, false
		}
		ms = append(ms, member{k, raw})
	}
	if t, err := d.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	if _, err := d.Token(); err == nil || d.More() {
		return nil, false // trailing data
	}
	return ms, true
}

// splitArray returns the elements of the JSON array b, or false.
func splitArray(b []byte) ([]json.RawMessage, bool) {
	d := json.NewDecoder(bytes.NewReader(b))
	if t, err := d.Token(); err != nil || t != json.Delim('[') {
		return nil, false
	}
	var es []json.RawMessage
	for d.More() {
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return nil, false
		}
		es = append(es, raw)
	}
	if t, err := d.Token(); err != nil || t != json.Delim(']') {
		return nil, false
	}
	return es, true
}

// joinObject writes members as a compact JSON object.
func joinObject(ms []member) []byte {
	n := 2
	for _, m := range ms {
		n += len(m.key) + len(m.raw) + 4
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, m.key)
		b = append(b, ':')
		b = append(b, m.raw...)
	}
	return append(b, '}')
}

// joinArray writes elements as a compact JSON array.
func joinArray(es []json.RawMessage) []byte {
	n := 2
	for _, e := range es {
		n += len(e) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, e := range es {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return append(b, ']')
}

// get returns the raw value of key, or nil.
func get(ms []member, key string) json.RawMessage {
	for _, m := range ms {
		if m.key == key {
			return m.raw
		}
	}
	return nil
}

// set replaces the value of key, or appends the member.
func set(ms []member, key string, raw json.RawMessage) []member {
	for i := range ms {
		if ms[i].key == key {
			ms[i].raw = raw
			return ms
		}
	}
	return append(ms, member{key, raw})
}

// str is a JSON string value's contents, or "" and false.
func str(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// quote is s as a JSON string, as every rowkit serialiser writes it.
func quote(s string) json.RawMessage { return jsonstr.Append(nil, s) }
