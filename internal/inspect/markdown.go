package inspect

// Markdown projection (goldmark for CommonMark block structure,
// go.yaml.in/yaml/v3 for frontmatter).
//
//   - frontmatter: when line 1 is "---" and a later line is "---" or
//     "...", the lines between are a YAML frontmatter block. Each top-level
//     key that is a scalar becomes one entry named by the key, in source
//     order, duplicates kept; its span runs from the key's line to the last
//     line of its value (trailing blank and comment lines excluded). Values
//     and nested keys are never reported. A YAML error or a duplicate key
//     sets parse_complete false; a block that does not parse adds no
//     entries. Without a closing line there is no frontmatter.
//   - heading: each ATX heading ("#" to "######") outside code blocks and
//     HTML blocks, anywhere in the block structure (also inside lists and
//     block quotes), with its level; the name is the heading's raw text
//     without the opening and closing "#" runs, trimmed. Setext headings
//     (text underlined with === or ---) are not headings here. A heading's
//     span is its own line.
//
// CommonMark has no syntax errors, so only the frontmatter can make a
// Markdown result incomplete. (REQ-INSPECT-001 names Lezer, the parser of
// its JavaScript implementation; goldmark is the CommonMark parser here, so
// there is no Lezer recovery to report.) A lone CR ends a line for goldmark and YAML
// as it does for verified rows.
//
// Nesting is bounded: a block quote, list or list item that would nest
// deeper than maxNesting containers is not opened, and its line is read as
// paragraph text (markdown-it bounds nesting the same way), so a heading
// inside it is not reported. CommonMark checks every open container on
// every line, and goldmark rescans the rest of a line for each container it
// opens on it, so unbounded nesting made the outline quadratic: 40,000
// "- " on one line (80 KB) took 6.9 s. Bounded, the work is linear in the
// input, and a cancelled ctx ends the parse within a few thousand lines.

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"sync"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
	"go.yaml.in/yaml/v3"

	"github.com/rowkit/rowkit/internal/lang"
)

// maxNesting is how many containers (block quotes, lists, list items) may
// nest: far more than any document a person writes (a list nested ten deep
// uses twenty).
const maxNesting = 100

