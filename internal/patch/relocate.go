package patch

import "strconv"

// The relocation rule.
//
// A row LINE:HASH names line LINE of the file the caller read. When that
// line of the baseline still has HASH, the row is the target. When it does
// not, the file changed since the caller read it, and the row may only be
// moved to another line on evidence that does not rest on its own 16-bit
// hash: with 2^16 hash values, a changed line finds an unrelated line with
// the same hash somewhere in a 2,000-line file about 3% of the time.
//
// A stale row is relocated by a shift d only when all of this holds:
//
//  1. its hash occurs exactly once in the baseline, at LINE+d, with
//     |d| <= relocWindow;
//  2. every row of the same target (both ends of a range) has that same
//     unique shift d;
//  3. at least two distinct baseline lines support d: the two ends of a
//     range, or rows of other targets of the same script in the same file
//     that are stale at their own line and match uniquely at the same d.
//
// The agreement of two independent hashes at one shift makes an accidental
// relocation need a second 16-bit coincidence at exactly the right place.
// A single stale row with no corroboration, a hash that occurs twice, or a
// range whose ends disagree is rejected with the current rows around the
// requested line and the lines that carry its hash.
const relocWindow = 512

// refUse is one row reference of one target.
type refUse struct {
	line int    // as written
	hash uint16 // as written
}

// relocation is the outcome for one target.
type relocation struct {
	shift int
	ok    bool
}

// parseHash turns four hex digits into the hash's value.
func parseHash(h string) uint16 {
	v, _ := strconv.ParseUint(h, 16, 16)
	return uint16(v)
}

// hashIndex lists the lines carrying each hash, built once per file by a
// counting sort, so that finding where a stale row's hash occurs costs
// nothing per row: scanning the file for each stale row made a script of k
// stale rows cost k times the file.
type hashIndex struct {
	start []int32 // lines with hash h are lines[start[h]:start[h+1]]
	lines []int32 // one-based, ascending for each hash
}

func newHashIndex(hashes []uint16) *hashIndex {
	x := &hashIndex{start: make([]int32, 1<<16+1), lines: make([]int32, len(hashes))}
	for _, h := range hashes {
		x.start[int(h)+1]++
	}
	for h := 1; h < len(x.start); h++ {
		x.start[h] += x.start[h-1]
	}
	next := append([]int32(nil), x.start[:1<<16]...)
	for i, h := range hashes {
		x.lines[next[h]] = int32(i + 1)
		next[h]++
	}
	return x
}

// at returns the lines carrying hash h, ascending.
func (x *hashIndex) at(h uint16) []int32 { return x.lines[x.start[h]:x.start[int(h)+1]] }

// relocate decides, for each target given by its row references, whether it
// resolves against a file whose lines have the given hashes (hashes[0] is
// line 1), and with what shift. It implements the rule above; it is a pure
// function so that the simulation can drive it with millions of files.
func relocate(hashes []uint16, targets [][]refUse) []relocation {
	out := make([]relocation, len(targets))
	valid := func(r refUse) bool { return r.line <= len(hashes) && hashes[r.line-1] == r.hash }
	// One pass finds where the hashes of the stale rows occur: scanning
	// the file for each stale row made k stale rows cost k times the file.
	type seen struct{ line, count int }
	where := map[uint16]*seen{}
	for _, refs := range targets {
		for _, r := range refs {
			if !valid(r) {
				where[r.hash] = &seen{}
			}
		}
	}
	if len(where) > 0 {
		var want [1 << 16 / 64]uint64
		for h := range where {
			want[h/64] |= 1 << (h % 64)
		}
		for i, h := range hashes {
			if want[h/64]&(1<<(h%64)) != 0 {
				w := where[h]
				if w.count++; w.count == 1 {
					w.line = i + 1
				}
			}
		}
	}
	// unique returns the shift to the only line carrying r's hash, if any.
	unique := func(r refUse) (int, bool) {
		w := where[r.hash]
		if w == nil || w.count != 1 {
			return 0, false
		}
		d := w.line - r.line
		return d, d != 0 && d >= -relocWindow && d <= relocWindow
	}
	proposed := make([]relocation, len(targets))
	support := map[int]map[int]bool{} // shift -> baseline lines supporting it
	for i, refs := range targets {
		allValid := true
		for _, r := range refs {
			if !valid(r) {
				allValid = false
				break
			}
		}
		if allValid {
			out[i] = relocation{0, true}
			continue
		}
		d0, ok := 0, true
		for j, r := range refs {
			d, u := unique(r)
			if !u || j > 0 && d != d0 {
				ok = false
				break
			}
			d0 = d
		}
		if !ok {
			continue
		}
		proposed[i] = relocation{d0, true}
		if support[d0] == nil {
			support[d0] = map[int]bool{}
		}
		for _, r := range refs {
			support[d0][r.line+d0] = true
		}
	}
	for i, p := range proposed {
		if p.ok && len(support[p.shift]) >= 2 {
			out[i] = p
		}
	}
	return out
}
