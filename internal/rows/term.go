package rows

import "bytes"

// firstWindow is where IndexTerm starts looking: most lines are shorter.
const firstWindow = 64

// probe, when set (by tests), is told how many bytes each search examined,
// so that a test can count the work of a whole split instead of timing it.
var probe func(n int)

// IndexTerm returns the offset of the first LF or CR in b, or -1.
//
// Searching for LF and then for CR before it is the obvious way, and it is
// quadratic: in a file whose lines end in a lone CR, the LF search runs to
// the end of the input for every line. IndexTerm searches windows that
// double in size: the windows of one call add up to less than twice the
// bytes up to the terminator plus firstWindow, each is searched at most
// twice, and so a whole split stays linear in the input whatever the
// terminators, with the vectorised byte search still doing the work.
func IndexTerm(b []byte) int {
	w := firstWindow
	for off := 0; off < len(b); w *= 2 {
		end := min(len(b), off+w)
		win := b[off:end]
		i := bytes.IndexByte(win, '\n')
		if i >= 0 {
			win = win[:i]
		}
		if j := bytes.IndexByte(win, '\r'); j >= 0 {
			i = j
		}
		if probe != nil {
			probe(end - off)
		}
		if i >= 0 {
			return off + i
		}
		off = end
	}
	return -1
}
