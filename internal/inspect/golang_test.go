package inspect

import "testing"

func TestOutlineGo(t *testing.T) { runOutlineCases(t, goCases) }

var goCases = []outlineCase{{
	name: "declarations",
	file: "x.go",
	src: `package p

import "fmt"

import (
"os"
str "strings"
_ "embed"
. "path"
)

const Pi = 3.14

const (
A, B = 1, 2
_    = 3
C
)

var (
x int
y = func() int { inner := 1; return inner }()
)

type (
T struct {
	Field int
}
G[K comparable, V any] map[K]V
)

type I interface {
Method()
}

// Doc comments are not part of a span.
func F[P any](p P) {
var local int
_ = local
}

func (s *Server) Serve() {}

func (t *T[P]) Generic() {}

func (g G[K, V]) Pair() {}

func (Recv) Anon() {}

func _() {}
`,
	want: []string{
		"import fmt 3-3",
		"import os 6-6", "import strings 7-7", "import embed 8-8", "import path 9-9",
		"constant Pi 12-12",
		"constant A 15-15", "constant B 15-15", "constant C 17-17",
		"variable x 21-21", "variable y 22-22",
		"type T 26-28", "type G 29-29",
		"type I 32-34",
		"function F 37-40",
		"method Serve *Server 42-42",
		"method Generic *T[P] 44-44",
		"method Pair G[K,V] 46-46",
		"method Anon Recv 48-48",
	},
	complete: true,
}, {
	name:     "syntax error keeps what was recovered",
	file:     "x.go",
	src:      "package p\n\nfunc Good() {}\n\nfunc Bad( {\n\nvar After = 1\n",
	want:     []string{"function Good 3-3", "function Bad 5-7"},
	complete: false,
}, {
	name:     "no package clause",
	file:     "x.go",
	src:      "func F() {}\n",
	complete: false,
}, {
	name:     "empty file",
	file:     "x.go",
	src:      "",
	complete: false,
}, {
	name: "CRLF and lone CR line endings",
	file: "x.go",
	src:  "package p\r\n\r\nfunc A() {\r\n}\r\nfunc B() {\r}\n// c\rfunc C() {}\n",
	// A lone CR ends a row, and here a line of Go too: the comment ends
	// at it, and C is the declaration on the next row.
	want:     []string{"function A 3-4", "function B 5-6", "function C 8-8"},
	complete: true,
}, {
	// Issue 10: lone CRs only. go/parser alone reads the file as one line
	// and cannot even find the import.
	name:     "lone CR line endings throughout",
	file:     "x.go",
	src:      "package p\r\rimport (\r\t\"fmt\"\r\t\"os\"\r)\r\r// Doc.\rfunc Main() {\r\tfmt.Println(os.Args)\r}\r\rtype T struct {\r\tA int\r}\r\rfunc (t *T) M() {}\r",
	want:     []string{"import fmt 4-4", "import os 5-5", "function Main 9-11", "type T 13-15", "method M *T 17-17"},
	complete: true,
}}
