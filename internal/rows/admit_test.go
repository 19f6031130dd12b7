package rows

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rowkit/rowkit/internal/errs"
)

// admitReference applies the admission rule with whole-output counts only:
// it finds the longest prefix of rows within TokenLimit, then adds one more
// row if the whole output stays within TokenCeiling.
func admitReference(rowList [][]byte) (out []byte, omitted bool) {
	count := func(k int) int { return CountTokens(string(bytes.Join(rowList[:k], nil))) }
	k := sort.Search(len(rowList), func(k int) bool { return count(k+1) > TokenLimit })
	if k < len(rowList) && count(k+1) <= TokenCeiling {
		k++
	}
	return bytes.Join(rowList[:k], nil), k < len(rowList)
}

func TestAdmitterRule(t *testing.T) {
	// Rows of about 100 tokens each: the limit falls inside the sequence.
	var list [][]byte
	for i := 1; i <= 400; i++ {
		text := strings.Repeat(fmt.Sprintf("word%d ", i), 50)
		list = append(list, AppendRow(nil, i, []byte(text)))
	}
	var buf bytes.Buffer
	a := NewAdmitter(&buf, DefaultBudget)
	for _, r := range list {
		a.Admit(r)
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	rep := a.Report()
	want, omitted := admitReference(list)
	if buf.String() != string(want) || rep.Omitted != omitted || !omitted {
		t.Fatalf("admitted %d bytes, reference %d; omitted %v, reference %v", buf.Len(), len(want), rep.Omitted, omitted)
	}
	if n := CountTokens(buf.String()); n != a.Tokens() || n <= TokenLimit-200 || n > TokenCeiling {
		t.Fatalf("tokens %d, report %d", n, a.Tokens())
	}
	if !rep.Sealed && a.Tokens() > TokenLimit {
		t.Fatal("over the limit but not sealed")
	}
	// Once sealed or omitted, nothing more is written.
	before := buf.Len()
	if ok, _ := a.Admit([]byte("1:8ed3 alpha\n")); ok || buf.Len() != before {
		t.Fatal("admitted a row after omission")
	}
}

func TestAdmitterSealsThenCompletes(t *testing.T) {
	// Fill to just under the limit with small rows, then one row that
	// crosses it: admitted and sealed, and the result is still complete.
	var buf bytes.Buffer
	a := NewAdmitter(&buf, DefaultBudget)
	small := AppendRow(nil, 1, []byte("alpha"))
	per := CountTokens(string(small))
	for total := per; total <= TokenLimit; total += per {
		a.Admit(small)
	}
	big := AppendRow(nil, 2, []byte(strings.Repeat("beta ", 100)))
	if ok, _ := a.Admit(big); !ok {
		t.Fatalf("row of %d tokens at total %d not admitted", CountTokens(string(big)), a.Tokens())
	}
	rep := a.Report()
	if !rep.Sealed || rep.Omitted || a.Open() {
		t.Fatalf("report %+v", rep)
	}
}

// Rows are held uncounted while they total at most TokenLimit bytes, and
// written by Flush or as soon as counting starts.
func TestAdmitterHoldsSmallOutput(t *testing.T) {
	var buf bytes.Buffer
	a := NewAdmitter(&buf, DefaultBudget)
	row := AppendRow(nil, 1, []byte("alpha"))
	for n := 0; n+len(row) <= TokenLimit; n += len(row) {
		if ok, err := a.Admit(row); !ok || err != nil {
			t.Fatalf("held row refused: %v", err)
		}
	}
	if buf.Len() != 0 {
		t.Fatalf("%d bytes written before Flush", buf.Len())
	}
	if err := a.Flush(); err != nil || buf.Len() == 0 || buf.Len() > TokenLimit {
		t.Fatalf("flushed %d bytes: %v", buf.Len(), err)
	}
	if err := a.Flush(); err != nil || buf.Len() != len(row)*a.Report().Rows {
		t.Fatalf("second flush changed the output: %d bytes for %d rows", buf.Len(), a.Report().Rows)
	}
	// One more row passes TokenLimit bytes: the held rows are counted and
	// the new one is written at once.
	before := buf.Len()
	if ok, _ := a.Admit(row); !ok || buf.Len() != before+len(row) {
		t.Fatalf("row after the threshold not written at once")
	}
	if got, want := a.Tokens(), CountTokens(buf.String()); got != want {
		t.Fatalf("tokens %d, want %d", got, want)
	}
}

// A Limit that is never reached (rowkit read sets one) must not be
// allocated up front: a few rows cost a few bytes, not Limit.
func TestAdmitterHugeLimitHoldsLittle(t *testing.T) {
	row := AppendRow(nil, 1, []byte("alpha"))
	var buf bytes.Buffer
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	a := NewAdmitter(&buf, Budget{Limit: 1<<31 - 1, Ceiling: 1<<31 - 1})
	for range 10 {
		if ok, err := a.Admit(row); !ok || err != nil {
			t.Fatalf("row refused: %v", err)
		}
	}
	runtime.ReadMemStats(&m1)
	if got := m1.TotalAlloc - m0.TotalAlloc; got > 1<<20 {
		t.Fatalf("10 rows under a huge limit allocated %d bytes", got)
	}
	if err := a.Flush(); err != nil || buf.Len() != 10*len(row) {
		t.Fatalf("flushed %d bytes, want %d: %v", buf.Len(), 10*len(row), err)
	}
}

func TestAdmitterRefusesHugeRowWithoutCounting(t *testing.T) {
	var buf bytes.Buffer
	a := NewAdmitter(&buf, DefaultBudget)
	huge := bytes.Repeat([]byte("x"), MaxRowBytes+1)
	if ok, _ := a.Admit(huge); ok || !a.Report().Omitted || buf.Len() != 0 {
		t.Fatal("huge row admitted")
	}
}

func corpusFiles(t *testing.T, root string, exts []string, maxBytes int) []string {
	t.Helper()
	var all []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable corners of a corpus do not matter here
		}
		for _, e := range exts {
			if !d.IsDir() && strings.HasSuffix(p, e) {
				all = append(all, p)
			}
		}
		return nil
	})
	if err != nil || len(all) == 0 {
		t.Fatalf("no corpus files under %s: %v", root, err)
	}
	// A deterministic spread over the whole tree, within the byte budget.
	var picked []string
	total := 0
	step := max(1, len(all)/400)
	for i := 0; i < len(all) && total < maxBytes; i += step {
		fi, err := os.Stat(all[i])
		if err != nil || fi.Size() > 256<<10 {
			continue
		}
		picked = append(picked, all[i])
		total += int(fi.Size())
	}
	return picked
}

