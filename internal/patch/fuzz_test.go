package patch

import (
	"reflect"
	"strings"
	"testing"
)

// parseSeeds are the table tests' scripts, the fuzzer's starting points.
var parseSeeds = []string{
	"in notes.txt\ntype \"beta\" 2 \"BETA\"\nadd 1:8ed3 \"first\\n\"\nadd EOF <<PATCH\ndelta\nPATCH\n",
	"in a\ntype 3:be9d..4:f44e \"x\"\ntype 2:f44e \"e\" 3 \"E\"\ntype EOF \"\"\nmv \"b c\"\nrm\n",
	"new a\ntype <<PATCH\nPATCH-like\n PATCH\nPATCH\n",
	"in a\ntype 1:8ed3 <<EOF\nrm\nEOF\n",
	"in a\ntype 1:8ed3 \"broken <<PATCH\nrm\nPATCH\n",
	"in a\ntype \"b\" 0 \"x\"\ntype 4:8ed3..2:f44e \"x\"\n",
	"in a\r\ntype 1:8ed3 \"\\ud83d\\ude00\\t\"\r\n",
	"type \"x\"\nrm\nmv b\n",
	"in a\ntype \"b\" two \"x\"\ntype 1:8ed3 \"b\" 2:f44e \"x\"\n",
	"in a\ntype 1:8ed3 <<PATCH\nok\nb\xffd\nPATCH\nadd EOF <<EOF\n\xc3\nEOF\n",
	"in a\ntype 1:8ed3 \"X\"\nrm\nnew n\ntype \"x\"\nadd 1:8ed3 \"y\"\n",
	"in a\ntype 4:8ed3..2:f44e \"x\"\ntype 2:8ed3..2:f44e \"y\"\n",
}

func FuzzParse(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		s, fails := Parse(src)
		// Every command is either parsed or failed, once, in order.
		seen := map[int]bool{}
		last := 0
		for _, c := range s.Commands {
			if c.N <= last || seen[c.N] {
				t.Fatalf("command numbers out of order: %+v", s.Commands)
			}
			last = c.N
			seen[c.N] = true
			if c.Kind == kindInit && c.Target.Kind != 0 {
				t.Fatalf("initializer with a target: %+v", c)
			}
			if c.Target.Kind == TargetText && (c.Target.Needle == "" || c.Target.Count < 1 || strings.ContainsRune(c.Target.Needle, '\r')) {
				t.Fatalf("bad text target accepted: %+v", c.Target)
			}
		}
		prev := 0
		for _, f := range fails {
			if f.Command < 1 || f.Command < prev || seen[f.Command] || f.Reason == "" || f.Message == "" {
				t.Fatalf("bad failure list: %+v (commands %+v)", fails, s.Commands)
			}
			if f.Command == prev {
				t.Fatalf("two failures for command %d: %+v", prev, fails)
			}
			prev = f.Command
			if strings.ContainsAny(f.Line(), "\n") {
				t.Fatalf("failure line spans lines: %q", f.Line())
			}
		}
		// Independence: a broken command appended after a script whose
		// heredocs are closed adds exactly one failure and changes none.
		for _, f := range fails {
			if strings.Contains(f.Message, "never closed") {
				return
			}
		}
		tail := "\nfrob\n"
		if strings.HasSuffix(src, "\r") {
			return // the appended LF would make the CR a terminator
		}
		s2, fails2 := Parse(src + tail)
		if len(fails2) != len(fails)+1 || (len(fails) > 0 && !reflect.DeepEqual(fails2[:len(fails)], fails)) || fails2[len(fails)].Command != last2(s, fails)+1 {
			t.Fatalf("appending a bad command changed the other failures:\n%+v\n%+v", fails, fails2)
		}
		if !reflect.DeepEqual(s2.Commands, s.Commands) {
			t.Fatalf("appending a bad command changed the parsed commands")
		}
	})
}

func last2(s *Script, fails []Failure) int {
	n := 0
	for _, c := range s.Commands {
		n = max(n, c.N)
	}
	for _, f := range fails {
		n = max(n, f.Command)
	}
	return n
}
