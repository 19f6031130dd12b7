package main

// How a careful agent writes one modified file's change: for every changed
// block of lines it picks, among row targets (ROW, ROW..ROW, retyping the
// new lines) and text targets (the changed words, each anchored at its row
// or unanchored when the words first occur there, widened just enough to be
// the first match), the sequence of commands with the fewest o200k tokens.
// Equal edits of the same words (a rename) become one counted text target.

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/rowkit/rowkit/internal/jsonstr"
	"github.com/rowkit/rowkit/internal/rows"
)

const (
	maxWiden  = 4  // tokens a text target may take on either side to be unique
	textGroup = 6  // changed regions one text target may span
	rowGroup  = 48 // changed regions one row target may span (besides the whole block)
	maxBlock  = 20000
)

// command is one hpatch command of a modified file.
type command struct {
	s, e int    // the baseline bytes it replaces; s == e: an insertion at s
	text string // as written, ending in LF
	cost int    // its tokens
	row  bool   // a row target (for the statistics)

	// A type with a text target, kept for merging equal edits.
	textType     bool
	needle, repl string
}

var tokMemo = map[string]int{}

// tok counts o200k tokens, remembering recent answers: the search below
// prices the same commands many times.
func tok(s string) int {
	if n, ok := tokMemo[s]; ok {
		return n
	}
	if len(tokMemo) > 1<<18 {
		clear(tokMemo)
	}
	n := rows.CountTokens(s)
	tokMemo[s] = n
	return n
}

func jsonString(s string) string { return string(jsonstr.Append(nil, s)) }

// heredocOK reports whether v can be a <<PATCH body: whole LF lines, none of
// them the closing word.
func heredocOK(v string) bool {
	if !strings.HasSuffix(v, "\n") || strings.Contains(v, "\r") {
		return false
	}
	for _, l := range strings.SplitAfter(v, "\n") {
		if strings.TrimSuffix(l, "\n") == heredocWord {
			return false
		}
	}
	return true
}

const heredocWord = "PATCH"

// valueOf writes VALUE as the cheaper of a JSON string and a heredoc.
func valueOf(v string) string {
	js := jsonString(v) + "\n"
	if heredocOK(v) {
		if hd := "<<" + heredocWord + "\n" + v + heredocWord + "\n"; tok(hd) < tok(js) {
			return hd
		}
	}
	return js
}

// rowValue writes the VALUE of a row replacement or a row insertion: the
// engine ends a value that lacks a final terminator with term, so that
// terminator need not be typed.
func rowValue(v, term string) string {
	best := valueOf(v)
	if term != "" && strings.HasSuffix(v, term) {
		d := v[:len(v)-len(term)]
		if d != "" && !strings.HasSuffix(d, "\n") && !strings.HasSuffix(d, "\r") {
			if alt := valueOf(d); tok(alt) < tok(best) {
				best = alt
			}
		}
	}
	return best
}

// addTerm is the terminator the engine gives an insertion before row a.
func addTerm(x *rows.Index, a int) string {
	t := x.Term(a)
	if t == rows.TermNone && a > 1 {
		t = x.Term(a - 1)
	}
	if t == rows.TermNone {
		t = rows.TermLF
	}
	return t.String()
}

func spanOf(x *rows.Index, a, b int) string {
	if a == b {
		return x.Ref(a).String()
	}
	return x.Ref(a).String() + ".." + x.Ref(b).String()
}

func newCommand(s, e int, text string) command {
	return command{s: s, e: e, text: text, cost: tok(text)}
}

// rowReplace replaces lines a..b (1-based) with v.
func rowReplace(x *rows.Index, a, b int, v string) command {
	val := `""` + "\n"
	if v != "" {
		val = rowValue(v, x.Term(b).String())
	}
	c := newCommand(x.Start(a), x.End(b), "type "+spanOf(x, a, b)+" "+val)
	c.row = true
	return c
}

// rowInsert inserts v before line a, or at the end when a is past the last line.
func rowInsert(x *rows.Index, a int, v string) command {
	if a > x.Count() {
		n := len(x.Src())
		return newCommand(n, n, "add EOF "+valueOf(v))
	}
	c := newCommand(x.Start(a), x.Start(a), "add "+x.Ref(a).String()+" "+rowValue(v, addTerm(x, a)))
	c.row = true
	return c
}

// needleOK reports whether s may be a text target.
func needleOK(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' && c != '\n' {
			return false
		}
	}
	return true
}

