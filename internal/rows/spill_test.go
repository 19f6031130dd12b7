package rows

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// capKeeper keeps up to max bytes, whole writes, then is capped.
type capKeeper struct {
	bytes.Buffer
	max    int
	capped bool
}

func (k *capKeeper) Write(p []byte) (int, error) {
	if k.max > 0 && k.Len()+len(p) > k.max {
		k.capped = true
		return len(p), nil
	}
	return k.Buffer.Write(p)
}

func (k *capKeeper) Capped() bool { return k.capped }

func spillRows(n int) []Row {
	var rs []Row
	for i := 1; i <= n; i++ {
		rs = append(rs, Row{Path: "a.go", Line: i, Text: fmt.Appendf(nil, "line %d of the file", i)})
	}
	return rs
}

// A Spill shows the rows that fit its printer, as the printer alone would,
// and keeps every row, printed, the shown ones first: the kept copy is the
// whole result, and the first row left out is the one after those shown.
func TestSpill(t *testing.T) {
	rs := spillRows(500)
	var whole []byte
	for _, r := range rs {
		whole = AppendPrinted(whole, r)
	}
	for _, maxBytes := range []int{0, 2000, 700} {
		b := DefaultBudget
		b.MaxBytes = maxBytes
		var alone bytes.Buffer
		p0 := NewPrinter(&alone, b)
		for _, r := range rs {
			if ok, _ := p0.Put(r); !ok {
				break
			}
		}
		p0.Flush()

		var shown bytes.Buffer
		k := &capKeeper{}
		opened := 0
		p := NewPrinter(&shown, b)
		s := NewSpill(p, func() (Keeper, error) { opened++; return k, nil })
		for _, r := range rs {
			if ok, err := s.Put(r); !ok || err != nil {
				t.Fatalf("bound %d: row %d refused (%v)", maxBytes, r.Line, err)
			}
		}
		p.Flush()
		if !bytes.Equal(shown.Bytes(), alone.Bytes()) {
			t.Errorf("bound %d: showed %d bytes, the printer alone %d", maxBytes, shown.Len(), alone.Len())
		}
		spilled := alone.Len() < len(whole)
		if s.Spilled() != spilled || opened != map[bool]int{true: 1, false: 0}[spilled] {
			t.Errorf("bound %d: spilled %v, opened %d times; the printer alone showed %d of %d bytes", maxBytes, s.Spilled(), opened, alone.Len(), len(whole))
		}
		if spilled && (!bytes.Equal(k.Bytes(), whole) || s.Kept() != len(rs)) {
			t.Errorf("bound %d: kept %d bytes (%d rows) of %d", maxBytes, k.Len(), s.Kept(), len(whole))
		}
		if spilled && s.Report().Rows != bytes.Count(shown.Bytes(), []byte("\n")) {
			t.Errorf("bound %d: report %d rows, %d shown", maxBytes, s.Report().Rows, bytes.Count(shown.Bytes(), []byte("\n")))
		}
	}
}

// A Spill over a Collector (a structured result) collects the records the
// Collector alone would, and keeps every row printed, the collected first.
func TestSpillCollector(t *testing.T) {
	rs := spillRows(500)
	var whole []byte
	for _, r := range rs {
		whole = AppendPrinted(whole, r)
	}
	b := DefaultBudget
	b.MaxBytes = 2000
	alone := NewCollector(b)
	for _, r := range rs {
		if ok, _ := alone.Put(r); !ok {
			break
		}
	}
	c := NewCollector(b)
	k := &capKeeper{}
	s := NewSpill(c, func() (Keeper, error) { return k, nil })
	for _, r := range rs {
		if ok, err := s.Put(r); !ok || err != nil {
			t.Fatalf("row %d refused (%v)", r.Line, err)
		}
	}
	if len(c.Records) != len(alone.Records) || len(c.Records) == 0 || len(c.Records) == len(rs) {
		t.Fatalf("collected %d records, the collector alone %d of %d", len(c.Records), len(alone.Records), len(rs))
	}
	if !s.Spilled() || !bytes.Equal(k.Bytes(), whole) || s.Kept() != len(rs) {
		t.Errorf("kept %d bytes (%d rows) of %d, spilled %v", k.Len(), s.Kept(), len(whole), s.Spilled())
	}
	if e := Incomplete(s); e.Msg != b.Stopped(true).Msg {
		t.Errorf("stopped: %q", e.Msg)
	}
}

// A full Keeper stops the engine: the row that did not fit is refused,
// and what was kept is whole rows.
func TestSpillCapped(t *testing.T) {
	b := DefaultBudget
	b.MaxBytes = 600
	k := &capKeeper{max: 3000}
	s := NewSpill(NewPrinter(&bytes.Buffer{}, b), func() (Keeper, error) { return k, nil })
	taken := 0
	for _, r := range spillRows(500) {
		ok, _ := s.Put(r)
		if !ok {
			break
		}
		taken++
	}
	if taken == 500 || !k.Capped() || s.Kept() != taken || bytes.Count(k.Bytes(), []byte("\n")) != taken || k.Len() > 3000 {
		t.Errorf("took %d rows, kept %d (%d bytes), capped %v", taken, s.Kept(), k.Len(), k.Capped())
	}
}

// A Keeper that cannot be made: the row is refused, as by a Printer, and
// the Spill says why.
func TestSpillNotKept(t *testing.T) {
	b := DefaultBudget
	b.MaxBytes = 600
	var shown bytes.Buffer
	why := errors.New("no store")
	s := NewSpill(NewPrinter(&shown, b), func() (Keeper, error) { return nil, why })
	taken := 0
	for _, r := range spillRows(500) {
		ok, _ := s.Put(r)
		if !ok {
			break
		}
		taken++
	}
	if s.Spilled() || s.Err() != why || taken != s.Report().Rows || !s.Report().Omitted {
		t.Errorf("took %d rows, report %+v, spilled %v, err %v", taken, s.Report(), s.Spilled(), s.Err())
	}
	if ok, _ := s.Put(Row{Line: 1, Text: []byte("x")}); ok {
		t.Errorf("a row taken after the keeper failed")
	}
}
