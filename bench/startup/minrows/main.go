// Command minrows is the floor that hread's start-up is measured against
// (bench/startup.sh): the least a Go program must do to print a file as
// verified rows. It reads the whole file, checks that it is UTF-8, splits it
// into logical lines (LF, CRLF or a lone CR; a terminator at the very end
// adds no line) and prints "LINE:HASH TEXT" for each, HASH the first two
// bytes of the line's SHA-256 in hex. No token counting, no options, no
// bound: what is left of hread once everything but its output is taken
// away.
//
//	minrows FILE
package main

import (
	"bufio"
	"crypto/sha256"
	"os"
	"strconv"
	"unicode/utf8"
)

func main() {
	if len(os.Args) != 2 {
		os.Stderr.WriteString("usage: minrows FILE\n")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		os.Stderr.WriteString("minrows: " + err.Error() + "\n")
		os.Exit(1)
	}
	if !utf8.Valid(data) {
		os.Stderr.WriteString("minrows: not UTF-8\n")
		os.Exit(1)
	}
	const hex = "0123456789abcdef"
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	var row []byte
	line := 0
	for start := 0; start < len(data); {
		end, next := start, len(data)
		for end < len(data) && data[end] != '\n' && data[end] != '\r' {
			end++
		}
		if end < len(data) {
			next = end + 1
			if data[end] == '\r' && next < len(data) && data[next] == '\n' {
				next++
			}
		}
		line++
		text := data[start:end]
		sum := sha256.Sum256(text)
		row = strconv.AppendInt(row[:0], int64(line), 10)
		row = append(row, ':', hex[sum[0]>>4], hex[sum[0]&15], hex[sum[1]>>4], hex[sum[1]&15], ' ')
		row = append(row, text...)
		row = append(row, '\n')
		w.Write(row)
		start = next
	}
	if err := w.Flush(); err != nil {
		os.Exit(1)
	}
}