// textTargets returns the ways to target needle at byte p of src as its
// first match: from its row, and from the file's start when that works.
func textTargets(src []byte, x *rows.Index, p int, needle string) []string {
	if !needleOK(needle) {
		return nil
	}
	line := x.LineAt(p)
	from := x.Start(line)
	if bytes.Index(src[from:], []byte(needle)) != p-from {
		return nil
	}
	q := jsonString(needle)
	out := []string{x.Ref(line).String() + " " + q}
	if bytes.Index(src[:min(len(src), p+len(needle)-1)], []byte(needle)) < 0 {
		out = append(out, q)
	}
	return out
}

// region is one changed run of a word diff, in bytes of the old and new
// block text, with the old run's token indexes and the new run's.
type region struct {
	os, oe, ns, ne int
	ta, te, na, nb int
}

// blockCommands expresses old -> neu, the whole lines of x starting at
// line first, as the cheapest command sequence it finds.
func blockCommands(x *rows.Index, first int, old, neu string) []command {
	src := x.Src()
	base := x.Start(first)
	lastLine := x.LineAt(base + len(old) - 1)
	whole := rowReplace(x, first, lastLine, neu)
	if len(old)+len(neu) > maxBlock {
		return []command{whole}
	}
	ot, nt := tokens(old), tokens(neu)
	oOff, nOff := offsets(ot), offsets(nt)
	var rs []region
	for _, h := range diffLines(ot, nt) {
		rs = append(rs, region{oOff[h.oa], oOff[h.oa+h.on], nOff[h.na], nOff[h.na+h.nn], h.oa, h.oa + h.on, h.na, h.na + h.nn})
	}
	k := len(rs)
	if k == 0 {
		return []command{whole}
	}
	// newAt maps an old offset p in the unchanged gap before region i to
	// the new text.
	newAt := func(p, i int) int {
		if i == 0 {
			return p
		}
		return rs[i-1].ne + p - rs[i-1].oe
	}
	candidates := func(i, j int) []command {
		var out []command
		lo, hi := 0, len(ot) // the unchanged tokens a target may widen into
		if i > 0 {
			lo = rs[i-1].te
		}
		if j < k-1 {
			hi = rs[j+1].ta
		}
		if j-i < textGroup {
			for l := 0; l <= maxWiden && rs[i].ta-l >= lo; l++ {
				for r := 0; r <= maxWiden && rs[j].te+r <= hi; r++ {
					s, e := oOff[rs[i].ta-l], oOff[rs[j].te+r]
					if s == e {
						continue
					}
					repl := neu[nOff[rs[i].na-l]:nOff[rs[j].nb+r]]
					for _, t := range textTargets(src, x, base+s, old[s:e]) {
						c := newCommand(base+s, base+e, "type "+t+" "+valueOf(repl))
						c.textType, c.needle, c.repl = true, old[s:e], repl
						out = append(out, c)
					}
				}
			}
			// A pure insertion: add before the row or the words that follow it.
			if i == j && rs[i].os == rs[i].oe {
				p := base + rs[i].os
				if v := neu[rs[i].ns:rs[i].ne]; (p == len(src) || p == x.Start(x.LineAt(p))) && (strings.HasSuffix(v, "\n") || strings.HasSuffix(v, "\r")) {
					out = append(out, rowInsert(x, x.LineAt(p-1)+1, v))
				}
				for r := 1; r <= maxWiden && rs[i].te+r <= hi; r++ {
					p := rs[i].oe
					for _, t := range textTargets(src, x, base+p, old[p:oOff[rs[i].te+r]]) {
						out = append(out, newCommand(base+p, base+p, "add "+t+" "+valueOf(neu[rs[i].ns:rs[i].ne])))
					}
				}
			}
		}
		if j-i < rowGroup || i == 0 && j == k-1 {
			// Retype the lines the regions touch.
			p, q := rs[i].os, rs[j].oe
			var la, lb int
			switch {
			case p < q:
				la, lb = x.LineAt(base+p), x.LineAt(base+q-1)
			case p < len(old):
				la, lb = x.LineAt(base+p), x.LineAt(base+p)
			default:
				la, lb = x.LineAt(base+p-1), x.LineAt(base+p-1)
			}
			ls, le := x.Start(la)-base, x.End(lb)-base
			if (i == 0 || rs[i-1].oe <= ls) && (j == k-1 || rs[j+1].os >= le) && ls >= 0 && le <= len(old) {
				// The engine ends a value that lacks a terminator with the
				// last row's, so the new text must end where a line does.
				v := neu[newAt(ls, i) : rs[j].ne+le-rs[j].oe]
				if v == "" || strings.HasSuffix(v, "\n") || strings.HasSuffix(v, "\r") || x.Term(lb) == rows.TermNone {
					out = append(out, rowReplace(x, la, lb, v))
				}
			}
		}
		return out
	}
	type node struct {
		c    command
		prev *node
	}
	type state struct {
		cost, end int
		n         *node
	}
	push := func(ss []state, s state) []state {
		for _, o := range ss {
			if o.cost <= s.cost && o.end <= s.end {
				return ss
			}
		}
		out := ss[:0]
		for _, o := range ss {
			if !(s.cost <= o.cost && s.end <= o.end) {
				out = append(out, o)
			}
		}
		return append(out, s)
	}
	states := make([][]state, k+1)
	states[0] = []state{{0, base, nil}}
	for i := range k {
		if len(states[i]) == 0 {
			continue
		}
		for j := i; j < k; j++ {
			if j-i >= rowGroup && !(i == 0 && j == k-1) {
				continue
			}
			cs := candidates(i, j)
			for _, st := range states[i] {
				best := -1
				for ci, c := range cs {
					if c.s >= st.end && (best < 0 || c.cost < cs[best].cost) {
						best = ci
					}
				}
				if best >= 0 {
					states[j+1] = push(states[j+1], state{st.cost + cs[best].cost, cs[best].e, &node{cs[best], st.n}})
				}
			}
		}
	}
	if len(states[k]) == 0 {
		return []command{whole}
	}
	bs := states[k][0]
	for _, s := range states[k][1:] {
		if s.cost < bs.cost {
			bs = s
		}
	}
	if bs.cost >= whole.cost {
		return []command{whole}
	}
	var out []command
	for n := bs.n; n != nil; n = n.prev {
		out = append(out, n.c)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func offsets(ts []string) []int {
	off := make([]int, len(ts)+1)
	for i, t := range ts {
		off[i+1] = off[i] + len(t)
	}
	return off
}

// mergeCounts turns equal text edits that are consecutive matches of their
// words into one command with a count: type [ROW] "OLD" N "NEW".
func mergeCounts(src []byte, x *rows.Index, cs []command) []command {
	type key struct{ needle, repl string }
	groups := map[key][]int{}
	for i, c := range cs {
		if c.textType {
			groups[key{c.needle, c.repl}] = append(groups[key{c.needle, c.repl}], i)
		}
	}
	drop := map[int]bool{}
	for kk, members := range groups {
		if len(members) < 2 {
			continue
		}
		at := map[int]int{}
		for _, m := range members {
			at[cs[m].s] = m
		}
		for _, m := range members {
			if drop[m] {
				continue
			}
			s := cs[m].s
			line := x.LineAt(s)
			matches := findAll(src, kk.needle, x.Start(line))
			if len(matches) == 0 || matches[0] != s {
				continue
			}
			n := 0
			for n < len(matches) {
				o, ok := at[matches[n]]
				if !ok || drop[o] {
					break
				}
				n++
			}
			if n < 2 {
				continue
			}
			q := jsonString(kk.needle)
			target := x.Ref(line).String() + " " + q
			if bytes.Index(src[:min(len(src), s+len(kk.needle)-1)], []byte(kk.needle)) < 0 {
				target = q
			}
			merged := newCommand(s, cs[at[matches[n-1]]].e, fmt.Sprintf("type %s %d %s", target, n, valueOf(kk.repl)))
			sum := 0
			for _, p := range matches[:n] {
				sum += cs[at[p]].cost
			}
			if merged.cost >= sum {
				continue
			}
			for _, p := range matches[1:n] {
				drop[at[p]] = true
			}
			cs[m] = merged
		}
	}
	out := cs[:0]
	for i, c := range cs {
		if !drop[i] {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].s < out[j].s })
	return out
}

// findAll returns the offsets of the non-overlapping matches of needle in
// src from offset from, as the engine finds them.
func findAll(src []byte, needle string, from int) []int {
	var out []int
	nb := []byte(needle)
	for {
		i := bytes.Index(src[from:], nb)
		if i < 0 {
			return out
		}
		out = append(out, from+i)
		from += i + len(nb)
	}
}
