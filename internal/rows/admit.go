package rows

import (
	"io"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// The token admission rule (REQ-READ-001), counted in o200k_base tokens over
// the exact bytes written.
const (
	// TokenLimit is the total up to which rows are admitted freely.
	TokenLimit = 15000
	// TokenCeiling is the most that one sealing row may raise the total to.
	TokenCeiling = 15500
	// MaxTokenBytes is the longest token of o200k_base in bytes. A row of
	// n bytes has at least n/MaxTokenBytes tokens, which lets admission
	// refuse a huge row without counting it.
	MaxTokenBytes = 128
	// MaxRowBytes is the longest row that could ever be admitted: a
	// longer one has more than TokenCeiling tokens. A caller never needs
	// to keep more text than this for one row.
	MaxRowBytes = TokenCeiling * MaxTokenBytes
)

var codec = sync.OnceValue(func() tokenizer.Codec {
	c, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		panic("rows: o200k_base is not available: " + err.Error())
	}
	return c
})

// CountTokens returns the number of o200k_base tokens in s.
func CountTokens(s string) int {
	n, _ := codec().Count(s) // only the strict error mode fails
	return n
}

// Report says what an Admitter let through.
type Report struct {
	Rows    int  // rows written
	Tokens  int  // o200k_base tokens in the bytes written
	Sealed  bool // a row took the total past TokenLimit; nothing more fits
	Omitted bool // at least one row was left out; the output is incomplete
}

// Admitter writes complete rows to w while they fit the token rule: rows are
// admitted while the total stays within TokenLimit; one more row may raise it
// to at most TokenCeiling and seals the output; any row after that, or a row
// that would pass TokenCeiling, is omitted together with every row after it.
//
// The total is the sum of the rows' own counts. That sum equals the count of
// the whole output because every row ends in LF and the next row starts with
// a character that is not white space, so no o200k_base pre-token spans two
// rows; TestAdmitterCountsWholeOutput checks it on real corpora.
type Admitter struct {
	w      io.Writer
	report Report
}

// NewAdmitter returns an Admitter writing to w.
func NewAdmitter(w io.Writer) *Admitter { return &Admitter{w: w} }

// Open reports whether another row could still be admitted.
func (a *Admitter) Open() bool { return !a.report.Sealed && !a.report.Omitted }

// Admit writes row, which must be one or more complete printed rows ending in
// LF, if it fits. It reports whether the row was written; a write error is
// returned as is.
func (a *Admitter) Admit(row []byte) (bool, error) {
	if !a.Open() {
		a.report.Omitted = true
		return false, nil
	}
	room := TokenCeiling - a.report.Tokens
	if len(row) > room*MaxTokenBytes {
		a.report.Omitted = true
		return false, nil
	}
	n := CountTokens(string(row))
	total := a.report.Tokens + n
	if total > TokenCeiling {
		a.report.Omitted = true
		return false, nil
	}
	if _, err := a.w.Write(row); err != nil {
		return false, err
	}
	a.report.Rows++
	a.report.Tokens = total
	a.report.Sealed = total > TokenLimit
	return true, nil
}

// Omit records that a row was left out without offering it, as a caller does
// for a line longer than MaxRowBytes whose text it did not keep.
func (a *Admitter) Omit() { a.report.Omitted = true }

// Report returns what has been admitted so far.
func (a *Admitter) Report() Report { return a.report }
