package txn

import (
	"fmt"
	"hash/maphash"
	"io"
	"path"
	"strings"

	"github.com/rowkit/rowkit/internal/regfile"
)

// statement says where every file of the transaction stands, read from
// disk: "every file is as it was" only when each one is proven to be, and
// which of the directories it created are still there.
func (t *tx) statement() string {
	var parts []string
	asWas := 0
	for i, c := range t.changes {
		o := t.j.Ops[i]
		present, old, isNew := t.holds(i, c, o)
		var s string
		switch {
		case !present && !t.reachable(c.Target) && c.base() == nil && !c.Delete && t.inNewDir(c.Target):
			s = "is as it was (not created)"
		case !present && !t.reachable(c.Target):
			s = "cannot be reached (another program moved or replaced its directory)"
		case c.Delete && !present && t.missing(c.Target):
			s = "is deleted"
		case c.Delete && present && old:
			s = "is as it was"
		case c.base() == nil && !c.Delete && t.missing(c.Target):
			s = "is as it was (not created)"
		case !c.Delete && present && isNew:
			s = "has its new content"
		case c.base() != nil && present && old:
			s = "is as it was"
		case !present && t.missing(c.Target):
			s = "is missing"
		default:
			s = "holds other content (another writer's)"
		}
		if strings.HasPrefix(s, "is as it was") {
			asWas++
		}
		parts = append(parts, fmt.Sprintf("%s %s", c.Target, s))
	}
	out := strings.Join(parts, ", ")
	if asWas == len(t.changes) {
		out = "every file is as it was"
	}
	var dirs []string
	for _, d := range t.j.Dirs {
		if st, err := t.lstat(d.Path); err == nil && st.isDir() && (d.ID == nil || st.id == *d.ID) {
			dirs = append(dirs, d.Path+"/")
		}
	}
	if len(dirs) > 0 {
		out += fmt.Sprintf(" (the directories it created are there: %s)", strings.Join(dirs, ", "))
	}
	return out
}

// inNewDir reports whether target's directory is one the transaction
// creates and has not placed.
func (t *tx) inNewDir(target string) bool {
	dir := path.Dir(target)
	for _, d := range t.j.Dirs {
		if d.Path == dir || strings.HasPrefix(dir, d.Path+"/") {
			return !t.sameID(d.Path, d.ID)
		}
	}
	return false
}

// holds reads change i's target as it is now: whether it is there (a
// regular file, or a symlink for a link change), whether it holds the old
// content and whether it holds the new one. The new one is compared by
// the hash taken when it was staged (a change never staged holds it only
// if its content is empty and so is the file).
func (t *tx) holds(i int, c Change, o op) (present, old, isNew bool) {
	if c.Link {
		text, err := t.readlink(c.Target)
		if err != nil {
			return false, false, false
		}
		old, _ = t.holdsOld(o, c.Target, nil)
		return true, old && c.base() != nil, !c.Delete && text == string(c.Data)
	}
	f, err := t.openRegular(c.Target, nil)
	if err != nil {
		return false, false, false
	}
	defer f.Close()
	h := maphash.Hash{}
	h.SetSeed(t.seed)
	n, err := io.CopyBuffer(&h, regfile.Reader(f), t.buffer())
	if err != nil {
		return true, false, false
	}
	if b := c.base(); b != nil && n == b.Size {
		old, _ = t.holdsOld(o, c.Target, nil)
	}
	staged := t.newSums != nil && o.TempID != nil
	return true, old, !c.Delete && staged && h.Sum64() == t.newSums[i]
}
