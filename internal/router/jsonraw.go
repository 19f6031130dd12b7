package router

import (
	"bytes"
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"

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

// The splitters scan the bytes themselves rather than through
// encoding/json, whose decoder costs a request of Codex's long history
// milliseconds: they find where each value ends (strings with their
// escapes, brackets matched by kind) and take what is not JSON's structure
// as not theirs to judge, so a malformed body is refused whole (and goes
// out unchanged) but a malformed number inside one is the upstream's to
// reject. A key is decoded only when it holds an escape.

// splitObject returns the members of the JSON object b in order, or false
// when b is not one.
func splitObject(b []byte) ([]member, bool) {
	ms := make([]member, 0, 8)
	ok := eachMember(b, func(k string, raw []byte) { ms = append(ms, member{k, raw}) })
	if !ok {
		return nil, false
	}
	return ms, true
}

// eachMember calls f with each member of the JSON object b in order, and
// reports whether b is one (f may have been called when it is not).
func eachMember(b []byte, f func(key string, raw []byte)) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		key, vs, ok := keyAt(b, i)
		if !ok {
			return false
		}
		end, ok := skipValue(b, vs)
		if !ok {
			return false
		}
		f(key, b[vs:end:end])
		i = skipSpace(b, end)
		if i >= len(b) {
			return false
		}
		if b[i] == '}' {
			return skipSpace(b, i+1) == len(b)
		}
		if b[i] != ',' {
			return false
		}
		i = skipSpace(b, i+1)
	}
}

// firstMembers calls f with the members of the JSON object b in order
// while f returns true, without looking further: a reader of the first few
// members of a long object.
func firstMembers(b []byte, f func(key string, raw []byte) bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return
	}
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] == '"' {
		key, vs, ok := keyAt(b, i)
		if !ok {
			return
		}
		end, ok := skipValue(b, vs)
		if !ok || !f(key, b[vs:end:end]) {
			return
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ',' {
			return
		}
		i = skipSpace(b, i+1)
	}
}

// keyAt reads the key of the member of a JSON object that starts at b[i],
// the key's opening quote, and its colon: the key, decoded, and where the
// member's value starts.
func keyAt(b []byte, i int) (key string, vs int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return "", 0, false
	}
	end, ok := skipString(b, i)
	if !ok {
		return "", 0, false
	}
	key, ok = internKey(b[i+1 : end-1])
	if !ok {
		if key, ok = unquote(b[i:end]); !ok {
			return "", 0, false
		}
	}
	i = skipSpace(b, end)
	if i >= len(b) || b[i] != ':' {
		return "", 0, false
	}
	return key, skipSpace(b, i+1), true
}

// splitArray returns the elements of the JSON array b, or false.
func splitArray(b []byte) ([]json.RawMessage, bool) {
	es := make([]json.RawMessage, 0, 16)
	if !eachElement(b, func(e []byte) { es = append(es, e) }) {
		return nil, false
	}
	return es, true
}

// eachElement calls f with each element of the JSON array b and reports
// whether b is one (f may have been called when it is not).
func eachElement(b []byte, f func([]byte)) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		end, ok := skipValue(b, i)
		if !ok {
			return false
		}
		f(b[i:end:end])
		i = skipSpace(b, end)
		if i >= len(b) {
			return false
		}
		if b[i] == ']' {
			return skipSpace(b, i+1) == len(b)
		}
		if b[i] != ',' {
			return false
		}
		i = skipSpace(b, i+1)
	}
}

// internKey returns a key without escapes that is one of the keys of the
// Responses API's requests, items and events as a constant string, without
// an allocation (a switch on the bytes compares them in place), or false.
func internKey(k []byte) (string, bool) {
	switch string(k) {
	case "type":
		return "type", true
	case "id":
		return "id", true
	case "call_id":
		return "call_id", true
	case "name":
		return "name", true
	case "status":
		return "status", true
	case "arguments":
		return "arguments", true
	case "input":
		return "input", true
	case "output":
		return "output", true
	case "role":
		return "role", true
	case "content":
		return "content", true
	case "text":
		return "text", true
	case "cmd":
		return "cmd", true
	case "tools":
		return "tools", true
	case "model":
		return "model", true
	case "stream":
		return "stream", true
	case "instructions":
		return "instructions", true
	case "summary":
		return "summary", true
	case "encrypted_content":
		return "encrypted_content", true
	case "item":
		return "item", true
	case "item_id":
		return "item_id", true
	case "sequence_number":
		return "sequence_number", true
	case "output_index":
		return "output_index", true
	case "response":
		return "response", true
	case "delta":
		return "delta", true
	case "description":
		return "description", true
	case "format":
		return "format", true
	case "parameters":
		return "parameters", true
	case "strict":
		return "strict", true
	case "previous_response_id":
		return "previous_response_id", true
	case "tool_choice":
		return "tool_choice", true
	}
	return "", false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// skipString returns the end of the string that starts at b[i] == '"':
// the first quote after it that an even number of backslashes precedes.
func skipString(b []byte, i int) (int, bool) {
	start := i + 1
	for i = start; ; {
		// Most strings of a request are short (keys, ids, types): a plain
		// loop finds their end sooner than IndexByte's call; a long one is
		// left to IndexByte.
		k := -1
		for p, lim := i, min(len(b), i+16); p < lim; p++ {
			if b[p] == '"' {
				k = p
				break
			}
		}
		if k < 0 {
			if i+16 >= len(b) {
				return 0, false
			}
			j := bytes.IndexByte(b[i+16:], '"')
			if j < 0 {
				return 0, false
			}
			k = i + 16 + j
		}
		n := 0
		for p := k - 1; p >= start && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return k + 1, true
		}
		i = k + 1
	}
}

