package patch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/workspace"
)

// workspaceWith writes files into a fresh directory and opens it.
func workspaceWith(t *testing.T, files map[string]string) *workspace.Root {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func planFor(t *testing.T, root *workspace.Root, script string) *plan {
	t.Helper()
	s, fails := Parse(script)
	if len(fails) > 0 {
		t.Fatalf("parse: %+v", fails)
	}
	pl, err := build(context.Background(), root, s)
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

// ref returns LINE:HASH of text at line.
func ref(line int, text string) string { return rows.RefOf(line, []byte(text)).String() }

func TestResolveContent(t *testing.T) {
	cases := []struct {
		name, file, script, want string
	}{
		{"design example", "alpha\nbeta\ngamma\nbeta\n",
			"type \"beta\" 2 \"BETA\"\nadd 1:8ed3 \"first\\n\"\nadd EOF <<PATCH\ndelta\nPATCH\n",
			"first\nalpha\nBETA\ngamma\nBETA\ndelta\n"},
		{"crlf keeps terminator", "alpha\r\nbeta\r\ngamma\r\n", "type 2:f44e \"BETA\"\n", "alpha\r\nBETA\r\ngamma\r\n"},
		{"cr keeps terminator", "alpha\rbeta\rgamma\r", "type 2:f44e \"BETA\"\n", "alpha\rBETA\rgamma\r"},
		{"mixed: range takes its last terminator", "alpha\r\nbeta\ngamma\r\n", "type 1:8ed3..2:f44e \"x\"\n", "x\ngamma\r\n"},
		{"unterminated last stays", "alpha\nbeta\ngamma", "type 3:be9d \"G\"\n", "alpha\nbeta\nG"},
		{"value supplies terminator", "alpha\nbeta\ngamma", "type 3:be9d \"G\\n\"\n", "alpha\nbeta\nG\n"},
		{"value supplies its own style", "alpha\r\nbeta\r\n", "type 1:8ed3 \"a\\n\"\n", "a\nbeta\r\n"},
		{"delete range with terminators", "alpha\nbeta\ngamma\n", "type 1:8ed3..2:f44e \"\"\n", "gamma\n"},
		{"delete unterminated last", "alpha\nbeta\ngamma", "type 3:be9d \"\"\n", "alpha\nbeta\n"},
		{"heredoc replaces with its lines", "alpha\nbeta\ngamma\n", "type 2:f44e <<PATCH\nb1\nb2\nPATCH\n", "alpha\nb1\nb2\ngamma\n"},
		{"empty heredoc deletes", "alpha\nbeta\ngamma\n", "type 2:f44e <<PATCH\nPATCH\n", "alpha\ngamma\n"},
		{"eof drops final newline", "alpha\nbeta\n", "type EOF \"\"\n", "alpha\nbeta"},
		{"eof drops final CRLF", "alpha\r\nbeta\r\n", "type EOF \"\"\n", "alpha\r\nbeta"},
		{"eof adds final newline", "alpha\nbeta", "type EOF \"\\n\"\n", "alpha\nbeta\n"},
		{"eof with last line edit", "alpha\nbeta\n", "type 2:f44e \"b\"\ntype EOF \"\"\n", "alpha\nb"},
		{"eof after deleting the last line", "alpha\nbeta\n", "type 2:f44e \"\"\ntype EOF \"\"\n", "alpha"},
		{"add takes the row's terminator", "alpha\r\nbeta\r\n", "add 2:f44e \"x\"\n", "alpha\r\nx\r\nbeta\r\n"},
		{"add before unterminated last", "alpha\r\nbeta", "add 2:f44e \"x\"\n", "alpha\r\nx\r\nbeta"},
		{"add at EOF is literal", "alpha", "add EOF \"\\nz\"\n", "alpha\nz"},
		{"insertions keep script order", "alpha\n", "add 1:8ed3 \"1\"\nadd 1:8ed3 \"2\"\ntype 1:8ed3 \"A\"\n", "1\n2\nA\n"},
		{"anchored text", "beta\nbeta beta\n", "type 2:" + rows.Hash([]byte("beta beta")) + " \"beta\" 2 \"B\"\n", "beta\nB B\n"},
		{"text spans lines", "alpha\nbeta\n", "type \"a\\nb\" \"A-B\"\n", "alphA-Beta\n"},
		{"text keeps terminators", "a=1\r\nb=2\r\n", "type \"=2\" \"=3\"\n", "a=1\r\nb=3\r\n"},
		{"add before text", "f(x)\n", "add \"x\" \"y, \"\n", "f(y, x)\n"},
		{"bom and other lines kept", "\ufeffalpha\nbeta\n", "type 2:f44e \"B\"\n", "\ufeffalpha\nB\n"},
		{"bom line by its own hash", "\ufeffalpha\nbeta\n", "type " + ref(1, "\ufeffalpha") + " \"\ufeffA\"\n", "\ufeffA\nbeta\n"},
		{"equal edit is a no-op", "alpha\nbeta\n", "type 2:f44e \"beta\"\n", "alpha\nbeta\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := workspaceWith(t, map[string]string{"f.txt": c.file})
			pl := planFor(t, root, "in f.txt\n"+c.script)
			if len(pl.fails) > 0 {
				t.Fatalf("failures: %+v", pl.fails)
			}
			if got := string(pl.files[0].view.Bytes()); got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
			if pl.files[0].diff != (c.file != c.want) {
				t.Fatalf("diff = %v", pl.files[0].diff)
			}
		})
	}
}

func TestResolveFiles(t *testing.T) {
	root := workspaceWith(t, map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n", "c.txt": "gamma\n"})
	pl := planFor(t, root, "in a.txt\nmv d/e/moved.txt\ntype 1:8ed3 \"A\"\nin b.txt\nrm\nnew b.txt\ntype \"fresh\\n\"\nnew x/y.txt\nadd EOF \"y\\n\"\nin c.txt\n")
	if len(pl.fails) > 0 {
		t.Fatalf("%+v", pl.fails)
	}
	got := map[string]string{}
	for _, f := range pl.files {
		st := "write " + string(f.view.Bytes())
		if f.deleted {
			st = "delete"
		}
		got[f.origin+">"+f.dest] = st
	}
	want := map[string]string{
		"a.txt>d/e/moved.txt": "write A\n", "b.txt>b.txt": "delete", ">b.txt": "write fresh\n", ">x/y.txt": "write y\n", "c.txt>c.txt": "write gamma\n",
	}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q want %q", k, got[k], v)
		}
	}
}

