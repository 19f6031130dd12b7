package tokens

import (
	"os"
	"path/filepath"
	"runtime"
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
