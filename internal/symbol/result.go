package symbol

import (
	"strconv"
	"strings"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/jsonstr"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/spool"
	"github.com/rowkit/rowkit/internal/tokens"
)

// Entry kinds.
const (
	// KindRow is a verified row: "PATH":LINE:HASH TEXT.
	KindRow = "row"
	// KindSpan is a definition's whole span, as inspect_file outlines
	// it: "PATH":ROW..ROW KIND NAME (its first row follows as a row).
	KindSpan = "span"
	// KindOutside is a file outside the workspace (the standard library,
	// node_modules, the module cache) with how many locations it holds:
	// "PATH" (outside the workspace: N locations).
	KindOutside = "outside"
)

// Entry is one line of an answer.
type Entry struct {
	Kind string `json:"kind" jsonschema:"row (a verified row), span (a definition's whole span, its first row follows) or outside (a file outside the workspace, without rows)"`
	Path string `json:"path" jsonschema:"relative to the workspace; absolute for a file outside it"`
	Line int    `json:"line,omitempty" jsonschema:"row and span: the first line"`
	Hash string `json:"hash,omitempty" jsonschema:"row and span: the hash of that line"`
	Text string `json:"text,omitempty" jsonschema:"row: the line's text"`
	// A span's last row, and what inspect_file calls the definition.
	EndLine    int    `json:"end_line,omitempty" jsonschema:"span: the last line"`
	EndHash    string `json:"end_hash,omitempty" jsonschema:"span: the hash of the last line"`
	SymbolKind string `json:"symbol_kind,omitempty" jsonschema:"span: function, method, type, class, variable, ..."`
	Name       string `json:"name,omitempty" jsonschema:"span: the definition's name"`
	Count      int    `json:"count,omitempty" jsonschema:"outside: the locations in that file"`
}

// AppendEntry appends e as it prints, with its LF.
func AppendEntry(dst []byte, e *Entry) []byte {
	dst = jsonstr.Append(dst, e.Path)
	switch e.Kind {
	case KindRow:
		dst = append(dst, ':')
		dst = strconv.AppendInt(dst, int64(e.Line), 10)
		dst = append(dst, ':')
		dst = append(dst, e.Hash...)
		dst = append(dst, ' ')
		dst = append(dst, e.Text...)
	case KindSpan:
		dst = append(dst, ':')
		dst = strconv.AppendInt(dst, int64(e.Line), 10)
		dst = append(dst, ':')
		dst = append(dst, e.Hash...)
		dst = append(dst, ".."...)
		dst = strconv.AppendInt(dst, int64(e.EndLine), 10)
		dst = append(dst, ':')
		dst = append(dst, e.EndHash...)
		dst = append(dst, ' ')
		dst = append(dst, e.SymbolKind...)
		if e.Name != "" {
			dst = append(dst, ' ')
			dst = append(dst, oneLine(e.Name)...)
		}
	case KindOutside:
		dst = append(dst, " (outside the workspace: "...)
		dst = strconv.AppendInt(dst, int64(e.Count), 10)
		dst = append(dst, plural(e.Count, " location)", " locations)")...)
	}
	return append(dst, '\n')
}

// Reason says why an answer is not whole.
type Reason struct {
	Code    string `json:"code" jsonschema:"index_incomplete (the server had not finished indexing), output_incomplete (the token or byte bound was reached) or server_missing (a language of the workspace has no server installed; find only)"`
	Message string `json:"message" jsonschema:"one line: what is left out and how to narrow"`
}

// Result is the answer to a query.
type Result struct {
	Op     string `json:"op" jsonschema:"the operation"`
	Server string `json:"server,omitempty" jsonschema:"the language server that answered, with its version"`
	// Path and Row are the position asked about (not for find); Row is
	// the row's identity as it is now.
	Path    string  `json:"path,omitempty" jsonschema:"the file asked about"`
	Row     string  `json:"row,omitempty" jsonschema:"LINE:HASH of the row asked about, as the file is now"`
	Entries []Entry `json:"entries" jsonschema:"the answer's lines, in order: definitions first, then the rest by path and line; files outside the workspace last"`
	// Hover is the hover op's text (signature and documentation).
	Hover    string  `json:"hover,omitempty" jsonschema:"hover: the signature and documentation, as the server wrote them"`
	Complete bool    `json:"complete" jsonschema:"true when the server's index was ready, it stayed alive, and every location is in entries"`
	Reason   *Reason `json:"incomplete,omitempty" jsonschema:"why the answer is not whole"`
	// Left is what the bound left out, printed as Body prints entries, up
	// to spool.MaxRows bytes (LeftCapped: more was left out), when the
	// request asked to keep it; never part of the answer a client reads.
	Left       []byte `json:"-"`
	LeftCapped bool   `json:"-"`
}

// Err is the result's incompleteness as an error (nil when complete), as
// the CLI reports it.
func (r *Result) Err() error {
	if r == nil || r.Reason == nil {
		return nil
	}
	return errs.New(r.Reason.Code, r.Reason.Message)
}