// skipValue returns the end of the value that starts at b[i]: a string,
// an object or array with its brackets matched, or a bare literal.
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ':' && b[j] != '"' &&
			b[j] != ' ' && b[j] != '\n' && b[j] != '\r' && b[j] != '\t' && b[j] != '{' && b[j] != '[' {
			j++
		}
		return j, j > i
	}
	var stack []byte
	for i < len(b) {
		switch c := b[i]; c {
		case '"':
			end, ok := skipString(b, i)
			if !ok {
				return 0, false
			}
			i = end
			continue
		case '{', '[':
			stack = append(stack, c)
		case '}', ']':
			if len(stack) == 0 || stack[len(stack)-1] != c-2 { // '{'+2 == '}', '['+2 == ']'
				return 0, false
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return i + 1, true
			}
		}
		i++
	}
	return 0, false
}

// unquote decodes the JSON string q (quotes included). It is
// encoding/json's decoding, written out for the hot path: every escape,
// \u pairs joined, a lone surrogate as U+FFFD; raw control characters and
// unknown escapes refused.
func unquote(q []byte) (string, bool) {
	b, ok := unquoteBytes(q)
	return string(b), ok
}

// unquoteBytes is unquote's answer as bytes: q's own contents when it
// holds no escape.
func unquoteBytes(q []byte) ([]byte, bool) { return unquoteInto(nil, q) }

// unquoteInto is unquoteBytes into dst's array when it has room (a caller
// that decodes many strings reuses one buffer); with dst nil, q's own
// contents when q holds no escape.
func unquoteInto(dst, q []byte) ([]byte, bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return nil, false
	}
	q = q[1 : len(q)-1]
	if !utf8.Valid(q) {
		// encoding/json puts U+FFFD in place of invalid UTF-8: rare
		// enough to leave to it.
		var s string
		if json.Unmarshal(append(append([]byte{'"'}, q...), '"'), &s) != nil {
			return nil, false
		}
		return []byte(s), true
	}
	i := bytes.IndexByte(q, '\\')
	if i < 0 {
		for _, c := range q {
			if c < 0x20 || c == '"' {
				return nil, false
			}
		}
		if dst != nil {
			return append(dst[:0], q...), true
		}
		return q, true
	}
	out := dst[:0]
	if cap(out) < len(q) {
		out = make([]byte, 0, len(q))
	}
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '"' || c < 0x20:
			return nil, false
		case c != '\\':
			// A run up to the next escape, copied whole.
			j := i + 1
			for j < len(q) && q[j] != '\\' {
				if q[j] == '"' || q[j] < 0x20 {
					return nil, false
				}
				j++
			}
			out = append(out, q[i:j]...)
			i = j
			continue
		}
		if i+1 >= len(q) {
			return nil, false
		}
		switch e := q[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(q, i+2)
			if !ok {
				return nil, false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if i+1 < len(q) && q[i] == '\\' && q[i+1] == 'u' {
					if v, ok := hex4(q, i+2); ok {
						r2 = v
					}
				}
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					r = d
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return nil, false
		}
		i += 2
	}
	return out, true
}

func hex4(q []byte, i int) (rune, bool) {
	if i+4 > len(q) {
		return 0, false
	}
	var r rune
	for _, c := range q[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
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
func str(raw json.RawMessage) (string, bool) { return unquote(raw) }

// quote is s as a JSON string, as every rowkit serialiser writes it.
func quote(s string) json.RawMessage { return jsonstr.Append(nil, s) }
