// Package diff owns the shortest edit script between two sequences
// (Myers' greedy O(ND) algorithm): which runs of the old sequence become
// which runs of the new one. The edit engine uses it for dry-run diffs and
// gofmt's rows, the replay benchmark for turning commits into scripts.
package diff

// Change replaces old elements [Old, Old+OldN) with new elements
// [New, New+NewN), 0-based.
type Change struct {
	Old, OldN, New, NewN int
}

// Func returns the changes that turn a sequence of n elements into one of m,
// in order, where eq(i, j) reports whether old element i equals new
// element j. The common prefix and suffix are trimmed first. maxCost bounds
// the work (the edit distance searched); past it, or when maxCost <= 0 and
// n*m is huge, the differing middle is one change, which is still a correct
// if not shortest script.
func Func(n, m int, eq func(i, j int) bool, maxCost int) []Change {
	pre := 0
	for pre < n && pre < m && eq(pre, pre) {
		pre++
	}
	suf := 0
	for suf < n-pre && suf < m-pre && eq(n-1-suf, m-1-suf) {
		suf++
	}
	n, m = n-pre-suf, m-pre-suf
	if n == 0 && m == 0 {
		return nil
	}
	whole := []Change{{pre, n, pre, m}}
	if n == 0 || m == 0 {
		return whole
	}
	maxD := n + m
	if maxCost > 0 {
		maxD = min(maxD, maxCost)
	}
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int
	for d := 0; d <= maxD; d++ {
		trace = append(trace, append([]int(nil), v...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && eq(pre+x, pre+y) {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, off, n, m, d, pre)
			}
		}
	}
	return whole
}

// Slices is Func over two slices of comparable elements.
func Slices[T comparable](a, b []T, maxCost int) []Change {
	return Func(len(a), len(b), func(i, j int) bool { return a[i] == b[j] }, maxCost)
}

// backtrack walks the trace back from (n, m), then joins the single steps
// into maximal changes, in order, shifted by the trimmed prefix.
func backtrack(trace [][]int, off, n, m, d, pre int) []Change {
	var steps []Change // in reverse
	x, y := n, m
	for dd := d; dd > 0; dd-- {
		v := trace[dd]
		k := x - y
		var pk int
		if k == -dd || k != dd && v[off+k-1] < v[off+k+1] {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := v[off+pk]
		py := px - pk
		for x > px && y > py {
			x, y = x-1, y-1
		}
		c := Change{Old: pre + px, New: pre + py}
		if x == px {
			c.NewN = 1 // new[py] inserted
		} else {
			c.OldN = 1 // old[px] deleted
		}
		steps = append(steps, c)
		x, y = px, py
	}
	var cs []Change
	for i := len(steps) - 1; i >= 0; i-- {
		c := steps[i]
		if n := len(cs); n > 0 {
			p := &cs[n-1]
			if p.Old+p.OldN == c.Old && p.New+p.NewN == c.New {
				p.OldN += c.OldN
				p.NewN += c.NewN
				continue
			}
		}
		cs = append(cs, c)
	}
	return cs
}
