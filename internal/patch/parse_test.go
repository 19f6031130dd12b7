package patch

import (
	"strings"
	"testing"
)

func TestParseCommands(t *testing.T) {
	src := "in notes.txt\n" +
		"type \"beta\" 2 \"BETA\"\n" +
		"\n" +
		"add 1:8ed3 \"first\\n\"\n" +
		"add EOF <<PATCH\n" +
		"delta\n" +
		"PATCH\n" +
		"type 3:be9d..4:f44e \"x\"\n" +
		"type 2:f44e \"et\" \"ET\"\n" +
		"type 2:f44e \"e\" 3 \"E\"\n" +
		"add \"gamma\" \"g\"\n" +
		"type EOF \"\"\n" +
		"mv \"dir/new name.txt\"\n" +
		"rm\n" +
		"new a b.txt\n" +
		"type <<PATCH\n" +
		"PATCH-like\n" +
		" PATCH\n" +
		"PATCH \n" +
		"PATCH\n" +
		"in a.txt\r\n" +
		"type 1:8ed3 \"tab\there\"\r\n"
	s, fails := Parse(src)
	if len(fails) != 0 {
		t.Fatalf("unexpected failures: %+v", fails)
	}
	want := []struct {
		k      kind
		line   int
		path   string
		tk     TargetKind
		needle string
		count  int
		value  string
	}{
		{kindIn, 1, "notes.txt", 0, "", 0, ""},
		{kindType, 2, "", TargetText, "beta", 2, "BETA"},
		{kindAdd, 4, "", TargetRows, "", 0, "first\n"},
		{kindAdd, 5, "", TargetEOF, "", 0, "delta\n"},
		{kindType, 8, "", TargetRows, "", 0, "x"},
		{kindType, 9, "", TargetText, "et", 1, "ET"},
		{kindType, 10, "", TargetText, "e", 3, "E"},
		{kindAdd, 11, "", TargetText, "gamma", 1, "g"},
		{kindType, 12, "", TargetEOF, "", 0, ""},
		{kindMv, 13, "dir/new name.txt", 0, "", 0, ""},
		{kindRm, 14, "", 0, "", 0, ""},
		{kindNew, 15, "a b.txt", 0, "", 0, ""},
		{kindInit, 16, "", 0, "", 0, "PATCH-like\n PATCH\nPATCH \n"},
		{kindIn, 21, "a.txt", 0, "", 0, ""},
		{kindType, 22, "", TargetRows, "", 0, "tab\there"},
	}
	if len(s.Commands) != len(want) {
		t.Fatalf("got %d commands, want %d: %+v", len(s.Commands), len(want), s.Commands)
	}
	for i, w := range want {
		c := s.Commands[i]
		if c.N != i+1 || c.Kind != w.k || c.Line != w.line || c.Path != w.path || c.Target.Kind != w.tk || c.Target.Needle != w.needle || c.Target.Count != w.count || c.Value != w.value {
			t.Errorf("command %d = %+v, want %+v", i+1, c, w)
		}
	}
	if c := s.Commands[4]; c.Target.Span.Start.Line != 3 || c.Target.Span.End.Hash != "f44e" {
		t.Errorf("range = %+v", c.Target.Span)
	}
	if c := s.Commands[5]; !c.Target.Anchored || c.Target.Anchor.Line != 2 {
		t.Errorf("anchor = %+v", c.Target)
	}
}

func TestParseCRLFHeredocKeepsTerminators(t *testing.T) {
	s, fails := Parse("in a\r\nadd EOF <<PATCH\r\nx\r\ny\n\rz\r\nPATCH\r\n")
	if len(fails) != 0 {
		t.Fatal(fails)
	}
	if got := s.Commands[1].Value; got != "x\r\ny\n\rz\r\n" {
		t.Fatalf("value %q", got)
	}
}

