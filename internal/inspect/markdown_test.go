package inspect

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
)

func TestOutlineMarkdown(t *testing.T) { runOutlineCases(t, markdownCases) }

// nestedHeadings is a list nested one level deeper on each line, each item
// a heading: levels 1 to 50 use 100 containers, so h49 is the deepest
// heading; the lines after it are paragraph text.
func nestedHeadings(lines int) (src string, want []string) {
	var b strings.Builder
	for i := range lines {
		fmt.Fprintf(&b, "%s- # h%d\n", strings.Repeat("  ", i), i)
		if i < maxNesting/2 {
			want = append(want, fmt.Sprintf("heading h%d 1 %d-%d", i, i+1, i+1))
		}
	}
	return b.String(), want
}

var markdownCases = []outlineCase{{
	name: "headings and frontmatter",
	file: "x.md",
	src: `---
title: Hello
tags:
  - a
  - b

# a YAML comment, not a heading
nested:
  inner: 1
"quoted key": x
title: again
---
# Top #
Setext
======
Also setext
---
` + "```" + `
# fenced, not a heading
` + "```" + `
~~~md
## also fenced
~~~
    # indented code
## Second ## ##
> ### Quoted
- #### In a list
#hashtag
####### seven
#
###### Six ######
`,
	want: []string{
		"frontmatter title 2-2",
		"frontmatter tags 3-5",
		"frontmatter nested 8-9",
		"frontmatter quoted key 10-10",
		"frontmatter title 11-11",
		"heading Top 1 13-13",
		"heading Second ## 2 25-25",
		"heading Quoted 3 26-26",
		"heading In a list 4 27-27",
		"heading  1 30-30",
		"heading Six 6 31-31",
	},
	complete: false, // the duplicate title
}, {
	name:     "unclosed frontmatter is Markdown",
	file:     "x.md",
	src:      "---\ntitle: x\n# Heading\n",
	want:     []string{"heading Heading 1 3-3"},
	complete: true,
}, {
	name:     "frontmatter must start on line 1",
	file:     "x.md",
	src:      "\n---\na: 1\n---\n",
	complete: true,
}, {
	name:     "invalid YAML adds no keys",
	file:     "x.md",
	src:      "---\na: [1\nb: 2\n---\n# H\n",
	want:     []string{"heading H 1 5-5"},
	complete: false,
}, {
	name:     "flow mapping keys share a line",
	file:     "x.md",
	src:      "---\n{a: 1, b: [x,\n  y]}\n---\n",
	want:     []string{"frontmatter a 2-3", "frontmatter b 2-3"},
	complete: true,
}, {
	name:     "YAML that is not a mapping",
	file:     "x.md",
	src:      "---\n- a\n- b\n---\n",
	complete: true,
}, {
	name:     "lone CR and CRLF end lines",
	file:     "x.md",
	src:      "---\r\na: 1\rb: 2\r\n---\r# One\r## Two\r\n",
	want:     []string{"frontmatter a 2-2", "frontmatter b 3-3", "heading One 1 5-5", "heading Two 2 6-6"},
	complete: true,
}, {
	name:     "unclosed fence hides the rest",
	file:     "x.md",
	src:      "# A\n```\n# B\n",
	want:     []string{"heading A 1 1-1"},
	complete: true,
}, {
	name:     "empty",
	file:     "x.md",
	src:      "",
	complete: true,
}, {
	name:     "block quotes nest up to the bound",
	file:     "x.md",
	src:      strings.Repeat("> ", maxNesting) + "# deep\n\n" + strings.Repeat("> ", maxNesting+1) + "# too deep\n\n" + strings.Repeat(">", 5000) + "# five thousand\n\n# after\n",
	want:     []string{"heading deep 1 1-1", "heading after 1 7-7"},
	complete: true,
}, {
	name: "lists nest up to the bound",
	file: "x.md",
	src:  func() string { s, _ := nestedHeadings(maxNesting/2 + 3); return s + "\n# after\n" }(),
	want: func() []string {
		_, w := nestedHeadings(maxNesting/2 + 3)
		return append(w, fmt.Sprintf("heading after 1 %d-%d", maxNesting/2+5, maxNesting/2+5))
	}(),
	complete: true,
}, {
	name:     "a deep list on one line, then a heading",
	file:     "x.md",
	src:      strings.Repeat("- ", 3000) + "x\nlazy\n\n# after\n",
	want:     []string{"heading after 1 4-4"},
	complete: true,
}}

