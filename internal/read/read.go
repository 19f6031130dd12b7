package read

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/workspace"
)

// Input is a read request as a caller gives it. Offset and Limit are
// optional; when set they must be positive.
type Input struct {
	Path   string `json:"path" jsonschema:"the file or directory to read, relative to the workspace root"`
	Offset *int   `json:"offset,omitempty" jsonschema:"first line to show, one-based (default 1)"`
	Limit  *int   `json:"limit,omitempty" jsonschema:"most lines to show (default and ceiling 2000)"`
}

// ExitUnsupported is the exit status of a read whose content was refused
// (status unsupported): the read worked, but there is no text to show.
const ExitUnsupported = 3

// dangerous are namespaces a read never enters, whatever the root.
var dangerous = []string{"/dev", "/proc", "/sys"}

// testHookBeforeVerify runs between the scan and the verification; tests
// use it to change the file at a known moment.
var testHookBeforeVerify func(path string)

// Read reads in.Path below root. It always returns a Result. When the
// status is error it also returns an *errs.Error with the same code and
// message; when it is unsupported, an *errs.Error with the unsupported code
// and exit status ExitUnsupported. ok and media return a nil error.
func Read(ctx context.Context, root *workspace.Root, in Input, opts Options) (*Result, error) {
	r := &reader{ctx: ctx, root: root, in: in, opts: opts, lim: opts.Limits.withDefaults()}
	if r.opts.Now == nil {
		r.opts.Now = time.Now
	}
	r.res = &Result{Tool: "read", Notes: []Note{}}
	err := r.run()
	if err != nil {
		if f, ok := err.(*failure); ok {
			return r.res, r.fail(f)
		}
		return r.res, r.fail(&failure{code: CodeIOError, phase: r.phase, msg: err.Error()})
	}
	if r.res.Status == StatusUnsupported {
		msg := ""
		for _, n := range r.res.Notes {
			if n.Severity == "warning" {
				msg = n.Message
				break
			}
		}
		return r.res, errs.New(r.res.Code, msg).WithExit(ExitUnsupported)
	}
	return r.res, nil
}

// Refused is the Result of a request that the caller's own confinement
// refused before the reader could run (the MCP server finding which of its
// roots a path lies in), in the reader's vocabulary and shape, so that one
// condition has one code: the input is checked as Read checks it
// (INVALID_INPUT), a path outside (outside_workspace) is
// OUTSIDE_ALLOWED_ROOTS and a path that cannot name a file (not_found)
// NOT_FOUND, with err's message.
func Refused(in Input, err error) (*Result, error) {
	r := &reader{in: in, lim: Limits{}.withDefaults()}
	r.res = &Result{Tool: "read", Notes: []Note{}}
	if verr := r.validate(); verr != nil {
		return r.res, r.fail(verr.(*failure))
	}
	msg := err.Error()
	if e, ok := errs.As(err); ok {
		msg = e.Msg
	}
	code, phase := CodeInvalidInput, PhaseInput
	switch errs.Code(err) {
	case errs.Outside:
		// Seed 003's phase of OUTSIDE_ALLOWED_ROOTS, as Read reports it.
		code, phase = CodeOutside, PhaseOpen
	case errs.NotFound:
		code, phase = CodeNotFound, PhaseResolve
	}
	return r.res, r.fail(r.failf(code, phase, nil, "%s", msg))
}

type reader struct {
	ctx   context.Context
	root  *workspace.Root
	in    Input
	opts  Options
	lim   Limits
	res   *Result
	phase Phase

	viewNotes  []Note // notes of the view, first in the result
	tailNotes  []Note // classifier and converter notes
	allowNotes []Note // authorizer and resolver notes, last

	clean  string // the clean request
	target string // canonical target relative to the root
	file   *FileInfo
	fi     fs.FileInfo

	resolvedFrom string // the caller's path when a resolver changed it
}

