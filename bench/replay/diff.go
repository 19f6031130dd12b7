package main

// A line diff (Myers' O(ND) greedy algorithm with a trace) for turning a
// commit into edit hunks. Lines keep their terminators, so a change of
// terminator is a change of line.

type hunk struct{ oa, on, na, nn int } // old [oa,oa+on) becomes new [na,na+nn), 0-based

func diffLines(a, b []string) []hunk {
	// Common prefix and suffix first: most commits touch little.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	a2, b2 := a[pre:len(a)-suf], b[pre:len(b)-suf]
	hs := myers(a2, b2)
	for i := range hs {
		hs[i].oa += pre
		hs[i].na += pre
	}
	return hs
}

func myers(a, b []string) []hunk {
	n, m := len(a), len(b)
	if n == 0 && m == 0 {
		return nil
	}
	if n == 0 || m == 0 || n*m > 4e8 {
		return []hunk{{0, n, 0, m}}
	}
	max := n + m
	off := max
	v := make([]int, 2*max+2)
	var trace [][]int
	for d := 0; d <= max; d++ {
		trace = append(trace, append([]int(nil), v...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, v, off, n, m, d)
			}
		}
	}
	return []hunk{{0, n, 0, m}}
}

// backtrack walks the trace back from (n, m) and groups the edit script
// into hunks.
func backtrack(trace [][]int, last []int, off, n, m, d int) []hunk {
	type op struct {
		kind byte
		x, y int
	} // 'd' deletes a[x], 'i' inserts b[y]
	var ops []op
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
		if x == px {
			ops = append(ops, op{'i', x, py})
		} else {
			ops = append(ops, op{'d', px, y})
		}
		x, y = px, py
	}
	// ops are in reverse; build hunks forward.
	var hs []hunk
	for i := len(ops) - 1; i >= 0; i-- {
		o := ops[i]
		h := hunk{oa: o.x, na: o.y}
		if o.kind == 'i' {
			h.nn = 1
		} else {
			h.on = 1
		}
		if len(hs) > 0 {
			p := &hs[len(hs)-1]
			if p.oa+p.on == h.oa && p.na+p.nn == h.na {
				p.on += h.on
				p.nn += h.nn
				continue
			}
		}
		hs = append(hs, h)
	}
	return hs
}