func TestResolveFailures(t *testing.T) {
	files := map[string]string{
		"f.txt":   "alpha\nbeta\ngamma\nbeta\n",
		"g.txt":   "one\n",
		"bin.dat": "\xff\xfe",
	}
	cases := []struct {
		name   string
		script string
		want   []wantFail
		rows   string // lines of the first failure's repair rows, comma separated
	}{
		{"row missing", "in f.txt\ntype 9:0000 \"x\"\n", []wantFail{{2, ReasonRowMissing, "past the end: the file has 4 lines; no line has hash 0000"}}, "2,3,4"},
		{"past the end, hash elsewhere", "in f.txt\ntype 9:8ed3 \"x\"\n", []wantFail{{2, ReasonRowStale, "9:8ed3 is past the end: the file has 4 lines; its hash is on line 1 only"}}, "1,2,3,4"},
		{"past the end, hash twice", "in f.txt\nadd 7:f44e \"x\"\n", []wantFail{{2, ReasonRowStale, "its hash is on 2 lines (2, 4)"}}, "2,3,4"},
		{"range past the end, one end nowhere", "in f.txt\ntype 5:8ed3..6:0000 \"x\"\n", []wantFail{{2, ReasonRowMissing, "6:0000 is past the end"}}, "1,2,3,4"},
		{"row stale", "in f.txt\ntype 2:8ed3 \"x\"\n", []wantFail{{2, ReasonRowStale, "line 2 is now 2:f44e"}}, "1,2,3,4"},
		{"stale with twins", "in f.txt\ntype 1:f44e \"x\"\n", []wantFail{{2, ReasonRowStale, "on 2 lines (2, 4)"}}, "1,2,3,4"},
		{"too few matches", "in f.txt\ntype \"beta\" 3 \"x\"\n", []wantFail{{2, ReasonOccurrence, "occurs 2 times in the file, 3 wanted"}}, "2,4"},
		{"anchored after last match", "in f.txt\ntype 3:be9d \"alpha\" \"x\"\n", []wantFail{{2, ReasonOccurrence, "from line 3 on"}}, "3,4"},
		{"overlap", "in f.txt\ntype 1:8ed3..2:f44e \"x\"\ntype 2:f44e..3:be9d \"y\"\n", []wantFail{{3, ReasonConflict, "overlaps the target of command 2"}}, "1,2,3,4"},
		{"same row twice", "in f.txt\ntype 2:f44e \"x\"\ntype \"et\" \"y\"\n", []wantFail{{3, ReasonConflict, "overlaps"}}, ""},
		{"insert inside", "in f.txt\ntype 1:8ed3..3:be9d \"x\"\nadd 2:f44e \"y\"\n", []wantFail{{3, ReasonConflict, "inserts inside"}}, ""},
		{"two eof", "in f.txt\ntype EOF \"\"\ntype EOF \"\\n\"\n", []wantFail{{3, ReasonConflict, "final terminator"}}, ""},
		{"missing file", "in nope.txt\ntype 1:8ed3 \"x\"\n", []wantFail{{1, ReasonFilePath, "not_found"}}, ""},
		{"outside", "in ../x\n", []wantFail{{1, ReasonFilePath, "outside_workspace"}}, ""},
		{"not utf8", "in bin.dat\n", []wantFail{{1, ReasonFilePath, "not UTF-8"}}, ""},
		{"directory", "in .\n", []wantFail{{1, ReasonFilePath, "root"}}, ""},
		{"new over existing", "new g.txt\n", []wantFail{{1, ReasonFilePath, "already exists"}}, ""},
		{"mv onto existing", "in f.txt\nmv g.txt\n", []wantFail{{2, ReasonFilePath, "already exists"}}, ""},
		{"new under a file", "new g.txt/x\n", []wantFail{{1, ReasonFilePath, "not a directory"}}, ""},
		{"in after rm", "in g.txt\nrm\nin g.txt\n", []wantFail{{3, ReasonFilePath, "moved or deleted"}}, ""},
		{"new twice", "new n.txt\nnew n.txt\n", []wantFail{{2, ReasonFilePath, "taken"}}, ""},
		{"rows in a new file", "new n.txt\ntype 1:8ed3 \"x\"\n", []wantFail{{2, ReasonInitialization, "n.txt is created by this script (command 1) and has no rows or text to target: a new file takes its content from type VALUE"}}, ""},
		{"text in a new file", "new n.txt\ntype \"x\" \"\"\nadd \"y\" \"z\"\n", []wantFail{{2, ReasonInitialization, "created by this script"}, {3, ReasonInitialization, "created by this script"}}, ""},
		{"row in a new file after init and mv", "new n.txt\ntype \"alpha\\n\"\nmv m.txt\nadd 1:8ed3 \"x\"\n", []wantFail{{4, ReasonInitialization, "m.txt is created by this script (command 1)"}}, ""},
		{"new file selected again", "new n.txt\nin g.txt\nin n.txt\ntype 1:8ed3..2:f44e \"x\"\n", []wantFail{{4, ReasonInitialization, "created by this script"}}, ""},
		{"rm after an edit", "in f.txt\ntype 1:8ed3 \"X\"\nrm\n", []wantFail{{3, ReasonConflict, "rm would discard the edit of command 2 to f.txt"}}, ""},
		{"rm after edits, selected again", "in f.txt\nadd EOF \"z\"\ntype EOF \"\"\nin g.txt\nin f.txt\nrm\n", []wantFail{{6, ReasonConflict, "the edits of commands 2, 3 to f.txt"}}, ""},
		{"rm after a moved edit", "in g.txt\ntype " + ref(1, "one") + " \"1\"\nmv h.txt\nrm\n", []wantFail{{4, ReasonConflict, "command 2 to h.txt"}}, ""},
		{"reversed range", "in f.txt\ntype 3:be9d..1:8ed3 \"x\"\n", []wantFail{{2, ReasonTargetOrder, "the range 3:be9d..1:8ed3 ends before it starts: its rows are lines 3 and 1"}}, "1,2,3"},
		{"reversed range, stale rows", "in f.txt\ntype 3:f44e..1:be9d \"x\"\n", []wantFail{{2, ReasonRowStale, "3:f44e is stale"}}, "1,2,3,4"},
		{"reversed range past the end", "in f.txt\ntype 9:0000..2:f44e \"x\"\n", []wantFail{{2, ReasonRowMissing, "9:0000 is past the end"}}, "1,2,3,4"},
		{"same line, two hashes", "in f.txt\ntype 2:8ed3..2:f44e \"x\"\n", []wantFail{{2, ReasonRowStale, "2:8ed3 is stale: line 2 is now 2:f44e"}}, "1,2,3,4"},
		{"row and text failures together", "in f.txt\ntype 7:0000 \"x\"\nin g.txt\ntype \"zzz\" \"y\"\nin f.txt\ntype 3:0000 \"z\"\n",
			[]wantFail{{2, ReasonRowMissing, ""}, {4, ReasonOccurrence, ""}, {6, ReasonRowStale, ""}}, "2,3,4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := workspaceWith(t, files)
			pl := planFor(t, root, c.script)
			checkFails(t, pl.fails, c.want)
			if c.rows != "" {
				var got []string
				for _, r := range pl.fails[0].Rows {
					got = append(got, itoa(r.Line))
					if r.Hash != rows.Hash([]byte(r.Text)) {
						t.Errorf("row %+v is not verified", r)
					}
				}
				if strings.Join(got, ",") != c.rows {
					t.Errorf("repair rows %v, want %s", got, c.rows)
				}
			}
		})
	}
}

