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

// appendRecords appends rows as they print ("PATH":LINE:HASH TEXT when path
// is set), each clamped row followed by a line saying so: its text is only
// the line's start, its hash the whole line's.
func appendRecords(blk []byte, path string, rs []rows.Record) []byte {
	for _, r := range rs {
		r.Path = path
		blk = rows.AppendRecord(blk, r)
		blk = appendClampNote(blk, r)
	}
	return blk
}

func appendClampNote(blk []byte, r rows.Record) []byte {
	if !r.Clamped {
		return blk
	}
	return fmt.Appendf(blk, "[clamped] line %d: %d of %d characters shown; its hash covers the whole line\n", r.Line, rows.MaxLineChars, r.SourceChars)
}

// FailureReport is each failure's line and its repair rows (verified rows
// of the file as it is; numbered "N| TEXT" lines of a proposed text that
// does not parse), under budget b. prefix starts the closing line when the
// budget cuts the report short (hpatch writes "hpatch: ").
func FailureReport(fs []Failure, b rows.Budget, prefix string) string {
	text, _ := failureReport(fs, b, prefix)
	return text
}

// failureReport is FailureReport and the number of failures it admitted.
func failureReport(fs []Failure, b rows.Budget, prefix string) (string, int) {
	var out bytes.Buffer
	adm := rows.NewAdmitter(&out, closing(b, prefix, len(fs), "failures"))
	var blk []byte
	for i, f := range fs {
		blk = append(blk[:0], f.Line()...)
		blk = append(blk, '\n')
		blk = appendRecords(blk, "", f.Rows)
		for _, r := range f.Proposed {
			blk = strconv.AppendInt(blk, int64(r.Line), 10)
			blk = append(blk, "| "...)
			blk = append(blk, r.Text...)
			blk = append(blk, '\n')
			blk = appendClampNote(blk, r)
		}
		if ok, _ := adm.Admit(blk); !ok {
			adm.Flush()
			out.WriteString(prefix + leftOut(b, adm.Report().Bytes, len(fs)-i, "failures"))
			return out.String(), i
		}
	}
	adm.Flush()
	return out.String(), len(fs)
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
	text, _ := report(res, b)
	return text
}

// kept is how much of a Result a text report admitted.
type kept struct {
	edits, gofmt, diffBytes int
}

// diffReport admits the diff line by line: a diff is as long as the change,
// and its lines (clamped like rows, diff.go) are the unit a reader can use.
// It returns the text and how many bytes of the diff it kept.
func diffReport(diff string, b rows.Budget) (string, int) {
	var out bytes.Buffer
	adm := rows.NewAdmitter(&out, closing(b, "", strings.Count(diff, "\n")+1, "diff lines"))
	for at := 0; at < len(diff); {
		end := strings.IndexByte(diff[at:], '\n') + 1
		if end == 0 {
			end = len(diff) - at
		}
		if ok, _ := adm.Admit([]byte(diff[at : at+end])); !ok {
			adm.Flush()
			out.WriteString(leftOut(b, adm.Report().Bytes, strings.Count(diff[at:], "\n"), "diff lines"))
			return out.String(), at
		}
		at += end
	}
	adm.Flush()
	return out.String(), len(diff)
}

