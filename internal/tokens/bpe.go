package tokens

// pieceCount returns the number of tokens tiktoken's byte-pair merge leaves
// for the pre-token p: while some two neighbouring parts join into a token,
// join the pair whose token has the lowest rank (the leftmost of equals).
func pieceCount(p string) int {
	if len(p) == 1 || rankOf(p) != noRank {
		return 1
	}
	// Every part is a token, so no merge joins two bytes that never
	// stand side by side in a token: the piece splits there exactly.
	n, start := 0, 0
	for i := 1; i < len(p); i++ {
		if !pairInToken(p[i-1], p[i]) {
			n += mergeCount(p[start:i])
			start = i
		}
	}
	return n + mergeCount(p[start:])
}

// smallMerge is the longest segment merged by rescanning all pairs after
// each merge, as tiktoken does; longer ones use a heap.
const smallMerge = 256

func mergeCount(p string) int {
	switch {
	case len(p) == 1:
		return 1
	case len(p) <= smallMerge:
		return mergeSmall(p)
	}
	return mergeLarge(p)
}

func mergeSmall(p string) int {
	// starts[k] is where part k begins; ranks[k] is the rank of parts k
	// and k+1 joined. starts has a sentinel part at len(p).
	var starts [smallMerge + 1]uint16
	var ranks [smallMerge]uint32
	parts := len(p)
	for k := 0; k <= parts; k++ {
		starts[k] = uint16(k)
	}
	for k := 0; k+1 < parts; k++ {
		ranks[k] = rankOf(p[k : k+2])
	}
	for parts > 1 {
		best, at := noRank, -1
		for k := 0; k+1 < parts; k++ {
			if ranks[k] < best {
				best, at = ranks[k], k
			}
		}
		if at < 0 {
			break
		}
		// Join parts at and at+1.
		copy(starts[at+1:parts], starts[at+2:parts+1])
		copy(ranks[at+1:parts-1], ranks[at+2:parts])
		parts--
		if at+1 < parts {
			ranks[at] = rankOf(p[starts[at]:starts[at+2]])
		} else {
			ranks[at] = noRank
		}
		if at > 0 {
			ranks[at-1] = rankOf(p[starts[at-1]:starts[at+1]])
		}
	}
	return parts
}

// mergeLarge gives the same result as mergeSmall in O(n log n): parts are a
// linked list keyed by the offset they start at, and the candidate joins
// sit in a min-heap of rank<<32 | offset, so the lowest rank comes first and
// the leftmost among equals. An entry whose rank no longer matches its part
// is stale: a part's join only grows, and a longer token has another rank.
func mergeLarge(p string) int {
	n := len(p)
	next := make([]int32, n)
	prev := make([]int32, n)
	rank := make([]uint32, n)
	h := make(joinHeap, 0, n)
	for i := 0; i < n; i++ {
		next[i], prev[i] = int32(i+1), int32(i-1)
		rank[i] = noRank
		if i+1 < n {
			rank[i] = rankOf(p[i : i+2])
			if rank[i] != noRank {
				h = append(h, uint64(rank[i])<<32|uint64(i))
			}
		}
	}
	for k := len(h)/2 - 1; k >= 0; k-- {
		h.down(k)
	}
	parts := n
	join := func(i int32) uint32 { // rank of part i joined with the next
		j := next[i]
		if j >= int32(n) || next[j] > int32(n) {
			return noRank
		}
		return rankOf(p[i:next[j]])
	}
	for len(h) > 0 {
		e := h.pop()
		i := int32(uint32(e))
		if rank[i] != uint32(e>>32) {
			continue
		}
		j := next[i]
		next[i] = next[j]
		if next[j] < int32(n) {
			prev[next[j]] = i
		}
		rank[j] = noRank
		parts--
		if rank[i] = join(i); rank[i] != noRank {
			h.push(uint64(rank[i])<<32 | uint64(i))
		}
		if q := prev[i]; q >= 0 {
			if rank[q] = join(q); rank[q] != noRank {
				h.push(uint64(rank[q])<<32 | uint64(q))
			}
		}
	}
	return parts
}

type joinHeap []uint64

func (h *joinHeap) push(x uint64) {
	*h = append(*h, x)
	s := *h
	for k := len(s) - 1; k > 0; {
		up := (k - 1) / 2
		if s[up] <= s[k] {
			break
		}
		s[up], s[k] = s[k], s[up]
		k = up
	}
}

func (h *joinHeap) pop() uint64 {
	s := *h
	x := s[0]
	s[0] = s[len(s)-1]
	*h = s[:len(s)-1]
	h.down(0)
	return x
}

func (h joinHeap) down(k int) {
	for {
		c := 2*k + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h[c+1] < h[c] {
			c++
		}
		if h[k] <= h[c] {
			return
		}
		h[k], h[c] = h[c], h[k]
		k = c
	}
}
