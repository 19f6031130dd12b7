package read

import (
	"io"
	"path"
	"slices"
	"strings"

	"github.com/rowkit/rowkit/internal/workspace"
)

// maxCompared bounds the directory entries compared for suggestions.
const maxCompared = 10000

// suggest returns up to max existing paths near clean, a path that was not
// found: entries of the deepest existing directory on its way whose names
// are close to the first missing component. Only entries inside the root
// are offered.
func suggest(root *workspace.Root, clean string, max int) ([]string, bool) {
	parts := strings.Split(clean, "/")
	dir, missing := ".", parts[0]
	for i := range parts {
		cand := path.Join(parts[:i+1]...)
		_, target, err := root.Resolve(cand)
		if err != nil {
			break
		}
		fi, err := root.FS().Stat(target)
		if err != nil || !fi.IsDir() {
			break
		}
		dir = cand
		if i+1 < len(parts) {
			missing = parts[i+1]
		}
	}
	if dir == clean {
		return nil, false
	}
	// Through the root: a directory swapped for a link out after the
	// checks above cannot have its names listed.
	_, f, fi, err := root.Open(dir)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if !fi.IsDir() {
		return nil, false
	}
	names, err := f.Readdirnames(maxCompared + 1)
	if err != nil && err != io.EOF {
		return nil, false
	}
	truncated := len(names) > maxCompared
	if truncated {
		names = names[:maxCompared]
	}
	type scored struct {
		name string
		d    int
	}
	var found []scored
	for _, n := range names {
		if d, ok := nearness(missing, n); ok {
			found = append(found, scored{n, d})
		}
	}
	slices.SortFunc(found, func(a, b scored) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.name, b.name)
	})
	var out []string
	for _, s := range found {
		if len(out) == max {
			break
		}
		p := s.name
		if dir != "." {
			p = dir + "/" + s.name
		}
		if _, _, err := root.Resolve(p); err == nil {
			out = append(out, p)
		}
	}
	return out, truncated
}

// nearness scores how close name is to want (lower is closer) and reports
// whether it is close enough to suggest: the same name in another case, the
// same stem with another extension, or an edit distance of at most a third
// of the name's length.
func nearness(want, name string) (int, bool) {
	lw, ln := strings.ToLower(want), strings.ToLower(name)
	if lw == ln {
		return 0, true
	}
	stem := func(s string) string { return strings.TrimSuffix(s, path.Ext(s)) }
	if stem(lw) != "" && stem(lw) == stem(ln) {
		return 1, true
	}
	d := editDistance(lw, ln)
	limit := max(1, len([]rune(want))/3)
	if d <= limit {
		return 1 + d, true
	}
	if len(lw) >= 3 && (strings.HasPrefix(ln, lw) || strings.HasPrefix(lw, ln) && len(ln) >= 3) {
		return 2 + limit + abs(len(ln)-len(lw)), true
	}
	return 0, false
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// editDistance is the optimal string alignment distance between a and b
// in characters: insertions, deletions, substitutions and transpositions
// of neighbours each cost one (scr is one edit from src).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
