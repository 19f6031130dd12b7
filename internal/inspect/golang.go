package inspect

// Go projection (go/parser, recovering from syntax errors).
//
//   - import: one per import spec, named by its decoded path; an alias is
//     not part of the name.
//   - constant, variable, type: one per declared name. Inside a
//     parenthesised group the span is that name's spec; a declaration
//     without parentheses spans the whole declaration, keyword included.
//     The blank identifier declares nothing and is left out, as are names
//     local to initialisers, struct fields, interface methods and type
//     parameters.
//   - function: a function declaration, from "func" to its closing brace
//     (the doc comment is not part of it).
//   - method: a function declaration with a receiver, named by the method;
//     receiver is the receiver's type as written, without spaces: Recv,
//     *Server, *T[P], Map[K,V].
//
// parse_complete is false when go/parser reports any error; whatever it
// recovered is still outlined. A lone CR ends a line here as it ends a
// row (go/parser alone would read it as white space, and a file whose lines
// end in lone CRs as one line).

import (
	"context"
	"go/ast"
	"go/token"
	"strconv"
	"strings"

	"github.com/rowkit/rowkit/internal/lang"
)

func outlineGo(ctx context.Context, src []byte) ([]Entry, bool, error) {
	return inPieces(ctx, src, goCutAt, outlineGoPiece)
}

// goPiecePackage makes a piece after the first a Go file of its own.
const goPiecePackage = "package p\n"

// outlineGoPiece outlines one piece of a Go file (see inPieces).
func outlineGoPiece(ctx context.Context, src []byte, first, want bool) ([]Entry, bool, bool, error) {
	shift := 0
	if !first {
		src = append([]byte(goPiecePackage), src...)
		shift = len(goPiecePackage)
	}
	g, err := lang.ParseGo(ctx, src)
	if err != nil {
		return nil, false, false, err
	}
	var out []Entry
	add := func(kind, name, recv string, from, to token.Pos) {
		out = append(out, newEntry(kind, name, recv, g.Offset(from)-shift, g.Offset(to)-shift))
	}
	f := g.AST
	if !want {
		f = &ast.File{}
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.GenDecl:
			grouped := d.Lparen.IsValid()
			for _, spec := range d.Specs {
				from, to := spec.Pos(), spec.End()
				if !grouped {
					from, to = d.Pos(), d.End()
				}
				switch s := spec.(type) {
				case *ast.ImportSpec:
					if s.Path == nil {
						continue
					}
					path, uerr := strconv.Unquote(s.Path.Value)
					if uerr != nil {
						continue // a broken literal names nothing reliably
					}
					add(KindImport, path, "", from, to)
				case *ast.ValueSpec:
					kind := KindVariable
					if d.Tok == token.CONST {
						kind = KindConstant
					}
					for _, n := range s.Names {
						if n.Name != "_" {
							add(kind, n.Name, "", from, to)
						}
					}
				case *ast.TypeSpec:
					if s.Name != nil && s.Name.Name != "_" {
						add(KindType, s.Name.Name, "", from, to)
					}
				}
			}
		case *ast.FuncDecl:
			if d.Name == nil || d.Name.Name == "_" {
				continue
			}
			if d.Recv == nil {
				add(KindFunction, d.Name.Name, "", d.Pos(), d.End())
				continue
			}
			recv := ""
			if len(d.Recv.List) > 0 {
				recv = receiverText(d.Recv.List[0].Type)
			}
			add(KindMethod, d.Name.Name, recv, d.Pos(), d.End())
		}
	}
	return out, g.Complete(), g.Complete(), nil
}

// receiverText renders a receiver type without spaces or comments.
func receiverText(e ast.Expr) string {
	var b strings.Builder
	var walk func(ast.Expr)
	walk = func(e ast.Expr) {
		switch t := e.(type) {
		case *ast.Ident:
			b.WriteString(t.Name)
		case *ast.StarExpr:
			b.WriteByte('*')
			walk(t.X)
		case *ast.ParenExpr:
			b.WriteByte('(')
			walk(t.X)
			b.WriteByte(')')
		case *ast.IndexExpr:
			walk(t.X)
			b.WriteByte('[')
			walk(t.Index)
			b.WriteByte(']')
		case *ast.IndexListExpr:
			walk(t.X)
			b.WriteByte('[')
			for i, x := range t.Indices {
				if i > 0 {
					b.WriteByte(',')
				}
				walk(x)
			}
			b.WriteByte(']')
		case *ast.SelectorExpr:
			walk(t.X)
			b.WriteByte('.')
			b.WriteString(t.Sel.Name)
		}
		// Anything else is not a valid receiver type and adds nothing.
	}
	walk(e)
	return b.String()
}
