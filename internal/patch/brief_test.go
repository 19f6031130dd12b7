package patch

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Brief teaches every command of the language, and every form it shows
// parses: a model that writes what Brief says writes a script the parser
// takes.
func TestBriefMatchesTheParser(t *testing.T) {
	verbs := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  (\w+) `).FindAllStringSubmatch(Brief, -1) {
		verbs[m[1]] = true
	}
	verbs["rm"] = strings.Contains(Brief, "; rm deletes it")
	for _, v := range []string{"in", "new", "type", "add", "mv", "rm"} {
		if !verbs[v] || !strings.Contains(Language, "  "+v+" ") {
			t.Errorf("command %s: in Brief %v; Language names it too", v, verbs[v])
		}
	}
	// Each form Brief shows, as a model would write it from Brief alone.
	forms := []string{
		"in a.txt\ntype 1:8ed3 \"x\"\n",                        // type ROW VALUE
		"in a.txt\ntype 1:8ed3..2:f44e \"\"\n",                 // ROW..ROW, "" deletes
		"in a.txt\ntype \"beta\" 2 \"B\"\n",                    // "TEXT" N
		"in a.txt\ntype 1:8ed3 \"beta\" \"B\"\n",               // ROW "TEXT"
		"in a.txt\nadd 1:8ed3 \"x\\n\"\n",                      // add ROW
		"in a.txt\nadd \"beta\" \"x\"\n",                       // add before a text target
		"in a.txt\nadd EOF <<PATCH\nlast line\nPATCH\n",        // add EOF, heredoc
		"in a.txt\ntype EOF \"\"\n",                            // drop the final line break
		"in a.txt\ntype EOF \"\\n\"\n",                         // add one
		"new b.txt\ntype <<PATCH\npackage b\nPATCH\n",          // new, then its content
		"in a.txt\nmv c/a.txt\n",                               // mv
		"in a.txt\nrm\n",                                       // rm
		"in a.txt\ntype 1:8ed3 <<PATCH\none\ntwo\nPATCH\nrm\n", // several commands
	}
	for _, s := range forms {
		if _, fails := Parse(s); len(fails) != 0 {
			t.Errorf("%q: %+v", s, fails)
		}
	}
	if !slices.ContainsFunc(strings.Split(Brief, "\n"), func(l string) bool { return strings.HasPrefix(l, "TARGET is ROW (a LINE:HASH") }) {
		t.Error("Brief does not say what a ROW is")
	}
}