// failure is a failed phase on its way to a Result.
type failure struct {
	code  string
	phase Phase
	msg   string
	data  *NoteData
	note  *Note // an authorizer's own note
	file  bool  // keep file in the result
	retry *Next
}

// Error lets a failure travel through the phases; Read turns it into the
// Result's error and an *errs.Error before it leaves the package.
func (f *failure) Error() string { return f.code + ": " + f.msg }

func (r *reader) failf(code string, phase Phase, data *NoteData, format string, args ...any) *failure {
	return &failure{code: code, phase: phase, msg: fmt.Sprintf(format, args...), data: data}
}

// kebab turns an UPPER_SNAKE code into its note code.
func kebab(code string) string { return strings.ReplaceAll(strings.ToLower(code), "_", "-") }

func (r *reader) fail(f *failure) error {
	res := r.res
	note := Note{Code: kebab(f.code), Severity: "warning", Message: oneLine(f.msg), Data: f.data, Retry: f.retry}
	if f.note != nil {
		note.Message = oneLine(f.note.Message)
		d := NoteData{}
		if f.note.Data != nil {
			d = *f.note.Data
		}
		d.Source = f.note.Code
		note.Data = &d
		if f.note.Retry != nil {
			note.Retry = f.note.Retry
		}
	}
	*res = Result{
		Tool:    "read",
		Status:  StatusError,
		Error:   &ToolError{Code: f.code, Phase: f.phase, Message: note.Message, Data: note.Data},
		Request: res.Request,
		Notes:   append([]Note{note}, r.allNotes()...),
	}
	if f.file {
		res.File = r.file
	}
	return errs.New(f.code, note.Message)
}

func (r *reader) allNotes() []Note {
	notes := append([]Note{}, r.viewNotes...)
	notes = append(notes, r.tailNotes...)
	return append(notes, r.allowNotes...)
}

// oneLine folds white space to single spaces and writes any other control
// character as a Go escape: messages name paths, and a raw ESC in one would
// drive the terminal that shows the rows format.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !unicode.IsControl(r):
			b.WriteRune(r)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

func (r *reader) aborted() error {
	why := ""
	if c := context.Cause(r.ctx); c != nil && c != context.Canceled {
		why = " (" + c.Error() + ")" // the signal, the deadline
	}
	return r.failf(CodeAborted, r.phase, &NoteData{Phase: string(r.phase)}, "the read was cancelled during %s%s", r.phase, why)
}

func (r *reader) run() error {
	r.phase = PhaseInput
	if err := r.validate(); err != nil {
		return err
	}
	if r.ctx.Err() != nil {
		return r.aborted()
	}
	if err := r.resolve(); err != nil {
		return err
	}
	r.phase = PhaseOpen
	if r.ctx.Err() != nil {
		return r.aborted()
	}
	_, f, fi, err := r.root.Open(r.clean)
	if err != nil {
		return r.openError(err)
	}
	defer f.Close()
	if !fi.IsDir() && workspace.NamesDir(r.in.Path) {
		// open(2) would fail with ENOTDIR: no directory has that name.
		return r.failf(CodeNotFound, PhaseResolve, &NoteData{Suggestions: []string{r.clean}},
			"%s ends in /, which names a directory, but %s is a file; did you mean %s?", r.in.Path, r.clean, r.clean)
	}
	r.fi = fi
	r.file = r.fileInfo(fi)

	r.phase = PhaseAuthorize
	if err := r.authorize(fi.IsDir()); err != nil {
		return err
	}
	if r.ctx.Err() != nil {
		return r.aborted()
	}
	if fi.IsDir() {
		return r.directory(f)
	}
	return r.regular(f)
}

