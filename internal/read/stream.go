package read

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/workspace"
)

// Codes of a stream that seed 003 has no spelling for. Every other code a
// stream returns is a Read code as errs.Snake spells it (CodeOf), so that
// one condition has one code in hread and rowkit read alike.
const (
	// CodePastEOF: START after the last line. A view reports the same
	// condition as the note offset-past-eof, with status ok.
	CodePastEOF = "past_eof"
)

// CodeOf is a seed 003 code as every line outside read's JSON spells it.
func CodeOf(seed string) string { return errs.Snake(seed) }

// Range is an inclusive range of one-based line numbers.
type Range struct {
	Start, End int
}

// All is the range of every line.
var All = Range{Start: 1, End: int(^uint(0) >> 1)}

// ParseRange parses START:END: positive base-10 numbers, START <= END; an
// empty END (START:) is the end of the file, as a continuation names it. A
// malformed range is invalid_input, as a bad offset or limit of a view is.
func ParseRange(s string) (Range, error) {
	bad := CodeOf(CodeInvalidInput)
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return Range{}, errs.Errorf(bad, "range %q must be START:END (or START: to the end), e.g. 10:20", s)
	}
	start, err := lineNumber(a)
	if err != nil {
		return Range{}, errs.Errorf(bad, "range %q: START %v", s, err)
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
		return Range{}, errs.Errorf(bad, "range %q: END %v", s, err)
	}
	if start > end {
		return Range{}, errs.Errorf(bad, "range %q is reversed: START must not exceed END", s)
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

// StreamOptions say where Stream looks and what it shows.
type StreamOptions struct {
	// Root, when set, confines the path to a workspace, as a view's path
	// is: relative, resolving inside the root, opened through it. Without
	// it the path is opened as the user's shell would, like cat.
	Root *workspace.Root
	// Dir is the base of a relative path without a Root: the caller's
	// working directory. Messages name the path as given. Empty: the
	// path is opened as it is.
	Dir string
	// Text shows content the classifiers refuse (binary data, an image,
	// a PDF...) as text when it is valid UTF-8, as grep -a does; invalid
	// UTF-8 is still refused.
	Text bool
}

// Stream is the reader without a view: it pushes the rows of path within r
// to sink, in order, and validates the whole file as UTF-8, with the open
// rules and the classifiers of Read: /dev, /proc and /sys are refused
// (dangerous_path), FIFOs, sockets, devices and directories without
// blocking (not_regular), and content the classifiers refuse is refused
// with their code (binary, image, pdf, office_document; not_utf8 for
// invalid UTF-8 anywhere) and exit status ExitUnsupported unless o.Text.
// A notebook is text here: its rows are the lines of the file.
//
// The only bound is the sink's: when it refuses a row, Stream stops taking
// text but still validates the rest, and returns rows.Incomplete(sink). On
// any other error the rows already pushed must be discarded: a caller that
// prints them holds them back until Stream returns (see cmd.Hread).
func Stream(ctx context.Context, p string, r Range, sink rows.Sink, o StreamOptions) error {
	f, name, size, err := openStream(p, o.Root, o.Dir)
	if err != nil {
		return err
	}
	defer f.Close()
	src := regfile.Reader(f)
	head := make([]byte, DefaultLimits.SampleBytes)
	n, err := io.ReadFull(src, head)
	eof := err == io.EOF || err == io.ErrUnexpectedEOF
	if err != nil && !eof {
		return streamError(ctx, name, err)
	}
	head = head[:n]
	if !o.Text {
		if err := refusal(Sample{Name: path.Base(p), Head: head, Size: size, EOF: eof}, name); err != nil {
			return err
		}
	}

	maxRow := rows.MaxRowBytes
	if b, ok := sink.(interface{ Budget() rows.Budget }); ok {
		maxRow = b.Budget().MaxRowBytes()
	}
	sc := rows.NewScannerSize(io.MultiReader(bytes.NewReader(head), src), size).WithContext(ctx)
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
			return errs.Errorf(CodeOf(UnsupportedUnknownEncoding), "%s is not valid UTF-8: invalid byte at offset %d", name, e.Offset).WithExit(ExitUnsupported)
		}
		return streamError(ctx, name, err)
	}
	if sc.Line() < r.Start && r != All {
		return errs.Errorf(CodePastEOF, "START %d is past the end of %s, which has %d lines", r.Start, name, sc.Line())
	}
	if cut {
		return rows.Incomplete(sink)
	}
	return nil
}

