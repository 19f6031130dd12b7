package read

import (
	"context"
	"fmt"
	"time"
)

// ParseCount parses a line number or count as a command line gives it:
// base-10 digits only, at least 1, no sign, no spaces.
func ParseCount(s string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("is empty")
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q is not a positive integer", s)
		}
		if n > (1<<31-1-int(c-'0'))/10 {
			return 0, fmt.Errorf("%q is too large", s)
		}
		n = n*10 + int(c-'0')
	}
	if n == 0 {
		return 0, fmt.Errorf("must be at least 1, got %q", s)
	}
	return n, nil
}

// ParseCounts sets in's offset and limit from command-line strings ("" for
// unset). A value that is not a positive integer fails as Read fails on
// invalid input: an error Result with INVALID_INPUT, and its error.
func ParseCounts(in *Input, offset, limit string) (*Result, error) {
	for _, f := range []struct {
		name, s string
		dst     **int
	}{{"offset", offset, &in.Offset}, {"limit", limit, &in.Limit}} {
		if f.s == "" {
			continue
		}
		n, err := ParseCount(f.s)
		if err != nil {
			r := &reader{ctx: context.Background(), in: *in, opts: Options{Now: time.Now}, res: &Result{Tool: "read", Notes: []Note{}}}
			return r.res, r.fail(r.failf(CodeInvalidInput, PhaseInput, &NoteData{Path: in.Path}, "%s %v", f.name, err))
		}
		*f.dst = ptr(n)
	}
	return nil, nil
}
