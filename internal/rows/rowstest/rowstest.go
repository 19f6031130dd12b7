// Package rowstest holds the one table test of the sink bound that every
// row-producing engine runs through: an engine pushes its rows to a
// rows.Sink, and under each budget of the table what it leaves printed
// must be whole rows, the first ones of its unbounded output, exactly as
// many as the sink's admission takes, within the token and byte rules.
package rowstest

import (
	"bytes"
	"fmt"
	"testing"
	"unicode/utf8"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/tokens"
)

// Engine runs an engine once over its input, pushing its rows to sink.
// An error of the engine's own (not Incomplete) fails the test.
type Engine func(sink rows.Sink) error

// Budgets is the table: token limits from a single row's worth to the
// default, alone and with byte ceilings, with and without room kept for
// the lines after the rows.
var Budgets = func() []rows.Budget {
	var bs []rows.Budget
	for _, lim := range []int{1, 8, 60, 400, rows.TokenLimit} {
		ceil := max(lim, lim+lim/2)
		if lim == rows.TokenLimit {
			ceil = rows.TokenCeiling
		}
		for _, mb := range []int{0, 48, 300, 2000, 9000} {
			for _, res := range []int{0, 40} {
				if mb == 0 && res > 0 {
					continue
				}
				bs = append(bs, rows.Budget{Limit: lim, Ceiling: ceil, MaxBytes: mb, Reserve: res})
			}
		}
	}
	return bs
}()

// Check runs e unbounded, then under every budget of Budgets, and checks
// each bounded output against the unbounded one. It returns the number of
// rows of the unbounded output, so that a caller can say its input was
// large enough to be cut.
func Check(t *testing.T, e Engine) int {
	t.Helper()
	all := run(t, e, rows.Budget{Limit: 1 << 30, Ceiling: 1 << 30})
	if !utf8.Valid(all) {
		t.Fatalf("the unbounded output is not UTF-8")
	}
	whole := splitRows(all)
	for _, b := range Budgets {
		name := fmt.Sprintf("limit %d ceiling %d max-bytes %d reserve %d", b.Limit, b.Ceiling, b.MaxBytes, b.Reserve)
		var out bytes.Buffer
		p := rows.NewPrinter(&out, b)
		err := e(p)
		if ferr := p.Flush(); ferr != nil {
			t.Fatalf("%s: flush: %v", name, ferr)
		}
		if err != nil && !errs.Is(err, errs.Incomplete) {
			t.Fatalf("%s: %v", name, err)
		}
		// The rows the sink's own rule takes from the whole output, in
		// order, up to its first refusal.
		adm := rows.NewAdmitter(&bytes.Buffer{}, b)
		want := 0
		for _, r := range whole {
			if ok, _ := adm.Admit(r); !ok {
				break
			}
			want++
		}
		got := out.Bytes()
		if prefix := bytes.Join(whole[:want], nil); !bytes.Equal(got, prefix) {
			t.Errorf("%s: printed %d bytes, want the first %d of %d rows whole (%d bytes):\n%.300q", name, len(got), want, len(whole), len(prefix), got)
			continue
		}
		if (want < len(whole)) != (err != nil) {
			t.Errorf("%s: %d of %d rows printed, error %v", name, want, len(whole), err)
		}
		if b.MaxBytes > 0 && want > 0 && len(got) > b.MaxBytes-b.Reserve {
			t.Errorf("%s: %d bytes, over the %d the rows may take", name, len(got), b.MaxBytes-b.Reserve)
		}
		// Tokens as tiktoken counts them (internal/tokens is checked
		// against it): within the ceiling, and the limit before the
		// last row.
		if n := tokens.CountBytes(got); n > b.Ceiling {
			t.Errorf("%s: %d tokens, over the ceiling %d", name, n, b.Ceiling)
		}
		if want > 1 {
			if n := tokens.CountBytes(bytes.Join(whole[:want-1], nil)); n > b.Limit {
				t.Errorf("%s: %d tokens before the last row, over the limit %d", name, n, b.Limit)
			}
		}
	}
	return len(whole)
}

func run(t *testing.T, e Engine, b rows.Budget) []byte {
	t.Helper()
	var out bytes.Buffer
	p := rows.NewPrinter(&out, b)
	if err := e(p); err != nil {
		t.Fatalf("unbounded: %v", err)
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// splitRows splits printed rows after each LF, keeping it.
func splitRows(b []byte) [][]byte {
	var rs [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			rs = append(rs, b)
			break
		}
		rs = append(rs, b[:i+1])
		b = b[i+1:]
	}
	return rs
}
