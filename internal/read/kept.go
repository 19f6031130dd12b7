package read

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"unicode/utf8"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/rows"
)

// ReadKept pushes the lines of a kept output (internal/spool), named name
// in messages, within r to sink, in order. Its lines end at LF alone, as
// the shell counts the lines it leaves out (a CR stays in the text), and
// bytes that are not UTF-8 are shown as U+FFFD: what a program printed is
// shown, never refused. A line longer than the sink's budget allows is
// omitted, as Stream omits one. It returns rows.Incomplete(sink) when the
// sink refused a line, CodePastEOF when r starts after the last line.
func ReadKept(ctx context.Context, src io.Reader, name string, r Range, sink rows.Sink) error {
	maxRow := rows.MaxRowBytes
	if b, ok := sink.(interface{ Budget() rows.Budget }); ok {
		maxRow = b.Budget().MaxRowBytes()
	}
	br := bufio.NewReaderSize(src, 64<<10)
	var text []byte
	line, long := 0, false
	for line < r.End {
		piece, err := br.ReadSlice('\n')
		if len(piece) > 0 {
			if !long && len(text)+len(piece) > maxRow+1 {
				long, text = true, text[:0]
			}
			if !long {
				text = append(text, piece...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && err != io.EOF {
			return errs.Errorf(CodeOf(CodeIOError), "reading %s: %v", name, err)
		}
		if len(piece) == 0 && err == io.EOF && len(text) == 0 && !long {
			break // the end, after a final LF or of an empty output
		}
		line++
		if line >= r.Start {
			if ctx.Err() != nil {
				return errs.New(errs.Cancelled, "the read was cancelled")
			}
			text = bytes.TrimSuffix(text, []byte{'\n'})
			if long || len(text) > maxRow {
				sink.Omit()
				return rows.Incomplete(sink)
			}
			if !utf8.Valid(text) {
				text = bytes.ToValidUTF8(text, []byte("\uFFFD"))
			}
			ok, werr := sink.Put(rows.Row{Line: line, Text: text})
			if werr != nil {
				return errs.Errorf(errs.Write, "writing output: %v", werr)
			}
			if !ok {
				return rows.Incomplete(sink)
			}
		}
		text, long = text[:0], false
		if err == io.EOF {
			break
		}
	}
	if line < r.Start && r != All {
		return errs.Errorf(CodePastEOF, "START %d is past the end of %s, which has %d lines", r.Start, name, line)
	}
	return nil
}