type wantFail struct {
	n      int
	reason string
	msg    string // substring
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want []wantFail
	}{
		{"unknown verb", "in a\nedit 1:8ed3 \"x\"\n", []wantFail{{2, ReasonSyntax, "unknown command"}}},
		{"no value", "in a\ntype 1:8ed3\n", []wantFail{{2, ReasonSyntax, "must end with its value"}}},
		{"bad row", "in a\ntype 01:8ed3 \"x\"\n", []wantFail{{2, ReasonSyntax, "malformed target"}}},
		{"bad hash", "in a\ntype 1:8ED3 \"x\"\n", []wantFail{{2, ReasonSyntax, "malformed target"}}},
		{"count zero", "in a\ntype \"b\" 0 \"x\"\n", []wantFail{{2, ReasonInvalidCount, `count "0"`}}},
		{"count leading zero", "in a\ntype \"b\" 02 \"x\"\n", []wantFail{{2, ReasonInvalidCount, "02"}}},
		{"count negative", "in a\ntype \"b\" -1 \"x\"\n", []wantFail{{2, ReasonInvalidCount, "-1"}}},
		{"count huge", "in a\ntype \"b\" 99999999999999999999 \"x\"\n", []wantFail{{2, ReasonInvalidCount, "99999"}}},
		{"count word", "in a\ntype \"b\" two \"x\"\n", []wantFail{{2, ReasonInvalidCount, `count "two" is not a number`}}},
		{"count a row", "in a\ntype 1:8ed3 \"b\" 2:f44e \"x\"\n", []wantFail{{2, ReasonInvalidCount, `count "2:f44e"`}}},
		{"count plus", "in a\ntype \"b\" +2 \"x\"\n", []wantFail{{2, ReasonInvalidCount, `"+2"`}}},
		{"count then junk", "in a\ntype \"b\" 2 3 \"x\"\n", []wantFail{{2, ReasonSyntax, "too many operands"}}},
		{"body not UTF-8", "in a\ntype 1:8ed3 <<PATCH\nok\nb\xffd\nPATCH\n", []wantFail{{2, ReasonSyntax, "not UTF-8: script line 4, byte 2"}}},
		{"body not UTF-8 at its start", "in a\nadd EOF <<PATCH\n\xc3\nPATCH\n", []wantFail{{2, ReasonSyntax, "script line 3, byte 1"}}},
		{"body cut sequence, CRLF script", "in a\r\nadd EOF <<PATCH\r\nx\r\ny \xe2\x82\r\nPATCH\r\n", []wantFail{{2, ReasonSyntax, "script line 4, byte 3"}}},
		{"bad header and bad body", "in a\ntype 1:8ed3 <<EOF\n\xff\nEOF\n", []wantFail{{2, ReasonSyntax, "must be <<PATCH; the <<PATCH body is not UTF-8"}}},
		{"empty needle", "in a\ntype \"\" \"x\"\n", []wantFail{{2, ReasonSyntax, "cannot be empty"}}},
		{"CR needle", "in a\ntype \"a\\r\" \"x\"\n", []wantFail{{2, ReasonSyntax, "CR"}}},
		{"control needle", "in a\ntype \"a\\u0001\" \"x\"\n", []wantFail{{2, ReasonSyntax, "control"}}},
		{"add range", "in a\nadd 1:8ed3..2:f44e \"x\"\n", []wantFail{{2, ReasonSyntax, "not a range"}}},
		{"bad escape", "in a\ntype 1:8ed3 \"\\q\"\n", []wantFail{{2, ReasonSyntax, "unknown escape"}}},
		{"unterminated string", "in a\ntype 1:8ed3 \"abc\n", []wantFail{{2, ReasonSyntax, "unterminated string"}}},
		{"lone surrogate", "in a\ntype 1:8ed3 \"\\ud800\"\n", []wantFail{{2, ReasonSyntax, "surrogate"}}},
		{"raw control in value", "in a\ntype 1:8ed3 \"a\x01\"\n", []wantFail{{2, ReasonSyntax, "control character"}}},
		{"junk after string", "in a\ntype 1:8ed3 \"a\"b\n", []wantFail{{2, ReasonSyntax, "followed by a space"}}},
		{"type before in", "type 1:8ed3 \"x\"\n", []wantFail{{1, ReasonActiveFile, "selected file"}}},
		{"rm before in", "rm\n", []wantFail{{1, ReasonActiveFile, "selected file"}}},
		{"mv before in", "mv b\n", []wantFail{{1, ReasonActiveFile, "selected file"}}},
		{"type after rm", "in a\nrm\nadd EOF \"x\"\n", []wantFail{{3, ReasonActiveFile, "selected file"}}},
		{"init after in", "in a\ntype \"x\"\n", []wantFail{{2, ReasonInitialization, "directly after new"}}},
		{"init twice", "new a\ntype \"x\"\ntype \"y\"\n", []wantFail{{3, ReasonInitialization, "at most once"}}},
		{"init after add", "new a\nadd EOF \"x\"\ntype \"y\"\n", []wantFail{{3, ReasonInitialization, "directly after new"}}},
		{"rm operand", "in a\nrm b\n", []wantFail{{2, ReasonSyntax, "no operands"}}},
		{"missing path", "in\n", []wantFail{{1, ReasonSyntax, "missing PATH"}}},
		{"quoted path extra", "in \"a\" b\n", []wantFail{{1, ReasonSyntax, "only operand"}}},
		{"EOF extra", "in a\nadd EOF \"x\" \"y\"\n", []wantFail{{2, ReasonSyntax, "EOF takes no"}}},
		{"heredoc not last", "in a\ntype 1:8ed3 <<PATCH \"x\"\nbody\nPATCH\n", []wantFail{{2, ReasonSyntax, "last operand"}}},
		{"unclosed heredoc", "in a\nadd EOF <<PATCH\nrm\n", []wantFail{{2, ReasonSyntax, "never closed"}}},
		{"two heredocs", "in a\ntype 1:8ed3 <<PATCH <<PATCH\nx\nPATCH\n", []wantFail{{2, ReasonSyntax, "at most one heredoc"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, fails := Parse(c.src)
			checkFails(t, fails, c.want)
		})
	}
}

