package rows

import (
	"io"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/tokens"
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
	// MaxRowBytes is the longest row that could ever be admitted under
	// DefaultBudget: a longer one has more than TokenCeiling tokens. A
	// caller never needs to keep more text than this for one row.
	MaxRowBytes = TokenCeiling * MaxTokenBytes
)

// Budget is a token admission rule: rows are admitted while the total stays
// within Limit; one more row may raise it to at most Ceiling and seals the
// output. Ceiling >= Limit > 0.
//
// MaxBytes, when not 0, is a byte ceiling on the whole output applied with
// the token rule: rows are admitted while both hold, the rows' bytes
// staying within MaxBytes-Reserve, so that the Reserve bytes a command
// writes after them (its diagnostic line, a continuation) fit as well. A
// caller that shows stdout and stderr as one text under a byte limit (an
// agent's shell tool) sets it. A row that would pass it is left out with
// every row after it, as for the token rule; the result names the bound
// that stopped it (Report.Bytes).
type Budget struct {
	Limit, Ceiling int
	MaxBytes       int
	Reserve        int
}

// DefaultBudget is the rule of every verified-row command (REQ-READ-001).
var DefaultBudget = Budget{Limit: TokenLimit, Ceiling: TokenCeiling}

// MaxRowBytes is the longest row that could be admitted under b.
func (b Budget) MaxRowBytes() int {
	n := b.Ceiling * MaxTokenBytes
	if b.MaxBytes > 0 {
		// At least 1: a reader keeping no text at all would take the row
		// for one it need not show, not for one left out.
		n = min(n, max(b.MaxBytes-b.Reserve, 1))
	}
	return n
}

// Stopped is the error of a result that b cut short: the byte ceiling
// (bytes true) or the token limit; what fit has been delivered.
func (b Budget) Stopped(bytes bool) *errs.Error {
	if bytes {
		return errs.IncompleteBytes(b.MaxBytes)
	}
	return errs.IncompleteTokens(b.Limit)
}

// CountTokens returns the number of o200k_base tokens in s.
func CountTokens(s string) int { return tokens.Count(s) }

// heldCap is the most an Admitter allocates up front for the rows it holds
// uncounted.
const heldCap = 64 << 10

// Report says what an Admitter let through.
type Report struct {
	Rows    int  // rows admitted
	Sealed  bool // a row took the total past TokenLimit; nothing more fits
	Omitted bool // at least one row was left out; the output is incomplete
	// Bytes says that the byte ceiling, not the token rule, left the
	// first row out.
	Bytes bool
}

// Admitter writes complete rows to w while they fit the token rule: rows are
// admitted while the total stays within TokenLimit; one more row may raise it
// to at most TokenCeiling and seals the output; any row after that, or a row
// that would pass TokenCeiling, is omitted together with every row after it.
//
// A token is at least one byte, so rows totalling at most the budget's Limit
// in bytes all fit without counting: the Admitter holds them back uncounted,
// and a small result is never counted at all. Once the rows would pass Limit
// bytes, what is held is counted as one block and written, and every later
// row is counted on its own. Call Flush when done.
//
// The total is the sum of those counts. It equals the count of the whole
// output because every row ends in LF and the next row starts with a digit
// (hread) or a quote (hgrep), neither white space nor the '/' that a
// punctuation pre-token may absorb after a line end, so no o200k_base
// pre-token spans two rows; TestAdmitterCountsWholeOutput checks it on real
// corpora and tokens.FuzzCount the precise condition.
type Admitter struct {
	w        io.Writer
	budget   Budget
	held     []byte // rows admitted uncounted (at most the budget's Limit in bytes)
	written  int    // how much of held has been written
	counting bool   // the rows outgrew held: every row is counted
	tokens   int    // the total, once counting
	bytes    int    // the bytes admitted
	report   Report
}

// NewAdmitter returns an Admitter writing to w under budget b.
func NewAdmitter(w io.Writer, b Budget) *Admitter {
	if b.Limit <= 0 || b.Ceiling < b.Limit || b.MaxBytes < 0 || b.Reserve < 0 {
		panic("rows: invalid budget")
	}
	return &Admitter{w: w, budget: b}
}

// Open reports whether another row could still be admitted.
func (a *Admitter) Open() bool { return !a.report.Sealed && !a.report.Omitted }

// Admit admits row, which must be one or more complete printed rows ending in
// LF, if it fits. It reports whether the row was admitted; a write error is
// returned as is. An admitted row may be held until Flush.
func (a *Admitter) Admit(row []byte) (bool, error) {
	if !a.Open() {
		a.report.Omitted = true
		return false, nil
	}
	if b := a.budget; b.MaxBytes > 0 && a.bytes+len(row) > b.MaxBytes-b.Reserve {
		a.report.Omitted, a.report.Bytes = true, true
		return false, nil
	}
	if !a.counting {
		if len(a.held)+len(row) <= a.budget.Limit {
			if a.held == nil {
				// Rows are held up to Limit bytes: one allocation
				// under the default rule, and no more than heldCap
				// up front under a huge Limit (rowkit read sets one
				// that is never reached), which append grows past.
				a.held = make([]byte, 0, min(a.budget.Limit, heldCap))
			}
			a.held = append(a.held, row...)
			a.bytes += len(row)
			a.report.Rows++
			return true, nil
		}
		a.counting = true
		a.tokens = tokens.CountBytes(a.held)
		if err := a.Flush(); err != nil {
			return false, err
		}
		a.held, a.written = nil, 0
	}
	room := a.budget.Ceiling - a.tokens
	if len(row) > room*MaxTokenBytes {
		a.report.Omitted = true
		return false, nil
	}
	n := tokens.CountBytes(row)
	total := a.tokens + n
	if total > a.budget.Ceiling {
		a.report.Omitted = true
		return false, nil
	}
	if _, err := a.w.Write(row); err != nil {
		return false, err
	}
	a.bytes += len(row)
	a.report.Rows++
	a.tokens = total
	a.report.Sealed = total > a.budget.Limit
	return true, nil
}

// Flush writes the rows admitted but still held.
func (a *Admitter) Flush() error {
	if a.written == len(a.held) {
		return nil
	}
	n, err := a.w.Write(a.held[a.written:])
	a.written += n
	return err
}

// Omit records that a row was left out without offering it, as a caller does
// for a line longer than MaxRowBytes whose text it did not keep: the byte
// ceiling left it out when it is what makes MaxRowBytes that short.
func (a *Admitter) Omit() {
	if a.Open() {
		b := a.budget
		a.report.Bytes = b.MaxBytes > 0 && b.MaxBytes-b.Reserve < b.Ceiling*MaxTokenBytes
	}
	a.report.Omitted = true
}

// Report returns what has been admitted so far.
func (a *Admitter) Report() Report { return a.report }

// Tokens returns the o200k_base tokens of the rows admitted so far. While
// they are held uncounted, it counts them.
func (a *Admitter) Tokens() int {
	if !a.counting {
		return tokens.CountBytes(a.held)
	}
	return a.tokens
}
