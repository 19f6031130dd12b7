package inspect

// JSON projection (own positioned scanner, recovering from malformed
// input).
//
// Every value the scanner recognises becomes one entry, depth first in
// source order: the root first with pointer "", then each member or element
// before its own children. The pointer is RFC 6901: object keys decoded from
// their JSON escapes, then "~" written "~0" and "/" written "~1"; array
// elements by zero-based index. Duplicate keys give duplicate pointers.
// value_type is object, array, string, number, boolean or null; no scalar
// value is ever reported. A value's span runs from its first to its last
// byte (an object or array to its closing bracket).
//
// Recovery, which sets parse_complete false: a missing comma or colon is
// assumed; stray commas, colons and unknown words are skipped; a key without
// a value adds nothing; a closing bracket of the wrong kind closes the
// nearest enclosing container of its kind; containers still open at the end
// of the file end at the last token; anything after the root value is
// ignored. A leading byte order mark is skipped without error.
//
// Pointers are built in one shared buffer, so deep nesting costs linear
// memory; entries stop being materialised once they could no longer fit in
// the output bound (scanning goes on, for parse_complete).

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

type jsonTok int

const (
	jEOF jsonTok = iota
	jObjOpen
	jObjClose
	jArrOpen
	jArrClose
	jColon
	jComma
	jString
	jNumber
	jBool
	jNull
	jBad
)

type jsonState int

const (
	jsExpectValue jsonState = iota // array element (or the root)
	jsExpectKey
	jsExpectColon
	jsExpectMember // object value after the colon
	jsExpectComma
)

type jsonFrame struct {
	obj        bool
	entry      int // index of the container's entry, or -1 when not materialised
	plen       int // length of the container's pointer in the shared buffer
	n          int // next array index
	state      jsonState
	afterComma bool
	key        []byte // pending member key, already escaped for a pointer
}

type jsonScanner struct {
	src      []byte
	pos      int
	tokStart int
	lastEnd  int
	tokOK    bool
	closed   bool // the last string token found its closing quote

	out      []Entry
	budget   int // lower bound of the encoded size of out
	complete bool
	ptr      []byte
	stack    []jsonFrame
	open     [2]int // open arrays [0] and objects [1], so a stray bracket costs O(1)
}

// jsonEntryFloor is the encoded size of a JSON entry without its pointer:
// a lower bound, since pointers and line numbers only add to it.
var jsonEntryFloor = len(`{"kind":"json","pointer":"","value_type":"null","line":"1:0000","line_end":"1:0000"},`)

func outlineJSON(src []byte) ([]Entry, bool) {
	s := &jsonScanner{src: src, complete: true}
	if len(src) >= 3 && src[0] == 0xEF && src[1] == 0xBB && src[2] == 0xBF {
		s.pos = 3
	}
	s.run()
	return s.out, s.complete
}

func (s *jsonScanner) run() {
	started := false // the root value has begun
	for {
		t := s.next()
		if t == jEOF {
			if len(s.stack) > 0 || !started {
				s.complete = false
			}
			for len(s.stack) > 0 {
				s.close(s.lastEnd)
			}
			return
		}
		if !s.tokOK {
			s.complete = false
		}
		switch {
		case len(s.stack) > 0:
			s.step(t)
		case started:
			s.complete = false // content after the root value is ignored
			return
		case s.isValue(t):
			started = true
			s.value(t, nil)
		default:
			s.complete = false
		}
		s.consumed()
	}
}

func (s *jsonScanner) consumed() { s.lastEnd = s.pos }

func (s *jsonScanner) isValue(t jsonTok) bool {
	switch t {
	case jObjOpen, jArrOpen, jString, jNumber, jBool, jNull:
		return true
	}
	return false
}