func checkFails(t *testing.T, fails []Failure, want []wantFail) {
	t.Helper()
	if len(fails) != len(want) {
		t.Fatalf("got %d failures %+v, want %d", len(fails), fails, len(want))
	}
	for i, w := range want {
		f := fails[i]
		if f.Command != w.n || f.Reason != w.reason || !strings.Contains(f.Message, w.msg) {
			t.Errorf("failure %d = %+v, want command %d reason %s message ~%q", i, f, w.n, w.reason, w.msg)
		}
	}
}

// A malformed heredoc header still owns its body: none of the body's lines
// (which look like commands here) may be parsed as commands.
func TestParseBadHeredocHeaderSwallowsBody(t *testing.T) {
	for _, header := range []string{
		"type 1:8ed3 <<EOF", "type 1:8ed3 << PATCH", "type 1:8ed3 <<patch", "type 1:8ed3 <<PATCH extra",
		"type 1:8ed3 \"broken <<PATCH", "tpye 1:8ed3 <<PATCH", "type 1:zzzz <<PATCH", "in a <<PATCH",
	} {
		marker := "PATCH"
		if strings.Contains(header, "<<EOF") {
			marker = "EOF"
		} else if strings.Contains(header, "<<patch") {
			marker = "patch"
		}
		src := "in a\n" + header + "\nrm\nin /etc/passwd\nbogus\n" + marker + "\nadd EOF \"z\"\n"
		s, fails := Parse(src)
		if len(fails) != 1 || fails[0].Command != 2 {
			t.Errorf("%q: failures %+v, want exactly one on command 2", header, fails)
			continue
		}
		if len(s.Commands) != 2 || s.Commands[1].Kind != kindAdd || s.Commands[1].N != 3 {
			t.Errorf("%q: commands %+v, want in and the add after the body", header, s.Commands)
		}
	}
}

// Every independent error is reported, each with its command number.
func TestParseReportsEveryError(t *testing.T) {
	src := "in a\n" +
		"type 1:8ed3\n" + // 2
		"type \"x\" 0 \"y\"\n" + // 3
		"add 9:zzzz \"y\"\n" + // 4
		"type 1:8ed3 \"ok\"\n" + // 5 fine
		"frob\n" + // 6
		"type 5:8ed3..2:8ed3 \"v\"\n" // 7: its order is judged once its rows resolve
	_, fails := Parse(src)
	checkFails(t, fails, []wantFail{
		{2, ReasonSyntax, ""}, {3, ReasonInvalidCount, ""}, {4, ReasonSyntax, ""}, {6, ReasonSyntax, ""},
	})
	if fails[0].Path != "a" || fails[0].Op != "type" || fails[3].Op != "script" {
		t.Errorf("failure context: %+v", fails)
	}
	if got := fails[0].Line(); got != `type: command 2, path "a", reason script-syntax: type must end with its value, a JSON string or <<PATCH (got "1:8ed3")` {
		t.Errorf("line %q", got)
	}
}

// A range parses whatever the order of its numbers: the planner judges
// the order of the rows it resolves to.
func TestParseRangeOrderLeftToResolution(t *testing.T) {
	for _, src := range []string{"in a\ntype 4:8ed3..2:f44e \"x\"\n", "in a\ntype 2:8ed3..2:f44e \"x\"\n"} {
		s, fails := Parse(src)
		if len(fails) != 0 || len(s.Commands) != 2 || s.Commands[1].Target.Kind != TargetRows {
			t.Errorf("%q: %+v %+v", src, s.Commands, fails)
		}
	}
}

func TestScanStringMatchesJSON(t *testing.T) {
	for _, s := range []string{`"a"`, `"\u00e9\ud83d\ude00"`, `"\/\b\f\n\r\t\\\""`, `"tab	"`, `"héllo"`, `""`} {
		v, n, bad := scanString(s)
		if bad != "" || n != len(s) {
			t.Errorf("%s: %q %d %q", s, v, n, bad)
		}
	}
	if v, _, _ := scanString(`"\u00e9\ud83d\ude00"`); v != "é😀" {
		t.Errorf("got %q", v)
	}
}
