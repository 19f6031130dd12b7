package rows

import (
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/jsonstr"
)

// Row is one verified row as an engine produces it.
type Row struct {
	// Path names the row's file in results that span files (hgrep); it is
	// empty for a single-file result.
	Path string
	Line int    // one-based line number
	Text []byte // the line without its terminator; valid only during Put
}

// Sink receives the rows of a result in order: an engine finds rows, a
// sink decides how they are shown and how many fit (ripgrep's split of
// searcher and printer). Put reports whether the row was taken; false means
// the sink is full and the engine should stop, its result incomplete. Omit
// records a row the engine could not offer at all (its text was too long
// to keep).
type Sink interface {
	Put(r Row) (bool, error)
	Omit()
}

// AppendPrinted appends r as it prints: LINE:HASH TEXT and LF, preceded by
// "PATH": (PATH as a JSON string) when r has a path.
func AppendPrinted(dst []byte, r Row) []byte {
	if r.Path != "" {
		dst = append(jsonstr.Append(dst, r.Path), ':')
	}
	return AppendRow(dst, r.Line, r.Text)
}

// AppendRecord appends r as it prints, like AppendPrinted, with r's own
// hash: a clamped record's text is only the start of its line, and the
// hash must still name the whole line.
func AppendRecord(dst []byte, r Record) []byte {
	if r.Path != "" {
		dst = append(jsonstr.Append(dst, r.Path), ':')
	}
	dst = strconv.AppendInt(dst, int64(r.Line), 10)
	dst = append(dst, ':')
	dst = append(dst, r.Hash...)
	dst = append(dst, ' ')
	dst = append(dst, r.Text...)
	return append(dst, '\n')
}

// Incomplete is the error an engine returns when sink refused a row: the
// result holds what fit. A sink with a budget (Printer, Collector) names
// the bound that stopped it, as the shell commands print it.
func Incomplete(sink Sink) *errs.Error {
	if b, ok := sink.(interface {
		Budget() Budget
		Report() Report
	}); ok {
		return b.Budget().Stopped(b.Report().Bytes)
	}
	return errs.New(errs.Incomplete, "the result was cut short")
}

// Form is how a Printer prints a row: AppendPrinted (a verified row),
// AppendNumbered or AppendBare.
type Form func(dst []byte, r Row) []byte

// AppendNumbered appends r as N|TEXT and LF: a line that is not a line of
// a file (a kept output, converted text), which carries no edit identity.
func AppendNumbered(dst []byte, r Row) []byte {
	dst = strconv.AppendInt(dst, int64(r.Line), 10)
	dst = append(dst, '|')
	dst = append(dst, r.Text...)
	return append(dst, '\n')
}

// AppendBare appends r's text alone and LF: a line that is itself a
// printed row (a kept hgrep row), shown as it was.
func AppendBare(dst []byte, r Row) []byte {
	dst = append(dst, r.Text...)
	return append(dst, '\n')
}

// Printer is the text sink of the shell commands: printed rows under token
// admission.
type Printer struct {
	adm  *Admitter
	buf  []byte
	form Form
}

// Budget returns the printer's admission rule.
func (p *Printer) Budget() Budget { return p.adm.budget }

// NewPrinter returns a Printer writing to w under budget b.
func NewPrinter(w io.Writer, b Budget) *Printer {
	return &Printer{adm: NewAdmitter(w, b), form: AppendPrinted}
}

// NewFormPrinter returns a Printer that prints each row in form.
func NewFormPrinter(w io.Writer, b Budget, form Form) *Printer {
	return &Printer{adm: NewAdmitter(w, b), form: form}
}

// Put admits r's printed form if it fits.
func (p *Printer) Put(r Row) (bool, error) {
	p.buf = p.form(p.buf[:0], r)
	return p.adm.Admit(p.buf)
}

// Omit records a row left out.
func (p *Printer) Omit() { p.adm.Omit() }

// Flush writes what admission still holds.
func (p *Printer) Flush() error { return p.adm.Flush() }

// Report says what was admitted.
func (p *Printer) Report() Report { return p.adm.Report() }

