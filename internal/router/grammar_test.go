package router

import (
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/rowkit/rowkit/internal/patch"
)

// The hpatch tool's grammar is only ever executed by OpenAI's servers, so
// it is proven here against the one authority on HPATCH/2, rowkit's parser:
// Debian's python3-lark runs it over every file of every testscript archive
// (the hpatch scripts they apply and, as rejected input, everything else),
// over generated scripts and over mutations of the accepted ones. The
// grammar must accept every script patch.Parse accepts, and reject every
// script patch.Parse rejects, except those whose every failure is one of
// the values the grammar leaves to the parser (valueOnly).
func TestGrammarMatchesParser(t *testing.T) {
	python := larkPython(t)
	var cases []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] && utf8.ValidString(s) {
			seen[s] = true
			cases = append(cases, s)
		}
	}
	archives, _ := filepath.Glob("../../testdata/script/*.txtar")
	if len(archives) == 0 {
		t.Fatal("no testscript archives found")
	}
	fromArchives := 0
	for _, name := range archives {
		a, err := txtar.ParseFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range a.Files {
			add(string(f.Data))
			fromArchives++
		}
	}
	rng := rand.New(rand.NewPCG(20, 169))
	for range 2000 {
		add(genScript(rng))
	}
	var accepted []string
	for _, s := range cases {
		if ok, _ := parserAccepts(s); ok {
			accepted = append(accepted, s)
		}
	}
	for range 2000 {
		add(mutate(rng, accepted[rng.IntN(len(accepted))]))
	}

	// A range that ends before it starts passes the grammar (no
	// context-free grammar compares numbers); the parser rejects it with
	// target-order. Those scripts are left out of the comparison.
	var want []bool
	var checked []string
	skipped, nAccepted := 0, 0
	for _, s := range cases {
		ok, order := parserAccepts(s)
		if order {
			skipped++
			continue
		}
		checked = append(checked, s)
		want = append(want, ok)
		if ok {
			nAccepted++
		}
	}
	if nAccepted < len(checked)/5 || nAccepted > len(checked)*4/5 {
		t.Fatalf("the corpus is lopsided: %d of %d scripts accepted", nAccepted, len(checked))
	}
	got, version := runLark(t, python, checked, "dynamic")
	t.Logf("lark %s: %d scripts (%d files of %d archives), %d accepted by the parser, %d with a reversed range left out",
		version, len(checked), fromArchives, len(archives), nAccepted, skipped)
	bad, relaxed := 0, map[string]int{}
	for i, s := range checked {
		if got[i] && !want[i] {
			_, fails := patch.Parse(s)
			if class := valueOnly(fails); class != "" {
				relaxed[class]++
				continue
			}
		}
		if got[i] != want[i] {
			bad++
			if bad <= 15 {
				_, fails := patch.Parse(s)
				t.Errorf("grammar %v, parser %v (%s) on %q", got[i], want[i], reasons(fails), s)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d scripts disagree", bad, len(checked))
	}
	t.Logf("accepted by the grammar, refused by the parser for a value: %v", relaxed)
	for _, class := range []string{"line number", "count", "surrogate", "control character in a text target", "type EOF value"} {
		if relaxed[class] == 0 {
			t.Errorf("no script probes the grammar's %s", class)
		}
	}

	// Lark's dynamic lexer takes one match per terminal and position;
	// dynamic_complete tries every split. They agree on the short scripts
	// (the slow mode is quadratic), so no answer above hangs on the order
	// Python's regex engine tries alternatives in.
	var short []string
	var shortWant []bool
	for i, s := range checked {
		if len(s) <= 120 && len(short) < 1000 {
			short = append(short, s)
			shortWant = append(shortWant, got[i])
		}
	}
	complete, _ := runLark(t, python, short, "dynamic_complete")
	for i, s := range short {
		if complete[i] != shortWant[i] {
			t.Errorf("dynamic_complete: %v, dynamic %v on %q", complete[i], shortWant[i], s)
		}
	}
}

// valueOnly names the class of value the grammar leaves to the parser
// when every one of fails is of that class, and is "" otherwise: a line
// number past 2^63-1 (the grammar bounds digits, not values), a count past
// 2^20, a \u escape of a lone surrogate, a control character (by escape)
// in a text target, a type EOF value other than a line terminator.
func valueOnly(fails []patch.Failure) string {
	class := ""
	for _, f := range fails {
		c := ""
		switch m := f.Message; {
		case f.Reason == patch.ReasonInvalidCount:
			c = "count"
		case strings.Contains(m, "unpaired UTF-16 surrogate"):
			c = "surrogate"
		case strings.HasPrefix(m, "a text target cannot contain"):
			c = "control character in a text target"
		case strings.HasPrefix(m, "type EOF sets the file's final terminator"):
			c = "type EOF value"
		case overflows(m):
			c = "line number"
		default:
			return ""
		}
		if class != "" && class != c {
			return "several"
		}
		class = c
	}
	return class
}

// overflowRow is the parser's message for a target or range that does not
// parse; it overflows when a line number of it is past 2^63-1.
var overflowRow = regexp.MustCompile(`^malformed (?:target|range) "([^"]*)"`)

func overflows(m string) bool {
	sub := overflowRow.FindStringSubmatch(m)
	if sub == nil {
		return false
	}
	max := new(big.Int).SetUint64(1<<63 - 1)
	over := false
	for _, row := range strings.Split(sub[1], "..") {
		n, h, ok := strings.Cut(row, ":")
		v, isNum := new(big.Int).SetString(n, 10)
		if !ok || !isNum || n[0] == '0' || !regexp.MustCompile(`^[0-9a-f]{4}$`).MatchString(h) {
			return false
		}
		over = over || v.Cmp(max) > 0
	}
	return over
}

// parserAccepts says whether patch.Parse accepts s, and whether it rejects
// it for a reversed range (target-order), which the grammar cannot see.
func parserAccepts(s string) (ok, order bool) {
	_, fails := patch.Parse(s)
	for _, f := range fails {
		if f.Reason == patch.ReasonTargetOrder {
			return false, true
		}
	}
	return len(fails) == 0, false
}

func reasons(fs []patch.Failure) string {
	var r []string
	for _, f := range fs {
		r = append(r, fmt.Sprintf("%d:%s %s", f.Command, f.Reason, f.Message))
	}
	return strings.Join(r, "; ")
}

// larkPython finds a Python that imports lark: Debian's python3-lark lives
// in /usr/bin/python3's path, which a python3 earlier on PATH (pyenv)
// does not see. scripts/test installs it.
func larkPython(t *testing.T) string {
	t.Helper()
	var tried []string
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if path, err := exec.LookPath(p); err == nil {
			if exec.Command(path, "-c", "import lark").Run() == nil {
				return path
			}
			tried = append(tried, path)
		}
	}
	t.Fatalf("no Python with lark (tried %v): install Debian's python3-lark (apt-get install python3-lark; scripts/test does)", tried)
	return ""
}