func itoa(n int) string { return rows.Ref{Line: n}.String()[:len(rows.Ref{Line: n}.String())-1] }

func TestRelocation(t *testing.T) {
	base := "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n"
	shifted := "new1\nnew2\n" + base
	r := func(n int) string { return ref(n, "l"+itoa(n)) }
	cases := []struct {
		name, script, want string
		fail               string
	}{
		{"range both ends shift together", "type " + r(3) + ".." + r(5) + " \"X\"\n", "new1\nnew2\nl1\nl2\nX\nl6\nl7\nl8\n", ""},
		{"two rows agree", "type " + r(2) + " \"A\"\ntype " + r(7) + " \"B\"\n", "new1\nnew2\nl1\nA\nl3\nl4\nl5\nl6\nB\nl8\n", ""},
		{"row plus anchored text agree", "type " + r(2) + " \"A\"\ntype " + r(6) + " \"6\" \"six\"\n", "new1\nnew2\nl1\nA\nl3\nl4\nl5\nlsix\nl7\nl8\n", ""},
		{"single stale row is not enough", "type " + r(2) + " \"A\"\n", "", ReasonRowStale},
		{"rows that disagree", "type " + r(2) + " \"A\"\ntype " + ref(3, "l7") + " \"B\"\n", "", ReasonRowStale},
		{"a moved range, reversed", "type " + r(5) + ".." + r(3) + " \"X\"\n", "", ReasonTargetOrder},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := workspaceWith(t, map[string]string{"f.txt": shifted})
			pl := planFor(t, root, "in f.txt\n"+c.script)
			if c.fail != "" {
				if len(pl.fails) == 0 || pl.fails[0].Reason != c.fail {
					t.Fatalf("want %s, got %+v", c.fail, pl.fails)
				}
				return
			}
			if len(pl.fails) > 0 {
				t.Fatalf("%+v", pl.fails)
			}
			if got := string(pl.files[0].view.Bytes()); got != c.want {
				t.Fatalf("got %q want %q", got, c.want)
			}
		})
	}
	// A hash that occurs twice never relocates, even with agreement.
	root := workspaceWith(t, map[string]string{"f.txt": "x\ny\nl1\nl2\nl1\n"})
	pl := planFor(t, root, "in f.txt\ntype "+ref(1, "l1")+".."+ref(2, "l2")+" \"X\"\n")
	if len(pl.fails) != 1 || pl.fails[0].Reason != ReasonRowStale {
		t.Fatalf("%+v", pl.fails)
	}
}