// Text is the answer as the model reads it: the entries as they print (or
// the hover text), then, when it is not whole, one line saying why. An
// empty answer says so.
func Text(r *Result) string {
	b := appendBody(nil, r)
	if len(b) == 0 {
		b = append(b, "no results\n"...)
	}
	if r.Reason != nil {
		b = append(b, "[symbol: "+r.Reason.Code+"] "+r.Reason.Message+"\n"...)
	}
	return string(b)
}

// Body is what the CLI prints on stdout: the entries, or the hover text.
func Body(r *Result) string { return string(appendBody(nil, r)) }

func appendBody(b []byte, r *Result) []byte {
	for i := range r.Entries {
		b = AppendEntry(b, &r.Entries[i])
	}
	if r.Hover != "" {
		b = append(b, r.Hover...)
		if !strings.HasSuffix(r.Hover, "\n") {
			b = append(b, '\n')
		}
	}
	return b
}

// collector admits an answer's entries under a budget, as hgrep's rows
// are: every entry starts with a quote and ends with LF, so the rows'
// counting rule holds (rows.Admitter). It keeps the admitted entries, and
// counts what was left out.
type collector struct {
	adm     *rows.Admitter
	budget  rows.Budget
	entries []Entry
	buf     []byte
	seen    map[string]bool // rows and spans already in the answer
	// What was left out: locations (a row, span or outside file each)
	// and the files they are in.
	leftLocs  int
	leftFiles map[string]bool
	// keep: the entries left out are printed into left, up to
	// spool.MaxRows bytes; capped when more were.
	keep   bool
	left   []byte
	capped bool
}

func newCollector(b rows.Budget) *collector {
	if b == (rows.Budget{}) {
		b = rows.DefaultBudget
	}
	return &collector{adm: rows.NewAdmitter(discard{}, b), budget: b, seen: map[string]bool{}, leftFiles: map[string]bool{}}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// put admits e unless it is a row or span already in the answer. It
// reports whether the answer is still open.
func (c *collector) put(e Entry) bool {
	if e.Kind != KindOutside {
		key := e.Kind + "\x00" + e.Path + "\x00" + strconv.Itoa(e.Line)
		if c.seen[key] {
			return c.adm.Open()
		}
		c.seen[key] = true
	}
	if !c.adm.Open() {
		c.leave(e)
		return false
	}
	c.buf = AppendEntry(c.buf[:0], &e)
	ok, _ := c.adm.Admit(c.buf) // discard never fails
	if !ok {
		c.leave(e)
		return false
	}
	c.entries = append(c.entries, e)
	return true
}

// leave counts e as left out.
func (c *collector) leave(e Entry) {
	n := 1
	if e.Kind == KindOutside {
		n = e.Count
	}
	if e.Kind != KindSpan {
		c.leftLocs += n
	}
	c.leftFiles[e.Path] = true
	if c.keep && !c.capped && (e.Kind == KindOutside || e.Hash != "") {
		n := len(c.left)
		if c.left = AppendEntry(c.left, &e); len(c.left) > spool.MaxRows {
			c.left, c.capped = c.left[:n], true
		}
	}
}

// omitted reports whether the bound left something out.
func (c *collector) omitted() bool { return c.adm.Report().Omitted }

// stopped is the reason of an answer the bound cut, naming what was left
// out; narrow says how to see it.
func (c *collector) stopped(narrow string) *Reason {
	msg := c.budget.Stopped(c.adm.Report().Bytes).Msg
	if c.leftLocs > 0 {
		msg += "; " + errs.Thousands(c.leftLocs) + plural(c.leftLocs, " more location", " more locations") +
			" in " + errs.Thousands(len(c.leftFiles)) + plural(len(c.leftFiles), " file", " files") + " left out"
	}
	if narrow != "" {
		msg += " (" + narrow + ")"
	}
	return &Reason{Code: errs.Incomplete, Message: msg}
}

// admitHover keeps the longest prefix of whole lines of text that fits
// the budget; left is the number of lines left out.
func admitHover(text string, b rows.Budget) (kept string, left int) {
	if b == (rows.Budget{}) {
		b = rows.DefaultBudget
	}
	text = strings.TrimRight(text, "\n") + "\n"
	fits := func(s string) bool {
		if b.MaxBytes > 0 && len(s) > b.MaxBytes-b.Reserve {
			return false
		}
		return tokens.Count(s) <= b.Limit
	}
	if fits(text) {
		return text, 0
	}
	lines := strings.SplitAfter(text, "\n")
	lines = lines[:len(lines)-1] // the empty string after the last LF
	lo, hi := 0, len(lines)      // lines[:lo] fit; lines[:hi+1] may not
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(strings.Join(lines[:mid], "")) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return strings.Join(lines[:lo], ""), len(lines) - lo
}
