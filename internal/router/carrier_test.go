package router

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rowkit/rowkit/internal/errs"
)

// derive is deriveDelimiter's candidate as a string.
func derive(h [32]byte, input string) string {
	var buf [maxDelimiter]byte
	return string(deriveDelimiter(&buf, h, input))
}

func mustCarrier(t testing.TB, frontend string) *Carrier {
	t.Helper()
	c, err := NewCarrier(frontend)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The carrier's arguments, field by field, as Codex's exec_command takes
// them (design note §3.3).
func TestEncodeShape(t *testing.T) {
	c := mustCarrier(t, "/opt/row kit/rowkit")
	args, err := c.Encode(ToolHpatch, "in notes.txt\ntype \"beta\" \"BETA\"")
	if err != nil {
		t.Fatal(err)
	}
	d := delimiter(ToolHpatch, "in notes.txt\ntype \"beta\" \"BETA\"")
	want := `{"cmd":"'/opt/row kit/rowkit' carrier --max-output 9600 hpatch <<'` + d + `'\nin notes.txt\ntype \"beta\" \"BETA\"\n` + d + `","shell":"/bin/sh","login":false,"yield_time_ms":30000,"max_output_tokens":2500}`
	if args != want {
		t.Fatalf("Encode:\n got %s\nwant %s", args, want)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if !strings.HasPrefix(d, "ROWKIT_") || len(d) != 23 || !isHex(d[7:]) {
		t.Fatalf("delimiter %q", d)
	}
	again, _ := c.Encode(ToolHpatch, "in notes.txt\ntype \"beta\" \"BETA\"")
	if again != args {
		t.Fatal("Encode is not deterministic")
	}
}

func TestRoundTrip(t *testing.T) {
	c := mustCarrier(t, "/usr/local/bin/rowkit")
	for _, in := range []string{
		"",
		"\n",
		"hread notes.txt 1:2",
		"ends with LF\n",
		"two LFs\n\n",
		"$HOME `id` $(id) \\ \\n ' \" \t \r\n \r",
		"EOF\n'EOF'\nROWKIT_\nROWKIT_0123456789abcdef",
		"naïve 値 \u2028 \u2029 \U0001F600",
		"<<'X'\nX\n",
		strings.Repeat("x", MaxInputBytes),
	} {
		for _, tool := range []string{ToolHpatch, ToolShell} {
			args, err := c.Encode(tool, in)
			if err != nil {
				t.Fatalf("Encode(%s, %.40q): %v", tool, in, err)
			}
			gt, gi, ok := Decode(args)
			if !ok || gt != tool || gi != in {
				t.Fatalf("Decode(Encode(%s, %.40q)) = %s, %.40q, %v", tool, in, gt, gi, ok)
			}
		}
	}
}

// A script that would not reach the carrier whole under the delimiter
// gets the next candidate: the heredoc must not end early, and dash must
// not drop a byte. (No script holds its own first delimiter, which is a
// hash of it; the candidates are tested from a chosen seed.)
func TestDelimiterCandidates(t *testing.T) {
	seed := sha256.Sum256([]byte("seed"))
	hx := hex.EncodeToString(seed[:8])
	d0 := "ROWKIT_" + hx
	if got := derive(seed, "anything\n"); got != d0 {
		t.Fatalf("first candidate %s, want %s", got, d0)
	}
	for _, tc := range []struct{ in, want string }{
		{d0, "_" + d0},
		{"x\n" + d0, "_" + d0},
		{d0 + "\ny", "_" + d0},
		{"Résumé", "_" + d0},
		{"ROWKIT_é", "_" + d0},
		{d0 + "é", "_" + d0},
		{"Ré\n_é", "Z_" + d0},
		{d0 + " ", d0}, // ASCII after the delimiter is harmless
		{"R", d0},
		{" Ré", d0}, // not at the start of the line
		{"Rxé", d0}, // x ends the match first
		{"éR", d0},
		{"ROWKIT\u00e9", "_" + d0},
	} {
		if got := derive(seed, tc.in); got != tc.want {
			t.Errorf("derive(seed, %q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	// Every prefix's first letter blocked: the next hash, then nothing.
	var all strings.Builder
	for _, p := range delimiterPrefixes {
		c := "R"
		if p != "" {
			c = p[:1]
		}
		all.WriteString(c + "é\n")
	}
	if got := derive(seed, all.String()); got != "" {
		t.Errorf("every first letter blocked, got %s", got)
	}
	if err := Carriable(ToolShell, all.String()); !errs.Is(err, CodeUnsafe) {
		t.Errorf("Carriable: %v", err)
	}
	for _, tc := range []struct {
		s, d string
		want bool
	}{
		{"D", "D", true}, {"a\nD", "D", true}, {"D\nb", "D", true}, {"a\nD\nb", "D", true},
		{"DD", "D", false}, {"D\r", "D", false}, {" D", "D", false}, {"aD\nDb", "D", false}, {"", "D", false}, {"xD\nD", "D", true},
	} {
		if got := hasLine(tc.s, tc.d); got != tc.want {
			t.Errorf("hasLine(%q, %q) = %v", tc.s, tc.d, got)
		}
	}
}

func TestRefusals(t *testing.T) {
	c := mustCarrier(t, "/bin/rowkit")
	_, err := c.Encode(ToolShell, "echo a\x00b")
	if !errs.Is(err, CodeNUL) || !strings.Contains(err.(*errs.Error).Msg, "NUL") {
		t.Fatalf("NUL: %v", err)
	}
	if _, err := c.Encode(ToolHpatch, strings.Repeat("y", MaxInputBytes)); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	_, err = c.Encode(ToolHpatch, strings.Repeat("y", MaxInputBytes+1))
	e, ok := errs.As(err)
	if !ok || e.Code != errs.TooLarge {
		t.Fatalf("over the limit: %v", err)
	}
	if want := "hpatch: not run: the script is 122,881 bytes and one call carries at most 122,880 bytes; split it into several calls"; e.Msg != want {
		t.Fatalf("message %q", e.Msg)
	}
	// The longest binary path and the longest script still fit the
	// argument limit.
	long := "/" + strings.Repeat("p", MaxFrontendBytes-3)
	lc := mustCarrier(t, long)
	cmd, err := lc.Command(ToolHpatch, strings.Repeat("y", MaxInputBytes))
	if err != nil || len(cmd) > MaxCmdBytes {
		t.Fatalf("longest carrier: %d bytes, %v", len(cmd), err)
	}
	if _, err := NewCarrier(long + "p"); err == nil {
		t.Fatal("a path over the bound was taken")
	}
	for _, bad := range []string{"", "rowkit", "/a\nb", "/a\x00b"} {
		if _, err := NewCarrier(bad); err == nil {
			t.Errorf("NewCarrier(%q) took it", bad)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	c := mustCarrier(t, "/it's/rowkit")
	good, _ := c.Command(ToolShell, "echo hi")
	if tool, in, ok := decodeCommand(good); !ok || tool != ToolShell || in != "echo hi" {
		t.Fatalf("a path with a quote: %v %q %q (%s)", ok, tool, in, good)
	}
	d := delimiter(ToolShell, "echo hi")
	for name, cmd := range map[string]string{
		"plain command":    "ls -la",
		"no quote":         "/bin/rowkit carrier shell <<'" + d + "'\necho hi\n" + d,
		"other tool":       "'/bin/rowkit' carrier read <<'" + d + "'\necho hi\n" + d,
		"edited script":    "'/bin/rowkit' carrier shell <<'" + d + "'\necho ho\n" + d,
		"other tool hash":  "'/bin/rowkit' carrier hpatch <<'" + d + "'\necho hi\n" + d,
		"unquoted heredoc": "'/bin/rowkit' carrier shell <<" + d + "\necho hi\n" + d,
		"trailing text":    good + "\n",
		"trailing cmd":     good + "; rm -rf x",
		"bad max":          "'/bin/rowkit' carrier --max-output x shell <<'" + d + "'\necho hi\n" + d,
		"unclosed quote":   "'/bin/rowkit carrier shell <<'" + d + "'\necho hi\n" + d,
		"short header":     "'/bin/rowkit' carrier shell <<'ROWKIT_12'\n",
	} {
		if _, _, ok := decodeCommand(cmd); ok {
			t.Errorf("%s: decoded %q", name, cmd)
		}
	}
	// A script that holds its own delimiter as a line would end the
	// heredoc early: a "carrier" like that was not made by Encode.
	in := "a\n" + d
	forged := "'/bin/rowkit' carrier shell <<'" + d + "'\n" + in + "\n" + d
	if _, _, ok := decodeCommand(forged); ok {
		t.Error("decoded a heredoc that sh would end early")
	}
	for _, args := range []string{`{not json`, `{"cmd":1}`, `[]`, `{"CMD":"x carrier "}`, `{"command":" carrier "}`} {
		if _, _, ok := Decode(args); ok {
			t.Errorf("Decode(%s) took it", args)
		}
	}
	// Another max-output and other keys still decode: the carrier is
	// known by its command.
	other := strings.Replace(good, "--max-output 9600", "--max-output 123", 1)
	b, _ := json.Marshal(map[string]any{"cmd": other, "workdir": "/x", "login": true})
	if tool, in, ok := Decode(string(b)); !ok || tool != ToolShell || in != "echo hi" {
		t.Fatalf("Decode with other keys: %v", ok)
	}
	noMax := strings.Replace(good, "--max-output 9600 ", "", 1)
	if _, _, ok := decodeCommand(noMax); !ok {
		t.Fatal("a carrier without --max-output did not decode")
	}
}

func FuzzCarrier(f *testing.F) {
	for _, s := range []string{"", "\n", "in a\ntype 1:8ed3 \"x\"", "ROWKIT_0000000000000000", "a'b\"c$d`e\\f", "\r\n\t", "ünï"} {
		f.Add(false, s, "/usr/bin/rowkit")
		f.Add(true, s, "/it's here/rowkit")
	}
	f.Fuzz(func(t *testing.T, shell bool, in, frontend string) {
		c, err := NewCarrier(frontend)
		if err != nil {
			return
		}
		tool := ToolHpatch
		if shell {
			tool = ToolShell
		}
		args, err := c.Encode(tool, in)
		if !utf8.ValidString(in) || strings.IndexByte(in, 0) >= 0 || len(in) > MaxInputBytes {
			if strings.IndexByte(in, 0) >= 0 || len(in) > MaxInputBytes {
				if err == nil {
					t.Fatalf("carried %.60q", in)
				}
			}
			return
		}
		if err != nil {
			t.Fatalf("Encode(%.60q): %v", in, err)
		}
		if again, _ := c.Encode(tool, in); again != args {
			t.Fatal("not deterministic")
		}
		gt, gi, ok := Decode(args)
		if !ok || gt != tool || gi != in {
			t.Fatalf("Decode(Encode(%s, %.60q)) = %s, %.60q, %v", tool, in, gt, gi, ok)
		}
	})
}

// shStub is a stand-in for the rowkit binary that records its arguments
// and its stdin, for running carriers through the real /bin/sh.
type shStub struct {
	dir, rec, args string
	c              *Carrier
}

func newShStub(t testing.TB) *shStub {
	t.Helper()
	if _, err := os.Stat(CarrierShell); err != nil {
		t.Fatalf("%s: %v (the carrier runs every script through it)", CarrierShell, err)
	}
	dir := t.TempDir()
	stubDir := filepath.Join(dir, "it's a dir")
	if err := os.Mkdir(stubDir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &shStub{dir: dir, rec: filepath.Join(dir, "stdin"), args: filepath.Join(dir, "args")}
	stub := filepath.Join(stubDir, "rowkit")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > '" + s.args + "'\nexec cat > '" + s.rec + "'\n"
	if err := os.WriteFile(stub, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	s.c = mustCarrier(t, stub)
	return s
}

// run runs the carrier of tool on in as Codex would and checks what the
// stub received.
func (s *shStub) run(t testing.TB, tool, in string) {
	t.Helper()
	args, err := s.c.Encode(tool, in)
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Cmd   string `json:"cmd"`
		Shell string `json:"shell"`
	}
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		t.Fatal(err)
	}
	os.Remove(s.rec)
	cmd := exec.Command(a.Shell, "-c", a.Cmd)
	cmd.Dir = s.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sh -c: %v\n%s", err, out)
	}
	got, err := os.ReadFile(s.rec)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, []byte(in+"\n")) {
		t.Fatalf("stdin of %s:\n got %q\nwant %q", tool, got, in+"\n")
	}
	gotArgs, _ := os.ReadFile(s.args)
	if want := "carrier\n--max-output\n9600\n" + tool + "\n"; string(gotArgs) != want {
		t.Fatalf("argv %q, want %q", gotArgs, want)
	}
}

// The command Codex would run, run by the real /bin/sh with a stub in place
// of rowkit: the script arrives byte for byte, followed by the heredoc's LF.
func TestCarrierThroughSh(t *testing.T) {
	s := newShStub(t)
	pwned := filepath.Join(s.dir, "pwned")
	inputs := []string{"", "\n", "x", "Résumé\nRé\n_é", "ROWKIT_é", "a\r\nb\r", "$(touch " + pwned + ")\n`touch " + pwned + "`\n${HOME}", "'\"\\", "\t leading tab\n", "no final LF", "PATCH\nEOF\n"}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", " ", "\n", "\n", "\r", "\t", "'", "\"", "\\", "$", "`", "<<", "EOF", "R", "RO", "ROWKIT_", "_", "Z_", "é", "値", "\u2028", "\u0080", "*", "!", "#", ";", "&", "|", "(", ")", "{", "}", "~"}
	for range 150 {
		var b strings.Builder
		for range rng.IntN(400) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		inputs = append(inputs, b.String())
	}
	inputs = append(inputs, strings.Repeat("line of a long script\n", MaxInputBytes/22))
	for _, tool := range []string{ToolHpatch, ToolShell} {
		for _, in := range inputs {
			s.run(t, tool, in)
		}
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("the script was expanded by sh")
	}
}

// FuzzCarrierThroughSh looks for scripts that /bin/sh does not deliver
// whole (it found dash's dropped byte after a partial delimiter).
func FuzzCarrierThroughSh(f *testing.F) {
	for _, s := range []string{"", "Résumé", "ROWKIT_é", "a\nb", "$x `y` 'z'", "\r\n"} {
		f.Add(false, s)
	}
	s := newShStub(f)
	f.Fuzz(func(t *testing.T, shell bool, in string) {
		if !utf8.ValidString(in) || Carriable(ToolShell, in) != nil {
			return
		}
		tool := ToolHpatch
		if shell {
			tool = ToolShell
		}
		s.run(t, tool, in)
	})
}

// Decode takes anything without failing, and what it takes back is a
// carrier Encode makes.
func FuzzDecode(f *testing.F) {
	c := mustCarrier(f, "/bin/rowkit")
	good, _ := c.Encode(ToolShell, "echo hi")
	f.Add(good)
	f.Add(`{"cmd":"ls"}`)
	f.Add(`{not json`)
	f.Add(`{"cmd":"'/bin/rowkit' carrier shell <<'ROWKIT_0000000000000000'\nx\nROWKIT_0000000000000000"}`)
	f.Fuzz(func(t *testing.T, args string) {
		tool, in, ok := Decode(args)
		if !ok {
			return
		}
		again, err := c.Encode(tool, in)
		if err != nil {
			t.Fatalf("decoded a script Encode refuses: %v", err)
		}
		if gt, gi, ok := Decode(again); !ok || gt != tool || gi != in {
			t.Fatal("no round trip")
		}
	})
}

// Bound keeps whole lines within the bound and says what it left out.
func TestBound(t *testing.T) {
	lines := strings.Repeat("0123456789 abcdefghij\n", 100) // 2,200 bytes
	if got := Bound([]byte(lines), len(lines), "hpatch"); string(got) != lines {
		t.Fatal("output within the bound changed")
	}
	for _, max := range []int{512, 1000, 2199} {
		got := string(Bound([]byte(lines), max, "hpatch"))
		if len(got) > max {
			t.Fatalf("bound %d: %d bytes", max, len(got))
		}
		i := strings.LastIndex(got[:len(got)-1], "\n") + 1
		kept, note := got[:i], got[i:]
		if !strings.HasPrefix(lines, kept) || len(kept)%22 != 0 {
			t.Fatalf("bound %d: kept %q", max, kept)
		}
		left := 100 - len(kept)/22
		want := fmt.Sprintf("hpatch: output incomplete: %d more line(s) (%s bytes) left out at the carrier's %s-byte bound\n", left, errs.Thousands(len(lines)-len(kept)), errs.Thousands(max))
		if note != want {
			t.Fatalf("bound %d: note %q, want %q", max, note, want)
		}
	}
	// A line longer than the bound is left out whole, never cut.
	long := strings.Repeat("x", 2000) + "\nshort\n"
	got := string(Bound([]byte(long), 512, "hpatch"))
	if !strings.HasPrefix(got, "hpatch: output incomplete: 2 more line(s) (2,007 bytes)") {
		t.Fatalf("got %q", got)
	}
	// The last line without a terminator counts as a line.
	got = string(Bound([]byte(strings.Repeat("y", 600)), 512, "hpatch"))
	if !strings.Contains(got, "1 more line(s) (600 bytes)") {
		t.Fatalf("got %q", got)
	}
}

// decodeCommand is Decode of a carrier's command line alone.
func decodeCommand(cmd string) (tool, input string, ok bool) {
	var d decoder
	return d.command(cmd)
}
