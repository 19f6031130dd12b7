package tokens

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

func BenchmarkCountContext(b *testing.B) {
	var texts []string
	for r := rune(0); r <= utf8.MaxRune; r += 97 {
		if utf8.ValidRune(r) {
			texts = append(texts, context(string(r)))
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, s := range texts {
			Count(s)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(texts)), "ns/text")
}

// BenchmarkCountGoSource counts a real 40 KB-class Go file, as hread does.
func BenchmarkCountGoSource(b *testing.B) {
	src, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "strings", "strings.go"))
	if err != nil {
		b.Fatal(err)
	}
	s := string(src)
	b.SetBytes(int64(len(s)))
	for i := 0; i < b.N; i++ {
		Count(s)
	}
}

// BenchmarkCountRows counts the verified rows of runtime/mpagealloc.go one by
// one, as rows.Admitter counts each row past its first 15,000 bytes: the
// work of hread FILE and of MCP read_file's token admission.
func BenchmarkCountRows(b *testing.B) {
	src, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "src", "runtime", "mpagealloc.go"))
	if err != nil {
		b.Fatal(err)
	}
	var rows []string
	size := 0
	for i, line := range strings.SplitAfter(string(src), "\n") {
		if line == "" {
			continue
		}
		r := fmt.Sprintf("%d:%04x %s", i+1, uint16(i*40503), strings.TrimSuffix(line, "\n")) + "\n"
		rows = append(rows, r)
		size += len(r)
	}
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, r := range rows {
			Count(r)
		}
	}
}
