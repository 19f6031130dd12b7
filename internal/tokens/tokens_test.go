package tokens

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// countCases are counts tiktoken gives (npm tiktoken 1.0.22, o200k_base,
// encode_ordinary); TestReference checks the same on far more text.
var countCases = []struct {
	text string
	want int
}{
	{"", 0},
	{"hello world", 2},
	{"\x7f", 1},
	{"\x7f\x7f\x7f", 3}, // DEL is a token each; tiktoken-go v0.10.0 counted none
	{strings.Repeat("\x7f", 20000) + "\n", 20001},
	{"a\x7fb", 3},
	{" \x7f\x7f\n", 4},
	{"a\ufeff\ufeffb", 3},  // BOM is not white space (\s is White_Space)
	{"a\u0085\u0085 b", 6}, // NEL is
	{"It's", 1},            //
	{"IT'S", 2},            // contractions ignore case
	{"it\u2019s", 2},       // only the ASCII apostrophe
	{"x'\u017f", 3},        // long s folds to s: 'ſ is a contraction
	{"HELLO'RE", 4},        //
	{"don't 'LL'Ve", 5},    //
	{"12345678", 3},        // numbers go by three
	{"\u0661\u0662\u0663\u0664", 4},
	{"  \n\n  x", 3},
	{"\r\n\r\n", 1},
	{"a  \t b", 3},
	{"!!!/\r\n/", 3},
	{" !x", 2},
	{"\u0301\u0301a", 3},        // combining marks join letters
	{"\U00010D50\U00010D51", 8}, // Garay, new in Unicode 16
	{"x\U00016D43y", 6},         // Kirat Rai, new in Unicode 16
	{"\U00031350\U00031351", 8}, // CJK extension J: Unicode 17, not a letter yet
	{"\U0001F44D\U0001F3FD", 3}, //
	{"<|endoftext|>", 7},        // no special tokens: plain text
	{"func main() {\n\tfmt.Println(\"hi\")\n}\n", 10},
	{strings.Repeat("a", 300), 38}, // merged through the heap
	{strings.Repeat(" ", 300) + "x", 4},
}

func TestCount(t *testing.T) {
	for _, c := range countCases {
		if got := Count(c.text); got != c.want {
			t.Errorf("Count(%.40q) = %d, want %d", c.text, got, c.want)
		}
		if got := CountBytes([]byte(c.text)); got != c.want {
			t.Errorf("CountBytes(%.40q) = %d, want %d", c.text, got, c.want)
		}
	}
}

// TestVocabulary finds every token of o200k_base at its own rank through
// the embedded hash table, and checks the pair bits against the tokens.
func TestVocabulary(t *testing.T) {
	if vocabSize != 199998 {
		t.Fatalf("%d tokens, o200k_base has 199998", vocabSize)
	}
	var pairs [256][256]bool
	at := recordsAt
	for r := 0; r < vocabSize; r++ {
		n := int(vocab[at+3])
		tok := vocab[at+4 : at+4+n]
		at += 4 + n
		if got := rankOf(tok); got != uint32(r) {
			t.Fatalf("rankOf(token %d %q) = %d", r, tok, got)
		}
		for i := 1; i < len(tok); i++ {
			pairs[tok[i-1]][tok[i]] = true
		}
	}
	if at != len(vocab) {
		t.Fatalf("records end at %d of %d bytes", at, len(vocab))
	}
	for a := 0; a < 256; a++ {
		if got := rankOf(string([]byte{byte(a)})); got == noRank {
			t.Errorf("byte %#x has no token", a)
		}
		for b := 0; b < 256; b++ {
			if pairInToken(byte(a), byte(b)) != pairs[a][b] {
				t.Errorf("pair %#x %#x: table says %v", a, b, !pairs[a][b])
			}
		}
	}
	for _, s := range []string{"zzzzqqqq", "\x7f\x7f", strings.Repeat("a", 129)} {
		if r := rankOf(s); r != noRank {
			t.Errorf("rankOf(%q) = %d, want none", s, r)
		}
	}
}

// TestMergeLargeMatchesSmall checks the heap merge against the rescanning
// one on pieces both can take.
func TestMergeLargeMatchesSmall(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabets := []string{"ab", "abc ", "aaab", "the quick brown fox", "\x7f\x00a", "éàç", "中文字", "0123456789"}
	for i := 0; i < 5000; i++ {
		al := alphabets[rng.IntN(len(alphabets))]
		n := 2 + rng.IntN(smallMerge-1)
		b := make([]byte, n)
		for j := range b {
			b[j] = al[rng.IntN(len(al))]
		}
		if s, l := mergeSmall(string(b)), mergeLarge(string(b)); s != l {
			t.Fatalf("%q: mergeSmall %d, mergeLarge %d", b, s, l)
		}
	}
}

