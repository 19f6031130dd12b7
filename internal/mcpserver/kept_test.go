package mcpserver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/spool"
)

// keptNoteRE is the note that ends a search its bound cut: the bound, the
// kept output and the offset of the first row left out.
var keptNoteRE = regexp.MustCompile(`\n?\[search: output_incomplete\] ([0-9,]+-byte output|15,000-token) limit reached; continue with: read_file \{"path":"(@out/[0-9a-z]{10})","offset":([0-9]+)\}\n$`)

// keptContinueRE is the note that ends a cut view of a kept output.
var keptContinueRE = regexp.MustCompile(`\n?\[read:continue\] (@out/[0-9a-z]{10}) cut at line ([0-9]+) of ([0-9]+) lines by the [^\n]*; to continue, read offset ([0-9]+)\n$`)

// keptCappedRE is the note that ends the last view of an output kept only
// in part.
var keptCappedRE = regexp.MustCompile(`\n\[read:kept-capped\] [^\n]*\n$`)

// keptEnv is the environment of a server whose store of kept outputs is
// in a directory of the test's own.
func keptEnv(t testing.TB) func(string) (string, bool) {
	tmp := t.TempDir()
	return func(k string) (string, bool) {
		if k == "TMPDIR" {
			return tmp, true
		}
		return os.LookupEnv(k)
	}
}

// keptRoot holds files of many matches of needle: more than any client's
// bound shows, in files whose names want quoting.
func keptRoot(t testing.TB) string {
	root := canon(t, t.TempDir())
	gen := func(name string, n, every int, word string) {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			if i%every == 0 {
				fmt.Fprintf(&b, "line %d has the %s %s\n", i, word, strings.Repeat("x", i%70))
			} else {
				fmt.Fprintf(&b, "line %d is plain\n", i)
			}
		}
		write(t, filepath.Join(root, name), b.String())
	}
	gen("a.go", 4000, 3, "needle")
	gen("dir/b.txt", 3000, 2, "needle")
	gen("sp ace/ü \"q\".txt", 900, 5, "needle")
	gen("c.txt", 6000, 2, "pin")
	return root
}

// rgRows is what real ripgrep finds for pattern in root, as verified rows
// "PATH":LINE:HASH TEXT (the hash computed here), sorted.
func rgRows(t testing.TB, root, pattern string) []string {
	cmd := exec.Command("rg", "--no-config", "--no-heading", "--with-filename", "--line-number", "--color=never", "-e", pattern)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("rg: %v", err)
	}
	var rs []string
	for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		f := strings.SplitN(l, ":", 3)
		if len(f) != 3 {
			t.Fatalf("rg printed %q", l)
		}
		p, _ := json.Marshal(f[0])
		h := sha256.Sum256([]byte(f[2]))
		rs = append(rs, fmt.Sprintf("%s:%s:%s %s", p, f[1], hex.EncodeToString(h[:2]), f[2]))
	}
	slices.Sort(rs)
	return rs
}

// followKept reads the output kept as ref with read_file from offset to
// its end, each view within c's bound, and returns its lines.
func followKept(t testing.TB, cs *mcp.ClientSession, c boundClient, ref string, offset int) []string {
	t.Helper()
	var got []string
	for views := 0; ; views++ {
		if views > 200 {
			t.Fatalf("%s: more than 200 views of %s", c.name, ref)
		}
		res := callAs(t, cs, c, "read_file", map[string]any{"path": ref, "offset": offset})
		if res.IsError {
			t.Fatalf("%s: read_file %s offset %d: %s", c.name, ref, offset, text(res))
		}
		if size := len(shown(t, res)); c.bound > 0 && size > c.bound {
			t.Fatalf("%s: the view of %s at %d is %d bytes, over %d", c.name, ref, offset, size, c.bound)
		}
		body := keptCappedRE.ReplaceAllString(text(res), "")
		m := keptContinueRE.FindStringSubmatch(body)
		if m != nil {
			body = body[:len(body)-len(m[0])]
		}
		lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
		if body == "" {
			lines = nil
		}
		got = append(got, lines...)
		if m == nil {
			return got
		}
		if m[1] != ref || m[2] != fmt.Sprint(offset+len(lines)-1) || m[4] != fmt.Sprint(offset+len(lines)) || len(lines) == 0 {
			t.Fatalf("%s: a view of %d rows at %d ends %q", c.name, len(lines), offset, m[0])
		}
		offset += len(lines)
	}
}