// validate checks the input and makes the canonical request.
func (r *reader) validate() error {
	p := r.in.Path
	data := &NoteData{Path: p}
	switch {
	case p == "":
		return r.failf(CodeInvalidInput, PhaseInput, nil, "path is empty; give a path relative to the workspace root")
	case strings.IndexByte(p, 0) >= 0:
		return r.failf(CodeInvalidInput, PhaseInput, data, "path contains a NUL byte")
	case !utf8.ValidString(p):
		return r.failf(CodeInvalidInput, PhaseInput, nil, "path is not valid UTF-8")
	}
	req := Request{Path: p, Offset: 1, Limit: r.lim.MaxLines}
	if o := r.in.Offset; o != nil {
		if *o < 1 {
			return r.failf(CodeInvalidInput, PhaseInput, data, "offset must be a positive line number (lines are numbered from 1), got %d", *o)
		}
		req.Offset, req.Ranged = *o, true
	}
	if l := r.in.Limit; l != nil {
		if *l < 1 {
			return r.failf(CodeInvalidInput, PhaseInput, data, "limit must be a positive number of lines, got %d", *l)
		}
		req.Ranged = true
		if *l > r.lim.MaxLines {
			req.Limit = r.lim.MaxLines
			r.viewNotes = append(r.viewNotes, Note{Code: "clamped", Severity: "info",
				Message: fmt.Sprintf("limit %d is over the maximum of %d lines; reading %d", *l, r.lim.MaxLines, r.lim.MaxLines),
				Data:    &NoteData{Param: "limit", Requested: ptr(*l), Max: ptr(r.lim.MaxLines)}})
		} else {
			req.Limit = *l
		}
	}
	r.res.Request = &req
	return nil
}

func ptr[T any](v T) *T { return &v }

// isDangerous reports whether the absolute path p is in a refused namespace.
func isDangerous(p string) bool {
	for _, d := range dangerous {
		if workspace.Inside(d, p) {
			return true
		}
	}
	return false
}

func (r *reader) resolve() error {
	r.phase = PhaseResolve
	p := r.in.Path
	clean, target, err := confine(r.root, p)
	if errs.Is(err, errs.NotFound) && r.opts.Resolver != nil && clean != "" {
		if alt, note := r.opts.Resolver.Resolve(r.ctx, r.root, p); alt != "" && alt != p {
			if c2, t2, err2 := confine(r.root, alt); err2 == nil {
				clean, target, err = c2, t2, nil
				r.resolvedFrom = p
				if note != nil {
					r.allowNotes = append(r.allowNotes, *note)
				}
			}
		}
	}
	if err != nil {
		return r.workspaceError(clean, err)
	}
	r.clean, r.target = clean, target
	return nil
}

func (r *reader) abs() string {
	if r.target == "." {
		return r.root.Dir()
	}
	return filepath.Join(r.root.Dir(), r.target)
}