// TestClasses spot-checks the class table where Unicode versions differ;
// TestReference checks every code point.
func TestClasses(t *testing.T) {
	for _, c := range []struct {
		r    rune
		want uint8
	}{
		{'a', classLower}, {'A', classUpper}, {'\u01c5', classUpper}, {'\u02b0', classBoth},
		{'\u4e00', classBoth}, {'\u0301', classMark}, {'7', classNumber}, {'\u2167', classNumber},
		{' ', classSpace}, {'\u0085', classSpace}, {'\u3000', classSpace}, {'\r', classNewline},
		{'\n', classNewline}, {0x7f, classOther}, {0xFEFF, classOther}, {'/', classOther},
		{0x10D50, classUpper}, {0x10D70, classLower}, {0x105C0, classBoth}, {0x16D43, classBoth}, // Unicode 16
		{0x31350, classBoth},  // CJK extension H, Unicode 15
		{0x323B0, classOther}, // CJK extension J, Unicode 17: tiktoken's tables are 16
		{0xE0001, classOther}, {0x10FFFF, classOther},
	} {
		if got := classOfRune(c.r); got != c.want {
			t.Errorf("U+%04X: class %d, want %d", c.r, got, c.want)
		}
	}
}

// FuzzCount: Count never panics, stays between the bounds one token per
// byte and 128 bytes per token give, and adds up across a line end that no
// pre-token can span: the text after it starts with neither white space
// nor '/', the only characters a pre-token ending in LF takes on.
func FuzzCount(f *testing.F) {
	for _, c := range countCases {
		f.Add(c.text, "x")
	}
	f.Add("x!", "/y")
	f.Add("a \xff\xfe", "\x80b")
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, s := range []string{a, b} {
			n := Count(s)
			if n > len(s) || n < (len(s)+maxTokenLen-1)/maxTokenLen {
				t.Fatalf("Count(%q) = %d out of bounds for %d bytes", s, n, len(s))
			}
		}
		if r, _ := utf8.DecodeRuneInString(b); b == "" || unicode.IsSpace(r) || r == '/' {
			return
		}
		a += "\n"
		if whole, sum := Count(a+b), Count(a)+Count(b); whole != sum {
			t.Fatalf("Count(%q) = %d, but %d + %d apart", a+b, whole, Count(a), Count(b))
		}
		if len(a) <= smallMerge && len(a) > 1 {
			if s, l := mergeSmall(a), mergeLarge(a); s != l {
				t.Fatalf("%q: mergeSmall %d, mergeLarge %d", a, s, l)
			}
		}
	})
}

// TestNextPieceASCII checks the ASCII scanner against nextPiece at every
// position of texts made of the characters that decide pre-tokens, with and
// without other characters among them; TestReference checks Count.
func TestNextPieceASCII(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabets := []string{
		"aZ '1/\n\r\t!.",
		"abcXYZ019 \t\n\r\x0b\x0c\x00\x7f'sStTdDmMlLrReEvV/!(){};:,.\"",
		"a'lL sS\u017f\u00e9\u00c9\u0301\u00a0\u0085\u0661\u2028\u00bf\u4e2d\xff\x80",
	}
	for n := 0; n < 100000; n++ {
		al := []rune(alphabets[rng.IntN(len(alphabets))])
		b := make([]rune, 1+rng.IntN(12))
		for j := range b {
			b[j] = al[rng.IntN(len(al))]
		}
		s := string(b)
		if rng.IntN(4) == 0 {
			s += "\xc5" // a cut sequence at the end
		}
		for i := 0; i < len(s); i++ {
			if s[i] >= utf8.RuneSelf {
				continue
			}
			if got := nextPieceASCII(s, i); got >= 0 {
				if want := nextPiece(s, i); got != want {
					t.Fatalf("nextPieceASCII(%q, %d) = %d, nextPiece %d", s, i, got, want)
				}
			}
		}
	}
}

// countPlain is Count without the memo or the ASCII scanner.
func countPlain(s string) int {
	n := 0
	for i := 0; i < len(s); {
		j := nextPiece(s, i)
		n += pieceCount(s[i:j])
		i = j
	}
	return n
}

// TestMemoConcurrent counts, on several goroutines at once, texts of far more
// distinct short pieces than the memos hold (up to 8 bytes and 9 to 16), so that slots are taken over
// while others read them, and checks every count against countPlain. Run it
// with -race.
func TestMemoConcurrent(t *testing.T) {
	const workers = 8
	errc := make(chan string, workers)
	for w := 0; w < workers; w++ {
		go func(w int) {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			alphabets := [][]rune{
				[]rune("abcdeXYZ01 \t\n!.'é中\u0301"),
				[]rune("abcdefghijklmnopXYZ          \t\t!!!"), // pieces of 9 to 16 bytes
			}
			for n := 0; n < 3000; n++ {
				al := alphabets[n%2]
				b := make([]rune, 1+rng.IntN(60))
				for j := range b {
					b[j] = al[rng.IntN(len(al))]
				}
				s := string(b)
				if got, want := Count(s), countPlain(s); got != want {
					errc <- fmt.Sprintf("Count(%q) = %d, want %d", s, got, want)
					return
				}
			}
			errc <- ""
		}(w)
	}
	for w := 0; w < workers; w++ {
		if e := <-errc; e != "" {
			t.Error(e)
		}
	}
}