// Record is a verified row as structured results carry it.
type Record struct {
	Path string `json:"path,omitempty" jsonschema:"the file, in results that span files"`
	Line int    `json:"line" jsonschema:"one-based line number"`
	Hash string `json:"hash" jsonschema:"first two bytes of SHA-256 of the whole line, four lowercase hex digits"`
	Text string `json:"text" jsonschema:"the line exactly, without its terminator; only its first characters when clamped is set"`
	// Clamped and SourceChars are set only by results that clamp long
	// lines (ClampedRecord); the hash still names the whole line.
	Clamped     bool `json:"clamped,omitempty" jsonschema:"true when text is only the start of a long line; absent otherwise"`
	SourceChars int  `json:"sourceChars,omitempty" jsonschema:"the line's length in characters; only on a clamped line"`
}

// MaxLineChars is how much of a long line a clamped result shows, in
// characters: what rowkit read shows of one.
const MaxLineChars = 2000

// Clamp returns the first max characters of text (valid UTF-8), or text
// itself when it is not longer, and text's length in characters when it
// was cut (0 when not).
func Clamp(text []byte, max int) (shown []byte, chars int) {
	if len(text) <= max {
		return text, 0 // at most max bytes, so at most max characters
	}
	cut, n := 0, 0
	for cut < len(text) && n < max {
		_, size := utf8.DecodeRune(text[cut:])
		cut += size
		n++
	}
	if cut == len(text) {
		return text, 0
	}
	return text[:cut], n + utf8.RuneCount(text[cut:])
}

// ClampedRecord is the record of line n with the given text, showing at
// most MaxLineChars characters; the hash covers the whole line. It copies
// only what it shows, so a result about a line of any length stays small.
func ClampedRecord(n int, text []byte) Record {
	shown, chars := Clamp(text, MaxLineChars)
	return Record{Line: n, Hash: Hash(text), Text: string(shown), Clamped: chars > 0, SourceChars: chars}
}

// Collector is the structured sink of programs (the MCP server, --json): it
// keeps Records, admitting exactly the rows the Printer would admit for the
// same budget, so a structured result and its printed form agree on what
// they left out.
type Collector struct {
	Records []Record
	adm     *Admitter
	buf     []byte
	group   *Grouping
}

// NewCollector returns a Collector under budget b.
func NewCollector(b Budget) *Collector {
	return &Collector{adm: NewAdmitter(io.Discard, b)}
}

// NewGroupedCollector returns a Collector under budget b that admits each
// row as a Grouping lays it out (its heading or separator with it) rather
// than as hgrep prints it: what the grouped text of its Records costs.
func NewGroupedCollector(b Budget, context bool) *Collector {
	return &Collector{adm: NewAdmitter(io.Discard, b), group: &Grouping{Context: context}}
}

// Budget returns the collector's admission rule.
func (c *Collector) Budget() Budget { return c.adm.budget }

// Put keeps r if its printed form fits.
func (c *Collector) Put(r Row) (bool, error) {
	if c.group != nil {
		g := *c.group
		c.buf = AppendRow(g.Append(c.buf[:0], r.Path, r.Line), r.Line, r.Text)
		ok, err := c.adm.Admit(c.buf)
		if ok {
			*c.group = g
		}
		return c.keep(ok, r), err
	}
	c.buf = AppendPrinted(c.buf[:0], r)
	ok, err := c.adm.Admit(c.buf)
	return c.keep(ok, r), err
}

// keep records r when it was admitted, with the hash just printed.
func (c *Collector) keep(ok bool, r Row) bool {
	if ok {
		// The hash just printed, before the space, the text and LF:
		// one SHA-256 per row.
		at := len(c.buf) - len(r.Text) - 6
		hash := string(c.buf[at : at+4])
		c.Records = append(c.Records, Record{Path: r.Path, Line: r.Line, Hash: hash, Text: string(r.Text)})
	}
	return ok
}

// Omit records a row left out.
func (c *Collector) Omit() { c.adm.Omit() }

// Report says what was admitted.
func (c *Collector) Report() Report { return c.adm.Report() }
