package rows

import (
	"os"
	"testing"
)

// BenchmarkDrain measures streaming validation over the file named by
// ROWKIT_BENCH_FILE (see bench/hread.sh), or over generated text.
func BenchmarkDrain(b *testing.B) {
	data := benchData(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		sc := NewScanner(&chunkReader{data: data, sizes: []int{bufSize}})
		if err := sc.Drain(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScan measures splitting into lines without keeping text.
func BenchmarkScan(b *testing.B) {
	data := benchData(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		sc := NewScanner(&chunkReader{data: data, sizes: []int{bufSize}})
		for sc.Scan(0) {
		}
		if err := sc.Err(); err != nil {
			b.Fatal(err)
		}
	}
}

func benchData(b *testing.B) []byte {
	if name := os.Getenv("ROWKIT_BENCH_FILE"); name != "" {
		data, err := os.ReadFile(name)
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	var data []byte
	lines := []string{"func (s *Scanner) Scan(keep int) bool {\n", "\t日本語のテキストと English text, naïve café\r\n", "}\r", "\n"}
	for i := 0; len(data) < 32<<20; i++ {
		data = append(data, lines[i%len(lines)]...)
	}
	return data
}
