package rows_test

import (
	"fmt"
	"os"

	"github.com/rowkit/rowkit/internal/rows"
)

// An embedder splits a file into verified rows and prints them under the
// token admission rule, the way hread does.
func Example() {
	src := []byte("alpha\r\nbeta\rgamma")
	x, err := rows.NewIndex(src)
	if err != nil {
		panic(err) // invalid UTF-8
	}
	p := rows.NewPrinter(os.Stdout, rows.DefaultBudget)
	for n := 1; n <= x.Count(); n++ {
		if ok, _ := p.Put(rows.Row{Line: n, Text: x.Text(n)}); !ok {
			fmt.Println(rows.Incomplete(p))
			break
		}
	}
	p.Flush()
	fmt.Println(x.Term(1).Name(), x.Term(2).Name(), x.Term(3).Name())
	// Output:
	// 1:8ed3 alpha
	// 2:f44e beta
	// 3:be9d gamma
	// CRLF CR none
}

// A Collector gives the same rows as structured records, for JSON results.
func ExampleCollector() {
	c := rows.NewCollector(rows.DefaultBudget)
	c.Put(rows.Row{Path: "notes.txt", Line: 4, Text: []byte("needle")})
	fmt.Printf("%+v\n", c.Records[0])
	// Output:
	// {Path:notes.txt Line:4 Hash:0988 Text:needle Clamped:false SourceChars:0}
}
