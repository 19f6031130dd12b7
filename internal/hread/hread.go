// Package hread owns hread, the verified-row reader: it prints a file, or an
// inclusive range of its lines, as LINE:HASH TEXT rows under the token
// admission rule, after validating the whole file as UTF-8.
//
// Nothing reaches stdout until the whole file has been validated, so a
// failure always leaves stdout empty. The pending output is bounded by token
// admission (at most rows.TokenCeiling tokens) and the text kept for one line
// by rows.MaxRowBytes, so memory stays flat for any file size.
package hread

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/rows"
)

// Error codes of hread.
const (
	CodeNotFound   = "not_found"
	CodePermission = "permission_denied"
	CodeNotRegular = "not_regular"
	CodeNotUTF8    = "not_utf8"
	CodeRange      = "bad_range"
	CodePastEOF    = "past_eof"
	CodeRead       = "read"
)

// Range is an inclusive range of one-based line numbers.
type Range struct {
	Start, End int
}

// All is the range of every line.
var All = Range{Start: 1, End: int(^uint(0) >> 1)}

// ParseRange parses START:END: positive base-10 numbers, START <= END.
func ParseRange(s string) (Range, error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return Range{}, errs.Errorf(CodeRange, "range %q must be START:END, e.g. 10:20", s)
	}
	start, err := lineNumber(a)
	if err != nil {
		return Range{}, errs.Errorf(CodeRange, "range %q: START %v", s, err)
	}
	end, err := lineNumber(b)
	if err != nil {
		return Range{}, errs.Errorf(CodeRange, "range %q: END %v", s, err)
	}
	if start > end {
		return Range{}, errs.Errorf(CodeRange, "range %q is reversed: START must not exceed END", s)
	}
	return Range{start, end}, nil
}

func lineNumber(s string) (int, error) {
	if s == "" {
		return 0, errors.New("is missing")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errors.New("must be a positive base-10 number")
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, errors.New("is too large")
	}
	if n == 0 {
		return 0, errors.New("must be at least 1 (lines are numbered from 1)")
	}
	return n, nil
}

// Read writes the rows of path within r to w. It returns the admission
// report; an incomplete result is the error cli.Incomplete, with the
// admitted rows already written.
func Read(path string, r Range, w io.Writer) (rows.Report, error) {
	f, err := open(path)
	if err != nil {
		return rows.Report{}, err
	}
	defer f.Close()

	var out bytes.Buffer
	adm := rows.NewAdmitter(&out, rows.DefaultBudget)
	sc := rows.NewScanner(f)
	var row []byte
	for {
		next := sc.Line() + 1
		if next > r.End || !adm.Open() {
			if next <= r.End && sc.Scan(0) {
				adm.Omit() // a row of the range that admission cannot take
			}
			break
		}
		keep := 0
		if next >= r.Start {
			keep = rows.MaxRowBytes
		}
		if !sc.Scan(keep) {
			break
		}
		if keep == 0 {
			continue
		}
		if !sc.Complete() {
			adm.Omit()
			continue
		}
		row = rows.AppendRow(row[:0], sc.Line(), sc.Text())
		adm.Admit(row) // writes to a bytes.Buffer, which cannot fail
	}
	if err := sc.Drain(); err != nil {
		if e, ok := rows.IsEncoding(err); ok {
			return rows.Report{}, errs.Errorf(CodeNotUTF8, "%s is not valid UTF-8: invalid byte at offset %d", path, e.Offset)
		}
		return rows.Report{}, errs.Errorf(CodeRead, "reading %s: %v", path, regfile.Cause(err))
	}
	if sc.Line() < r.Start && r != All {
		return rows.Report{}, errs.Errorf(CodePastEOF, "START %d is past the end of %s, which has %d lines", r.Start, path, sc.Line())
	}
	adm.Flush() // into a bytes.Buffer, which cannot fail
	rep := adm.Report()
	if _, err := out.WriteTo(w); err != nil {
		return rep, errs.Errorf(CodeRead, "writing output: %v", regfile.Cause(err))
	}
	if rep.Omitted {
		return rep, errs.IncompleteTokens(rows.TokenLimit)
	}
	return rep, nil
}

// open opens path for reading only if it is a regular file, without
// blocking on a FIFO.
func open(path string) (*os.File, error) {
	f, _, err := regfile.Open(os.Stat, os.OpenFile, path)
	if e, ok := regfile.AsNotRegular(err); ok {
		return nil, errs.Errorf(CodeNotRegular, "%s is %s; hread reads regular files only", path, e.Kind())
	}
	if err != nil {
		return nil, openError(path, err)
	}
	return f, nil
}

func openError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errs.Errorf(CodeNotFound, "%s: no such file", path)
	case errors.Is(err, fs.ErrPermission):
		return errs.Errorf(CodePermission, "%s: permission denied", path)
	case errors.Is(err, syscall.ENOTDIR):
		return errs.Errorf(CodeNotFound, "%s: a parent of this path is not a directory", path)
	}
	return errs.Errorf(CodeRead, "%s: %v", path, regfile.Cause(err))
}