func pythonStdlib(t *testing.T) string {
	out, err := exec.Command("python3", "-c", `import sysconfig; print(sysconfig.get_paths()["stdlib"])`).Output()
	if err != nil {
		t.Fatalf("python3 is needed for the Python standard library corpus: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestAdmitterCountsWholeOutput proves the incremental count: on real
// corpora, the sum of the rows' counts equals the tokenizer's count of the
// whole output, for hread's rows and for hgrep's path-prefixed rows, and
// the Admitter decides exactly as the whole-output reference does.
func TestAdmitterCountsWholeOutput(t *testing.T) {
	corpora := map[string][]string{
		filepath.Join(runtime.GOROOT(), "src"): corpusFiles(t, filepath.Join(runtime.GOROOT(), "src"), []string{".go"}, 3<<19),
		"python":                               corpusFiles(t, pythonStdlib(t), []string{".py"}, 3<<19),
	}
	for name, files := range corpora {
		checked := 0
		for _, path := range files {
			data, err := os.ReadFile(path)
			if err != nil || !utf8.Valid(data) {
				continue
			}
			for _, prefix := range []string{"", strconv.Quote(path) + ":"} {
				var list [][]byte
				sum := 0
				var whole []byte
				sc := NewScanner(bytes.NewReader(data))
				for sc.Scan(MaxRowBytes) {
					row := append([]byte(prefix), AppendRow(nil, sc.Line(), sc.Text())...)
					list = append(list, row)
					sum += CountTokens(string(row))
					whole = append(whole, row...)
				}
				if n := CountTokens(string(whole)); n != sum {
					t.Fatalf("%s (prefix %q): whole output %d tokens, sum of rows %d", path, prefix, n, sum)
				}
				var buf bytes.Buffer
				a := NewAdmitter(&buf, DefaultBudget)
				for _, r := range list {
					if ok, _ := a.Admit(r); !ok {
						break
					}
				}
				if err := a.Flush(); err != nil {
					t.Fatal(err)
				}
				want, omitted := whole, false
				if sum > TokenLimit {
					want, omitted = admitReference(list)
				}
				if !bytes.Equal(buf.Bytes(), want) || a.Report().Omitted != omitted {
					t.Fatalf("%s: admitter wrote %d bytes (omitted %v), reference %d (omitted %v)", path, buf.Len(), a.Report().Omitted, len(want), omitted)
				}
				if n := CountTokens(buf.String()); n != a.Tokens() {
					t.Fatalf("%s: report says %d tokens, output has %d", path, a.Tokens(), n)
				}
			}
			checked++
		}
		t.Logf("%s: %d files checked", name, checked)
		if checked < 50 {
			t.Fatalf("%s: only %d files checked", name, checked)
		}
	}
}

// The byte ceiling applies with the token rule: the rows admitted are the
// longest prefix whose bytes stay within MaxBytes-Reserve, unless the
// token rule stops them first; the report says which bound it was.
func TestAdmitterByteCeiling(t *testing.T) {
	var list [][]byte
	for i := 1; i <= 400; i++ {
		text := strings.Repeat(fmt.Sprintf("word%d ", i), i%7*10)
		list = append(list, AppendRow(nil, i, []byte(text)))
	}
	tokenRef, _ := admitReference(list)
	for _, b := range []Budget{
		{Limit: TokenLimit, Ceiling: TokenCeiling, MaxBytes: 9600, Reserve: 60},
		{Limit: TokenLimit, Ceiling: TokenCeiling, MaxBytes: 40000},
		{Limit: TokenLimit, Ceiling: TokenCeiling, MaxBytes: 1 << 30, Reserve: 100}, // the tokens stop first
		{Limit: TokenLimit, Ceiling: TokenCeiling, MaxBytes: 10, Reserve: 5},        // not even one row
	} {
		// Reference: whole rows while the bytes fit, then the token rule's
		// own prefix, whichever is shorter.
		var byteRef []byte
		for _, r := range list {
			if len(byteRef)+len(r) > b.MaxBytes-b.Reserve {
				break
			}
			byteRef = append(byteRef, r...)
		}
		want, byBytes := byteRef, true
		if len(tokenRef) <= len(byteRef) {
			want, byBytes = tokenRef, false
		}
		var buf bytes.Buffer
		a := NewAdmitter(&buf, b)
		for _, r := range list {
			a.Admit(r)
		}
		if err := a.Flush(); err != nil {
			t.Fatal(err)
		}
		rep := a.Report()
		if buf.String() != string(want) || !rep.Omitted || rep.Bytes != byBytes {
			t.Errorf("%+v: %d bytes (report %+v), want %d bytes, by bytes %v", b, buf.Len(), rep, len(want), byBytes)
		}
		if buf.Len() > b.MaxBytes-b.Reserve {
			t.Errorf("%+v: %d bytes pass the ceiling", b, buf.Len())
		}
		wantMsg := "15,000-token limit reached"
		if byBytes {
			wantMsg = errs.IncompleteBytes(b.MaxBytes).Msg
		}
		if got := Incomplete(&Printer{adm: a}).Msg; got != wantMsg {
			t.Errorf("%+v: %q, want %q", b, got, wantMsg)
		}
	}
	if got := (Budget{Limit: 1, Ceiling: 1, MaxBytes: 9600}).Stopped(true).Error(); got != "output_incomplete: 9,600-byte output limit reached" {
		t.Errorf("%q", got)
	}
}
