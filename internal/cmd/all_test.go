package cmd

import "testing"

// Every command is found by its name and by each name the binary answers
// to, and no two commands share a name.
func TestFind(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range All {
		for _, n := range append([]string{c.Name}, c.Aliases...) {
			if got := Find(n); got != c {
				t.Errorf("Find(%q) = %v, want %s", n, got, c.Name)
			}
			if seen[n] && n != c.Name {
				t.Errorf("%q names two commands", n)
			}
			seen[n] = true
		}
	}
	if Find("nosuch") != nil || Find("") != nil {
		t.Error("Find found a command that does not exist")
	}
}
