package lang

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"sync"

	sitter "github.com/tree-sitter/go-tree-sitter"
	tsjavascript "github.com/tree-sitter/tree-sitter-javascript/bindings/go"
	tspython "github.com/tree-sitter/tree-sitter-python/bindings/go"
	tstypescript "github.com/tree-sitter/tree-sitter-typescript/bindings/go"

	"github.com/rowkit/rowkit/internal/errs"
)

var (
	pythonGrammar     = sitter.NewLanguage(tspython.Language())
	typescriptGrammar = sitter.NewLanguage(tstypescript.LanguageTypescript())
	tsxGrammar        = sitter.NewLanguage(tstypescript.LanguageTSX())
	javascriptGrammar = sitter.NewLanguage(tsjavascript.Language())
)

// CodeParse is the code of a parser that failed outright (no grammar, or
// tree-sitter gave up), never expected: inspect_file answers it as is.
const CodeParse = "parse"

// grammar returns the tree-sitter grammar of f, or nil.
func (f *Format) grammar() *sitter.Language {
	switch f {
	case Python:
		return pythonGrammar
	case TypeScript:
		return typescriptGrammar
	case TSX:
		return tsxGrammar
	case JavaScript:
		return javascriptGrammar
	}
	return nil
}

// site is where a parser first found src malformed: a byte offset and a
// one-line message.
type site struct {
	off int
	msg string
}

// GoFile is a Go file parsed by go/parser.
type GoFile struct {
	AST  *ast.File   // what the parser recovered, never nil
	File *token.File // maps the AST's positions to byte offsets of the source
	err  *site
}

// Complete reports whether the file parsed without any error.
func (g *GoFile) Complete() bool { return g.err == nil }

// Offset returns the byte offset of p in the source, 0 for an invalid
// position.
func (g *GoFile) Offset(p token.Pos) int {
	if !p.IsValid() || g.File == nil {
		return 0
	}
	return g.File.Offset(p)
}

