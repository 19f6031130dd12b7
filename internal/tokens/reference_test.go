package tokens

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// referenceCounts runs testdata/count.cjs, tiktoken itself, once over all
// texts, while calling count on each of them alongside. A missing node or
// node_modules fails the test: scripts/test installs both.
func referenceCounts(t *testing.T, texts []string, count func(string) int) (want, got []int) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is missing: the reference counts come from the npm package tiktoken; run scripts/test, which installs nodejs and runs npm ci")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules", "tiktoken", "package.json")); err != nil {
		t.Fatalf("node_modules/tiktoken is missing: run `npm ci` in %s (scripts/test does)", root)
	}
	for _, s := range texts {
		if !utf8.ValidString(s) {
			t.Fatalf("test input %q is not UTF-8; tiktoken only counts text", s)
		}
	}
	cmd := exec.Command(node, "testdata/count.cjs")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		w := bufio.NewWriterSize(stdin, 1<<16)
		enc := json.NewEncoder(w)
		for _, s := range texts {
			if enc.Encode(s) != nil {
				break
			}
		}
		w.Flush()
		stdin.Close()
	}()
	done := make(chan []int)
	go func() {
		got := make([]int, len(texts))
		for i, s := range texts {
			got[i] = count(s)
		}
		done <- got
	}()
	want = make([]int, 0, len(texts))
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		n, err := strconv.Atoi(sc.Text())
		if err != nil {
			t.Fatalf("node testdata/count.cjs printed %q", sc.Text())
		}
		want = append(want, n)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("node testdata/count.cjs: %v\n%s", err, stderr.Bytes())
	}
	if len(want) != len(texts) {
		t.Fatalf("node testdata/count.cjs counted %d texts of %d", len(want), len(texts))
	}
	return want, <-done
}

type refCase struct {
	kind string
	text string
}

// scalars returns every Unicode scalar value.
func scalars() []rune {
	rs := make([]rune, 0, 0x110000-0x800)
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if utf8.ValidRune(r) {
			rs = append(rs, r)
		}
	}
	return rs
}

// context puts c where each alternative of the pre-token pattern and its
// backtracking can see it: after and before letters of each case, doubled,
// after a space, in and after a contraction, among digits, punctuation,
// slashes and line ends, in runs of white space and at the end.
func context(c string) string {
	return " " + c + "a" + c + c + "A" + c + "'s 1" + c + "A'" + c + "!" + c + "/\n" + c + "  "
}

// randomText mixes what rows hold: ASCII, controls with DEL, runs of white
// space and line ends of every kind, letters of many scripts with marks,
// emoji sequences, numbers of several scripts, contractions and any code
// point at all.
func randomText(rng *rand.Rand) string {
	pools := []string{
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
		"0123456789", "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
		"\x00\x01\x07\x08\x0b\x0c\x1b\x1f\x7f", " \t\r\n", "   \t\t\n\n\r\n",
		"\u0085\u00a0\u1680\u2000\u2028\u2029\u202f\u3000\ufeff\u200b\u200d",
		"éÉßçñøÆœſǅǈ", "αβγΔΣΩ", "жЖщЩёЁ", "مرحبا بالعالم", "नमस्ते", "你好世界中文", "안녕하세요",
		"\u0301\u0308\u0327\u093f\u094d", "👍🏽👨‍👩‍👧🇫🇷❤️✨", "٠١٢٣٤٥٦٧٨٩", "ⅫⅣ²³½", "𝐀𝐁𝐂𝟎𝟏",
		"'s'S't're'RE've'm'll'd'D'ſ", "\U00010D50\U000105C0\U00016D43\U00011DB0\U00031350",
	}
	n := rng.IntN(120)
	var b strings.Builder
	for i := 0; i < n; i++ {
		if rng.IntN(12) == 0 {
			r := rune(rng.IntN(utf8.MaxRune + 1))
			if utf8.ValidRune(r) {
				b.WriteRune(r)
			}
			continue
		}
		pool := []rune(pools[rng.IntN(len(pools))])
		k := 1 + rng.IntN(6)
		if rng.IntN(8) == 0 {
			k = 1 + rng.IntN(40)
		}
		for ; k > 0; k-- {
			b.WriteRune(pool[rng.IntN(len(pool))])
		}
	}
	return b.String()
}

// realFiles returns the UTF-8 files of the Go tree's src/strings and
// src/unicode and every twentieth of the Python standard library.
func realFiles(t *testing.T) []refCase {
	var cases []refCase
	add := func(kind, dir string, every int) {
		i := 0
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !d.Type().IsRegular() {
				return nil
			}
			if i++; i%every != 0 {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil || len(b) > 256<<10 || !utf8.Valid(b) {
				return nil
			}
			cases = append(cases, refCase{kind + " " + path, string(b)})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"strings", "unicode", "regexp", "go/printer", "html"} {
		add("go", filepath.Join(runtime.GOROOT(), "src", d), 1)
	}
	py, err := exec.Command("python3", "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])").Output()
	if err != nil {
		t.Fatalf("python3 tells no standard library (%v): install python3", err)
	}
	add("python", strings.TrimSpace(string(py)), 20)
	return cases
}

func longRuns() []refCase {
	var cases []refCase
	for _, u := range []string{"\x7f", "a", "A", "aA", "1", " ", "\n", "\r\n", " \n", "!", "ab", "é", "中", "👍", "0a", "a'", "xyz", " a"} {
		for _, n := range []int{63, 64, 65, 200, 3000} {
			cases = append(cases, refCase{fmt.Sprintf("run %q×%d", u, n), strings.Repeat(u, n)})
		}
	}
	return cases
}

// TestReference compares Count with tiktoken on every Unicode scalar value
// alone and in context, on random text, on long runs and on real files.
func TestReference(t *testing.T) {
	var cases []refCase
	for _, r := range scalars() {
		c := string(r)
		cases = append(cases, refCase{"alone", c}, refCase{"context", context(c)})
	}
	rng := rand.New(rand.NewPCG(9, 200000))
	for i := 0; i < 20000; i++ {
		cases = append(cases, refCase{"random", randomText(rng)})
	}
	cases = append(cases, longRuns()...)
	cases = append(cases, realFiles(t)...)

	texts := make([]string, len(cases))
	for i, c := range cases {
		texts[i] = c.text
	}
	want, got := referenceCounts(t, texts, Count)
	kinds := map[string]int{}
	bad := 0
	for i, c := range cases {
		kinds[strings.Fields(c.kind)[0]]++
		if got[i] != want[i] {
			if bad++; bad <= 20 {
				text := c.text
				if len(text) > 200 {
					text = text[:200] + "..."
				}
				t.Errorf("%s %q: Count %d, tiktoken %d", c.kind, text, got[i], want[i])
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d texts differ from tiktoken", bad, len(cases))
	}
	t.Logf("equal to tiktoken on %d texts: %v", len(cases), kinds)
}