// workspaceError maps a confinement error to read's codes.
func (r *reader) workspaceError(clean string, err error) error {
	e, _ := errs.As(err)
	msg := err.Error()
	if e != nil {
		msg = e.Msg
	}
	switch errs.Code(err) {
	case CodeOf(CodeDangerousPath):
		return r.failf(CodeDangerousPath, PhaseOpen, nil, "%s", msg)
	case errs.Outside:
		return r.failf(CodeOutside, PhaseOpen, nil, "%s", msg)
	case errs.NotFound:
		var data *NoteData
		if clean != "" {
			if s, more := suggest(r.root, clean, r.lim.MaxSuggestions); len(s) > 0 || more {
				data = &NoteData{Suggestions: s, EntriesTruncated: more}
			}
		}
		if data != nil && len(data.Suggestions) > 0 {
			msg += "; did you mean " + strings.Join(data.Suggestions, ", ") + "?"
		}
		return r.failf(CodeNotFound, PhaseResolve, data, "%s", msg)
	case errs.PermissionDenied:
		return r.failf(CodePermissionDenied, PhaseOpen, nil, "%s", msg)
	case errs.NotRegular:
		kind := "special file"
		if fi, lerr := os.Lstat(r.abs()); lerr == nil {
			kind = fileKind(fi.Mode())
		}
		return r.failf(CodeNotAFile, PhaseOpen, &NoteData{Kind: kind}, "%s is a %s; read opens regular files and directories only", clean, kind)
	}
	return r.failf(CodeIOError, r.phase, &NoteData{Detail: msg}, "%s", msg)
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "fifo"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

func (r *reader) openError(err error) error {
	if errs.Is(err, errs.NotRegular) || errs.Is(err, errs.Outside) || errs.Is(err, errs.NotFound) || errs.Is(err, errs.PermissionDenied) {
		return r.workspaceError(r.clean, err)
	}
	return r.failf(CodeIOError, PhaseOpen, &NoteData{Detail: err.Error()}, "opening %s: %v", r.clean, err)
}

// fileInfo describes the opened file.
func (r *reader) fileInfo(fi fs.FileInfo) *FileInfo {
	f := &FileInfo{
		RequestedPath: r.in.Path,
		ResolvedPath:  r.target,
		DisplayPath:   r.clean,
		Backend:       "os",
		Size:          fi.Size(),
		MtimeMs:       fi.ModTime().UnixMilli(),
		MimeType:      "application/octet-stream",
	}
	if r.resolvedFrom != "" {
		f.ResolvedFrom = ptr(r.resolvedFrom)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		f.Identity = ptr(fmt.Sprintf("%d:%d", st.Dev, st.Ino))
		f.Version = ptr(fmt.Sprintf("%d.%d.%d", fi.Size(), fi.ModTime().UnixNano(), st.Ctim.Nano()))
	}
	if fi.IsDir() {
		f.MimeType = "inode/directory"
	}
	return f
}

func (r *reader) authorize(isDir bool) error {
	if r.opts.Authorizer == nil {
		return nil
	}
	var d Decision
	if err := r.guard("authorizer", "", func() {
		d = r.opts.Authorizer.Authorize(r.ctx, AuthRequest{Request: *r.res.Request, File: *r.file, IsDir: isDir})
	}); err != nil {
		return err
	}
	if d.Allow {
		if d.Note != nil {
			r.allowNotes = append([]Note{*d.Note}, r.allowNotes...)
		}
		return nil
	}
	f := r.failf(CodeDenied, PhaseAuthorize, nil, "reading %s was denied by policy", r.clean)
	f.note = d.Note
	return f
}

// guard runs an extension, turning a panic into EXTENSION_FAILED, whose
// result has file null (seed 003 keeps file only for CHANGED_DURING_READ,
// UNSUPPORTED_BACKEND from the classifiers and a failed verification).
func (r *reader) guard(ext, id string, fn func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &failure{code: CodeExtensionFailed, phase: r.phase,
				data: &NoteData{Extension: ext, Phase: string(r.phase), ID: id},
				msg:  fmt.Sprintf("the %s %s failed during %s: %v", ext, id, r.phase, p)}
		}
	}()
	fn()
	return nil
}

// regular reads a regular file: sample, classify, convert or scan, verify.
func (r *reader) regular(f *os.File) error {
	r.phase = PhaseSampling
	head := make([]byte, r.lim.SampleBytes)
	n, err := io.ReadFull(f, head)
	eof := false
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		eof = true
	case err != nil:
		return r.ioError(err)
	}
	head = head[:n]
	s := Sample{Name: path.Base(r.target), Head: head, Size: r.fi.Size(), EOF: eof}
	v, cid, err := r.classify(s)
	if err != nil {
		return err
	}
	cls := &Classification{Kind: v.Kind, Classifier: cid, MimeType: v.MimeType, Confidence: v.Confidence, Reasons: v.Reasons}
	if cls.Reasons == nil {
		cls.Reasons = []string{}
	}
	if v.Kind != "text" {
		cls.Kind = "unsupported"
		cls.Code = ptr(v.Code)
	}
	r.file.MimeType = v.MimeType
	r.res.Classification = cls
	r.tailNotes = append(r.tailNotes, v.Notes...)
	if cls.Kind == "text" {
		return r.scanFile(f, head)
	}
	return r.convert(f, head, cls)
}

