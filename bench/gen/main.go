// Command gen writes a large text file for the benchmarks: code-like and
// prose lines with multi-byte UTF-8, ending in a mix of LF, CRLF and lone CR
// (or LF only, with -lf).
//
//	go run ./bench/gen -size 536870912 [-lf] -o FILE
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"os"
)

var lines = []string{
	"func (s *Scanner) Scan(keep int) bool {",
	"\treturn s.err == nil && s.pos < s.end",
	"}",
	"",
	"// Größenordnung: naïve café, façade, coöperate — déjà vu.",
	"    value = compute(alpha, beta, gamma)  # 計算する",
	"日本語のテキストと English text mixed together, with numbers 12345.",
	"Ελληνικά και русский текст; emoji 🚀✨ and symbols ≤ ≥ ≠ ∞.",
	"\t\tif err != nil { return fmt.Errorf(\"read %s: %w\", path, err) }",
	"SELECT id, name FROM users WHERE created_at > NOW() - INTERVAL '1 day';",
}

var terminators = []string{"\n", "\n", "\n", "\n", "\n", "\n", "\r\n", "\r\n", "\n", "\r"}

func main() {
	size := flag.Int64("size", 512<<20, "bytes to write (at least)")
	out := flag.String("o", "", "output file")
	lf := flag.Bool("lf", false, "end every line in LF (as git diff and git apply expect)")
	flag.Parse()
	if *out == "" {
		log.Fatal("gen: -o FILE is required")
	}
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var n int64
	for i := 0; n < *size; i++ {
		term := terminators[(i/3)%len(terminators)]
		if *lf {
			term = "\n"
		}
		m, _ := fmt.Fprintf(w, "%s %d%s", lines[i%len(lines)], i, term)
		n += int64(m)
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}
