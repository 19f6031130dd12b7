package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/read"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/spool"
)

// What a bound leaves out of a search is kept in the user's store of kept
// outputs (internal/spool), the store hgrep and rowkit shell keep theirs
// in, and read_file reads it on: path @out/ID, offset N, the name
// "hread @out/ID N:" reads in a shell. An MCP client has no shell, and a
// tool of its own would cost its definition in every session.

// keptStore opens the user's store of kept outputs under the server's
// TMPDIR.
func (s *Server) keptStore() (*spool.Store, error) {
	return spool.Open(spool.Base(s.env), spool.Options{})
}

// keptRows keeps the rows of a search whole, the rows shown first, up to
// spool.MaxRows bytes, as hgrep keeps its.
type keptRows struct {
	s *Server
	w *spool.RowsWriter
}

// open starts keeping: a rows.Spill calls it at the first row left out.
func (k *keptRows) open() (rows.Keeper, error) {
	st, err := k.s.keptStore()
	if err != nil {
		return nil, err
	}
	if k.w, err = st.CreateRows(); err != nil {
		return nil, err
	}
	return k.w, nil
}

func (k *keptRows) abort() {
	if k.w != nil {
		k.w.Abort()
	}
}

// keptRef stands for the name of an output yet to be kept: as long as
// every name.
var keptRef = spool.Prefix + strings.Repeat("x", spool.IDLen)

// keptContinuation ends the note of a cut search whose rows are kept as
// ref: the read_file call that reads them on from row n.
func keptContinuation(ref string, n int) string {
	return `; continue with: read_file {"path":"` + ref + `","offset":` + strconv.Itoa(n) + `}`
}

// notKept is what a cut result says in place of keptContinuation when
// what it left out could not be kept, within the room the name took.
func notKept(err error) string {
	return spool.NotKept(err, len(keptContinuation(keptRef, 1<<30)))
}

// keptViewBytes bounds one view of a kept output, as a file's view is
// bounded (50 KiB).
const keptViewBytes = 50 << 10

// keptDefaultLimit is the lines one view shows when the call sets no
// limit, as for a file.
const keptDefaultLimit = 2000

// keptLine is a line of a kept output that a view admitted.
type keptLine struct {
	n    int
	text string
}

// keptCollector admits the lines of a kept output as they print, under a
// budget, and keeps them.
type keptCollector struct {
	*rows.Printer
	lines []keptLine
}

func (c *keptCollector) Put(r rows.Row) (bool, error) {
	ok, err := c.Printer.Put(r)
	if ok {
		c.lines = append(c.lines, keptLine{r.Line, string(r.Text)})
	}
	return ok, err
}

// readKept is read_file of path @out/ID: the lines of a kept output as
// they were kept (a search's rows "PATH":LINE:HASH TEXT, a program's
// output N|TEXT), from offset, within the call's bound and the token rule,
// ending with a continuation as a file's view does. An ID that expired is
// expired, one that names nothing kept not_found.
func (s *Server) readKept(ctx context.Context, req *mcp.CallToolRequest, in ReadFileInput, id string) (*mcp.CallToolResult, *read.Result, error) {
	fail := func(err error) (*mcp.CallToolResult, *read.Result, error) {
		return nil, nil, withPath(in.Path, err)
	}
	st, err := s.keptStore()
	if err != nil {
		return fail(err)
	}
	it, err := st.Open(id)
	if err != nil {
		if e, ok := errs.As(err); ok && e.Code == errs.NotFound {
			// @out/ always names a kept output; a file of a workspace's
			// own @out directory is ./@out/NAME, as hread reads it.
			e.WithHint("a file of the workspace named so is read as ./" + in.Path)
		}
		return fail(err)
	}
	defer it.Close()
	total, err := keptLines(st, id)
	if err != nil {
		return fail(err)
	}
	offset, limit := 1, keptDefaultLimit
	if in.Offset != nil {
		offset = *in.Offset
	}
	if in.Limit != nil {
		limit = *in.Limit
	}
	if offset > max(total, 1) {
		return fail(errs.Errorf(read.CodePastEOF, "offset %d is past the end of %s, which has %d lines", offset, it.Name(), total))
	}
	form := rows.Form(rows.AppendBare)
	if it.Kind == spool.Text {
		form = rows.AppendNumbered
	}
	bound := s.resultBytes(req)
	b := readBudget
	b.MaxBytes = keptViewBytes
	if bound > 0 {
		b.MaxBytes = min(b.MaxBytes, bound)
	}
	// Room for the note that says where to read on.
	b.Reserve = len(keptNote(it.Name(), total, total, total, "lines", limit, 1))
	c := &keptCollector{Printer: rows.NewFormPrinter(io.Discard, b, form)}
	end := min(offset+limit-1, total)
	rerr := read.ReadKept(ctx, it, it.Name(), read.Range{Start: offset, End: max(end, offset)}, c)
	if rerr != nil && !errs.Is(rerr, errs.Incomplete) {
		return fail(rerr)
	}
	reason := "" // what cut the view: read's truncation reasons
	switch {
	case rerr != nil && len(c.lines) == 0:
		reason = "line-length"
	case rerr != nil && c.Report().Bytes:
		reason = "bytes"
	case rerr != nil:
		reason = "budget"
	case end < total && in.Limit == nil:
		reason = "lines"
	}
	view := func(n int) (*read.Result, []byte) {
		why := reason
		if n < len(c.lines) {
			why = "bytes"
		}
		res, text := keptResult(it, in, total, offset, limit, c.lines[:n], why, form)
		if next := res.Continuation.Next; next != nil {
			text = append(text, keptNote(it.Name(), res.View.EndLine, total, next.Offset, why, limit, len(text))...)
		}
		if it.Capped && res.View.EndLine == total {
			msg := fmt.Sprintf("%s ends here: the output was longer, and only its first %s bytes were kept", it.Name(), errs.Thousands(int(it.Size)))
			res.Notes = append(res.Notes, read.Note{Code: "kept-capped", Severity: "warning", Message: msg})
			text = fmt.Appendf(text, "\n[read:kept-capped] %s\n", msg)
		}
		return res, text
	}
	size := func(res *read.Result, text []byte) int {
		if s.structured {
			return len(read.JSON(res)) - 1 // without its newline, as the result carries it
		}
		return len(text)
	}
	res, text := view(len(c.lines))
	if bound > 0 && size(res, text) > bound {
		res, text = view(longestFit(len(c.lines), func(n int) bool { r, t := view(n); return size(r, t) <= bound }))
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}, res, nil
}

