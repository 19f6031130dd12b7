package inspect

import (
	"strconv"

	"github.com/rowkit/rowkit/internal/errs"
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

// Entry is one outline entry. Which fields it carries depends on Kind, and
// a field it does not carry is nil (or zero) and absent from the JSON:
// code, heading and frontmatter entries have a Name (possibly empty),
// methods also a Receiver, headings a Level from 1 to 6; JSON entries have
// a Pointer ("" for the root) and a ValueType. Line and LineEnd are the
// verified rows (LINE:HASH) of the first and last line of the inclusive
// span; Span holds the same rows typed.
type Entry struct {
	Kind      string    `json:"kind" jsonschema:"import, constant, variable, type, class, function, method, heading, frontmatter or json"`
	Name      *string   `json:"name,omitempty" jsonschema:"the declared name, heading text or frontmatter key (every kind but json)"`
	Receiver  *string   `json:"receiver,omitempty" jsonschema:"the receiver type or class of a method"`
	Level     int       `json:"level,omitempty" jsonschema:"a heading's level, 1 to 6"`
	Pointer   *string   `json:"pointer,omitempty" jsonschema:"the RFC 6901 pointer of a JSON value (root: empty)"`
	ValueType string    `json:"value_type,omitempty" jsonschema:"object, array, string, number, boolean or null"`
	Line      string    `json:"line" jsonschema:"LINE:HASH of the first row of the span"`
	LineEnd   string    `json:"line_end" jsonschema:"LINE:HASH of the last row of the span (inclusive)"`
	Span      rows.Span `json:"-"`

	start, end int // byte span in the source, end exclusive
}

// newEntry returns a code, heading or frontmatter entry spanning the bytes
// [start, end); a method's receiver is recv.
func newEntry(kind, name, recv string, start, end int) Entry {
	e := Entry{Kind: kind, Name: &name, start: start, end: end}
	if kind == KindMethod {
		e.Receiver = &recv
	}
	return e
}

// Data is what a successful inspection found.
type Data struct {
	Path string `json:"path" jsonschema:"the path as normalised, relative to the workspace"`
	// Kind is code, markdown, json or none.
	Kind string `json:"kind" jsonschema:"code, markdown, json or none"`
	// Language is go, python, typescript (.tsx included) or javascript
	// for code, nil otherwise.
	Language  *string `json:"language" jsonschema:"go, python, typescript or javascript for code; null otherwise"`
	SizeBytes int64   `json:"size_bytes" jsonschema:"the file's size in bytes"`
	// LineCount is the number of verified rows, nil for kind none (never
	// read).
	LineCount     *int    `json:"line_count" jsonschema:"the number of rows; null for kind none"`
	ParseComplete bool    `json:"parse_complete" jsonschema:"false when the parser recovered from syntax errors"`
	Outline       []Entry `json:"outline" jsonschema:"the entries, flat and in source order"` // never nil in a Result
}

// Truncation says what the output bound left out: every entry after the
// first AfterEntries.
type Truncation struct {
	Reason       string `json:"reason" jsonschema:"output_bytes"`
	AfterEntries int    `json:"after_entries" jsonschema:"how many entries were kept"`
}

// Result is the success document of inspect_file. Its encoding/json form
// and AppendJSON (the exact stdout of the command: field order kept, no
// HTML escaping) decode to the same JSON value.
type Result struct {
	OK         bool        `json:"ok" jsonschema:"always true"` // always true
	Data       Data        `json:"data"`
	Truncated  bool        `json:"truncated" jsonschema:"whether the output bound cut the outline"`
	Truncation *Truncation `json:"truncation" jsonschema:"what was cut; null when nothing was"` // nil when the outline is whole
}

// NewResult wraps d in a result whose printed form (AppendLines) fits
// MaxOutputBytes, keeping
// the longest complete prefix of the outline that fits. It fails with
// CodeOutputLimit when not even an empty outline fits.
func NewResult(d Data) (*Result, error) { return newResult(d, MaxOutputBytes, false, true) }

// Within returns r bounded to max bytes instead (a caller's tighter bound,
// such as an agent's shell output limit): the longest prefix of r's outline
// that fits with the truncation note. A max of 0 or at least
// MaxOutputBytes returns r.
func (r *Result) Within(max int) (*Result, error) {
	if max <= 0 || max >= MaxOutputBytes || r.size(false) <= max {
		return r, nil
	}
	return newResult(r.Data, max, r.Truncated, false)
}

// WithinLines is Within for the printed form (AppendLines), which takes a
// byte more an entry: max 0 is MaxOutputBytes.
func (r *Result) WithinLines(max int) (*Result, error) {
	if max <= 0 || max > MaxOutputBytes {
		max = MaxOutputBytes
	}
	if r.size(true) <= max {
		return r, nil
	}
	return newResult(r.Data, max, r.Truncated, true)
}

// newResult is NewResult within max bytes of the one-line form, or of the
// printed form (lines); cut says d's outline is already a cut one, whose
// note must stay.
func newResult(d Data, max int, cut, lines bool) (*Result, error) {
	if d.Outline == nil {
		d.Outline = []Entry{}
	}
	r := &Result{OK: true, Data: d}
	if !cut && r.size(lines) <= max {
		return r, nil
	}
	// Measure every entry once and find the longest prefix that fits with
	// the truncation note, whose length depends on the count it reports.
	r.Data.Outline = []Entry{}
	r.Truncated, r.Truncation = true, &Truncation{Reason: "output_bytes"}
	fixed := r.size(lines) - len(strconv.Itoa(0))
	if fixed+1 > max {
		return nil, errs.Errorf(CodeOutputLimit, "not even an empty outline fits in %s bytes", errs.Thousands(max))
	}
	n, size := 0, fixed+1 // +1: the count has at least one digit
	var buf []byte
	for i, e := range d.Outline {
		buf = e.appendJSON(buf[:0])
		grow := len(buf)
		if i > 0 {
			grow++ // the comma
		}
		if lines {
			grow++ // the line break before the entry
			if i == 0 {
				grow++ // and the one before the closing bracket
			}
		}
		digits := len(strconv.Itoa(i+1)) - len(strconv.Itoa(i))
		if size+grow+digits > max {
			break
		}
		size += grow + digits
		n = i + 1
	}
	r.Data.Outline = d.Outline[:n]
	r.Truncation.AfterEntries = n
	return r, nil
}

func (r *Result) size(lines bool) int { return len(r.appendJSON(make([]byte, 0, 1024), lines)) }

// AppendJSON appends the document, one line ending in LF, to dst: the
// form Within measures (the MCP server's structured result is this
// document).
func (r *Result) AppendJSON(dst []byte) []byte { return r.appendJSON(dst, false) }

// AppendLines appends the document as inspect_file prints it, ending in LF,
// to dst: each outline entry on a line of its own, so that a bound that
// keeps whole lines (an agent's shell, rowkit shell) cuts the outline
// between entries and what it leaves out is read on line by line; still
// one JSON document, of the same value as AppendJSON's.
func (r *Result) AppendLines(dst []byte) []byte { return r.appendJSON(dst, true) }

func (r *Result) appendJSON(dst []byte, lines bool) []byte {
	d := &r.Data
	dst = append(dst, `{"ok":true,"data":{"path":`...)
	dst = jsonstr.Append(dst, d.Path)
	dst = append(dst, `,"kind":`...)
	dst = jsonstr.Append(dst, d.Kind)
	dst = append(dst, `,"language":`...)
	if d.Language == nil {
		dst = append(dst, "null"...)
	} else {
		dst = jsonstr.Append(dst, *d.Language)
	}
	dst = append(dst, `,"size_bytes":`...)
	dst = strconv.AppendInt(dst, d.SizeBytes, 10)
	dst = append(dst, `,"line_count":`...)
	if d.LineCount == nil {
		dst = append(dst, "null"...)
	} else {
		dst = strconv.AppendInt(dst, int64(*d.LineCount), 10)
	}
	dst = append(dst, `,"parse_complete":`...)
	dst = strconv.AppendBool(dst, d.ParseComplete)
	dst = append(dst, `,"outline":[`...)
	for i := range d.Outline {
		if i > 0 {
			dst = append(dst, ',')
		}
		if lines {
			dst = append(dst, '\n')
		}
		dst = d.Outline[i].appendJSON(dst)
	}
	if lines && len(d.Outline) > 0 {
		dst = append(dst, '\n')
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

// appendJSON writes the fields an entry carries in the order of the
// struct, as encoding/json does.
func (e *Entry) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"kind":`...)
	dst = jsonstr.Append(dst, e.Kind)
	if e.Name != nil {
		dst = append(dst, `,"name":`...)
		dst = jsonstr.Append(dst, *e.Name)
	}
	if e.Receiver != nil {
		dst = append(dst, `,"receiver":`...)
		dst = jsonstr.Append(dst, *e.Receiver)
	}
	if e.Level != 0 {
		dst = append(dst, `,"level":`...)
		dst = strconv.AppendInt(dst, int64(e.Level), 10)
	}
	if e.Pointer != nil {
		dst = append(dst, `,"pointer":`...)
		dst = jsonstr.Append(dst, *e.Pointer)
	}
	if e.ValueType != "" {
		dst = append(dst, `,"value_type":`...)
		dst = jsonstr.Append(dst, e.ValueType)
	}
	dst = append(dst, `,"line":`...)
	dst = jsonstr.Append(dst, e.Line)
	dst = append(dst, `,"line_end":`...)
	dst = jsonstr.Append(dst, e.LineEnd)
	return append(dst, '}')
}

// AppendFailure appends the failure document of inspect_file for err, one
// line ending in LF: {"ok":false,"path":PATH or null,"error":{"code",
// "message"}}. path is the path as given, nil unless exactly one was. An
// error without a code (see package errs) is reported as a read failure.
func AppendFailure(dst []byte, path *string, err error) []byte {
	code, msg := errs.Read, err.Error()
	if e, ok := errs.As(err); ok {
		code, msg = e.Code, e.Msg
	}
	dst = append(dst, `{"ok":false,"path":`...)
	if path == nil {
		dst = append(dst, "null"...)
	} else {
		dst = jsonstr.Append(dst, *path)
	}
	dst = append(dst, `,"error":{"code":`...)
	dst = jsonstr.Append(dst, code)
	dst = append(dst, `,"message":`...)
	dst = jsonstr.Append(dst, msg)
	return append(dst, "}}\n"...)
}