func report(res *Result, b rows.Budget) (string, kept) {
	all := kept{len(res.Edits), len(res.Gofmt), len(res.Diff)}
	switch res.Status {
	case StatusDryRun:
		if res.Diff == "" {
			return "dry run: no change\n", all
		}
		text, n := diffReport(res.Diff, b)
		return text, kept{all.edits, all.gofmt, n}
	case StatusUnchanged:
		return "unchanged: every edit leaves its file as it was\n", all
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
		if f.Symlink {
			blk = append(blk, "symlink "...)
		}
		if f.From != "" {
			blk = jsonstr.Append(blk, f.From)
			blk = append(blk, " -> "...)
		}
		blk = jsonstr.Append(blk, f.Path)
		if f.Symlink {
			blk = append(blk, " (link to "...)
			blk = jsonstr.Append(blk, f.LinkTo)
			blk = append(blk, "; its target untouched)"...)
		}
		blk = append(blk, '\n')
	}
	if ok, _ := adm.Admit(blk); !ok {
		// Too many files to list: the summary line alone.
		return fmt.Sprintf("applied: %s\n", strings.Join(parts, ", ")) + leftOut(b, adm.Report().Bytes, len(res.Files), "file actions"), kept{}
	}
	// The rows name their file as ripgrep's --heading does: not at all
	// when the script changed one file (the action line above names it),
	// otherwise once, on the line that starts the rows, not on each row.
	one := len(res.Files) == 1
	heading := func(blk []byte, path string) []byte {
		if !one {
			blk = append(blk, ' ')
			blk = jsonstr.Append(blk, path)
		}
		return append(blk, ":\n"...)
	}
	for i, e := range res.Edits {
		blk = fmt.Appendf(blk[:0], "command %d %s", e.Command, e.Op)
		if !one {
			blk = append(blk, ' ')
			blk = jsonstr.Append(blk, e.Path)
		}
		if e.Moved != 0 {
			// Relocated: the rows the model copied were stale, and so are
			// the others it copied from the file at the same time.
			unit := "lines"
			if e.Moved == 1 || e.Moved == -1 {
				unit = "line"
			}
			blk = fmt.Appendf(blk, " (target moved %+d %s; rows read before are stale)", e.Moved, unit)
		}
		blk = append(blk, ":\n"...)
		blk = appendRecords(blk, "", e.Rows)
		if ok, _ := adm.Admit(blk); !ok {
			adm.Flush()
			out.WriteString(leftOut(b, adm.Report().Bytes, len(res.Edits)-i, "edits"))
			return out.String(), kept{i, 0, all.diffBytes}
		}
	}
	for i, g := range res.Gofmt {
		blk = heading(append(blk[:0], "gofmt"...), g.Path)
		blk = appendRecords(blk, "", g.Rows)
		if ok, _ := adm.Admit(blk); !ok {
			adm.Flush()
			out.WriteString(leftOut(b, adm.Report().Bytes, len(res.Gofmt)-i, "gofmt files"))
			return out.String(), kept{all.edits, i, all.diffBytes}
		}
	}
	adm.Flush()
	return out.String(), all
}

// Within renders res as text under budget b (FailureReport for a script
// with failures, with prefix; Report otherwise) and cuts res's failures,
// edits, gofmt rows and diff to what that text admitted, recording the rest
// in Truncated: a structured result then says no more than its text, and
// is bounded as it is (the MCP edit tool sends both).
func (res *Result) Within(b rows.Budget, prefix string) string {
	var t Truncation
	if res.Truncated != nil {
		t = *res.Truncated
	}
	var text string
	if len(res.Failures) > 0 {
		var n int
		text, n = failureReport(res.Failures, b, prefix)
		t.Failures += len(res.Failures) - n
		res.Failures = res.Failures[:n]
	} else {
		var k kept
		text, k = report(res, b)
		t.Edits += len(res.Edits) - k.edits
		t.Gofmt += len(res.Gofmt) - k.gofmt
		t.DiffBytes += len(res.Diff) - k.diffBytes
		res.Edits, res.Gofmt, res.Diff = res.Edits[:k.edits], res.Gofmt[:k.gofmt], res.Diff[:k.diffBytes]
	}
	if t != (Truncation{}) {
		res.Truncated = &t
	}
	return text
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

// Bound shortens res's lists to bs and adds what it left out to
// res.Truncated (which may already count what the engine left out). The
// file actions are never shortened: they are what happened.
func (res *Result) Bound(bs Bounds) {
	var t Truncation
	if res.Truncated != nil {
		t = *res.Truncated // a copy: res may share it with an earlier Result
	}
	if n := len(res.Edits); bs.Edits > 0 && n > bs.Edits {
		t.Edits, res.Edits = t.Edits+n-bs.Edits, res.Edits[:bs.Edits]
	}
	if n := len(res.Failures); bs.Failures > 0 && n > bs.Failures {
		t.Failures, res.Failures = t.Failures+n-bs.Failures, res.Failures[:bs.Failures]
	}
	if n := len(res.Gofmt); bs.Gofmt > 0 && n > bs.Gofmt {
		t.Gofmt, res.Gofmt = t.Gofmt+n-bs.Gofmt, res.Gofmt[:bs.Gofmt]
	}
	if n := len(res.Diff); bs.DiffBytes > 0 && n > bs.DiffBytes {
		cut := strings.LastIndexByte(res.Diff[:bs.DiffBytes], '\n') + 1
		t.DiffBytes, res.Diff = t.DiffBytes+n-cut, res.Diff[:cut]
	}
	if t != (Truncation{}) {
		res.Truncated = &t
	}
}
