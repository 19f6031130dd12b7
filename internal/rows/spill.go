package rows

import "io"

// Keeper is where a Spill keeps a result: it takes every byte, and says
// when it is full (Capped) so that the engine can stop.
type Keeper interface {
	io.Writer
	Capped() bool
}

// Shower is the sink a Spill shows rows through: a Printer (text), or a
// Collector (the rows of a structured result).
type Shower interface {
	Sink
	Budget() Budget
	Report() Report
}

// Spill is a Sink that shows the rows that fit its Printer and keeps them
// all: once the printer refuses a row, the rows it showed, that row and
// every later one go, printed, to the Keeper that keep returns, so that
// the kept copy is the whole result and a continuation reads it on from
// the first row left out (Next) without running the engine again. It
// refuses a row only when the kept copy cannot be made (Err) or is full:
// then the engine stops, its result incomplete, as under a Printer.
type Spill struct {
	p     Shower
	keep  func() (Keeper, error)
	shown []byte // the printed rows the printer took, until the spill
	buf   []byte
	k     Keeper
	err   error
	kept  int // rows in the kept copy
}

// NewSpill returns a Spill showing rows through p and keeping the whole
// result in what keep returns, called at the first row p refuses.
func NewSpill(p Shower, keep func() (Keeper, error)) *Spill {
	return &Spill{p: p, keep: keep}
}

// Put shows r if the printer takes it, else keeps it.
func (s *Spill) Put(r Row) (bool, error) {
	if s.err != nil {
		return false, nil
	}
	s.buf = AppendPrinted(s.buf[:0], r)
	if s.k == nil {
		ok, err := s.p.Put(r)
		if ok || err != nil {
			if ok {
				s.shown = append(s.shown, s.buf...)
			}
			return ok, err
		}
		if s.k, s.err = s.keep(); s.err != nil {
			s.k = nil
			return false, nil
		}
		s.k.Write(s.shown)
		s.kept, s.shown = s.p.Report().Rows, nil
	}
	s.k.Write(s.buf)
	if s.k.Capped() {
		return false, nil // not kept: the engine stops here
	}
	s.kept++
	return true, nil
}

// Omit records a row the engine could not offer: it is in neither copy.
func (s *Spill) Omit() { s.p.Omit() }

// Budget returns the printer's admission rule.
func (s *Spill) Budget() Budget { return s.p.Budget() }

// Report says what the printer showed.
func (s *Spill) Report() Report { return s.p.Report() }

// Spilled reports whether rows were left out of the printer and kept.
func (s *Spill) Spilled() bool { return s.k != nil }

// Kept is the number of rows in the kept copy.
func (s *Spill) Kept() int { return s.kept }

// Err is why the rows left out could not be kept.
func (s *Spill) Err() error { return s.err }
