package spool

import (
	"unicode/utf8"

	"github.com/rowkit/rowkit/internal/errs"
)

// MaxRows bounds the rows kept of one search: 26 pages of Codex's 40,000
// bytes, found in about half a second (a search that finds more keeps its
// first 1 MiB of rows, and stops there; a longer read wants a narrower
// search). Keeping all that MaxItem allows took 16 s and 109 MB for two
// million matches (hgrep_limit.txtar's).
const MaxRows = 1 << 20

// RowsWriter keeps the rows a bound leaves out of a row-producing
// command's result (hgrep, MCP search), whole rows up to MaxRows bytes:
// the rows.Keeper a rows.Spill writes to.
type RowsWriter struct {
	*Writer
	n int
}

// CreateRows starts keeping rows.
func (s *Store) CreateRows() (*RowsWriter, error) {
	w, err := s.Create(Rows)
	if err != nil {
		return nil, err
	}
	return &RowsWriter{Writer: w}, nil
}

// Write keeps p, whole rows, while they fit MaxRows; past that the
// output is kept as capped.
func (w *RowsWriter) Write(p []byte) (int, error) {
	if w.n+len(p) > MaxRows {
		w.Stop()
		return len(p), nil
	}
	w.n += len(p)
	return w.Writer.Write(p)
}

// NotKept is the end of a note that says why what a bound left out was
// not kept, within room bytes (what naming the kept output would have
// taken): "; not kept: REASON".
func NotKept(err error, room int) string {
	why := err.Error()
	if e, ok := errs.As(err); ok {
		why = e.Msg
	}
	s := "; not kept: " + why
	if len(s) > room {
		cut := max(room-3, 0)
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}
