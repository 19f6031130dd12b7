// Package hread owns the verified-row reader behind hread: the rows of a
// file, or of an inclusive range of its lines, pushed to a rows.Sink (token
// admission decides how many fit), with the whole file validated as UTF-8.
//
// The text kept for one line is bounded by the sink's budget
// (Budget.MaxRowBytes) and the scanner's buffer, so memory stays flat for
// any file size; what the sink holds is bounded by its token budget.
package hread

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/workspace"
)

// Error codes of hread: the shared ones, and two of its own.
const (
	CodeNotFound   = errs.NotFound
	CodePermission = errs.PermissionDenied
	CodeNotRegular = errs.NotRegular
	CodeNotUTF8    = errs.NotUTF8
	CodeRead       = errs.Read
	CodeRange      = "bad_range"
	CodePastEOF    = "past_eof"
)

// Range is an inclusive range of one-based line numbers.
type Range struct {
	Start, End int
}

// All is the range of every line.
var All = Range{Start: 1, End: int(^uint(0) >> 1)}

// ParseRange parses START:END: positive base-10 numbers, START <= END; an
// empty END (START:) is the end of the file, as a continuation names it.
func ParseRange(s string) (Range, error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return Range{}, errs.Errorf(CodeRange, "range %q must be START:END (or START: to the end), e.g. 10:20", s)
	}
	start, err := lineNumber(a)
	if err != nil {
		return Range{}, errs.Errorf(CodeRange, "range %q: START %v", s, err)
	}
	if b == "" {
		return Range{start, All.End}, nil
	}
	end, err := lineNumber(b)
	if errors.Is(err, errTooLarge) {
		// An END past the end of the file stops at the last line,
		// however far past it is.
		end, err = All.End, nil
	}
	if err != nil {
		return Range{}, errs.Errorf(CodeRange, "range %q: END %v", s, err)
	}
	if start > end {
		return Range{}, errs.Errorf(CodeRange, "range %q is reversed: START must not exceed END", s)
	}
	return Range{start, end}, nil
}

var errTooLarge = errors.New("is too large")

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
		return 0, errTooLarge
	}
	if n == 0 {
		return 0, errors.New("must be at least 1 (lines are numbered from 1)")
	}
	return n, nil
}

// Options say where Read looks.
type Options struct {
	// Root, when set, confines the path to a workspace: it must be
	// relative and resolve inside the root (workspace rules), and the file
	// is opened through the root. Without it the path is opened as the
	// user's shell would, like cat.
	Root *workspace.Root
	// Dir is the base of a relative path without a Root: the caller's
	// working directory. Messages name the path as given. Empty: the
	// path is opened as it is.
	Dir string
}

// Read pushes the rows of path within r to sink, in order, and validates
// the whole file as UTF-8. When the sink refuses a row, Read stops taking
// text but still validates the rest, and returns rows.Incomplete(sink). On
// any other error the rows already pushed must be discarded: a caller that
// prints them holds them back until Read returns (see cmd.Hread).
func Read(ctx context.Context, path string, r Range, sink rows.Sink, o Options) error {
	f, name, size, err := open(path, o.Root, o.Dir)
	if err != nil {
		return err
	}
	defer f.Close()

	maxRow := rows.MaxRowBytes
	if b, ok := sink.(interface{ Budget() rows.Budget }); ok {
		maxRow = b.Budget().MaxRowBytes()
	}
	sc := rows.NewScannerSize(regfile.Reader(f), size).WithContext(ctx)
	cut := false // the sink refused a row or one was too long to offer
	for !cut && sc.Line() < r.End {
		keep := 0
		if sc.Line()+1 >= r.Start {
			keep = maxRow
		}
		if !sc.Scan(keep) {
			break
		}
		switch {
		case keep == 0:
		case !sc.Complete():
			sink.Omit()
			cut = true
		default:
			ok, err := sink.Put(rows.Row{Line: sc.Line(), Text: sc.Text()})
			if err != nil {
				return errs.Errorf(errs.Write, "writing output: %v", regfile.Cause(err))
			}
			cut = !ok
		}
	}
	if err := sc.Drain(); err != nil {
		if e, ok := rows.IsEncoding(err); ok {
			return errs.Errorf(CodeNotUTF8, "%s is not valid UTF-8: invalid byte at offset %d", name, e.Offset)
		}
		if ctx.Err() != nil {
			return errs.New(errs.Cancelled, "the read was cancelled")
		}
		if errors.Is(err, regfile.ErrWouldBlock) {
			return errs.Errorf(CodeNotRegular, "%s is a kernel stream that has no data now (reading it would block); hread reads stored files only", name)
		}
		return errs.Errorf(CodeRead, "reading %s: %v", name, regfile.Cause(err))
	}
	if sc.Line() < r.Start && r != All {
		return errs.Errorf(CodePastEOF, "START %d is past the end of %s, which has %d lines", r.Start, name, sc.Line())
	}
	if cut {
		return rows.Incomplete(sink)
	}
	return nil
}

// Result is a read as structured output: the rows admitted under a budget
// and whether they are all the rows asked for.
type Result struct {
	Path     string        `json:"path" jsonschema:"the file as named"`
	Start    int           `json:"start" jsonschema:"first line asked for"`
	End      int           `json:"end,omitempty" jsonschema:"last line asked for; omitted for the whole file"`
	Rows     []rows.Record `json:"rows" jsonschema:"verified rows, in order"`
	Complete bool          `json:"complete" jsonschema:"false when the token budget left rows out"`
}

// Collect reads path within r into a Result under budget b. A result cut
// short by the budget is returned with Complete false and no error.
func Collect(ctx context.Context, path string, r Range, b rows.Budget, o Options) (*Result, error) {
	c := rows.NewCollector(b)
	err := Read(ctx, path, r, c, o)
	if err != nil && !errs.Is(err, errs.Incomplete) {
		return nil, err
	}
	res := &Result{Path: path, Start: r.Start, Rows: c.Records, Complete: err == nil}
	if r != All {
		res.End = r.End
	}
	if res.Rows == nil {
		res.Rows = []rows.Record{}
	}
	return res, nil
}

// open opens path for reading only if it is a regular file, without
// blocking on a FIFO; under a root, through the root. It returns the name
// to use in messages and the file's size when opened.
func open(path string, root *workspace.Root, dir string) (*os.File, string, int64, error) {
	if root != nil {
		clean, f, fi, err := root.OpenFile(path)
		if err != nil {
			return nil, errs.Name(clean), 0, err
		}
		return f, errs.Name(clean), fi.Size(), nil
	}
	name := errs.Name(path)
	at := path
	if dir != "" && !strings.HasPrefix(path, "/") {
		// Not filepath.Join: cleaning "link/../x" could name another file.
		at = dir + "/" + path
	}
	f, fi, err := regfile.Open(os.Stat, os.OpenFile, at)
	if e, ok := regfile.AsNotRegular(err); ok {
		return nil, name, 0, errs.Errorf(CodeNotRegular, "%s is %s; hread reads regular files only", name, e.Kind())
	}
	if err != nil {
		return nil, name, 0, openError(name, err)
	}
	return f, name, fi.Size(), nil
}

func openError(name string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errs.Errorf(CodeNotFound, "%s: no such file", name)
	case errors.Is(err, fs.ErrPermission):
		return errs.Errorf(CodePermission, "%s: permission denied", name)
	case errors.Is(err, syscall.ENOTDIR):
		return errs.Errorf(CodeNotFound, "%s: a parent of this path is not a directory", name)
	}
	return errs.Errorf(CodeRead, "%s: %v", name, regfile.Cause(err))
}
