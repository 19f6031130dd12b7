package patch

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/jsonstr"
	"github.com/rowkit/rowkit/internal/rows"
)

// The text report is what hpatch prints and what the MCP edit tool returns
// as its text: made of blocks (the file actions, a failure with its repair
// rows, an edit with its edge rows, gofmt's rows), each admitted whole or
// not at all under a token budget. The first block that does not fit ends
// the report with one line saying how many were left out. (How many repair
// rows one failure carries is the engine's choice of what is relevant, at
// most 24 rows near the place; the budget bounds the whole.)

// leftOut is the closing line of a report the budget cut short, naming the
// bound that did (bytes: the byte ceiling).
func leftOut(b rows.Budget, bytes bool, n int, what string) string {
	return fmt.Sprintf("%d more %s left out: output incomplete: %s\n", n, what, b.Stopped(bytes).Msg)
}

// closing returns b with room kept under its byte ceiling for the closing
// line (prefix, at most n left out), which the output must hold too.
func closing(b rows.Budget, prefix string, n int, what string) rows.Budget {
	if b.MaxBytes > 0 {
		b.Reserve += len(prefix) + max(len(leftOut(b, true, n, what)), len(leftOut(b, false, n, what)))
	}
	return b
}

// FailureReport is each failure's line and its repair rows (verified rows
// of the file as it is; numbered "N| TEXT" lines of a proposed text that
// does not parse), under budget b. prefix starts the closing line when the
// budget cuts the report short (hpatch writes "hpatch: ").
func FailureReport(fs []Failure, b rows.Budget, prefix string) string {
	var out bytes.Buffer
	adm := rows.NewAdmitter(&out, closing(b, prefix, len(fs), "failures"))
	var blk []byte
	for i, f := range fs {
		blk = append(blk[:0], f.Line()...)
		blk = append(blk, '\n')
		for _, r := range f.Rows {
			blk = rows.AppendRow(blk, r.Line, []byte(r.Text))
		}
		for _, r := range f.Proposed {
			blk = strconv.AppendInt(blk, int64(r.Line), 10)
			blk = append(blk, "| "...)
			blk = append(blk, r.Text...)
			blk = append(blk, '\n')
		}
		if ok, _ := adm.Admit(blk); !ok {
			adm.Flush()
			out.WriteString(prefix + leftOut(b, adm.Report().Bytes, len(fs)-i, "failures"))
			return out.String()
		}
	}
	adm.Flush()
	return out.String()
}

// Text is what a model reads of a script's outcome, as hpatch prints it:
// the failures with their repair rows, or the file actions and the rows at
// each edit's edges, or the diff, under budget b; for an error that is not
// a failure of the script, its one line "CODE: MESSAGE (HINT)". name (the
// tool's or command's) starts the closing line of a failure report cut
// short.
func Text(res *Result, err error, b rows.Budget, name string) string {
	switch {
	case len(res.Failures) > 0:
		return FailureReport(res.Failures, b, name+": ")
	case err != nil:
		e, ok := errs.As(err)
		if !ok {
			e = errs.New(errs.Usage, err.Error())
		}
		s := e.Code + ": " + e.Msg
		if e.Hint != "" {
			s += " (" + e.Hint + ")"
		}
		return s
	}
	return Report(res, b)
}