// refusal runs the default classifiers on s, as Read does, and returns the
// refusal of content that is not text. Unknown encoding is left to the
// scan, which names the offset of the first invalid byte; a notebook is a
// text file.
func refusal(s Sample, name string) error {
	for _, c := range DefaultClassifiers() {
		v, ok := c.Classify(s)
		if !ok {
			continue
		}
		if v.Kind == "text" || v.Code == UnsupportedUnknownEncoding || v.Code == UnsupportedNotebook {
			return nil
		}
		why := ""
		if len(v.Reasons) > 0 {
			why = " (" + v.Reasons[0] + ")"
		}
		return errs.Errorf(CodeOf(v.Code), "%s is %s%s, not text", name, contentName(v.Code), why).WithExit(ExitUnsupported)
	}
	return nil
}

func streamError(ctx context.Context, name string, err error) error {
	switch {
	case ctx.Err() != nil:
		return errs.New(CodeOf(CodeAborted), "the read was cancelled")
	case errors.Is(err, regfile.ErrWouldBlock):
		return errs.Errorf(CodeOf(CodeNotAFile), "%s is a kernel stream that has no data now (reading it would block); only stored files are read", name)
	}
	return errs.Errorf(CodeOf(CodeIOError), "reading %s: %v", name, regfile.Cause(err))
}

// openStream opens path for reading only if it is a regular file, without
// blocking on a FIFO; under a root, through the root. It returns the name
// to use in messages and the file's size when opened.
func openStream(p string, root *workspace.Root, dir string) (*os.File, string, int64, error) {
	name := errs.Name(p)
	at := p
	if root == nil && dir != "" && !strings.HasPrefix(p, "/") {
		// Not filepath.Join: cleaning "link/../x" could name another file.
		at = dir + "/" + p
	}
	if root != nil {
		clean, _, err := confine(root, p)
		if err != nil {
			return nil, errs.Name(clean), 0, err
		}
		clean, f, fi, err := root.OpenFile(clean)
		if err != nil {
			return nil, errs.Name(clean), 0, err
		}
		return f, errs.Name(clean), fi.Size(), nil
	}
	if strings.HasPrefix(at, "/") && isDangerous(path.Clean(at)) {
		return nil, name, 0, dangerousError(name, "is in")
	}
	if real, err := filepath.EvalSymlinks(at); err == nil && filepath.IsAbs(real) && isDangerous(real) {
		return nil, name, 0, dangerousError(name, "leads into")
	}
	f, fi, err := regfile.Open(os.Stat, os.OpenFile, at)
	if e, ok := regfile.AsNotRegular(err); ok {
		return nil, name, 0, errs.Errorf(CodeOf(CodeNotAFile), "%s is %s; only regular files are read", name, e.Kind())
	}
	if err != nil {
		return nil, name, 0, openError(name, err)
	}
	return f, name, fi.Size(), nil
}

// confine resolves p below root as every read does: a path in /dev, /proc
// or /sys, as given or as it resolves, is dangerous_path whatever the root;
// anything else follows the workspace rules (outside_workspace, not_found).
func confine(root *workspace.Root, p string) (clean, target string, err error) {
	if strings.HasPrefix(p, "/") && isDangerous(path.Clean(p)) {
		return "", "", dangerousError(errs.Name(p), "is in")
	}
	clean, target, err = root.Resolve(p)
	if err != nil {
		return clean, "", err
	}
	abs := root.Dir()
	if target != "." {
		abs = filepath.Join(abs, target)
	}
	if isDangerous(abs) {
		return clean, "", dangerousError(errs.Name(clean), "leads into")
	}
	return clean, target, nil
}

// dangerousError refuses name, which is in or leads into a system namespace.
func dangerousError(name, is string) error {
	return errs.Errorf(CodeOf(CodeDangerousPath), "%s %s a system namespace (/dev, /proc, /sys) that rowkit never reads", name, is)
}

func openError(name string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errs.Errorf(CodeOf(CodeNotFound), "%s: no such file", name)
	case errors.Is(err, fs.ErrPermission):
		return errs.Errorf(CodeOf(CodePermissionDenied), "%s: permission denied", name)
	case errors.Is(err, syscall.ENOTDIR):
		return errs.Errorf(CodeOf(CodeNotFound), "%s: a parent of this path is not a directory", name)
	}
	return errs.Errorf(CodeOf(CodeIOError), "%s: %v", name, regfile.Cause(err))
}

// contentName names what a refused classification found.
func contentName(code string) string {
	switch code {
	case UnsupportedImage:
		return "an image"
	case UnsupportedPDF:
		return "a PDF document"
	case UnsupportedOffice:
		return "an Office document"
	case UnsupportedNotebook:
		return "a Jupyter notebook"
	case UnsupportedBinary:
		return "binary data"
	case UnsupportedUnknownEncoding:
		return "not valid UTF-8 text"
	}
	return fmt.Sprintf("content read cannot show (%s)", code)
}