// TestSearchKeptFollow: a search its bound cuts keeps every row it found,
// and read_file, from the offset its note names, reads them on within the
// client's bound: the rows shown and the rows read on are every row real
// ripgrep finds, each once, as verified rows. The kept output holds the
// rows shown too, from its line 1.
func TestSearchKeptFollow(t *testing.T) {
	root := keptRoot(t)
	want := rgRows(t, root, "needle")
	for _, structured := range []bool{false, true} {
		s := newTextServer(t, Options{Roots: []string{root}, Structured: structured, LookupEnv: keptEnv(t)})
		// And a server without a byte bound: the token rule cuts.
		tokenOnly := newTextServer(t, Options{Roots: []string{root}, Structured: structured, LookupEnv: keptEnv(t), OutputBytes: NoOutputBound})
		for _, c := range append(slices.Clone(boundClients), boundClient{name: "tokens", version: "1"}) {
			srv := s
			if c.bound == 0 {
				srv = tokenOnly
			}
			cs := connectAs(t, srv, c.name, c.version)
			res := callAs(t, cs, c, "search", map[string]any{"pattern": "needle"})
			if size := len(shown(t, res)); c.bound > 0 && size > c.bound {
				t.Errorf("%s structured=%v: %d bytes, over %d", c.name, structured, size, c.bound)
			}
			body := ungroup(t, text(res))
			if c.bound == 0 && !strings.Contains(body, "15,000-token limit reached") {
				t.Errorf("structured=%v: not cut by the token rule: %q", structured, tail(body, 200))
			}
			m := keptNoteRE.FindStringSubmatch(body)
			if m == nil {
				t.Fatalf("%s structured=%v: the search ends %q", c.name, structured, tail(body, 200))
			}
			shownRows := strings.Split(strings.TrimSuffix(body[:len(body)-len(m[0])], "\n"), "\n")
			next, _ := strconv.Atoi(m[3])
			if next != len(shownRows)+1 {
				t.Fatalf("%s structured=%v: %d rows shown, read on at %d", c.name, structured, len(shownRows), next)
			}
			if structured {
				inc, _ := structured2(t, res)["incomplete"].(map[string]any)
				if msg, _ := inc["message"].(string); !strings.Contains(msg, `"path":"`+m[2]+`","offset":`+m[3]) {
					t.Errorf("%s: the structured result's reason %q does not name the kept rows", c.name, msg)
				}
			}
			rest := followKept(t, cs, c, m[2], next)
			all := append(slices.Clone(shownRows), rest...)
			sorted := slices.Sorted(slices.Values(all))
			if !slices.Equal(sorted, want) {
				t.Fatalf("%s structured=%v: %d rows shown and %d read on; ripgrep finds %d (first difference %q)",
					c.name, structured, len(shownRows), len(rest), len(want), firstDiff(sorted, want))
			}
			// From line 1 the kept output is the whole result, in the
			// order shown.
			if whole := followKept(t, cs, c, m[2], 1); !slices.Equal(whole, all) {
				t.Errorf("%s structured=%v: the kept output read from line 1 has %d rows, not the %d shown and read on", c.name, structured, len(whole), len(all))
			}
			t.Logf("%s structured=%v: %d rows shown, %d read on from %s", c.name, structured, len(shownRows), len(rest), m[2])
		}
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return a[i] + " / " + b[i]
		}
	}
	return fmt.Sprintf("lengths %d / %d", len(a), len(b))
}

// TestSearchKeptConcurrent: searches that run at once, from one server and
// from two, keep their rows in one store side by side: each reads on its
// own rows, whole.
func TestSearchKeptConcurrent(t *testing.T) {
	root := keptRoot(t)
	env := keptEnv(t)
	servers := []*Server{
		newTextServer(t, Options{Roots: []string{root}, LookupEnv: env}),
		newTextServer(t, Options{Roots: []string{root}, LookupEnv: env}),
	}
	c := boundClients[1] // Codex's bound
	refs := make(chan string, 8)
	t.Run("group", func(t *testing.T) {
		for i := range 8 {
			pattern := []string{"needle", "pin", "has the"}[i%3]
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				want := rgRows(t, root, pattern)
				cs := connectAs(t, servers[i%2], c.name, c.version)
				res := callAs(t, cs, c, "search", map[string]any{"pattern": pattern})
				body := ungroup(t, text(res))
				m := keptNoteRE.FindStringSubmatch(body)
				if m == nil {
					t.Fatalf("%s: the search ends %q", pattern, tail(body, 200))
				}
				refs <- m[2]
				shownRows := strings.Split(strings.TrimSuffix(body[:len(body)-len(m[0])], "\n"), "\n")
				next, _ := strconv.Atoi(m[3])
				all := append(shownRows, followKept(t, cs, c, m[2], next)...)
				if got := slices.Sorted(slices.Values(all)); !slices.Equal(got, want) {
					t.Errorf("%s: %d rows, ripgrep finds %d (%s)", pattern, len(got), len(want), firstDiff(got, want))
				}
			})
		}
	})
	close(refs)
	seen := map[string]bool{}
	for r := range refs {
		if seen[r] {
			t.Errorf("two searches kept their rows as %s", r)
		}
		seen[r] = true
	}
}

