package inspect

import (
	"strconv"
	"unicode/utf8"

	"github.com/rowkit/rowkit/internal/rows"
)

// MaxOutputBytes bounds the whole document written to stdout, final LF
// included.
const MaxOutputBytes = 65536

// Entry kinds.
const (
	KindImport      = "import"
	KindConstant    = "constant"
	KindVariable    = "variable"
	KindType        = "type"
	KindClass       = "class"
	KindFunction    = "function"
	KindMethod      = "method"
	KindHeading     = "heading"
	KindFrontmatter = "frontmatter"
	KindJSON        = "json"
)

// Entry is one outline entry. Which fields it carries depends on Kind:
// code and Markdown entries have a Name (methods also a Receiver, headings a
// Level); JSON entries have a Pointer and a ValueType. Line and LineEnd are
// the verified rows of the first and last line of its inclusive span.
type Entry struct {
	Kind      string
	Name      string
	Receiver  string
	Level     int
	Pointer   string
	ValueType string
	Line      rows.Ref
	LineEnd   rows.Ref

	start, end int // byte span in the source, end exclusive
}

// Data is what a successful inspection found.
type Data struct {
	Path          string
	Kind          string // code, markdown, json or none
	Language      string // "" for kind none (encoded as null)
	SizeBytes     int64
	LineCount     int // meaningless for kind none (encoded as null)
	ParseComplete bool
	Outline       []Entry
}

// Truncation says what the output bound left out: every entry after the
// first AfterEntries.
type Truncation struct {
	Reason       string
	AfterEntries int
}

// Result is the success document of inspect_file. Its JSON encoding
// (AppendJSON) is the exact stdout of the command and the structured
// content any other surface returns.
type Result struct {
	Data       Data
	Truncation *Truncation // nil when the outline is complete
}

// NewResult wraps d in a result whose encoding fits MaxOutputBytes, keeping
// the longest complete prefix of the outline that fits. It returns the
// result and its encoding, or a Failure with CodeOutputLimit when not even
// an empty outline fits.
func NewResult(d Data) (*Result, []byte, error) {
	r := &Result{Data: d}
	out := r.AppendJSON(make([]byte, 0, 1024))
	if len(out) <= MaxOutputBytes {
		return r, out, nil
	}
	// Measure every entry once and find the longest prefix that fits with
	// the truncation note, whose length depends on the count it reports.
	r.Data.Outline = nil
	r.Truncation = &Truncation{Reason: "output_bytes"}
	fixed := len(r.AppendJSON(nil)) - len(strconv.Itoa(0))
	n, size := 0, fixed+1 // +1: the count has at least one digit
	var buf []byte
	for i, e := range d.Outline {
		buf = e.appendJSON(buf[:0])
		grow := len(buf)
		if i > 0 {
			grow++ // the comma
		}
		digits := len(strconv.Itoa(i+1)) - len(strconv.Itoa(i))
		if size+grow+digits > MaxOutputBytes {
			break
		}
		size += grow + digits
		n = i + 1
	}
	if fixed+1 > MaxOutputBytes {
		return nil, nil, &Failure{Path: &d.Path, Code: CodeOutputLimit,
			Message: "not even an empty outline fits in 65,536 bytes"}
	}
	r.Data.Outline = d.Outline[:n]
	r.Truncation.AfterEntries = n
	out = r.AppendJSON(out[:0])
	return r, out, nil
}

// MarshalJSON returns the encoding without its final LF.
func (r *Result) MarshalJSON() ([]byte, error) {
	b := r.AppendJSON(nil)
	return b[:len(b)-1], nil
}

// AppendJSON appends the document, one line ending in LF, to dst.
func (r *Result) AppendJSON(dst []byte) []byte {
	d := &r.Data
	dst = append(dst, `{"ok":true,"data":{"path":`...)
	dst = appendString(dst, d.Path)
	dst = append(dst, `,"kind":`...)
	dst = appendString(dst, d.Kind)
	dst = append(dst, `,"language":`...)
	if d.Kind == KindNone {
		dst = append(dst, "null"...)
	} else {
		dst = appendString(dst, d.Language)
	}
	dst = append(dst, `,"size_bytes":`...)
	dst = strconv.AppendInt(dst, d.SizeBytes, 10)
	dst = append(dst, `,"line_count":`...)
	if d.Kind == KindNone {
		dst = append(dst, "null"...)
	} else {
		dst = strconv.AppendInt(dst, int64(d.LineCount), 10)
	}
	dst = append(dst, `,"parse_complete":`...)
	dst = strconv.AppendBool(dst, d.ParseComplete)
	dst = append(dst, `,"outline":[`...)
	for i, e := range d.Outline {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = e.appendJSON(dst)
	}
	dst = append(dst, `]},"truncated":`...)
	if r.Truncation == nil {
		return append(dst, "false,\"truncation\":null}\n"...)
	}
	dst = append(dst, `true,"truncation":{"reason":`...)
	dst = appendString(dst, r.Truncation.Reason)
	dst = append(dst, `,"after_entries":`...)
	dst = strconv.AppendInt(dst, int64(r.Truncation.AfterEntries), 10)
	return append(dst, "}}\n"...)
}

func (e *Entry) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"kind":`...)
	dst = appendString(dst, e.Kind)
	if e.Kind == KindJSON {
		dst = append(dst, `,"pointer":`...)
		dst = appendString(dst, e.Pointer)
		dst = append(dst, `,"value_type":`...)
		dst = appendString(dst, e.ValueType)
	} else {
		dst = append(dst, `,"name":`...)
		dst = appendString(dst, e.Name)
		if e.Kind == KindMethod {
			dst = append(dst, `,"receiver":`...)
			dst = appendString(dst, e.Receiver)
		}
		if e.Kind == KindHeading {
			dst = append(dst, `,"level":`...)
			dst = strconv.AppendInt(dst, int64(e.Level), 10)
		}
	}
	dst = append(dst, `,"line":"`...)
	dst = appendRef(dst, e.Line)
	dst = append(dst, `","line_end":"`...)
	dst = appendRef(dst, e.LineEnd)
	return append(dst, `"}`...)
}

func appendRef(dst []byte, r rows.Ref) []byte {
	dst = strconv.AppendInt(dst, int64(r.Line), 10)
	dst = append(dst, ':')
	return append(dst, r.Hash...)
}

// appendString appends s as a JSON string. Invalid UTF-8 (possible only in
// a path given on the command line) becomes U+FFFD, as encoding/json does.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\ufffd"...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&15])
			i += n
			start = i
			continue
		}
		i += n
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