func (s *jsonScanner) step(t jsonTok) {
	f := &s.stack[len(s.stack)-1]
	switch f.state {
	case jsExpectValue:
		switch {
		case s.isValue(t):
			f.state, f.afterComma = jsExpectComma, false
			s.element(t)
		case t == jArrClose:
			if f.afterComma {
				s.complete = false
			}
			s.close(s.pos)
		default:
			s.stray(t)
		}
	case jsExpectKey:
		switch t {
		case jString:
			f.key = s.pointerKey()
			f.state, f.afterComma = jsExpectColon, false
		case jObjClose:
			if f.afterComma {
				s.complete = false
			}
			s.close(s.pos)
		default:
			s.stray(t)
		}
	case jsExpectColon:
		switch {
		case t == jColon:
			f.state = jsExpectMember
		case s.isValue(t):
			s.complete = false // missing colon
			f.state = jsExpectComma
			s.member(t)
		case t == jComma:
			s.complete = false // key without value
			f.state, f.afterComma = jsExpectKey, true
		case t == jObjClose:
			s.complete = false
			s.close(s.pos)
		default:
			s.stray(t)
		}
	case jsExpectMember:
		switch {
		case s.isValue(t):
			f.state = jsExpectComma
			s.member(t)
		case t == jComma:
			s.complete = false
			f.state, f.afterComma = jsExpectKey, true
		case t == jObjClose:
			s.complete = false
			s.close(s.pos)
		default:
			s.stray(t)
		}
	case jsExpectComma:
		switch {
		case t == jComma:
			f.afterComma = true
			if f.obj {
				f.state = jsExpectKey
			} else {
				f.state = jsExpectValue
			}
		case f.obj && t == jObjClose, !f.obj && t == jArrClose:
			s.close(s.pos)
		case f.obj && t == jString:
			s.complete = false // missing comma
			f.key = s.pointerKey()
			f.state = jsExpectColon
		case !f.obj && s.isValue(t):
			s.complete = false // missing comma
			s.element(t)
		default:
			s.stray(t)
		}
	}
}

// stray handles a token that has no place where it is: a closing bracket
// closes the nearest enclosing container of its kind, anything else is
// skipped.
func (s *jsonScanner) stray(t jsonTok) {
	s.complete = false
	if t != jObjClose && t != jArrClose {
		return
	}
	obj := t == jObjClose
	if s.open[b2i(obj)] == 0 {
		return
	}
	for i := len(s.stack) - 1; i >= 0; i-- {
		if s.stack[i].obj == obj {
			for len(s.stack) > i+1 {
				s.close(s.lastEnd)
			}
			s.close(s.pos)
			return
		}
	}
}

func (s *jsonScanner) element(t jsonTok) {
	f := &s.stack[len(s.stack)-1]
	seg := strconv.AppendInt(nil, int64(f.n), 10)
	f.n++
	s.value(t, seg)
}

func (s *jsonScanner) member(t jsonTok) {
	f := &s.stack[len(s.stack)-1]
	s.value(t, f.key)
}

// value records a value at the pointer of the current container plus seg
// (the root when seg is nil), and opens it when it is a container.
func (s *jsonScanner) value(t jsonTok, seg []byte) {
	plen := 0
	if n := len(s.stack); n > 0 {
		plen = s.stack[n-1].plen
	}
	s.ptr = s.ptr[:plen]
	if seg != nil {
		s.ptr = append(s.ptr, '/')
		s.ptr = append(s.ptr, seg...)
	}
	typ := ""
	switch t {
	case jObjOpen:
		typ = "object"
	case jArrOpen:
		typ = "array"
	case jString:
		typ = "string"
	case jNumber:
		typ = "number"
	case jBool:
		typ = "boolean"
	case jNull:
		typ = "null"
	}
	idx := -1
	if s.budget <= MaxOutputBytes {
		idx = len(s.out)
		s.out = append(s.out, jsonEntry(string(s.ptr), typ, s.tokStart, s.pos))
		s.budget += jsonEntryFloor + len(s.ptr)
	}
	if t == jObjOpen || t == jArrOpen {
		s.stack = append(s.stack, jsonFrame{obj: t == jObjOpen, entry: idx, plen: len(s.ptr)})
		s.open[b2i(t == jObjOpen)]++
		if t == jObjOpen {
			s.stack[len(s.stack)-1].state = jsExpectKey
		}
	}
}

