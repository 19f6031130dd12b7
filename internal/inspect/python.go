package inspect

// Python projection (tree-sitter-python, for .py and .pyi).
//
// Module scope is the module's statements, including those nested in
// module-level if/elif/else, try/except/else/finally and with blocks (they
// bind module names too: guarded imports, platform-specific definitions);
// never anything inside a function or class body except direct methods.
//
//   - import: one per bound name: the alias when there is one, else the
//     first name of the dotted path (import a.b binds a); from-imports bind
//     the imported name (or its alias), a wildcard import is named "*".
//     The span is the whole statement.
//   - variable: each name bound by an assignment or annotated assignment,
//     including every target of a chain (a = b = 1), names inside tuple,
//     list and starred targets, and bare annotations (x: int). Attribute
//     and subscript targets bind no module name and are left out, as are
//     augmented assignments (x += 1), which rebind. The span is the
//     statement.
//   - type: a type alias statement (type X = ...).
//   - function (async included) and class; method: a function defined
//     directly in a top-level class body, receiver the class name. A
//     decorated definition spans from its first decorator.
//
// Every span ends at the last token of code: tree-sitter puts a comment at
// body indentation after the last statement into the body, but a span is an
// edit target and stops before such comments, as in the other languages.
//
// parse_complete is false when the tree has error or missing nodes; the
// statements tree-sitter recovered around them are still outlined.

import (
	"context"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"

	"github.com/rowkit/rowkit/internal/lang"
)

func outlinePython(ctx context.Context, src []byte) ([]Entry, bool, error) {
	return outlineTree(ctx, lang.Python, src, pythonCutAt, pyStatements)
}

// pyStatements outlines the module-scope statements among n's children.
func pyStatements(src []byte, n *sitter.Node, out *[]Entry) {
	for _, st := range namedChildren(n) {
		pyStatement(src, st, out)
	}
}

func pyStatement(src []byte, st *sitter.Node, out *[]Entry) {
	switch st.Kind() {
	case "import_statement", "future_import_statement":
		for _, name := range fieldChildren(st, "name") {
			*out = append(*out, pyEntry(KindImport, pyImportName(src, name, true), "", st))
		}
	case "import_from_statement":
		names := fieldChildren(st, "name")
		for _, name := range names {
			*out = append(*out, pyEntry(KindImport, pyImportName(src, name, false), "", st))
		}
		for _, ch := range namedChildren(st) {
			if ch.Kind() == "wildcard_import" {
				*out = append(*out, pyEntry(KindImport, "*", "", st))
			}
		}
	case "expression_statement":
		for _, ch := range namedChildren(st) {
			if ch.Kind() == "assignment" {
				var names []string
				pyAssignment(src, ch, &names)
				for _, name := range names {
					*out = append(*out, pyEntry(KindVariable, name, "", st))
				}
			}
		}
	case "type_alias_statement":
		if left := st.ChildByFieldName("left"); left != nil {
			if id := firstIdentifier(left); id != nil {
				*out = append(*out, pyEntry(KindType, nodeText(src, id), "", st))
			}
		}
	case "function_definition":
		*out = append(*out, pyEntry(KindFunction, nodeText(src, st.ChildByFieldName("name")), "", st))
	case "class_definition":
		pyClass(src, st, st, out)
	case "decorated_definition":
		def := st.ChildByFieldName("definition")
		switch {
		case def == nil:
		case def.Kind() == "function_definition":
			*out = append(*out, pyEntry(KindFunction, nodeText(src, def.ChildByFieldName("name")), "", st))
		case def.Kind() == "class_definition":
			pyClass(src, def, st, out)
		}
	case "if_statement", "elif_clause", "else_clause", "try_statement", "except_clause",
		"except_group_clause", "finally_clause", "with_statement", "block", "ERROR":
		pyStatements(src, st, out)
	}
}

// pyClass outlines class c, whose span is that of outer (its decorated
// definition, when decorated), and its direct methods.
func pyClass(src []byte, c, outer *sitter.Node, out *[]Entry) {
	name := nodeText(src, c.ChildByFieldName("name"))
	*out = append(*out, pyEntry(KindClass, name, "", outer))
	body := c.ChildByFieldName("body")
	for _, m := range namedChildren(body) {
		def := m
		if m.Kind() == "decorated_definition" {
			def = m.ChildByFieldName("definition")
		}
		if def != nil && def.Kind() == "function_definition" {
			*out = append(*out, pyEntry(KindMethod, nodeText(src, def.ChildByFieldName("name")), name, m))
		}
	}
}

// pyImportName returns the name an import binds. Plain imports of a dotted
// path bind its first component; from-imports bind the name itself.
func pyImportName(src []byte, n *sitter.Node, plain bool) string {
	if n.Kind() == "aliased_import" {
		if a := n.ChildByFieldName("alias"); a != nil {
			return nodeText(src, a)
		}
		n = n.ChildByFieldName("name")
	}
	text := nodeText(src, n)
	if plain {
		if first, _, ok := strings.Cut(text, "."); ok {
			return strings.TrimSpace(first)
		}
	}
	return text
}

// pyAssignment collects the names an assignment binds, following a chain.
func pyAssignment(src []byte, a *sitter.Node, names *[]string) {
	pyTargets(src, a.ChildByFieldName("left"), names)
	if r := a.ChildByFieldName("right"); r != nil && r.Kind() == "assignment" {
		pyAssignment(src, r, names)
	}
}

func pyTargets(src []byte, t *sitter.Node, names *[]string) {
	if t == nil {
		return
	}
	switch t.Kind() {
	case "identifier", "keyword_identifier":
		*names = append(*names, nodeText(src, t))
	case "pattern_list", "tuple_pattern", "list_pattern", "list_splat_pattern",
		"parenthesized_expression", "tuple", "list", "list_splat":
		for _, ch := range namedChildren(t) {
			pyTargets(src, ch, names)
		}
	}
}

// firstIdentifier returns the first identifier in n, depth first.
func firstIdentifier(n *sitter.Node) *sitter.Node {
	if n.Kind() == "identifier" || n.Kind() == "type_identifier" {
		return n
	}
	for _, ch := range namedChildren(n) {
		if id := firstIdentifier(ch); id != nil {
			return id
		}
	}
	return nil
}

// pyEntry returns an entry spanning node n up to its last token of code.
func pyEntry(kind, name, recv string, n *sitter.Node) Entry {
	e := spanEntry(kind, name, recv, n)
	e.end = int(codeEnd(n))
	return e
}

// codeEnd returns the end of the last token under n that is not part of a
// comment.
func codeEnd(n *sitter.Node) uint {
	for {
		i := int(n.ChildCount()) - 1
		for ; i >= 0; i-- {
			if ch := n.Child(uint(i)); ch != nil && ch.Kind() != "comment" && ch.EndByte() > ch.StartByte() {
				break
			}
		}
		if i < 0 {
			return n.EndByte()
		}
		n = n.Child(uint(i))
	}
}