// TestMarkdownNestingIsLinear counts the bytes goldmark reads through its
// reader (every line it peeks at, each time) for hostile nesting of n and
// 8n levels: per input byte it stays the same. Unbounded, one line of
// 40,000 "- " (80 KB) made goldmark peek at the rest of the line once per
// level and took 6.9 s.
func TestMarkdownNestingIsLinear(t *testing.T) {
	shapes := map[string]func(n int) string{
		"list on one line":  func(n int) string { return strings.Repeat("- ", n) + "x\n" },
		"quote on one line": func(n int) string { return strings.Repeat("> ", n) + "x\n" },
		"mixed on one line": func(n int) string { return strings.Repeat("> - ", n) + "x\n" },
		"deep, then lazy lines": func(n int) string {
			return strings.Repeat("- ", n) + "x\n" + strings.Repeat("lazy\n", n)
		},
		"deep, then blank and indented lines": func(n int) string {
			return strings.Repeat("- ", n) + "x\n" + strings.Repeat("\n"+strings.Repeat(" ", 200)+"y\n", n/10)
		},
		"growing indentation": func(n int) string {
			var b strings.Builder
			for i := range n / 20 {
				b.WriteString(strings.Repeat("  ", i%200) + "- y\n")
			}
			return b.String()
		},
	}
	for name, gen := range shapes {
		var perByte [2]float64
		for k, n := range []int{5000, 40000} {
			src := gen(n)
			var peeked int64
			peekedBytes = func(p int64) { peeked = p }
			if _, _, err := outlineMarkdown(context.Background(), []byte(src)); err != nil {
				t.Fatal(err)
			}
			peekedBytes = nil
			perByte[k] = float64(peeked) / float64(len(src))
		}
		// A few peeks per level of the line's rest, at most maxNesting
		// levels: a constant per byte.
		if perByte[1] > 1.2*perByte[0]+1 || perByte[1] > 4*maxNesting {
			t.Errorf("%s: %.1f bytes peeked per input byte at n, %.1f at 8n", name, perByte[0], perByte[1])
		}
	}
}

// cancelAfter is a context that reports cancellation from the k-th call
// of Err on: a parse is cancelled at a known point without a clock.
type cancelAfter struct {
	context.Context
	k, calls atomic.Int64
}

func (c *cancelAfter) Err() error {
	if c.calls.Add(1) >= c.k.Load() {
		return context.Canceled
	}
	return nil
}

// A cancelled ctx stops goldmark mid-document: the reader ends the input
// at the next check, so a fraction of the lines is read.
func TestMarkdownStopsOnCancel(t *testing.T) {
	// Fewer headings than an outline keeps, so that the whole document is
	// parsed when nothing cancels it.
	src := []byte(strings.Repeat("# h\n\n"+strings.Repeat("para\n- item\n> quote\n\n", 100), 400))
	var full int64
	peekedBytes = func(p int64) { full += p } // per piece
	if _, _, err := outlineMarkdown(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	c := &cancelAfter{Context: context.Background()}
	c.k.Store(2)
	var partial int64
	peekedBytes = func(p int64) { partial += p }
	defer func() { peekedBytes = nil }()
	_, _, err := outlineMarkdown(c, src)
	if err != context.Canceled {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if partial*10 > full {
		t.Fatalf("cancelled parse peeked %d bytes of %d", partial, full)
	}
	if _, err := OutlineSource(c, "x.md", src); err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("OutlineSource: %v", err)
	}
}