// mdParser recognises block structure only: inline syntax cannot create or
// hide an ATX heading, so no inline parsers run. It is set up on first use,
// not at the start of every rowkit process.
var mdParser = sync.OnceValue(func() parser.Parser {
	return parser.NewParser(
		parser.WithBlockParsers(boundedBlockParsers()...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
		parser.WithInlineParsers([]util.PrioritizedValue{}...),
	)
})

// boundedBlockParsers are goldmark's defaults with the list and block
// quote parsers bounded to maxNesting.
func boundedBlockParsers() []util.PrioritizedValue {
	quote := reflect.TypeOf(parser.NewBlockquoteParser())
	list := reflect.TypeOf(parser.NewListParser())
	ps := parser.DefaultBlockParsers()
	for i, p := range ps {
		switch bp := p.Value.(parser.BlockParser); reflect.TypeOf(bp) {
		case quote:
			ps[i].Value = bounded{bp, 1}
		case list:
			ps[i].Value = bounded{bp, 2} // the list and the item it needs
		}
	}
	return ps
}

// bounded opens its parser's container only when it and the containers
// it needs inside it stay within maxNesting.
type bounded struct {
	parser.BlockParser
	adds int // containers an opening adds
}

func (b bounded) Open(parent ast.Node, r text.Reader, pc parser.Context) (ast.Node, parser.State) {
	if nesting(parent)+b.adds > maxNesting {
		return nil, parser.NoChildren
	}
	return b.BlockParser.Open(parent, r, pc)
}

// nesting counts the containers from n up, stopping past maxNesting.
func nesting(n ast.Node) int {
	d := 0
	for ; n != nil && d <= maxNesting; n = n.Parent() {
		switch n.(type) {
		case *ast.Blockquote, *ast.List, *ast.ListItem:
			d++
		}
	}
	return d
}

// mdReader is goldmark's reader over the source with two additions: after
// ctx is done, checked every checkLines lines, it reports the end of the
// input, so goldmark (which takes no context) closes its blocks and
// returns; and it counts the bytes of the lines it hands out, the work a
// test measures.
type mdReader struct {
	text.Reader
	ctx    context.Context
	lines  int
	done   bool
	peeked int64
}

const checkLines = 4096

func (r *mdReader) AdvanceLine() {
	r.Reader.AdvanceLine()
	if r.lines++; r.lines%checkLines == 0 && r.ctx.Err() != nil {
		r.done = true
	}
}

func (r *mdReader) PeekLine() ([]byte, text.Segment) {
	if r.done {
		return nil, text.Segment{Start: -1, Stop: -1}
	}
	line, seg := r.Reader.PeekLine()
	r.peeked += int64(len(line))
	return line, seg
}

func (r *mdReader) SkipBlankLines() (text.Segment, int, bool) {
	if r.done {
		return text.Segment{}, 0, false
	}
	return r.Reader.SkipBlankLines()
}

// peekedBytes, when set (by tests), receives the bytes a parse peeked.
var peekedBytes func(n int64)

func outlineMarkdown(ctx context.Context, src []byte) ([]Entry, bool, error) {
	norm := lang.LoneCRAsLF(src)
	var out []Entry
	complete := true
	body := 0
	if content, end, ok := frontmatter(norm); ok {
		body = end
		var fmComplete bool
		out, fmComplete = outlineFrontmatter(norm, content)
		complete = complete && fmComplete
	}
	headings, _, err := inPieces(ctx, norm[body:], markdownCutAt, outlineMarkdownPiece)
	if err != nil {
		return nil, false, err
	}
	for _, e := range headings {
		e.start += body
		e.end += body
		out = append(out, e)
	}
	return out, complete, nil
}

// outlineMarkdownPiece outlines the headings of one piece of a Markdown
// body. The piece ends cleanly unless its last top-level block is a
// fenced code block or an HTML block, the only blocks that can go on past
// a blank line and a line at column 0 (see markdownCutAt).
func outlineMarkdownPiece(ctx context.Context, src []byte, _, want bool) ([]Entry, bool, bool, error) {
	if !want {
		// CommonMark has no errors: without entries wanted there is
		// nothing to learn from the rest of the body.
		return nil, true, true, ctx.Err()
	}
	r := &mdReader{Reader: text.NewReader(src), ctx: ctx}
	doc := mdParser().Parse(r)
	if peekedBytes != nil {
		peekedBytes(r.peeked)
	}
	if err := ctx.Err(); err != nil {
		return nil, false, false, err
	}
	var out []Entry
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		h, ok := n.(*ast.Heading)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		pos := h.Pos()
		if pos < 0 || !isATX(src[pos:]) {
			return ast.WalkSkipChildren, nil
		}
		name := ""
		if lines := h.Lines(); lines.Len() > 0 {
			seg := lines.At(0)
			name = strings.TrimSpace(string(src[seg.Start:seg.Stop]))
		}
		out = append(out, withLevel(newEntry(KindHeading, name, "", pos, pos+1), h.Level))
		return ast.WalkSkipChildren, nil
	})
	closed := true
	switch doc.LastChild().(type) {
	case *ast.FencedCodeBlock, *ast.HTMLBlock:
		closed = false
	}
	return out, true, closed, nil
}

// isATX reports whether b starts with an ATX heading opener: one to six
// "#" followed by a space, a tab or the end of the line. A Setext heading
// cannot start so, or it would have been an ATX heading.
func isATX(b []byte) bool {
	n := 0
	for n < len(b) && b[n] == '#' {
		n++
	}
	if n == 0 || n > 6 {
		return false
	}
	return n == len(b) || b[n] == ' ' || b[n] == '\t' || b[n] == '\n' || b[n] == '\r'
}