func (r *reader) ioError(err error) error {
	if r.ctx.Err() != nil {
		return r.aborted()
	}
	if errors.Is(err, fs.ErrPermission) {
		return r.failf(CodePermissionDenied, r.phase, nil, "reading %s: permission denied", r.clean)
	}
	return r.failf(CodeIOError, r.phase, &NoteData{Detail: regfile.Cause(err).Error()}, "reading %s: %v", r.clean, regfile.Cause(err))
}

func (r *reader) classify(s Sample) (Verdict, string, error) {
	cs := r.opts.Classifiers
	if cs == nil {
		cs = DefaultClassifiers()
	}
	for _, c := range cs {
		var v Verdict
		var ok bool
		if err := r.guard("classifier", c.ID(), func() { v, ok = c.Classify(s) }); err != nil {
			return v, "", err
		}
		if ok {
			return v, c.ID(), nil
		}
	}
	f := r.failf(CodeUnsupportedBackend, PhaseSampling, nil, "no classifier recognised %s", r.clean)
	f.file = true
	return Verdict{}, "", f
}

// scanFile scans a text file from its start (head, then the rest of f).
func (r *reader) scanFile(f *os.File, head []byte) error {
	r.phase = PhaseScan
	src := io.MultiReader(bytes.NewReader(head), f)
	sc, err := r.scan(src, r.fi.Size(), true)
	if err != nil {
		return err
	}
	if sc.encoding != nil {
		return r.unknownEncoding(sc.encoding.Offset)
	}
	r.phase = PhaseVerification
	if testHookBeforeVerify != nil {
		testHookBeforeVerify(r.abs())
	}
	if err := r.verify(f, sc); err != nil {
		return err
	}
	r.finish(sc, nil)
	return nil
}

// unknownEncoding turns a text classification into UNKNOWN_ENCODING when
// the scan finds invalid UTF-8 after the sample.
func (r *reader) unknownEncoding(off int64) error {
	cls := r.res.Classification
	cls.Kind = "unsupported"
	cls.Code = ptr(UnsupportedUnknownEncoding)
	cls.Confidence = "high"
	cls.Reasons = append(cls.Reasons, fmt.Sprintf("invalid UTF-8 at byte %d, found by the scan", off))
	r.tailNotes = nil
	r.unsupported(UnsupportedUnknownEncoding, Note{Code: "unsupported-unknown-encoding", Severity: "warning",
		Message: fmt.Sprintf("%s is not valid UTF-8 (invalid byte at offset %d); read shows UTF-8 text only", r.clean, off),
		Data:    &NoteData{Offset: ptr(off)}})
	return nil
}

// unsupported makes the result an unsupported one.
func (r *reader) unsupported(code string, notes ...Note) {
	res := r.res
	*res = Result{Tool: "read", Status: StatusUnsupported, Code: code, Request: res.Request, File: r.file,
		Classification: res.Classification}
	res.Notes = append(append(append([]Note{}, notes...), r.tailNotes...), r.allowNotes...)
	r.viewNotes = nil
}

// verify fails when the file changed while it was read: its size (against
// the bytes read when the scan reached the end), times or identity, or the
// path now naming another file.
func (r *reader) verify(f *os.File, sc *scanResult) error {
	changed := func(why string) error {
		req := r.res.Request
		fl := r.failf(CodeChanged, PhaseVerification, nil, "%s changed while it was read (%s); read it again", r.clean, why)
		fl.file = true
		fl.retry = &Next{Path: req.Path, Offset: req.Offset, Limit: req.Limit}
		return fl
	}
	now, err := f.Stat()
	if err != nil {
		return r.ioError(err)
	}
	if sc != nil && sc.reachedEnd && sc.scanned != r.fi.Size() {
		return changed(fmt.Sprintf("%d bytes read, stat said %d", sc.scanned, r.fi.Size()))
	}
	if why := statDiff(r.fi, now); why != "" {
		return changed(why)
	}
	_, target, err := r.root.Resolve(r.clean)
	if err != nil {
		return changed("the path no longer resolves")
	}
	again, err := r.root.FS().Lstat(target)
	if err != nil || !os.SameFile(again, now) {
		return changed("the path now names another file")
	}
	return nil
}

