package review

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

var diffCases = []struct {
	name, in string
	want     []string
	err      string
}{
	{name: "empty", in: ""},
	{
		name: "modify add delete",
		in: ":100644 100644 aaaaaaa bbbbbbb M\x00a.txt\x00:000000 100644 0000000 bbbbbbb A\x00new\nline\x00:100644 000000 aaaaaaa 0000000 D\x00gone\x00" +
			"3\t1\ta.txt\x001\t0\tnew\nline\x000\t2\tgone\x00",
		want: []string{"modified a.txt +3-1", "added new\nline +1-0", "deleted gone +0-2"},
	},
	{
		name: "rename copy binary",
		in:   ":100644 100644 aaaaaaa aaaaaaa R086\x00old\x00new\x00:100644 100644 bbbbbbb bbbbbbb C100\x00src\x00dst\x00:100644 100644 c c M\x00b.bin\x00" + "1\t0\t\x00old\x00new\x000\t0\t\x00src\x00dst\x00-\t-\tb.bin\x00",
		want: []string{"renamed new<-old +1-0", "copied dst<-src +0-0", "modified b.bin binary"},
	},
	{
		name: "unmerged twice keeps the first",
		in:   ":000000 100644 0000000 870f6c7 U\x00f\x00:100644 100644 351be5b 0000000 M\x00f\x000\t0\tf\x004\t0\tf\x00",
		want: []string{"unmerged f +0-0"},
	},
	{name: "tab and backslash in names", in: ":100644 100644 a b T\x00t\tab\\x\x001\t1\tt\tab\\x\x00", want: []string{"typechange t\tab\\x +1-1"}},
	{name: "missing numstat", in: ":100644 100644 a b M\x00a\x00", err: "0 records for 1 paths"},
	{name: "mismatched numstat", in: ":100644 100644 a b M\x00a\x001\t1\tb\x00", err: "does not match"},
	{name: "unknown status", in: ":100644 100644 a b Z\x00a\x001\t1\ta\x00", err: "unknown status"},
	{name: "bad score", in: ":100644 100644 a b R1x\x00a\x00b\x001\t1\t\x00a\x00b\x00", err: "bad score"},
	{name: "score on modify", in: ":100644 100644 a b M50\x00a\x001\t1\ta\x00", err: "score on status"},
	{name: "cut short", in: ":100644 100644 a b M\x00a", err: "missing path"},
	{name: "no destination", in: ":100644 100644 a b R100\x00a\x00", err: "missing destination"},
	{name: "bad count", in: ":100644 100644 a b M\x00a\x00x\t1\ta\x00", err: "bad counts"},
	{name: "half binary", in: ":100644 100644 a b M\x00a\x00-\t1\ta\x00", err: "bad counts"},
	{name: "trailing bytes", in: ":100644 100644 a b M\x00a\x001\t1\ta\x00junk", err: "unexpected bytes"},
	{name: "short raw", in: ":100644 M\x00a\x00", err: "want 5 fields"},
}

func TestParseDiff(t *testing.T) {
	for _, c := range diffCases {
		got, err := parseDiff([]byte(c.in))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: got %v, %v; want error %q", c.name, entries(got), err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		equal(t, c.name, entries(got), c.want)
	}
}

// FuzzParseDiff: never panics; whatever parses re-encodes to an input that
// parses to the same entries, and every path is non-empty.
func FuzzParseDiff(f *testing.F) {
	for _, c := range diffCases {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := parseDiff(b)
		if err != nil {
			return
		}
		for _, e := range es {
			if e.Path == "" || e.Status == "" || (e.Added == nil) != (e.Removed == nil) {
				t.Fatalf("bad entry %+v", e)
			}
		}
		again, err := parseDiff(encodeDiff(es))
		if err != nil {
			t.Fatalf("re-encoded: %v", err)
		}
		if fmt.Sprint(entries(again)) != fmt.Sprint(entries(es)) {
			t.Fatalf("round trip: %q vs %q", entries(again), entries(es))
		}
	})
}

// encodeDiff writes entries as git diff --raw --numstat -z would.
func encodeDiff(es []Entry) []byte {
	letter := map[string]string{}
	for k, v := range statusNames {
		letter[v] = string(k)
	}
	var raw, num bytes.Buffer
	for _, e := range es {
		st := letter[e.Status]
		count := func(c *int) string {
			if c == nil {
				return "-"
			}
			return fmt.Sprint(*c)
		}
		if e.Status == "renamed" || e.Status == "copied" {
			fmt.Fprintf(&raw, ":100644 100644 a b %s%03d\x00%s\x00%s\x00", st, e.Score, e.OrigPath, e.Path)
			fmt.Fprintf(&num, "%s\t%s\t\x00%s\x00%s\x00", count(e.Added), count(e.Removed), e.OrigPath, e.Path)
		} else {
			fmt.Fprintf(&raw, ":100644 100644 a b %s\x00%s\x00", st, e.Path)
			fmt.Fprintf(&num, "%s\t%s\t%s\x00", count(e.Added), count(e.Removed), e.Path)
		}
	}
	return append(raw.Bytes(), num.Bytes()...)
}

