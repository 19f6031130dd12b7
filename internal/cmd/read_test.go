package cmd

import (
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/errs"
)

func TestParseReadArgs(t *testing.T) {
	for _, c := range []struct {
		args string
		want readArgs
	}{
		{"a.txt", readArgs{path: "a.txt", format: "rows", hasPath: true, maxOutput: notGiven}},
		{"--offset 3 a.txt --limit=4", readArgs{path: "a.txt", offset: "3", limit: "4", format: "rows", hasPath: true, maxOutput: notGiven}},
		{"--format json --root /tmp -- --odd", readArgs{path: "--odd", format: "json", root: "/tmp", hasPath: true, maxOutput: notGiven}},
		{"- --format=plain", readArgs{path: "-", format: "plain", hasPath: true, maxOutput: notGiven}},
		{"--max-output 5000 a.txt", readArgs{path: "a.txt", format: "rows", hasPath: true, maxOutput: 5000}},
		{"a.txt --max-output=0", readArgs{path: "a.txt", format: "rows", hasPath: true, maxOutput: 0}},
	} {
		got, err := parseReadArgs(strings.Fields(c.args))
		if err != nil || got != c.want {
			t.Errorf("%q: %+v, %v", c.args, got, err)
		}
	}
	for _, args := range []string{"", "a b", "--offset", "--x a", "--format xml a", "--limit 1 --limit 2 a", "-- a b", "--offset= a", "--limit= a", "--root= a", "--format= a", "--max-output x a", "--max-output=-1 a", "--max-output= a", "--max-output +5 a"} {
		if _, err := parseReadArgs(strings.Fields(args)); errs.Code(err) != errs.Usage {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}

// Any argv parses or is a usage error; what parses prints back to the same
// parse in canonical --name=value form.
func FuzzParseReadArgs(f *testing.F) {
	f.Add("a.txt\x00--offset\x003")
	f.Add("--format=json\x00--\x00-x")
	f.Add("--root\x00\x00p")
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		a, err := parseReadArgs(args)
		if err != nil {
			if errs.Code(err) != errs.Usage {
				t.Fatalf("%q: %v", args, err)
			}
			return
		}
		canon := []string{"--format=" + a.format}
		for name, v := range map[string]string{"--offset=": a.offset, "--limit=": a.limit, "--root=": a.root} {
			if v != "" {
				canon = append(canon, name+v)
			}
		}
		canon = append(canon, "--", a.path)
		b, err := parseReadArgs(canon)
		if err != nil || b != a {
			t.Fatalf("%q parsed %+v; canonical %q parsed %+v, %v", args, a, canon, b, err)
		}
	})
}