// ParseGo parses Go source, recovering from syntax errors (all of them:
// go/parser otherwise gives up after ten). Lone CRs are read as LFs. It
// fails only when ctx is done.
func ParseGo(ctx context.Context, src []byte) (*GoFile, error) {
	if err := ctx.Err(); err != nil {
		return nil, cancelled(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", LoneCRAsLF(src), parser.SkipObjectResolution|parser.AllErrors)
	g := &GoFile{AST: f}
	if f == nil { // only for a failure to read, which cannot happen here
		g.AST = &ast.File{}
	} else {
		g.File = fset.File(f.Pos())
	}
	if err != nil {
		g.err = &site{msg: err.Error()}
		if list, ok := err.(scanner.ErrorList); ok && len(list) > 0 {
			// The list is sorted by position.
			g.err = &site{off: list[0].Pos.Offset, msg: list[0].Msg}
		}
	}
	return g, ctx.Err()
}

// Tree is a source file parsed by tree-sitter. Close releases it.
type Tree struct {
	// Src is the source as parsed: lone CRs replaced by LFs, so every
	// offset is the same as in the original.
	Src []byte
	// Root is the root node.
	Root *sitter.Node

	tree *sitter.Tree
	err  *site
}

// Complete reports whether the tree parsed without any error or missing
// node (and, for JavaScript, without TypeScript-only syntax).
func (t *Tree) Complete() bool { return t.err == nil }

// Close releases the tree.
func (t *Tree) Close() {
	if t.tree != nil {
		t.tree.Close()
		t.tree = nil
	}
}

// ParseTree parses src with the tree-sitter grammar of f (Python,
// TypeScript, TSX or JavaScript; see the package documentation for the
// second parse of JavaScript). It fails when f has no tree-sitter grammar
// or ctx is done; cancellation stops a parse in progress.
func ParseTree(ctx context.Context, f *Format, src []byte) (*Tree, error) {
	g := f.grammar()
	if g == nil {
		return nil, errs.Errorf(CodeParse, "the %s format has no tree-sitter grammar", f.Name)
	}
	src = LoneCRAsLF(src)
	t, err := parseWith(ctx, g, src)
	if err != nil || t.err == nil || f != JavaScript {
		return t, err
	}
	// JavaScript with an error: try the TSX grammar's JSX.
	x, err := parseWith(ctx, tsxGrammar, src)
	if err != nil {
		t.Close()
		return nil, err
	}
	if x.err == nil {
		if n := firstTypeScriptOnly(x.Root); n != nil {
			x.err = &site{off: int(n.StartByte()), msg: "TypeScript syntax (" + n.Kind() + ") in a JavaScript file"}
		}
	}
	if x.err == nil || errorBytes(x.Root) < errorBytes(t.Root) {
		t.Close()
		return x, nil
	}
	x.Close()
	return t, nil
}

// idle keeps a few idle parsers per grammar (a channel, not a sync.Pool,
// which would drop parsers without freeing their C memory): creating one
// and loading its grammar costs as much as parsing a small file.
var idle sync.Map // *sitter.Language -> chan *sitter.Parser

func getParser(g *sitter.Language) *sitter.Parser {
	ch, _ := idle.LoadOrStore(g, make(chan *sitter.Parser, 4))
	select {
	case p := <-ch.(chan *sitter.Parser):
		return p
	default:
	}
	p := sitter.NewParser()
	if err := p.SetLanguage(g); err != nil {
		p.Close()
		return nil
	}
	return p
}

// putParser keeps p for reuse, or closes it when enough are kept. A parser
// whose parse was cancelled is reset first, or it would resume that parse.
func putParser(g *sitter.Language, p *sitter.Parser) {
	p.Reset()
	ch, _ := idle.Load(g)
	select {
	case ch.(chan *sitter.Parser) <- p:
	default:
		p.Close()
	}
}

// readChunk is the most the parser reads at once.
const readChunk = 64 << 10

func parseWith(ctx context.Context, g *sitter.Language, src []byte) (*Tree, error) {
	if err := ctx.Err(); err != nil {
		return nil, cancelled(err)
	}
	p := getParser(g)
	if p == nil {
		return nil, errs.New(CodeParse, "tree-sitter refused a grammar")
	}
	defer putParser(g, p)
	var opts *sitter.ParseOptions
	if done := ctx.Done(); done != nil {
		// Called every hundred or so parser operations; a closed channel
		// stops the parse.
		opts = &sitter.ParseOptions{ProgressCallback: func(sitter.ParseState) bool {
			select {
			case <-done:
				return true
			default:
				return false
			}
		}}
	}
	// The binding copies every chunk it is given; chunks of a bounded size
	// keep a large file from being copied once per read.
	n := len(src)
	tree := p.ParseWithOptions(func(i int, _ sitter.Point) []byte {
		if i < n {
			return src[i:min(i+readChunk, n)]
		}
		return nil
	}, nil, opts)
	if tree == nil {
		if err := ctx.Err(); err != nil {
			return nil, cancelled(err)
		}
		return nil, errs.New(CodeParse, "tree-sitter gave up parsing")
	}
	t := &Tree{Src: src, Root: tree.RootNode(), tree: tree}
	if t.Root.HasError() {
		t.err = firstError(src, t.Root)
	}
	return t, nil
}

func cancelled(err error) error {
	return &errs.Error{Code: errs.Cancelled, Msg: "the parse was cancelled: " + err.Error()}
}

// firstError returns the site of the first ERROR or MISSING node in
// document order under root, which has an error.
func firstError(src []byte, root *sitter.Node) *site {
	var found *site
	walkErrors(root, func(n *sitter.Node) bool {
		if n.IsMissing() {
			found = &site{off: int(n.StartByte()), msg: "missing " + quoteToken([]byte(n.Kind()))}
		} else {
			leaf := n
			for leaf.ChildCount() > 0 {
				leaf = leaf.Child(0)
			}
			s, e := leaf.StartByte(), leaf.EndByte()
			if leaf.ChildCount() == 0 && s == e { // an empty error: name what follows
				e = min(s+1, uint(len(src)))
			}
			text := src[min(s, uint(len(src))):min(e, uint(len(src)))]
			if len(text) == 0 {
				found = &site{off: int(n.StartByte()), msg: "unexpected end of file"}
			} else {
				found = &site{off: int(n.StartByte()), msg: "unexpected " + quoteToken(text)}
			}
		}
		return false
	})
	if found == nil { // HasError without an error node: should not happen
		found = &site{off: 0, msg: "syntax error"}
	}
	return found
}

// walkErrors calls fn with each outermost ERROR or MISSING node under n in
// document order, until fn returns false. It descends only into nodes that
// contain an error.
func walkErrors(n *sitter.Node, fn func(*sitter.Node) bool) bool {
	if n.IsError() || n.IsMissing() {
		return fn(n)
	}
	if !n.HasError() {
		return true
	}
	for i := uint(0); i < n.ChildCount(); i++ {
		if ch := n.Child(i); ch != nil && !walkErrors(ch, fn) {
			return false
		}
	}
	return true
}

// errorBytes measures how much of a tree is in error: the bytes under
// outermost ERROR nodes, one for each MISSING node.
func errorBytes(root *sitter.Node) int {
	total := 0
	walkErrors(root, func(n *sitter.Node) bool {
		total += max(int(n.EndByte())-int(n.StartByte()), 1)
		return true
	})
	return total
}

// tsOnlyKinds are the named nodes of the TSX grammar that only TypeScript
// syntax produces. (The TSX grammar also has nodes of its own for plain
// JavaScript, such as required_parameter and public_field_definition;
// they are not listed.)
var tsOnlyKinds = func() map[uint16]bool {
	m := map[uint16]bool{}
	for _, k := range []string{
		"abstract_class_declaration", "abstract_method_signature", "accessibility_modifier",
		"adding_type_annotation", "ambient_declaration", "as_expression", "asserts_annotation",
		"call_signature", "construct_signature", "enum_declaration", "function_signature",
		"implements_clause", "import_alias", "import_require_clause", "index_signature",
		"instantiation_expression", "interface_declaration", "internal_module", "method_signature",
		"module", "non_null_expression", "omitting_type_annotation", "opting_type_annotation",
		"optional_parameter", "override_modifier", "satisfies_expression", "type_alias_declaration",
		"type_annotation", "type_arguments", "type_parameters", "type_predicate_annotation",
	} {
		if id := tsxGrammar.IdForNodeKind(k, true); id != 0 {
			m[id] = true
		}
	}
	return m
}()

// firstTypeScriptOnly returns the first node in document order under root
// that only TypeScript syntax produces, or nil.
func firstTypeScriptOnly(root *sitter.Node) *sitter.Node {
	c := root.Walk()
	defer c.Close()
	for {
		if n := c.Node(); tsOnlyKinds[n.KindId()] {
			return n
		}
		if c.GotoFirstChild() || c.GotoNextSibling() {
			continue
		}
		for {
			if !c.GotoParent() {
				return nil
			}
			if c.GotoNextSibling() {
				break
			}
		}
	}
}

// LoneCRAsLF returns src with every lone CR replaced by an LF, copying only
// when there is one, so that a parser that knows only LF and CRLF sees the
// lines verified rows see. Offsets do not move.
func LoneCRAsLF(src []byte) []byte {
	i := bytes.IndexByte(src, '\r')
	if i < 0 {
		return src
	}
	var out []byte
	for ; i < len(src); i++ {
		if src[i] == '\r' && (i+1 == len(src) || src[i+1] != '\n') {
			if out == nil {
				out = bytes.Clone(src)
			}
			out[i] = '\n'
		}
	}
	if out == nil {
		return src
	}
	return out
}
