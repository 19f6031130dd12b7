package inspect

import (
	"context"

	sitter "github.com/tree-sitter/go-tree-sitter"

	"github.com/rowkit/rowkit/internal/lang"
)

// outlineTree parses src with the grammar of f (lang.ParseTree: lone CRs
// read as line breaks), in pieces cut where cutAt allows (inPieces), and
// lets walk collect the entries under each root. The bool reports a parse
// that needed no error recovery.
func outlineTree(ctx context.Context, f *lang.Format, src []byte, cutAt func([]byte, int) bool, walk func(src []byte, root *sitter.Node, out *[]Entry)) ([]Entry, bool, error) {
	return inPieces(ctx, src, cutAt, func(ctx context.Context, src []byte, _, want bool) ([]Entry, bool, bool, error) {
		t, err := lang.ParseTree(ctx, f, src)
		if err != nil {
			return nil, false, false, err
		}
		defer t.Close()
		var out []Entry
		if want {
			walk(t.Src, t.Root, &out)
		}
		// A string left open at the end may be recovered from inside the
		// piece (tree-sitter reads on after its opening quote), so any
		// error at all may come from the cut.
		return out, t.Complete(), t.Complete(), nil
	})
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
	return newEntry(kind, name, recv, int(s), int(e))
}