func statDiff(a, b fs.FileInfo) string {
	switch {
	case a.Size() != b.Size():
		return fmt.Sprintf("size %d, now %d", a.Size(), b.Size())
	case !a.ModTime().Equal(b.ModTime()):
		return "modification time"
	case !os.SameFile(a, b):
		return "identity"
	}
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	if ok1 && ok2 && sa.Ctim != sb.Ctim {
		return "change time"
	}
	return ""
}

// finishText fills an ok result from a scan. src is the source of
// converted text (its hash is the contentId), nil for a file scanned as is.
func (r *reader) finishText(sc *scanResult, conv *Conversion) {
	res := r.res
	req := res.Request
	res.Status = StatusOK
	res.File = r.file
	res.Conversion = conv
	view := &View{Lines: sc.lines, StartLine: req.Offset, EndLine: req.Offset + len(sc.lines) - 1, Bytes: sc.bytes}
	if view.Lines == nil {
		view.Lines = []Line{}
	}
	res.View = view

	var reasons []string
	if sc.stop == "lines" {
		reasons = append(reasons, "lines")
	}
	if sc.stop == "bytes" || sc.byteClamped != 0 {
		reasons = append(reasons, "bytes")
	}
	if sc.stop == "budget" || sc.budgetOver {
		reasons = append(reasons, "budget")
	}
	if sc.limited {
		reasons = append(reasons, "scan-limit")
	}
	if len(sc.clamped) > 0 {
		reasons = append(reasons, "line-length")
	}
	tr := &Truncation{Truncated: len(reasons) > 0, Reasons: reasons}
	if tr.Reasons == nil {
		tr.Reasons = []string{}
	} else {
		tr.Primary = ptr(reasons[0])
	}
	res.Truncation = tr
	view.Partial = req.Offset > 1 || sc.more || tr.Truncated

	res.Totals = &Totals{Exact: sc.reachedEnd, Bytes: r.file.Size}
	if sc.reachedEnd {
		res.Totals.Lines = ptr(sc.count)
		res.Totals.Bytes = sc.scanned
	}

	cont := &Continuation{}
	end := view.EndLine
	if sc.more && len(sc.lines) > 0 && sc.stop != "" {
		cont.Available = true
		cont.Next = &Next{Path: req.Path, Offset: end + 1, Limit: req.Limit}
	}
	res.Continuation = cont

	// The view notes, in the seed's order.
	var notes []Note
	if cont.Available {
		total := fmt.Sprintf("%d", sc.count)
		if !sc.reachedEnd {
			total = fmt.Sprintf("more than %d", sc.count)
		}
		notes = append(notes, Note{Code: "continue", Severity: "info", Retry: cont.Next, Data: &NoteData{Reason: *tr.Primary},
			Message: fmt.Sprintf("showing lines %d-%d of %s (stopped by %s); to continue, read offset %d", req.Offset, end, total, *tr.Primary, end+1)})
	}
	for _, n := range r.viewNotes {
		if n.Code == "clamped" {
			notes = append(notes, n)
		}
	}
	if len(sc.lines) == 0 && !sc.reachedEnd && req.Offset > sc.count {
		n := Note{Code: "offset-unreached", Severity: "warning", Data: &NoteData{ReachedLine: ptr(sc.count)},
			Message: fmt.Sprintf("offset %d is beyond the first %d bytes that read scans, which hold %d complete lines", req.Offset, r.lim.MaxScanBytes, sc.count)}
		if sc.count > 0 {
			n.Retry = &Next{Path: req.Path, Offset: sc.count, Limit: req.Limit}
		}
		notes = append(notes, n)
	}
	if sc.byteClamped != 0 {
		n := Note{Code: "first-line-exceeds-byte-limit", Severity: "warning", Data: &NoteData{Line: ptr(sc.byteClamped)},
			Message: fmt.Sprintf("line %d alone is longer than the %d-byte view limit and is shown clamped", sc.byteClamped, r.lim.MaxViewBytes)}
		if sc.more {
			n.Retry = &Next{Path: req.Path, Offset: sc.byteClamped + 1, Limit: req.Limit}
			n.Message += fmt.Sprintf("; the next view starts at line %d", sc.byteClamped+1)
		}
		notes = append(notes, n)
	}
	if len(sc.clamped) > 0 {
		list := sc.clamped[:min(20, len(sc.clamped))]
		strs := make([]string, len(list))
		for i, l := range list {
			strs[i] = fmt.Sprint(l)
		}
		more := ""
		if len(sc.clamped) > len(list) {
			more = fmt.Sprintf(" and %d more", len(sc.clamped)-len(list))
		}
		notes = append(notes, Note{Code: "line-clamped", Severity: "warning",
			Data:    &NoteData{Lines: list, Total: ptr(len(sc.clamped)), MaxChars: ptr(r.lim.MaxCharsPerLine)},
			Message: fmt.Sprintf("%d line(s) longer than %d characters are shown clamped (their hash covers the whole line): %s%s", len(sc.clamped), r.lim.MaxCharsPerLine, strings.Join(strs, ", "), more)})
	}
	if sc.limited {
		notes = append(notes, Note{Code: "scan-limit", Severity: "warning", Data: &NoteData{MaxScanBytes: ptr(r.lim.MaxScanBytes)},
			Message: fmt.Sprintf("the scan stopped at its %d-byte limit before the end (%d bytes); the line total is unknown", r.lim.MaxScanBytes, r.file.Size)})
	}
	if len(sc.lines) == 0 && sc.reachedEnd && req.Offset > sc.count && (sc.count > 0 || req.Offset > 1) {
		n := Note{Code: "offset-past-eof", Severity: "info", Data: &NoteData{TotalLines: ptr(sc.count)},
			Message: fmt.Sprintf("offset %d is past the end: there are %d lines", req.Offset, sc.count)}
		if sc.count > 0 {
			n.Retry = &Next{Path: req.Path, Offset: sc.count, Limit: req.Limit}
		}
		notes = append(notes, n)
	}
	notes = append(notes, r.tailNotes...)
	if sc.reachedEnd && sc.count == 0 {
		notes = append(notes, Note{Code: "empty", Severity: "info", Message: fmt.Sprintf("%s is empty", r.what())})
	}
	res.Notes = append(append([]Note{}, notes...), r.allowNotes...)

	if r.fi.IsDir() {
		return
	}
	obs := &Observation{StatID: statID(r.file), ViewID: "sha256:" + hex.EncodeToString(sc.viewSum), ObservedAt: r.opts.Now().UTC().Format(time.RFC3339Nano)}
	if sc.contentSum != nil {
		obs.ContentID = ptr("sha256:" + hex.EncodeToString(sc.contentSum))
	}
	obs.WholeFileVisible = req.Offset == 1 && !view.Partial && sc.reachedEnd
	obs.ID = observationID(r.file, obs, req)
	res.Observation = obs
}

func (r *reader) what() string {
	switch {
	case r.fi.IsDir():
		return "the directory listing"
	case r.res.Conversion != nil:
		return "the converted text"
	}
	return "the file"
}

func statID(f *FileInfo) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00%d", deref(f.Identity), deref(f.Version), f.Size, f.MtimeMs)
	return "stat:" + hex.EncodeToString(h.Sum(nil)[:8])
}

func observationID(f *FileInfo, o *Observation, req *Request) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%d\x00%d", f.ResolvedPath, o.StatID, o.ViewID, o.ObservedAt, req.Offset, req.Limit)
	return "obs:" + hex.EncodeToString(h.Sum(nil)[:8])
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
