// Package inspect owns the structural outline of a workspace file: which
// formats it understands, how each one is projected onto a flat,
// source-ordered list of navigation entries, and the bounded JSON document
// that reports it (REQ-INSPECT-001).
//
// Every entry's span is given as verified rows (LINE:HASH of its first and
// last line), computed from byte offsets against the file's logical lines,
// never from a parser's own line numbers. No entry carries source text
// beyond a name: no bodies, values, comments or fields.
//
// Formats are chosen by exact, case-sensitive extension:
//
//	.go                                  code, go        (go/parser)
//	.py .pyi                             code, python    (tree-sitter)
//	.ts .mts .cts .d.ts .d.mts .d.cts    code, typescript (tree-sitter)
//	.tsx                                 code, tsx       (tree-sitter)
//	.js .jsx .mjs .cjs                   code, javascript (tree-sitter, JSX)
//	.md                                  markdown        (goldmark, yaml)
//	.json                                json            (own scanner)
//
// Any other file is kind "none": it is confined and checked to be regular
// by stat alone, and never opened or read.
//
// The projection rules of each language are documented in its file
// (golang.go, python.go, script.go, markdown.go, jsondoc.go).
package inspect

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/rowkit/rowkit/internal/jsonstr"
	"github.com/rowkit/rowkit/internal/lang"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/workspace"
)

// Document kinds.
const (
	KindCode     = "code"
	KindMarkdown = "markdown"
	KindNone     = "none"
	// KindJSON (an entry kind) is also the document kind of .json files.
)

// Failure codes, beyond the workspace's.
const (
	CodeUsage       = "usage"
	CodeNotUTF8     = "not_utf8"
	CodeParse       = "parse"
	CodeOutputLimit = "output_limit"
)

// Failure is a failed inspection: the failure document of inspect_file.
type Failure struct {
	Path    *string // the path as given, nil when there was not exactly one
	Code    string
	Message string
}

func (f *Failure) Error() string { return f.Code + ": " + f.Message }

// AppendJSON appends the failure document, one line ending in LF.
func (f *Failure) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"ok":false,"path":`...)
	if f.Path == nil {
		dst = append(dst, "null"...)
	} else {
		dst = jsonstr.Append(dst, *f.Path)
	}
	dst = append(dst, `,"error":{"code":`...)
	dst = jsonstr.Append(dst, f.Code)
	dst = append(dst, `,"message":`...)
	dst = jsonstr.Append(dst, f.Message)
	return append(dst, "}}\n"...)
}

// MarshalJSON returns the encoding without its final LF.
func (f *Failure) MarshalJSON() ([]byte, error) {
	b := f.AppendJSON(nil)
	return b[:len(b)-1], nil
}

// format is one supported file format.
type format struct {
	kind, language string
	outline        func(src []byte) (entries []Entry, complete bool)
}

var (
	goFormat         = &format{KindCode, "go", outlineGo}
	pythonFormat     = &format{KindCode, "python", outlinePython}
	typescriptFormat = &format{KindCode, "typescript", outlineTypeScript}
	tsxFormat        = &format{KindCode, "tsx", outlineTSX}
	javascriptFormat = &format{KindCode, "javascript", outlineJavaScript}
	markdownFormat   = &format{KindMarkdown, "markdown", outlineMarkdown}
	jsonFormat       = &format{KindJSON, "json", outlineJSON}
)

// formats maps each format of the registry to its outline.
var formats = map[*lang.Format]*format{
	lang.Go:         goFormat,
	lang.Python:     pythonFormat,
	lang.TypeScript: typescriptFormat,
	lang.TSX:        tsxFormat,
	lang.JavaScript: javascriptFormat,
	lang.Markdown:   markdownFormat,
	lang.JSON:       jsonFormat,
}

// formatOf returns the format of a file name (lang.Lookup), or nil.
func formatOf(name string) *format { return formats[lang.Lookup(name)] }

// Inspect outlines the workspace file req. It returns the result and its
// exact encoding, or a *Failure.
func Inspect(ws *workspace.Root, req string) (*Result, []byte, error) {
	fail := func(err error) (*Result, []byte, error) {
		var we *workspace.Error
		if errors.As(err, &we) {
			return nil, nil, &Failure{Path: &req, Code: we.Code, Message: we.Msg}
		}
		return nil, nil, err
	}
	f := formatOf(req)
	if f == nil {
		clean, fi, err := ws.Stat(req)
		if err != nil {
			return fail(err)
		}
		return NewResult(Data{Path: clean, Kind: KindNone, SizeBytes: fi.Size(), ParseComplete: true})
	}
	clean, src, err := ws.ReadFile(req)
	if err != nil {
		return fail(err)
	}
	d, err := outline(f, clean, src)
	if err != nil {
		var ee *rows.EncodingError
		if errors.As(err, &ee) {
			return nil, nil, &Failure{Path: &req, Code: CodeNotUTF8,
				Message: clean + " is not valid UTF-8: invalid byte at offset " + itoa(ee.Offset)}
		}
		return nil, nil, &Failure{Path: &req, Code: CodeParse, Message: err.Error()}
	}
	res, out, err := NewResult(d)
	if f, ok := err.(*Failure); ok {
		f.Path = &req
	}
	return res, out, err
}

// Supported reports whether a file name has a format with an outline.
func Supported(name string) bool { return formatOf(name) != nil }

// OutlineSource outlines src as the file name says, without touching the
// file system: the engine behind Inspect, for benchmarks and embedders. It
// returns a *rows.EncodingError for invalid UTF-8, and an error for a name
// without a supported format.
func OutlineSource(name string, src []byte) (Data, error) {
	f := formatOf(name)
	if f == nil {
		return Data{}, errors.New(name + " has no supported format")
	}
	return outline(f, name, src)
}

// outline projects src in format f. A panic in a parser becomes a parse
// failure rather than a crash.
func outline(f *format, path string, src []byte) (d Data, err error) {
	x, err := indexLines(src)
	if err != nil {
		return Data{}, err
	}
	defer func() {
		if p := recover(); p != nil {
			d, err = Data{}, fmt.Errorf("the %s parser failed on %s: %v", f.language, path, p)
		}
	}()
	entries, complete := f.outline(src)
	return Data{
		Path:          path,
		Kind:          f.kind,
		Language:      f.language,
		SizeBytes:     int64(len(src)),
		LineCount:     x.count(),
		ParseComplete: complete,
		Outline:       x.place(entries),
	}, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
