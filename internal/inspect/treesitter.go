package inspect

import (
	sitter "github.com/tree-sitter/go-tree-sitter"
)

// parseTree parses src with lang. The tree must be closed by the caller;
// nil means the parser gave up.
func parseTree(lang *sitter.Language, src []byte) *sitter.Tree {
	p := sitter.NewParser()
	defer p.Close()
	if err := p.SetLanguage(lang); err != nil {
		return nil
	}
	return p.Parse(src, nil)
}

// outlineTree parses src, with lone CRs read as line breaks, and lets walk
// collect the entries under the root. The bool reports a parse that needed
// no error recovery.
func outlineTree(lang *sitter.Language, src []byte, walk func(src []byte, root *sitter.Node, out *[]Entry)) ([]Entry, bool) {
	src = normalizeCR(src)
	tree := parseTree(lang, src)
	if tree == nil {
		return nil, false
	}
	defer tree.Close()
	root := tree.RootNode()
	var out []Entry
	walk(src, root, &out)
	return out, !root.HasError()
}

// nodeText returns the source text of n.
func nodeText(src []byte, n *sitter.Node) string {
	if n == nil {
		return ""
	}
	s, e := n.ByteRange()
	if e > uint(len(src)) || s > e {
		return ""
	}
	return string(src[s:e])
}

// namedChildren returns the named children of n.
func namedChildren(n *sitter.Node) []*sitter.Node {
	if n == nil {
		return nil
	}
	c := int(n.NamedChildCount())
	out := make([]*sitter.Node, 0, c)
	for i := range c {
		if ch := n.NamedChild(uint(i)); ch != nil {
			out = append(out, ch)
		}
	}
	return out
}

// fieldChildren returns the children of n in the named field.
func fieldChildren(n *sitter.Node, field string) []*sitter.Node {
	var out []*sitter.Node
	c := n.ChildCount()
	for i := uint(0); i < c; i++ {
		if n.FieldNameForChild(uint32(i)) == field {
			if ch := n.Child(i); ch != nil {
				out = append(out, ch)
			}
		}
	}
	return out
}

// spanEntry returns an entry spanning node n.
func spanEntry(kind, name, recv string, n *sitter.Node) Entry {
	s, e := n.ByteRange()
	return Entry{Kind: kind, Name: name, Receiver: recv, start: int(s), end: int(e)}
}
