package inspect

import (
	"strconv"

	"github.com/rowkit/rowkit/internal/jsonstr"
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
	dst = jsonstr.Append(dst, d.Path)
	dst = append(dst, `,"kind":`...)
	dst = jsonstr.Append(dst, d.Kind)
	dst = append(dst, `,"language":`...)
	if d.Kind == KindNone {
		dst = append(dst, "null"...)
	} else {
		dst = jsonstr.Append(dst, d.Language)
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
	dst = jsonstr.Append(dst, r.Truncation.Reason)
	dst = append(dst, `,"after_entries":`...)
	dst = strconv.AppendInt(dst, int64(r.Truncation.AfterEntries), 10)
	return append(dst, "}}\n"...)
}

func (e *Entry) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"kind":`...)
	dst = jsonstr.Append(dst, e.Kind)
	if e.Kind == KindJSON {
		dst = append(dst, `,"pointer":`...)
		dst = jsonstr.Append(dst, e.Pointer)
		dst = append(dst, `,"value_type":`...)
		dst = jsonstr.Append(dst, e.ValueType)
	} else {
		dst = append(dst, `,"name":`...)
		dst = jsonstr.Append(dst, e.Name)
		if e.Kind == KindMethod {
			dst = append(dst, `,"receiver":`...)
			dst = jsonstr.Append(dst, e.Receiver)
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