// frontmatter finds a closed initial "---" block in src (lone CRs already
// normalised). It returns the byte range of the YAML between the fences and
// the offset where the Markdown body starts.
func frontmatter(src []byte) (content [2]int, body int, ok bool) {
	start := 0
	if bytes.HasPrefix(src, []byte("\xef\xbb\xbf")) {
		start = 3
	}
	first, next := lineAt(src, start)
	if !isFence(first, "---") {
		return content, 0, false
	}
	for off := next; off < len(src); {
		line, after := lineAt(src, off)
		if isFence(line, "---") || isFence(line, "...") {
			return [2]int{next, off}, after, true
		}
		off = after
	}
	return content, 0, false
}

// lineAt returns the line starting at off, without its terminator, and the
// offset of the next line.
func lineAt(src []byte, off int) ([]byte, int) {
	i := bytes.IndexByte(src[off:], '\n')
	if i < 0 {
		return src[off:], len(src)
	}
	return bytes.TrimSuffix(src[off:off+i], []byte("\r")), off + i + 1
}

func isFence(line []byte, fence string) bool {
	return string(bytes.TrimRight(line, " \t")) == fence
}

func outlineFrontmatter(src []byte, content [2]int) ([]Entry, bool) {
	yml := src[content[0]:content[1]]
	var doc yaml.Node
	if err := yaml.Unmarshal(yml, &doc); err != nil {
		return nil, false
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, true // empty, or not a mapping: no keys
	}
	starts := yamlLineStarts(yml)
	lineStart := func(n int) int { // byte offset in src of YAML line n (one-based)
		if n < 1 {
			n = 1
		}
		if n > len(starts) {
			return content[1]
		}
		return content[0] + starts[n-1]
	}
	m := doc.Content[0]
	// nextLine[p] is the line of the first key after pair p that starts on
	// a later line than pair p's key, or 0.
	nextLine := make([]int, len(m.Content)/2)
	for p, later := len(nextLine)-1, 0; p >= 0; p-- {
		nextLine[p] = later
		if p > 0 && m.Content[2*p].Line > m.Content[2*p-2].Line {
			later = m.Content[2*p].Line
		}
	}
	var out []Entry
	complete := true
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Kind != yaml.ScalarNode {
			continue
		}
		if seen[k.Value] {
			complete = false
		}
		seen[k.Value] = true
		end := content[1] // up to the closing fence, or the next key on a later line
		if nl := nextLine[i/2]; nl > 0 {
			end = lineStart(nl)
		}
		start := lineStart(k.Line)
		out = append(out, newEntry(KindFrontmatter, k.Value, "", start, trimYAMLTail(src, start, end)))
	}
	return out, complete
}

// trimYAMLTail moves end back over blank and comment-only lines that
// follow a key's value, never before the key's own line.
func trimYAMLTail(src []byte, start, end int) int {
	for end > start {
		// The last line of src[start:end], without its terminator.
		e := end
		for e > start && (src[e-1] == '\n' || src[e-1] == '\r') {
			e--
		}
		s := bytes.LastIndexByte(src[start:e], '\n') + 1 + start
		if s == start {
			return e
		}
		t := bytes.TrimLeft(src[s:e], " \t")
		if len(t) > 0 && t[0] != '#' {
			return e
		}
		end = s
	}
	return end
}

// yamlLineStarts returns the offset of each line as the YAML scanner counts
// lines: it also breaks at NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR.
func yamlLineStarts(b []byte) []int {
	starts := []int{0}
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n':
			i++
			starts = append(starts, i+1)
		case b[i] == '\n' || b[i] == '\r':
			starts = append(starts, i+1)
		case b[i] == 0xC2 && i+1 < len(b) && b[i+1] == 0x85:
			i++
			starts = append(starts, i+1)
		case b[i] == 0xE2 && i+2 < len(b) && b[i+1] == 0x80 && (b[i+2] == 0xA8 || b[i+2] == 0xA9):
			i += 2
			starts = append(starts, i+1)
		}
	}
	return starts
}

func withLevel(e Entry, level int) Entry { e.Level = level; return e }
