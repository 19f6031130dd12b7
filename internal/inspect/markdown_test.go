package inspect

import "testing"

func TestOutlineMarkdown(t *testing.T) { runOutlineCases(t, markdownCases) }

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
}}
