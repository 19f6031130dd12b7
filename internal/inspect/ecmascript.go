package inspect

// TypeScript and JavaScript projection (tree-sitter-typescript for .ts,
// .mts, .cts and their .d.* forms; its TSX dialect for .tsx;
// tree-sitter-javascript, which includes JSX, for .js, .jsx, .mjs, .cjs).
//
// Only the program's own statements count; "export" and "export default"
// are unwrapped (the span keeps the export keyword and any decorators), and
// so is TypeScript's "declare".
//
//   - import: one per local binding (default, namespace "* as x", each
//     named specifier by its alias when it has one, import x = require());
//     an import without bindings ("import 'polyfill'") is named by its
//     decoded module string. The span is the statement.
//   - constant (const) and variable (let, var): every binding name of the
//     declaration, destructuring patterns included; the span is the
//     statement.
//   - function: function and generator declarations, overload and ambient
//     signatures (declare function f(): void).
//   - class: a named class (abstract included); anonymous default-exported
//     classes and functions name nothing and are left out.
//   - type: interfaces, type aliases and enums, ambient forms included.
//     Namespaces and modules are not outlined.
//   - method: each method, getter, setter, constructor and static method
//     (and TypeScript method signature) directly in a class body, named as
//     written (#private, "quoted", [computed]); receiver is the class name.
//     Fields are never outlined. Decorators before a method are part of its
//     span.
//
// parse_complete is false when the tree has error or missing nodes.

import (
	"context"
	"strconv"
	"strings"
	"unicode/utf8"

	sitter "github.com/tree-sitter/go-tree-sitter"

	"github.com/rowkit/rowkit/internal/lang"
)

// outlineScript returns the outliner of TypeScript, TSX or JavaScript.
func outlineScript(f *lang.Format) func(context.Context, []byte) ([]Entry, bool, error) {
	return func(ctx context.Context, src []byte) ([]Entry, bool, error) {
		return outlineTree(ctx, f, src, scriptCutAt, func(src []byte, root *sitter.Node, out *[]Entry) {
			for _, st := range namedChildren(root) {
				jsStatement(src, st, st, out)
			}
		})
	}
}

// jsStatement outlines the statement st; outer is the node whose span the
// entries take (an enclosing export or declare statement).
func jsStatement(src []byte, st, outer *sitter.Node, out *[]Entry) {
	add := func(kind, name, recv string) {
		*out = append(*out, spanEntry(kind, name, recv, outer))
	}
	switch st.Kind() {
	case "export_statement":
		if d := st.ChildByFieldName("declaration"); d != nil {
			jsStatement(src, d, outer, out)
		}
	case "ambient_declaration":
		for _, ch := range namedChildren(st) {
			jsStatement(src, ch, outer, out)
		}
	case "import_statement":
		jsImport(src, st, add)
	case "lexical_declaration", "variable_declaration":
		kind := KindVariable
		if k := st.ChildByFieldName("kind"); k != nil && k.Kind() == "const" {
			kind = KindConstant
		}
		for _, d := range namedChildren(st) {
			if d.Kind() != "variable_declarator" {
				continue
			}
			var names []string
			jsBindings(src, d.ChildByFieldName("name"), &names)
			for _, n := range names {
				add(kind, n, "")
			}
		}
	case "function_declaration", "generator_function_declaration", "function_signature":
		if n := st.ChildByFieldName("name"); n != nil {
			add(KindFunction, nodeText(src, n), "")
		}
	case "class_declaration", "abstract_class_declaration":
		n := st.ChildByFieldName("name")
		if n == nil {
			return
		}
		name := nodeText(src, n)
		add(KindClass, name, "")
		jsMethods(src, st.ChildByFieldName("body"), name, out)
	case "interface_declaration", "type_alias_declaration", "enum_declaration":
		if n := st.ChildByFieldName("name"); n != nil {
			add(KindType, nodeText(src, n), "")
		}
	case "ERROR":
		for _, ch := range namedChildren(st) {
			jsStatement(src, ch, ch, out)
		}
	}
}