// close ends the innermost open container at byte offset end.
func (s *jsonScanner) close(end int) {
	f := s.stack[len(s.stack)-1]
	if f.entry >= 0 {
		s.out[f.entry].end = end
	}
	s.stack = s.stack[:len(s.stack)-1]
	s.open[b2i(f.obj)]--
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// next scans the next token, setting tokStart, pos (its end) and tokOK.
func (s *jsonScanner) next() jsonTok {
	src := s.src
	for s.pos < len(src) {
		c := src[s.pos]
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			break
		}
		s.pos++
	}
	s.tokStart, s.tokOK = s.pos, true
	if s.pos >= len(src) {
		return jEOF
	}
	c := src[s.pos]
	s.pos++
	switch c {
	case '{':
		return jObjOpen
	case '}':
		return jObjClose
	case '[':
		return jArrOpen
	case ']':
		return jArrClose
	case ':':
		return jColon
	case ',':
		return jComma
	case '"':
		s.closed = false
		s.scanString()
		return jString
	}
	if c == '-' || c >= '0' && c <= '9' {
		for s.pos < len(src) && isNumberByte(src[s.pos]) {
			s.pos++
		}
		s.tokOK = validNumber(src[s.tokStart:s.pos])
		return jNumber
	}
	if isWordByte(c) {
		for s.pos < len(src) && isWordByte(src[s.pos]) {
			s.pos++
		}
		switch string(src[s.tokStart:s.pos]) {
		case "true", "false":
			return jBool
		case "null":
			return jNull
		}
		return jBad
	}
	if c >= utf8.RuneSelf {
		_, n := utf8.DecodeRune(src[s.tokStart:])
		s.pos = s.tokStart + n
	}
	return jBad
}

// scanString moves past a string whose opening quote is consumed. A string
// ends at its closing quote; one that meets a line break or the end of the
// file first is unterminated and ends there.
func (s *jsonScanner) scanString() {
	src := s.src
	for s.pos < len(src) {
		c := src[s.pos]
		switch {
		case c == '"':
			s.pos++
			s.closed = true
			return
		case c == '\\':
			if s.pos+1 >= len(src) {
				s.pos++
				s.tokOK = false
				return
			}
			switch src[s.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.pos += 2
			case 'u':
				if s.pos+6 <= len(src) && isHex4(src[s.pos+2:s.pos+6]) {
					s.pos += 6
				} else {
					s.tokOK = false
					s.pos += 2
				}
			case '\n', '\r':
				s.tokOK = false
				s.pos++
				return
			default:
				s.tokOK = false
				s.pos += 2
			}
		case c == '\n' || c == '\r':
			s.tokOK = false
			return
		case c < 0x20:
			s.tokOK = false
			s.pos++
		default:
			s.pos++
		}
	}
	s.tokOK = false
}

// pointerKey decodes the string token just scanned and escapes it as one
// RFC 6901 reference token.
func (s *jsonScanner) pointerKey() []byte {
	raw := s.src[s.tokStart+1 : s.pos]
	if s.closed {
		raw = raw[:len(raw)-1]
	}
	key := make([]byte, 0, len(raw)+2)
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' || i+1 >= len(raw) {
			key = appendPointerByte(key, c)
			i++
			continue
		}
		e := raw[i+1]
		i += 2
		switch e {
		case 'b':
			key = append(key, '\b')
		case 'f':
			key = append(key, '\f')
		case 'n':
			key = append(key, '\n')
		case 'r':
			key = append(key, '\r')
		case 't':
			key = append(key, '\t')
		case 'u':
			if i+4 > len(raw) || !isHex4(raw[i:i+4]) {
				key = append(key, 'u')
				continue
			}
			r := rune(hex4(raw[i : i+4]))
			i += 4
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' && isHex4(raw[i+2:i+6]) {
					if d := utf16.DecodeRune(r, rune(hex4(raw[i+2:i+6]))); d != utf8.RuneError {
						r2 = d
						i += 6
					}
				}
				r = r2
			}
			for _, b := range []byte(string(r)) {
				key = appendPointerByte(key, b)
			}
		default:
			key = appendPointerByte(key, e)
		}
	}
	return key
}

func appendPointerByte(dst []byte, c byte) []byte {
	switch c {
	case '~':
		return append(dst, '~', '0')
	case '/':
		return append(dst, '~', '1')
	}
	return append(dst, c)
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$'
}

func isHex4(b []byte) bool {
	for _, c := range b[:4] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func hex4(b []byte) int {
	n := 0
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			n = n<<4 | int(c-'a'+10)
		default:
			n = n<<4 | int(c-'A'+10)
		}
	}
	return n
}

// validNumber reports whether b is an RFC 8259 number.
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	return i == len(b)
}

func jsonEntry(pointer, valueType string, start, end int) Entry {
	return Entry{Kind: KindJSON, Pointer: &pointer, ValueType: valueType, start: start, end: end}
}
