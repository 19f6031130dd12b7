// Package lang owns the registry of the source formats rowkit understands
// and their parsers: which exact file extension is which format, how each
// format is parsed (go/parser for Go, tree-sitter for Python and
// TypeScript/JavaScript, a strict JSON grammar), and Check, which says
// where the first syntax error of a file is.
//
// inspect (outlines) and the edit engine (is the file still well formed
// after an edit?) share it, so the two never disagree on what a file is.
//
// Every parser reads a lone CR as a line break, as verified rows do (see
// rows.Lines), and every position this package reports is a verified-row
// line, whatever line numbering a parser uses internally. Go's own
// scanner treats a lone CR as white space; a Go file whose lines end in
// lone CRs is parsed as if they were LFs (the offsets do not move).
//
// JavaScript files (.js .jsx .mjs .cjs) are parsed with the JavaScript
// grammar, which includes JSX. That grammar rejects JSX attributes and tag
// names spelled like reserved words (class=, for=, if=, default=...), which
// Solid, Preact and Qwik templates use; when it reports an error the file
// is parsed again with the TSX grammar, whose JSX accepts them. The TSX
// tree is taken when it has no error, or fewer bytes in error; a TSX tree
// using TypeScript-only syntax (types, interfaces, enums, casts) means the
// file is not JavaScript, so it is never called well formed.
//
// Known gaps of the pinned grammars (tree-sitter-typescript 0.23.2), each
// reported as a syntax error although TypeScript accepts it: variance
// annotations on type parameters (interface I<out T>), an anonymous
// default-exported overload signature (export default function (): T;),
// a type argument list after a member of import() in a type
// (import("m").S<T>), and readonly before an array type after keyof
// (keyof readonly T[]). See inspect's documentation for how outlines
// recover around them.
package lang

import "strings"

// Format is one supported source format.
type Format struct {
	// Name tells the formats apart: go, python, typescript, tsx,
	// javascript, markdown or json.
	Name string
	// Kind is code, markdown or json.
	Kind string
	// Language is the programming language of code (go, python,
	// typescript or javascript; TSX is typescript) and "" for Markdown
	// and JSON, whose Kind says what they are.
	Language string
}

// Format kinds.
const (
	KindCode     = "code"
	KindMarkdown = "markdown"
	KindJSON     = "json"
)

// The formats.
var (
	Go         = &Format{"go", KindCode, "go"}
	Python     = &Format{"python", KindCode, "python"}
	TypeScript = &Format{"typescript", KindCode, "typescript"}
	TSX        = &Format{"tsx", KindCode, "typescript"}
	JavaScript = &Format{"javascript", KindCode, "javascript"}
	Markdown   = &Format{"markdown", KindMarkdown, ""}
	JSON       = &Format{"json", KindJSON, ""}
)

// byExt maps an exact extension to its format. The declaration extensions
// .d.ts, .d.mts and .d.cts end in .ts, .mts and .cts and need no entries
// of their own.
var byExt = map[string]*Format{
	".go":   Go,
	".py":   Python,
	".pyi":  Python,
	".ts":   TypeScript,
	".mts":  TypeScript,
	".cts":  TypeScript,
	".tsx":  TSX,
	".js":   JavaScript,
	".jsx":  JavaScript,
	".mjs":  JavaScript,
	".cjs":  JavaScript,
	".md":   Markdown,
	".json": JSON,
}

// Extensions returns the supported extensions, dot included.
func Extensions() []string {
	out := make([]string, 0, len(byExt))
	for ext := range byExt {
		out = append(out, ext)
	}
	return out
}

// Lookup returns the format of a file path, or nil when it has none. The
// extension is exact and case-sensitive: the base name from its last dot,
// leading dots ignored (".go" alone has no extension), as Node's
// path.extname does.
func Lookup(path string) *Format {
	base := path[strings.LastIndexByte(path, '/')+1:]
	base = strings.TrimLeft(base, ".")
	i := strings.LastIndexByte(base, '.')
	if i < 0 {
		return nil
	}
	return byExt[base[i:]]
}
