package inspect

import (
	"strings"
	"testing"
	"time"
)

func TestOutlineJSON(t *testing.T) { runOutlineCases(t, jsonCases) }

var jsonCases = []outlineCase{{
	name: "every value depth first, pointers escaped",
	file: "x.json",
	src: `{
  "a/b": {"c~d": [1, "s", null, true, false]},
  "": {},
  "dup": 1,
  "dup": [],
  "esc\u002fx\n": -1.5e3
}
`,
	want: []string{
		`json "" object 1-7`,
		`json "/a~1b" object 2-2`,
		`json "/a~1b/c~0d" array 2-2`,
		`json "/a~1b/c~0d/0" number 2-2`,
		`json "/a~1b/c~0d/1" string 2-2`,
		`json "/a~1b/c~0d/2" null 2-2`,
		`json "/a~1b/c~0d/3" boolean 2-2`,
		`json "/a~1b/c~0d/4" boolean 2-2`,
		`json "/" object 3-3`,
		`json "/dup" number 4-4`,
		`json "/dup" array 5-5`,
		"json \"/esc~1x\\n\" number 6-6",
	},
	complete: true,
}, {
	// encoding/json escapes <, > and & where the command does not: the
	// decoded values are still equal (checkData).
	name:     "HTML characters in keys",
	file:     "x.json",
	src:      "{\"<a&b>\": {\"\u2028\": 1}}",
	want:     []string{`json "" object 1-1`, `json "/<a&b>" object 1-1`, "json \"/<a&b>/\\u2028\" number 1-1"},
	complete: true,
}, {
	name:     "scalar root",
	file:     "x.json",
	src:      `"just a string"`,
	want:     []string{`json "" string 1-1`},
	complete: true,
}, {
	name:     "multi-line string and nested arrays",
	file:     "x.json",
	src:      "[[\n[]\n],\n{\"k\":\n\"v\"}]",
	want:     []string{`json "" array 1-5`, `json "/0" array 1-3`, `json "/0/0" array 2-2`, `json "/1" object 4-5`, `json "/1/k" string 5-5`},
	complete: true,
}, {
	name: "recovery from missing and stray tokens",
	file: "x.json",
	src:  `{"a": 1,, "b" 2 "c": [1 2], "d": }`,
	want: []string{`json "" object 1-1`, `json "/a" number 1-1`, `json "/b" number 1-1`,
		`json "/c" array 1-1`, `json "/c/0" number 1-1`, `json "/c/1" number 1-1`},
	complete: false,
}, {
	name:     "unclosed containers end at the last token",
	file:     "x.json",
	src:      "{\"a\": [1,\n2\n\n",
	want:     []string{`json "" object 1-2`, `json "/a" array 1-2`, `json "/a/0" number 1-1`, `json "/a/1" number 2-2`},
	complete: false,
}, {
	name: "mismatched bracket closes the nearest container of its kind",
	file: "x.json",
	// "]" closes {"b"...} and [1...; the next "}" closes the root, so
	// "c" comes after the root value and is ignored.
	src:      "{\"a\": [1, {\"b\": 2]},\n\"c\": 3}",
	want:     []string{`json "" object 1-1`, `json "/a" array 1-1`, `json "/a/0" number 1-1`, `json "/a/1" object 1-1`, `json "/a/1/b" number 1-1`},
	complete: false,
}, {
	name:     "invalid scalars are still typed",
	file:     "x.json",
	src:      `[01, "tab	in", tru, "\q"]`,
	want:     []string{`json "" array 1-1`, `json "/0" number 1-1`, `json "/1" string 1-1`, `json "/2" string 1-1`},
	complete: false,
}, {
	name:     "content after the root",
	file:     "x.json",
	src:      "{}\n{}\n",
	want:     []string{`json "" object 1-1`},
	complete: false,
}, {
	name:     "empty file",
	file:     "x.json",
	src:      "",
	complete: false,
}, {
	name:     "byte order mark",
	file:     "x.json",
	src:      "\ufeff[true]",
	want:     []string{`json "" array 1-1`, `json "/0" boolean 1-1`},
	complete: true,
}, {
	name:     "surrogate pair key",
	file:     "x.json",
	src:      `{"\ud83d\ude00": 0}`,
	want:     []string{`json "" object 1-1`, "json \"/\U0001F600\" number 1-1"},
	complete: true,
}}

// A deeply nested document costs linear memory and keeps a bounded outline.
func TestOutlineJSONDeep(t *testing.T) {
	const depth = 200000
	src := strings.Repeat("[", depth) + strings.Repeat("]", depth)
	d, err := OutlineSource(ctx, "deep.json", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if !d.ParseComplete {
		t.Error("a deep but valid document is complete")
	}
	res, out, err := newResultJSON(d)
	if err != nil {
		t.Fatal(err)
	}
	if res.Truncation == nil || len(out) > MaxOutputBytes {
		t.Fatalf("want a truncated result within the bound, got %d bytes", len(out))
	}
	checkEnvelope(t, out, res)
}

// Stray closing brackets cost constant time each: a deep stack of arrays
// followed by as many stray braces is linear, not quadratic.
func TestOutlineJSONStrayBrackets(t *testing.T) {
	const n = 300000
	src := strings.Repeat("[", n) + strings.Repeat("}", n)
	start := time.Now()
	d, err := OutlineSource(ctx, "stray.json", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if d.ParseComplete {
		t.Error("stray braces make the document incomplete")
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("took %v", el)
	}
}
