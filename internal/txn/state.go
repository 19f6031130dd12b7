package txn

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// statement says where every file of the transaction stands, read from
// disk: "every file is as it was" only when each one is proven to be, and
// which of the directories it created are still there.
func (t *tx) statement() string {
	var parts []string
	asWas := 0
	for _, c := range t.changes {
		var now []byte
		var err error
		limit := int64(max(len(c.Old), len(c.Data)))
		now, err = readRegular(t.root, c.Target, nil, limit)
		present := err == nil
		var s string
		switch {
		case c.Delete && !present && notExist(t, c.Target):
			s = "is deleted"
		case c.Delete && present && string(now) == string(c.Old):
			s = "is as it was"
		case c.Old == nil && !c.Delete && notExist(t, c.Target):
			s = "is as it was (not created)"
		case !c.Delete && present && string(now) == string(c.Data):
			s = "has its new content"
		case c.Old != nil && present && string(now) == string(c.Old):
			s = "is as it was"
		case !present && notExist(t, c.Target):
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
		if fi, err := t.root.Lstat(d); err == nil && fi.IsDir() {
			dirs = append(dirs, d+"/")
		}
	}
	if len(dirs) > 0 {
		out += fmt.Sprintf(" (the directories it created are there: %s)", strings.Join(dirs, ", "))
	}
	return out
}

func notExist(t *tx, name string) bool {
	_, err := t.root.Lstat(name)
	return errors.Is(err, fs.ErrNotExist)
}