// TestReadKeptFailures: an ID that expired, one that names nothing kept,
// and an offset past the end are failures in the MCP dialect, with their
// codes; a file of the workspace's own @out directory is read as
// ./@out/NAME.
func TestReadKeptFailures(t *testing.T) {
	root := keptRoot(t)
	write(t, filepath.Join(root, "@out", "notes.txt"), "a file of the workspace\n")
	for _, structured := range []bool{false, true} {
		s := newTextServer(t, Options{Roots: []string{root}, Structured: structured, LookupEnv: keptEnv(t)})
		cs := connectAs(t, s, "test", "1")
		c := boundClient{name: "test"}
		res := callAs(t, cs, c, "search", map[string]any{"pattern": "needle"})
		m := keptNoteRE.FindStringSubmatch(ungroup(t, text(res)))
		if m == nil {
			t.Fatalf("the search ends %q", tail(text(res), 200))
		}
		for _, tc := range []struct {
			path   string
			offset int
			code   string
			text   string
		}{
			// Made on 2025-01-01: kept for 24 hours, long gone.
			{"@out/000000abcd", 1, "expired", "expired: @out/000000abcd expired: it was kept at 2025-01-01 00:00 UTC, and outputs are kept for 24 hours; run the command again"},
			// Made in 2059: never kept.
			{"@out/yyyyyyabcd", 1, "not_found", "not_found: @out/yyyyyyabcd is not kept here"},
			{"@out/notes.txt", 1, "not_found", "not_found: @out/notes.txt is not the name of a kept output (an ID is 10 characters of 0-9 and a-z)\nhint: a file of the workspace named so is read as ./@out/notes.txt"},
			{m[2], 1 << 20, "past_eof", "past_eof: offset 1048576 is past the end of " + m[2]},
		} {
			res := callAs(t, cs, c, "read_file", map[string]any{"path": tc.path, "offset": tc.offset})
			if !res.IsError || !strings.HasPrefix(text(res), tc.text) {
				t.Errorf("structured=%v: read_file %s: error %v, %q; want %q", structured, tc.path, res.IsError, text(res), tc.text)
			}
			if structured {
				if code := failureCode(t, res); code != tc.code {
					t.Errorf("read_file %s: code %s, want %s", tc.path, code, tc.code)
				}
			}
		}
		res = callAs(t, cs, c, "read_file", map[string]any{"path": "./@out/notes.txt"})
		if res.IsError || !strings.Contains(text(res), "a file of the workspace") {
			t.Errorf("structured=%v: ./@out/notes.txt: %q", structured, text(res))
		}
	}
}

// TestReadKeptText: an output a program printed, kept by rowkit shell's
// bound, reads on through read_file as numbered lines N|TEXT, whole, each
// view within the client's bound; one kept only in part says so at its
// end.
func TestReadKeptText(t *testing.T) {
	env := keptEnv(t)
	st, err := spool.Open(spool.Base(env), spool.Options{MaxItem: 200 << 10})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for i := 1; i <= 12000; i++ {
		fmt.Fprintf(&out, "--- FAIL: TestLine%d (0.00s) \xff\tsome output\r\n", i)
	}
	keep := func(b string) string {
		w, err := st.Create(spool.Text)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(b))
		id, err := w.Commit()
		if err != nil {
			t.Fatal(err)
		}
		return spool.Prefix + id
	}
	whole := keep(out.String()[:150<<10])
	capped := keep(out.String())
	root := canon(t, t.TempDir())
	s := newTextServer(t, Options{Roots: []string{root}, LookupEnv: env})
	c := boundClients[1]
	cs := connectAs(t, s, c.name, c.version)
	got := followKept(t, cs, c, whole, 1)
	lines := strings.SplitAfter(out.String()[:150<<10], "\n")
	if last := lines[len(lines)-1]; last == "" {
		lines = lines[:len(lines)-1]
	}
	if len(got) != len(lines) {
		t.Fatalf("%d lines read, %d kept", len(got), len(lines))
	}
	for i, l := range lines {
		want := fmt.Sprintf("%d|%s", i+1, strings.ToValidUTF8(strings.TrimSuffix(l, "\n"), "\uFFFD"))
		if got[i] != want {
			t.Fatalf("line %d is %q, want %q", i+1, got[i], want)
		}
	}
	res := callAs(t, cs, c, "read_file", map[string]any{"path": capped, "offset": 4400})
	if body := text(res); res.IsError || !strings.HasSuffix(body, "\n[read:kept-capped] "+capped+" ends here: the output was longer, and only its first 204,800 bytes were kept\n") {
		t.Errorf("the end of a capped output: %q", tail(body, 300))
	}
}

