package patch

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/rowkit/rowkit/internal/rows"
)

const diffContext = 3

// diff is the unified diff of the plan, git style, one file after another.
// Changes are found from the edits themselves (each widened to whole
// lines), not by comparing the files, so it is exact and linear.
func (pl *plan) diff(ctx context.Context) (string, error) {
	var b strings.Builder
	for _, f := range pl.files {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		if !f.diff || f.deleted && f.created {
			continue
		}
		from, to := f.origin, f.path
		switch {
		case f.created:
			fmt.Fprintf(&b, "diff --git a/%s b/%s\nnew file mode 100%o\n", to, to, f.mode.Perm())
			from = ""
		case f.deleted:
			fmt.Fprintf(&b, "diff --git a/%s b/%s\ndeleted file mode 100%o\n", from, from, f.mode.Perm())
			to = ""
		case f.dest != f.target:
			fmt.Fprintf(&b, "diff --git a/%s b/%s\nrename from %s\nrename to %s\n", from, to, from, to)
		default:
			fmt.Fprintf(&b, "diff --git a/%s b/%s\n", from, to)
		}
		old, neu := f.base, f.view.Bytes()
		var changes []change
		switch {
		case f.deleted:
			neu = nil
			changes = []change{{0, len(splitLines(old)), 0, 0}}
		case f.created:
			changes = []change{{0, 0, 0, len(splitLines(neu))}}
		case f.formatted:
			changes = lineDiff(splitLines(old), splitLines(neu))
		default:
			changes = f.lineChanges(neu)
		}
		ol, nl := splitLines(old), splitLines(neu)
		changes = trimChanges(changes, ol, nl)
		if len(changes) == 0 {
			continue
		}
		if from == "" {
			b.WriteString("--- /dev/null\n")
		} else {
			fmt.Fprintf(&b, "--- a/%s\n", from)
		}
		if to == "" {
			b.WriteString("+++ /dev/null\n")
		} else {
			fmt.Fprintf(&b, "+++ b/%s\n", to)
		}
		writeHunks(&b, changes, ol, nl)
	}
	for _, l := range pl.links {
		switch {
		case l.deleted:
			fmt.Fprintf(&b, "diff --git a/%s b/%s\ndeleted file mode 120000\n--- a/%s\n+++ /dev/null\n@@ -1 +0,0 @@\n-%s\n\\ No newline at end of file\n", l.origin, l.origin, l.origin, l.text)
		case l.dest != l.at:
			fmt.Fprintf(&b, "diff --git a/%s b/%s\nrename from %s\nrename to %s\n", l.origin, l.path, l.origin, l.path)
		}
	}
	return b.String(), nil
}

// change replaces old lines [oa, oa+on) with new lines [na, na+nn) (0-based).
type change struct{ oa, on, na, nn int }

// splitLines splits src into lines that keep their terminators.
func splitLines(src []byte) [][]byte {
	var starts []int
	rows.Lines(src, func(start, n int) { starts = append(starts, start) })
	out := make([][]byte, len(starts))
	for i, s := range starts {
		e := len(src)
		if i+1 < len(starts) {
			e = starts[i+1]
		}
		out[i] = src[s:e]
	}
	return out
}