// Report is the report of a script that was not rejected: the diff of a
// dry run, or the file actions and the rows at each edit's edges (and
// gofmt's rows), under budget b.
func Report(res *Result, b rows.Budget) string {
	switch res.Status {
	case StatusDryRun:
		if res.Diff == "" {
			return "dry run: no change\n"
		}
		return boundDiff(res.Diff, b)
	case StatusUnchanged:
		return "unchanged: every edit leaves its file as it was\n"
	}
	var out bytes.Buffer
	adm := rows.NewAdmitter(&out, closing(b, "", len(res.Files)+len(res.Edits)+len(res.Gofmt), "file actions"))
	counts := map[string]int{}
	for _, f := range res.Files {
		counts[f.Action]++
	}
	var parts []string
	for _, a := range []string{"modified", "created", "moved", "deleted"} {
		if counts[a] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[a], a))
		}
	}
	blk := []byte("applied: " + strings.Join(parts, ", ") + "\n")
	for _, f := range res.Files {
		blk = append(blk, f.Action...)
		blk = append(blk, ' ')
		if f.From != "" {
			blk = jsonstr.Append(blk, f.From)
			blk = append(blk, " -> "...)
		}
		blk = jsonstr.Append(blk, f.Path)
		blk = append(blk, '\n')
	}
	if ok, _ := adm.Admit(blk); !ok {
		// Too many files to list: the summary line alone.
		return fmt.Sprintf("applied: %s\n", strings.Join(parts, ", ")) + leftOut(b, adm.Report().Bytes, len(res.Files), "file actions")
	}
	for i, e := range res.Edits {
		blk = fmt.Appendf(blk[:0], "command %d %s:\n", e.Command, e.Op)
		for _, r := range e.Rows {
			blk = rows.AppendPrinted(blk, rows.Row{Path: e.Path, Line: r.Line, Text: []byte(r.Text)})
		}
		if ok, _ := adm.Admit(blk); !ok {
			adm.Flush()
			out.WriteString(leftOut(b, adm.Report().Bytes, len(res.Edits)-i, "edits"))
			return out.String()
		}
	}
	for i, g := range res.Gofmt {
		blk = append(blk[:0], "gofmt:\n"...)
		for _, r := range g.Rows {
			blk = rows.AppendPrinted(blk, rows.Row{Path: g.Path, Line: r.Line, Text: []byte(r.Text)})
		}
		if ok, _ := adm.Admit(blk); !ok {
			adm.Flush()
			out.WriteString(leftOut(b, adm.Report().Bytes, len(res.Gofmt)-i, "gofmt files"))
			return out.String()
		}
	}
	adm.Flush()
	return out.String()
}

// boundDiff keeps the whole lines of a dry run's diff that fit b's byte
// ceiling with the closing line that says how many were left out (the
// diff is not rows: the token rule does not apply to it).
func boundDiff(diff string, b rows.Budget) string {
	if b.MaxBytes <= 0 || len(diff) <= b.MaxBytes-b.Reserve {
		return diff
	}
	lines := strings.Count(diff, "\n")
	room := closing(b, "", lines, "diff lines")
	keep := strings.LastIndexByte(diff[:max(room.MaxBytes-room.Reserve, 0)], '\n') + 1
	return diff[:keep] + leftOut(b, true, lines-strings.Count(diff[:keep], "\n"), "diff lines")
}

// Bounds limit what a Result lists, for a caller that must not exceed a
// size it promised (the MCP edit tool). Zero fields are not limited.
type Bounds struct {
	Edits, Failures, Gofmt int // entries kept in each list
	DiffBytes              int // bytes of the diff kept, cut at a line end
}

// Truncation says what Bound left out of a Result.
type Truncation struct {
	Edits     int `json:"edits,omitempty" jsonschema:"edits left out of the list"`
	Failures  int `json:"failures,omitempty" jsonschema:"failures left out of the list"`
	Gofmt     int `json:"gofmt,omitempty" jsonschema:"gofmt entries left out of the list"`
	DiffBytes int `json:"diffBytes,omitempty" jsonschema:"bytes left out of the end of the diff"`
}

// Bound shortens res's lists to bs and records in res.Truncated what it
// left out. The file actions are never shortened: they are what happened.
func (res *Result) Bound(bs Bounds) {
	var t Truncation
	if n := len(res.Edits); bs.Edits > 0 && n > bs.Edits {
		t.Edits, res.Edits = n-bs.Edits, res.Edits[:bs.Edits]
	}
	if n := len(res.Failures); bs.Failures > 0 && n > bs.Failures {
		t.Failures, res.Failures = n-bs.Failures, res.Failures[:bs.Failures]
	}
	if n := len(res.Gofmt); bs.Gofmt > 0 && n > bs.Gofmt {
		t.Gofmt, res.Gofmt = n-bs.Gofmt, res.Gofmt[:bs.Gofmt]
	}
	if n := len(res.Diff); bs.DiffBytes > 0 && n > bs.DiffBytes {
		cut := strings.LastIndexByte(res.Diff[:bs.DiffBytes], '\n') + 1
		t.DiffBytes, res.Diff = n-cut, res.Diff[:cut]
	}
	if t != (Truncation{}) {
		res.Truncated = &t
	}
}
