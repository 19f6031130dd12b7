package patch

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/rowkit/rowkit/internal/rows"
)

// Repair context: the rows a rejection shows so that the caller can write
// the next script without reading the file again. maxContextRows is a
// relevance bound, not the output bound: the rows near one requested place
// (its line and a few either side, the few other lines carrying a stale
// hash) rarely reach it, and a conflict between distant edits would
// otherwise list everything between them. The printed report as a whole is
// bounded by token admission (internal/cmd/patch.go).
const (
	contextRadius  = 2 // rows either side of the requested line
	maxCandidates  = 3 // other lines carrying a stale row's hash
	maxContextRows = 24
)

// context returns the baseline rows from a-r to b+r, clipped to the file.
func (f *fileState) context(a, b, r int) []rows.Record {
	return f.records(lineRange(a-r, b+r, f.idx.Count()))
}

func lineRange(a, b, n int) []int {
	a, b = max(a, 1), min(b, n)
	var out []int
	for l := a; l <= b; l++ {
		out = append(out, l)
	}
	return out
}

// recorder makes the clamped records of one text's lines, remembering
// those of long lines: a result may name one line many times (every
// failure near it, every edit beside it), and hashing a line of hundreds of
// megabytes each time made k failures cost k times the line.
type recorder struct {
	x    lineSource
	long map[int]rows.Record
}

// lineSource is a text split into lines: a rows.Index of bytes in memory,
// or the view of a new content.
type lineSource interface {
	Count() int
	Text(n int) []byte
	Start(n int) int
	LineAt(off int) int
	Len() int
}

func (r *recorder) record(l int) rows.Record {
	t := r.x.Text(l)
	if len(t) <= rows.MaxLineChars {
		return rows.ClampedRecord(l, t)
	}
	if rec, ok := r.long[l]; ok {
		return rec
	}
	if r.long == nil {
		r.long = map[int]rows.Record{}
	}
	rec := rows.ClampedRecord(l, t)
	r.long[l] = rec
	return rec
}

// records returns the baseline rows of the given lines, sorted, without
// duplicates, at most maxContextRows of them.
func (f *fileState) records(lines []int) []rows.Record {
	if f.rec == nil {
		f.rec = &recorder{x: f.idx}
	}
	sort.Ints(lines)
	var out []rows.Record
	last := 0
	for _, l := range lines {
		if l == last || l < 1 || l > f.idx.Count() {
			continue
		}
		last = l
		out = append(out, f.rec.record(l))
		if len(out) == maxContextRows {
			break
		}
	}
	return out
}

// staleReport explains why a target's rows did not resolve.
func (f *fileState) staleReport(p *pending, refs []refUse) (reason, msg string, rs []rows.Record) {
	hashes := f.lineHashes()
	n := len(hashes)
	var parts []string
	var lines []int
	reason = ReasonRowStale
	for _, r := range refs {
		ref := fmt.Sprintf("%d:%04x", r.line, r.hash)
		all := f.hashIndex().at(r.hash)
		var where []int // the first few, for the message and the rows
		for _, l := range all[:min(len(all), 6)] {
			where = append(where, int(l))
		}
		valid := r.line <= n && hashes[r.line-1] == r.hash
		switch {
		case valid:
			parts = append(parts, fmt.Sprintf("%s is current", ref))
			lines = append(lines, lineRange(r.line-1, r.line+1, n)...)
			continue
		case r.line > n:
			// Past the end with its hash nowhere: the row is gone. With
			// its hash on other lines it is stale, and those lines are
			// the candidates.
			if len(all) == 0 && reason != ReasonRowMissing {
				reason = ReasonRowMissing
			}
			parts = append(parts, fmt.Sprintf("%s is past the end: the file has %d lines", ref, n))
			lines = append(lines, lineRange(n-contextRadius, n, n)...)
		default:
			parts = append(parts, fmt.Sprintf("%s is stale: line %d is now %s", ref, r.line, rows.RefOf(r.line, f.idx.Text(r.line))))
			lines = append(lines, lineRange(r.line-contextRadius, r.line+contextRadius, n)...)
		}
		switch {
		case len(all) == 0:
			parts = append(parts, "no line has hash "+ref[strings.IndexByte(ref, ':')+1:])
		case len(all) == 1:
			parts = append(parts, fmt.Sprintf("its hash is on line %d only, a shift of %+d that nothing else in this script confirms", where[0], where[0]-r.line))
		default:
			parts = append(parts, fmt.Sprintf("its hash is on %d lines (%s), which is ambiguous", len(all), joinLines(where, 5)))
		}
		for i, w := range where {
			if i == maxCandidates {
				break
			}
			lines = append(lines, w)
		}
	}
	return reason, strings.Join(parts, "; "), f.records(lines)
}

func joinLines(ls []int, max int) string {
	var b []string
	for i, l := range ls {
		if i == max {
			b = append(b, "...")
			break
		}
		b = append(b, strconv.Itoa(l))
	}
	return strings.Join(b, ", ")
}

func (f *fileState) occurrenceMessage(c *Command, found, d int) string {
	where := "in the file"
	if c.Target.Anchored {
		where = fmt.Sprintf("from line %d on", c.Target.Anchor.Line+d)
	}
	return fmt.Sprintf("%s occurs %d times %s, %d wanted", quoteClamped(c.Target.Needle), found, where, c.Target.Count)
}

// occurrenceRows shows where the matches that were found are, and the rows
// at the anchor.
func (f *fileState) occurrenceRows(c *Command, found []int, d int) []rows.Record {
	var lines []int
	if c.Target.Anchored {
		a := c.Target.Anchor.Line + d
		lines = append(lines, lineRange(a, a+contextRadius, f.idx.Count())...)
	}
	for _, at := range found {
		lines = append(lines, f.idx.LineAt(at))
	}
	return f.records(lines)
}

// quoteClamped quotes script text for a message, clamped like a row: a
// message is one line, however long the text the script gave.
func quoteClamped(s string) string {
	shown, chars := rows.Clamp([]byte(s), rows.MaxLineChars)
	if chars == 0 {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%s... (%d characters)", strconv.Quote(string(shown)), chars)
}
