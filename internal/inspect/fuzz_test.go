package inspect

import (
	"errors"
	"testing"

	"github.com/rowkit/rowkit/internal/rows"
)

// Each projection, on any input: never panics, returns either a clean
// encoding error or an outline whose spans are real rows in order, whose
// names come from their own span, and whose envelope is valid JSON within
// 65,536 bytes with no fields but the declared ones (checkData).

func seed(f *testing.F, cases []outlineCase) {
	for _, c := range cases {
		f.Add([]byte(c.src))
	}
}

func fuzzOutline(t *testing.T, name string, src []byte) {
	d, err := OutlineSource(ctx, name, src)
	if err != nil {
		var ee *rows.EncodingError
		if !errors.As(err, &ee) {
			t.Fatalf("%s: unexpected error %v", name, err)
		}
		return
	}
	checkData(t, d, src)
}

func FuzzGo(f *testing.F) {
	seed(f, goCases)
	f.Fuzz(func(t *testing.T, src []byte) { fuzzOutline(t, "f.go", src) })
}

func FuzzPython(f *testing.F) {
	seed(f, pythonCases)
	f.Fuzz(func(t *testing.T, src []byte) { fuzzOutline(t, "f.py", src) })
}

func FuzzScript(f *testing.F) {
	for _, c := range scriptCases {
		for i := range 3 {
			f.Add(byte(i), []byte(c.src))
		}
	}
	names := []string{"f.ts", "f.tsx", "f.js"}
	f.Fuzz(func(t *testing.T, dialect byte, src []byte) {
		fuzzOutline(t, names[int(dialect)%len(names)], src)
	})
}

func FuzzMarkdown(f *testing.F) {
	seed(f, markdownCases)
	f.Fuzz(func(t *testing.T, src []byte) { fuzzOutline(t, "f.md", src) })
}

func FuzzJSON(f *testing.F) {
	seed(f, jsonCases)
	f.Fuzz(func(t *testing.T, src []byte) { fuzzOutline(t, "f.json", src) })
}

// FuzzPieces: a source that parses whole without error has the same
// outline in pieces of a few bytes, in every language that is cut.
func FuzzPieces(f *testing.F) {
	names := []string{"f.go", "f.py", "f.ts", "f.tsx", "f.js", "f.md"}
	for i, cases := range [][]outlineCase{goCases, pythonCases, scriptCases, scriptCases, scriptCases, markdownCases} {
		for _, c := range cases {
			f.Add(byte(i), uint8(8), []byte(c.src))
		}
	}
	f.Fuzz(func(t *testing.T, lang byte, size uint8, src []byte) {
		name := names[int(lang)%len(names)]
		defer func(n int) { pieceBytes = n }(pieceBytes)
		pieceBytes = 1 << 30
		whole, err := OutlineSource(ctx, name, src)
		if err != nil || !whole.ParseComplete {
			return
		}
		pieceBytes = int(size)
		pieced, err := OutlineSource(ctx, name, src)
		if err != nil {
			t.Fatal(err)
		}
		if !pieced.ParseComplete || !sameEntries(whole.Outline, pieced.Outline) {
			t.Fatalf("%s in pieces of %d: complete %v\n%s\nwhole:\n%s", name, size, pieced.ParseComplete, entriesText(pieced.Outline), entriesText(whole.Outline))
		}
	})
}