func jsImport(src []byte, st *sitter.Node, add func(kind, name, recv string)) {
	bound := false
	for _, ch := range namedChildren(st) {
		switch ch.Kind() {
		case "import_clause":
			for _, c := range namedChildren(ch) {
				switch c.Kind() {
				case "identifier":
					add(KindImport, nodeText(src, c), "")
					bound = true
				case "namespace_import":
					for _, id := range namedChildren(c) {
						if id.Kind() == "identifier" {
							add(KindImport, nodeText(src, id), "")
							bound = true
						}
					}
				case "named_imports":
					for _, spec := range namedChildren(c) {
						if spec.Kind() != "import_specifier" {
							continue
						}
						n := spec.ChildByFieldName("alias")
						if n == nil {
							n = spec.ChildByFieldName("name")
						}
						if n != nil {
							add(KindImport, nodeText(src, n), "")
						}
					}
					bound = true // "import {} from 'm'" binds nothing but is not a side-effect import either
				}
			}
		case "import_require_clause":
			for _, id := range namedChildren(ch) {
				if id.Kind() == "identifier" {
					add(KindImport, nodeText(src, id), "")
					bound = true
					break
				}
			}
		}
	}
	if !bound {
		if s := st.ChildByFieldName("source"); s != nil {
			add(KindImport, decodeJSString(nodeText(src, s)), "")
		}
	}
}

// jsBindings collects the names a binding pattern declares.
func jsBindings(src []byte, p *sitter.Node, names *[]string) {
	if p == nil {
		return
	}
	switch p.Kind() {
	case "identifier", "shorthand_property_identifier_pattern":
		*names = append(*names, nodeText(src, p))
	case "object_pattern", "array_pattern", "rest_pattern":
		for _, ch := range namedChildren(p) {
			jsBindings(src, ch, names)
		}
	case "pair_pattern":
		jsBindings(src, p.ChildByFieldName("value"), names)
	case "assignment_pattern", "object_assignment_pattern":
		jsBindings(src, p.ChildByFieldName("left"), names)
	}
}

// jsMethods outlines the methods directly in a class body. A decorator that
// precedes a member as a sibling (TypeScript) starts that member's span.
func jsMethods(src []byte, body *sitter.Node, class string, out *[]Entry) {
	decorated := -1
	for _, m := range namedChildren(body) {
		switch m.Kind() {
		case "decorator":
			if decorated < 0 {
				decorated = int(m.StartByte())
			}
			continue
		case "method_definition", "method_signature", "abstract_method_signature":
			e := spanEntry(KindMethod, nodeText(src, m.ChildByFieldName("name")), class, m)
			if decorated >= 0 {
				e.start = decorated
			}
			*out = append(*out, e)
		}
		decorated = -1
	}
}

// decodeJSString returns the value of a JavaScript string literal. Escapes
// it cannot decode are kept as written.
func decodeJSString(lit string) string {
	if len(lit) < 2 || (lit[0] != '"' && lit[0] != '\'') || lit[len(lit)-1] != lit[0] {
		return lit
	}
	s := lit[1 : len(lit)-1]
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case '0':
			b.WriteByte(0)
		case '\n':
			// A line continuation adds nothing.
		case 'x', 'u':
			hex, width := "", 0
			switch {
			case e == 'x' && i+2 < len(s)+0 && i+2 <= len(s)-1:
				hex, width = s[i+1:i+3], 2
			case e == 'u' && i+1 < len(s) && s[i+1] == '{':
				if j := strings.IndexByte(s[i:], '}'); j > 0 {
					hex, width = s[i+2:i+j], j
				}
			case e == 'u' && i+4 < len(s):
				hex, width = s[i+1:i+5], 4
			}
			r, err := strconv.ParseUint(hex, 16, 32)
			if hex == "" || err != nil || !utf8.ValidRune(rune(r)) {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			b.WriteRune(rune(r))
			i += width
		default:
			b.WriteByte(e)
		}
	}
	return b.String()
}