// lineChanges widens every edit to whole lines of the baseline and merges
// the regions that touch.
func (f *fileState) lineChanges(neu []byte) []change {
	x := f.idx
	base := f.base
	lineStart := func(off int) int {
		switch {
		case len(base) == 0:
			return 0
		case off >= len(base):
			if endsWithTerm(string(base[len(base)-1:])) {
				return len(base)
			}
			return x.Start(x.Count())
		}
		return x.Start(x.LineAt(off))
	}
	lineEnd := func(off int) int { // end of the line holding off
		if off >= len(base) {
			return len(base)
		}
		return x.End(x.LineAt(off))
	}
	type region struct{ s, e, delta int }
	es := append([]*edit(nil), f.edits...)
	sort.SliceStable(es, func(i, j int) bool { return es[i].outStart < es[j].outStart })
	var regs []region
	for _, e := range es {
		s := lineStart(e.start)
		end := s
		if e.end > e.start {
			end = lineEnd(e.end - 1)
		} else if e.start != s {
			end = lineEnd(e.start)
		}
		regs = append(regs, region{s, end, len(e.value) - (e.end - e.start)})
	}
	if f.eof != nil && len(base) > 0 {
		regs = append(regs, region{x.Start(x.Count()), len(base), 0})
	}
	sort.SliceStable(regs, func(i, j int) bool { return regs[i].s < regs[j].s })
	var merged []region
	for _, r := range regs {
		if n := len(merged); n > 0 && r.s <= merged[n-1].e {
			merged[n-1].e = max(merged[n-1].e, r.e)
			merged[n-1].delta += r.delta
			continue
		}
		merged = append(merged, r)
	}
	outIdx, _ := rows.NewIndex(neu)
	lineOf := func(ix *rows.Index, src []byte, off int) int { // 0-based index of the line starting at off
		if off >= len(src) {
			return ix.Count()
		}
		return ix.LineAt(off) - 1
	}
	var out []change
	shift := 0
	for i, r := range merged {
		os := r.s + shift
		oe := os + (r.e - r.s) + r.delta
		if i == len(merged)-1 && f.eof != nil && r.e == len(base) {
			oe = len(neu)
		}
		shift += r.delta
		oa, ob := lineOf(x, base, r.s), lineOf(x, base, r.e)
		na, nb := lineOf(outIdx, neu, os), lineOf(outIdx, neu, oe)
		out = append(out, change{oa, ob - oa, na, nb - na})
	}
	return out
}

// trimChanges drops the lines a change keeps at its start and end, and the
// changes that keep everything.
func trimChanges(cs []change, ol, nl [][]byte) []change {
	var out []change
	for _, c := range cs {
		for c.on > 0 && c.nn > 0 && bytes.Equal(ol[c.oa], nl[c.na]) {
			c.oa, c.na, c.on, c.nn = c.oa+1, c.na+1, c.on-1, c.nn-1
		}
		for c.on > 0 && c.nn > 0 && bytes.Equal(ol[c.oa+c.on-1], nl[c.na+c.nn-1]) {
			c.on, c.nn = c.on-1, c.nn-1
		}
		if c.on > 0 || c.nn > 0 {
			out = append(out, c)
		}
	}
	return out
}

func writeHunks(b *strings.Builder, cs []change, ol, nl [][]byte) {
	for i := 0; i < len(cs); {
		j := i
		for j+1 < len(cs) && cs[j+1].oa-(cs[j].oa+cs[j].on) <= 2*diffContext {
			j++
		}
		first, last := cs[i], cs[j]
		pre := min(diffContext, first.oa)
		post := min(diffContext, len(ol)-(last.oa+last.on))
		oa, ob := first.oa-pre, last.oa+last.on+post
		na, nb := first.na-pre, last.na+last.nn+post
		fmt.Fprintf(b, "@@ -%s +%s @@\n", hunkRange(oa, ob-oa), hunkRange(na, nb-na))
		o := oa
		for k := i; k <= j; k++ {
			c := cs[k]
			for ; o < c.oa; o++ {
				diffLine(b, ' ', ol[o])
			}
			for l := c.oa; l < c.oa+c.on; l++ {
				diffLine(b, '-', ol[l])
			}
			for l := c.na; l < c.na+c.nn; l++ {
				diffLine(b, '+', nl[l])
			}
			o = c.oa + c.on
		}
		for ; o < ob; o++ {
			diffLine(b, ' ', ol[o])
		}
		i = j + 1
	}
}

func hunkRange(a, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", a)
	}
	if n == 1 {
		return fmt.Sprintf("%d", a+1)
	}
	return fmt.Sprintf("%d,%d", a+1, n)
}

// diffLine writes one line of a hunk. A line longer than rows.MaxLineChars
// characters is clamped like a row, with a marker line in the place of
// git's "\ No newline at end of file": a diff is a preview, and a line of
// hundreds of megabytes would make it (and the result that carries it) as
// large. Such a diff no longer applies with git apply; every other does.
func diffLine(b *strings.Builder, mark byte, line []byte) {
	b.WriteByte(mark)
	text := bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	if shown, chars := rows.Clamp(text, rows.MaxLineChars); chars > 0 {
		b.Write(shown)
		fmt.Fprintf(b, "\n\\ clamped: %d of %d characters shown\n", rows.MaxLineChars, chars)
		return
	}
	b.Write(line)
	if len(line) == 0 || !endsWithTerm(string(line[len(line)-1:])) {
		b.WriteString("\n\\ No newline at end of file\n")
	}
}