func runLark(t *testing.T, python string, scripts []string, lexer string) ([]bool, string) {
	t.Helper()
	dir := t.TempDir()
	g := filepath.Join(dir, "hpatch.lark")
	c := filepath.Join(dir, "cases.json")
	b, err := json.Marshal(scripts)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(g, []byte(Grammar()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "testdata/lark_check.py", g, c, lexer)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("lark_check.py: %v", err)
	}
	var res struct {
		Lark     string `json:"lark"`
		Accepted []bool `json:"accepted"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Accepted) != len(scripts) {
		t.Fatalf("lark_check.py answered %d of %d: %v", len(res.Accepted), len(scripts), err)
	}
	return res.Accepted, res.Lark
}

// genScript makes a script that follows the parser's rules (a file is
// selected before it is edited, an initial value comes right after new)
// from well-formed pieces, and then, mostly, swaps one piece for a piece
// that may be malformed: near misses probe each rule of the parser, its
// paths, rows, ranges, text targets and their escapes, counts, values,
// heredocs, blank lines, CR and tabs.
func genScript(rng *rand.Rand) string {
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	type pieces struct{ good, bad []string }
	ws := pieces{[]string{" ", " ", " ", "  ", "\t", " \t"}, []string{"", "\r", "\u00a0"}}
	rows := pieces{[]string{"1:8ed3", "2:f44e", "12:abcd", "9223372036854775807:0000", "1000000000000000000:1234", "1:8ed3..2:f44e", "2:f44e..2:f44e"},
		[]string{"9223372036854775808:0000", "99999999999999999999:0000", "0:abcd", "01:abcd", "1:ABCD", "1:abc", "1:abcde", "x:abcd",
			"1;abcd", "1:8ed3..", "..2:f44e", "1:8ed3..2:f44e..3:be9d", "1:8ed3.2:f44e", "eof", "EOF"}}
	needles := pieces{[]string{`"beta"`, `"a b"`, "\"tab\traw\"", `"tab\there"`, `"\u0009"`, `"\u000a"`, `"\u0020"`, `"\u007f"`, `"x\ny"`,
		`"\ud83d\ude00"`, `"\uDBFF\uDFFF"`, `"\/"`, `"\""`, `"\\"`, `"é値"`, `"PATCH"`, `"\u00e9"`, `"\uFFFF"`, `"\ue000"`, `"\ud7ff"`},
		[]string{`""`, `"a\rb"`, `"a\u000db"`, `"a\u000Db"`, `"\b"`, `"\f"`, `"\u0000"`, `"\u001f"`, `"\u000b"`, `"\ud83d"`, `"\ude00"`,
			`"\u12"`, `"\q"`, `"unterminated`, `"a"b`, "\"raw\x01\""}}
	counts := pieces{[]string{"", "", " 1", " 2", " 1048576", " 999999"}, []string{" 0", " 01", " 1048577", " 9999999", " +1", " -1", " x", " 1 2", "1"}}
	values := pieces{[]string{`"x"`, `""`, `"a\nb"`, `"\r\n"`, `"\u000d\u000A"`, `"é"`, "\"raw\ttab\"", `"\b\f\u0000"`,
		"<<PATCH\nbody\nPATCH", "<<PATCH\nPATCH", "<<PATCH\n\nPATCH", "<<PATCH\r\n\r\nPATCH", "<<PATCH\nPATCH \nPATCHx\n PATCH\nPATCH\r\r\nPATCH",
		"<<PATCH\r\nline\r\nPATCH\r", "<<PATCH  \nx\nPATCH", "<<PATCH\nin a\nrm\nPATCH", "<<PATCH\n\n\nPATCH", "<<PATCH\nP\nPA\nPAT\nPATC\nPATCH"},
		[]string{`"bad\q"`, "\"raw\x01\"", `"unterminated`, `"\ud800"`, "<<PATCH", "<<PATCH\nnever closed", "<< PATCH\nx\nPATCH",
			"<<EOF\nx\nEOF", "<<PATCH x\nPATCH", `"x" "y"`, "x"}}
	eofValues := pieces{[]string{`""`, `"\n"`, `"\r\n"`, `"\r"`, `"\u000a"`, `"\u000D\u000a"`, "<<PATCH\nPATCH", "<<PATCH\n\nPATCH", "<<PATCH\n\r\nPATCH"},
		[]string{`"\n\n"`, `"\n\r"`, `"x"`, `" "`, "<<PATCH\nx\nPATCH", "<<PATCH\n\n\nPATCH", "<<PATCH\n \nPATCH"}}
	paths := pieces{[]string{"notes.txt", "dir/b c.go", "a  b", "<x", "<", "a <x", `"q.txt"`, `a "b"`, `a "b c" d`, "\ra", "a\r", "\r b", "x\"y",
		"é.txt", "-dash", "EOF", "a\tb", `"\u0000"`, "\"tab\tin\""},
		[]string{"", `""`, "<<x", "a <<b", `"bad\x"`, `"a" b`, `a "b"c`, `a "unterminated`, "\r", "\"raw\x01\""}}
	// Each piece is taken good, except at most one, which may go wrong.
	wrong := rng.IntN(10) < 7
	get := func(p pieces) string {
		if wrong && rng.IntN(8) == 0 {
			wrong = false
			return pick(append(p.good, p.bad...)...)
		}
		return pick(p.good...)
	}
	var lines []string
	selected, fresh := false, false
	for range rng.IntN(9) {
		var l string
		wasNew := fresh
		fresh = false
		switch {
		case !selected || rng.IntN(6) == 0:
			verb := pick("in", "new")
			l = verb + get(ws) + get(paths)
			selected, fresh = true, verb == "new"
		case wasNew && rng.IntN(2) == 0:
			l = "type" + get(ws) + get(values)
		default:
			switch rng.IntN(9) {
			case 0:
				l = "mv" + get(ws) + get(paths)
			case 1:
				l = "rm"
				selected = false
			case 2:
				l = "type" + get(ws) + "EOF" + get(ws) + get(eofValues)
			case 3:
				l = "type" + get(ws) + get(rows) + get(ws) + get(values)
			case 4:
				l = "type" + get(ws) + get(needles) + get(counts) + get(ws) + get(values)
			case 5:
				l = "type" + get(ws) + get(rows) + get(ws) + get(needles) + get(counts) + get(ws) + get(values)
			case 6:
				l = "add" + get(ws) + pick("EOF", "1:8ed3", "3:be9d") + get(ws) + get(values)
			case 7:
				l = "add" + get(ws) + get(needles) + get(counts) + get(ws) + get(values)
			default:
				l = "add" + get(ws) + get(rows) + get(ws) + get(needles) + get(counts) + get(ws) + get(values)
			}
		}
		if rng.IntN(12) == 0 {
			l = pick("typo 1:8ed3 \"x\"", "type", "add", "in", "new", "type\"x\"", "#comment", "\r", "rm\r", "rm x", "ín a", "mv", "RM")
		}
		lines = append(lines, pick("", "", "", " ", "\t")+l+pick("", "", "", " ", "\t"))
		if rng.IntN(6) == 0 {
			lines = append(lines, pick("", " ", "\t", " \t "))
		}
	}
	var b strings.Builder
	for i, l := range lines {
		b.WriteString(l)
		if i < len(lines)-1 {
			b.WriteString(pick("\n", "\n", "\n", "\r\n"))
		}
	}
	if len(lines) > 0 {
		b.WriteString(pick("", "\n", "\n", "\r\n", "\r", "\r\r\n", " ", "\n\n", "\n \r"))
	}
	return b.String()
}

// mutate changes an accepted script slightly: a character inserted or
// removed, a line doubled, dropped or moved, or the last terminator cut.
func mutate(rng *rand.Rand, s string) string {
	for range 1 + rng.IntN(2) {
		lines := strings.SplitAfter(s, "\n")
		switch rng.IntN(6) {
		case 0, 1:
			i := rng.IntN(len(s) + 1)
			c := []string{" ", "\t", "\r", "\n", `"`, `\`, "<", "P", "0", "1", ":", ".", "a", "é"}[rng.IntN(14)]
			s = s[:i] + c + s[i:]
		case 2:
			if len(s) > 0 {
				i := rng.IntN(len(s))
				_, n := utf8.DecodeRuneInString(s[i:])
				s = s[:i] + s[i+n:]
			}
		case 3:
			i := rng.IntN(len(lines))
			lines = slices.Insert(lines, i, lines[i])
			s = strings.Join(lines, "")
		case 4:
			i := rng.IntN(len(lines))
			lines = slices.Delete(lines, i, i+1)
			s = strings.Join(lines, "")
		default:
			s = strings.TrimRight(s, "\r\n")
		}
	}
	return s
}
