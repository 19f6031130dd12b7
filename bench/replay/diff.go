package main

import "github.com/rowkit/rowkit/internal/diff"

// Line diffs for turning a commit into edit hunks (internal/diff). Lines
// keep their terminators, so a change of terminator is a change of line.

type hunk struct{ oa, on, na, nn int } // old [oa,oa+on) becomes new [na,na+nn), 0-based

// maxDiffCost bounds the edit distance searched (the trace's memory grows
// with its square); past it the differing middle is one hunk.
const maxDiffCost = 4000

// diffLines is the shortest line (or word) diff of a and b.
func diffLines(a, b []string) []hunk {
	var hs []hunk
	for _, c := range diff.Slices(a, b, maxDiffCost) {
		hs = append(hs, hunk{c.Old, c.OldN, c.New, c.NewN})
	}
	return hs
}