var indexListCases = []struct {
	in      string
	want    []string
	gitlink bool
	err     string
}{
	{in: ""},
	{in: "? a\x00? dir/b c\x00? emb/\x00", want: []string{"untracked a", "untracked dir/b c", "untracked emb/ (directory)"}},
	{in: "? -dash\x00? new\nline\x00", want: []string{"untracked -dash", "untracked new\nline"}},
	// An index entry is never taken for an untracked path, whatever its name.
	{in: "H 100644 78981922613b2afb6025042ff6bd878ac1994e85 0\t? x\x00? y\x00", want: []string{"untracked y"}},
	{in: "H 160000 254b4b767bcaccd320236d7e8a088db2ef0d071f 0\tsub\x00", gitlink: true},
	{in: "M 160000 254b4b767bcaccd320236d7e8a088db2ef0d071f 2\tsub\x00S 100644 7898 0\tsparse\x00? u\x00", want: []string{"untracked u"}, gitlink: true},
	{in: "? a", err: "cut short"},
	{in: "a\x00", err: "no tag"},
	{in: "? \x00", err: "no tag"},
	{in: "? /abs\x00", err: "not repository-relative"},
	{in: "H 1006 x\x00", err: "want MODE"},
}

func TestParseIndexList(t *testing.T) {
	for _, c := range indexListCases {
		got, gitlink, err := parseIndexList([]byte(c.in))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: got %v, want error %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
		}
		equal(t, fmt.Sprintf("%q", c.in), untrackedList(got), c.want)
		if gitlink != c.gitlink {
			t.Errorf("%q: gitlink %v, want %v", c.in, gitlink, c.gitlink)
		}
	}
}

func FuzzParseIndexList(f *testing.F) {
	for _, c := range indexListCases {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		us, gitlink, err := parseIndexList(b)
		if err != nil {
			return
		}
		var again []byte
		for _, u := range us {
			if u.Path == "" || u.Path[0] == '/' || (u.Kind == "directory") != strings.HasSuffix(string(u.Path), "/") {
				t.Fatalf("bad path %q kind %q", u.Path, u.Kind)
			}
			again = append(append(append(again, "? "...), u.Path...), 0)
		}
		if gitlink {
			again = append(again, "H 160000 0 0\tsub\x00"...)
		}
		us2, gitlink2, err := parseIndexList(again)
		if err != nil || fmt.Sprint(untrackedList(us2)) != fmt.Sprint(untrackedList(us)) || gitlink2 != gitlink {
			t.Fatalf("round trip %q: %v", again, err)
		}
	})
}

var configCases = []struct {
	in   string
	want string
	err  string
}{
	{in: ""},
	{in: "local\x00core.fsmonitor\n/tmp/x\x00global\x00user.name\nA B\x00", want: "local core.fsmonitor=/tmp/x true|global user.name=A B true|"},
	{in: "local\x00filter.a b.clean\nrun\nme\x00worktree\x00core.bare\x00", want: "local filter.a b.clean=run\nme true|worktree core.bare= false|"},
	{in: "local\x00key", err: "cut short"},
	{in: "local", err: "cut short"},
	{in: "\x00k\x00", err: "empty scope"},
	{in: "local\x00\nvalue\x00", err: "empty key"},
}

func TestParseConfigList(t *testing.T) {
	for _, c := range configCases {
		got, err := parseConfigList([]byte(c.in))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: got %v, want error %q", c.in, err, c.err)
			}
			continue
		}
		var s string
		for _, e := range got {
			s += fmt.Sprintf("%s %s=%s %v|", e.Scope, e.Key, e.Value, e.HasValue)
		}
		if err != nil || s != c.want {
			t.Errorf("%q: got %q, %v; want %q", c.in, s, err, c.want)
		}
	}
}

func FuzzParseConfigList(f *testing.F) {
	for _, c := range configCases {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := parseConfigList(b)
		if err != nil {
			return
		}
		var again []byte
		for _, e := range es {
			if e.Scope == "" || e.Key == "" || strings.ContainsRune(e.Key, '\n') {
				t.Fatalf("bad entry %+v", e)
			}
			again = append(again, e.Scope+"\x00"+e.Key...)
			if e.HasValue {
				again = append(again, "\n"+e.Value...)
			}
			again = append(again, 0)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("round trip %q -> %q", b, again)
		}
	})
}

// FuzzPathJSON: a path's JSON string is the path, or, for bytes that are
// not UTF-8, its lossy form beside the exact bytes in base64.
func FuzzPathJSON(f *testing.F) {
	for _, s := range []string{"plain", "q\"b\\s", "new\nline\ttab\r\x00\x1f", "ünï\u2028", "bad\xff", "<&>", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := Untracked{Path: Path(s), PathBase64: base64Of(Path(s)), Status: "untracked"}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var back struct{ Path, PathBase64 string }
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%q -> %s: %v", s, b, err)
		}
		if back.Path != strings.ToValidUTF8(s, "\uFFFD") {
			t.Fatalf("%q -> %s", s, b)
		}
		if utf8.ValidString(s) != (back.PathBase64 == "") {
			t.Fatalf("%q: base64 %q", s, back.PathBase64)
		}
		if back.PathBase64 != "" {
			raw, err := base64Decode(back.PathBase64)
			if err != nil || string(raw) != s {
				t.Fatalf("%q -> %s", s, b)
			}
		}
	})
}