// TestSearchKeptCapped: a search that finds more rows than the store keeps
// of one (spool.MaxRows) keeps its first rows, whole, and the last view
// of them says that the rest was not kept.
func TestSearchKeptCapped(t *testing.T) {
	root := canon(t, t.TempDir())
	var b strings.Builder
	for i := 1; i <= 20000; i++ {
		fmt.Fprintf(&b, "line %05d has the needle and enough text to make the rows long %s\n", i, strings.Repeat("y", i%9))
	}
	write(t, filepath.Join(root, "huge.txt"), b.String())
	s := newTextServer(t, Options{Roots: []string{root}, LookupEnv: keptEnv(t)})
	c := boundClients[1]
	cs := connectAs(t, s, c.name, c.version)
	res := callAs(t, cs, c, "search", map[string]any{"pattern": "needle"})
	body := ungroup(t, text(res))
	m := keptNoteRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("the search ends %q", tail(body, 200))
	}
	whole := followKept(t, cs, c, m[2], 1)
	// One file: ripgrep finds its lines in order, each a match.
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if n := len(rgRows(t, root, "needle")); n != len(lines) {
		t.Fatalf("ripgrep finds %d rows of %d", n, len(lines))
	}
	var want []string
	for i := range lines {
		want = append(want, `"huge.txt":`+row(lines, i+1))
	}
	size := 0
	for _, r := range whole {
		size += len(r) + 1
	}
	if size > spool.MaxRows || size < spool.MaxRows-200 || !slices.Equal(whole, want[:len(whole)]) {
		t.Errorf("kept %d rows in %d bytes; want the first rows ripgrep finds, within %d bytes", len(whole), size, spool.MaxRows)
	}
	last := callAs(t, cs, c, "read_file", map[string]any{"path": m[2], "offset": len(whole) - 1})
	if !strings.HasSuffix(text(last), "\n[read:kept-capped] "+m[2]+" ends here: the output was longer, and only its first "+thousandsOf(size)+" bytes were kept\n") {
		t.Errorf("the last view ends %q", tail(text(last), 200))
	}
}

func thousandsOf(n int) string { return thousands(n) }

// TestSearchNotKept: a search whose rows cannot be kept (TMPDIR is a
// file) shows the rows that fit and says why the rest were not kept,
// within the bound.
func TestSearchNotKept(t *testing.T) {
	root := keptRoot(t)
	file := filepath.Join(t.TempDir(), "not-a-dir")
	write(t, file, "x")
	env := func(k string) (string, bool) {
		if k == "TMPDIR" {
			return file, true
		}
		return os.LookupEnv(k)
	}
	for _, structured := range []bool{false, true} {
		s := newTextServer(t, Options{Roots: []string{root}, Structured: structured, LookupEnv: env})
		for _, c := range boundClients[:3] {
			cs := connectAs(t, s, c.name, c.version)
			res := callAs(t, cs, c, "search", map[string]any{"pattern": "needle"})
			if size := len(shown(t, res)); size > c.bound {
				t.Errorf("%s structured=%v: %d bytes, over %d", c.name, structured, size, c.bound)
			}
			if body := text(res); res.IsError || !regexp.MustCompile(`\n\[search: output_incomplete\] [0-9,]+-(byte output|token) limit reached; not kept: cannot make `).MatchString(body) {
				t.Errorf("%s structured=%v: the search ends %q", c.name, structured, tail(body, 300))
			}
		}
	}
}