// keptNote is the note after a cut view of a kept output: the line it was
// cut at, the length, and the offset that reads on, as a file's view says
// them. shown is the size of the text before it.
func keptNote(name string, end, total, next int, reason string, limit, shown int) string {
	sep := "\n"
	if shown == 0 {
		sep = ""
	}
	if reason == "line-length" {
		return fmt.Sprintf("%s[read:continue] line %d of %s is longer than this view allows; to skip it, read offset %d\n", sep, next-1, name, next)
	}
	return fmt.Sprintf("%s[read:continue] %s cut at line %d of %d lines by the %s; to continue, read offset %d\n", sep, name, end, total, cutBy(reason, limit), next)
}

// cutBy names the limit a truncation reason stands for.
func cutBy(reason string, limit int) string {
	switch reason {
	case "lines":
		return fmt.Sprintf("%d-line limit", limit)
	case "budget":
		return "token limit"
	}
	return "byte limit"
}

// keptLines counts the lines of the output kept as id, as ReadKept counts
// them (a last line without LF is a line).
func keptLines(st *spool.Store, id string) (int, error) {
	it, err := st.Open(id)
	if err != nil {
		return 0, err
	}
	defer it.Close()
	buf := make([]byte, 64<<10)
	n, last := 0, byte('\n')
	for {
		k, err := it.Read(buf)
		if k > 0 {
			n += bytes.Count(buf[:k], []byte{'\n'})
			last = buf[k-1]
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, errs.Errorf(errs.Read, "reading %s: %v", it.Name(), err)
		}
	}
	if last != '\n' {
		n++
	}
	return n, nil
}

// keptResult is the read result of a view of a kept output: its lines as
// converted text (no hash: they are not lines of a file an edit could
// name), and the next offset when it was cut. The text is the lines as
// form prints them.
func keptResult(it *spool.Item, in ReadFileInput, total, offset, limit int, lines []keptLine, reason string, form rows.Form) (*read.Result, []byte) {
	name := it.Name()
	res := &read.Result{
		Tool:    "read",
		Status:  read.StatusOK,
		Request: &read.Request{Path: in.Path, Offset: offset, Limit: limit, Ranged: in.Offset != nil || in.Limit != nil},
		File: &read.FileInfo{RequestedPath: in.Path, ResolvedPath: name, DisplayPath: name, Backend: "kept",
			Size: it.Size, MimeType: "text/plain"},
		Classification: &read.Classification{Kind: "text", Classifier: "kept", MimeType: "text/plain", Confidence: "high",
			Reasons: []string{"an output rowkit kept"}},
		Conversion: &read.Conversion{Converter: "kept-" + string(it.Kind), MimeType: "text/plain"},
		Totals:     &read.Totals{Lines: &total, Exact: true, Bytes: it.Size},
		Notes:      []read.Note{},
	}
	v := &read.View{Lines: make([]read.Line, 0, len(lines)), StartLine: offset, EndLine: offset - 1}
	var text []byte
	for i, l := range lines {
		v.Lines = append(v.Lines, read.Line{Number: l.n, Text: l.text})
		v.EndLine = l.n
		if i > 0 {
			v.Bytes++
		}
		v.Bytes += len(l.text)
		text = form(text, rows.Row{Line: l.n, Text: []byte(l.text)})
	}
	v.Partial = offset > 1 || v.EndLine < total
	res.View = v
	res.Truncation = &read.Truncation{Reasons: []string{}}
	res.Continuation = &read.Continuation{}
	next := v.EndLine + 1
	if reason == "line-length" {
		next++ // past the line no view can show
	}
	if reason != "" && next <= total {
		res.Truncation = &read.Truncation{Truncated: true, Reasons: []string{reason}, Primary: &reason}
		n := &read.Next{Path: in.Path, Offset: next, Limit: limit}
		res.Continuation = &read.Continuation{Available: true, Next: n}
		res.Notes = append(res.Notes, read.Note{Code: "continue", Severity: "info",
			Message: fmt.Sprintf("cut at line %d of %d lines by the %s; to continue, read offset %d", v.EndLine, total, cutBy(reason, limit), next),
			Retry:   n, Data: &read.NoteData{Reason: reason}})
	}
	return res, text
}
