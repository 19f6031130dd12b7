// Package inspect owns the structural outline of a workspace file: how
// each format of the registry (package lang) is projected onto a flat,
// source-ordered list of navigation entries, and the bounded JSON document
// that reports it (REQ-INSPECT-001).
//
// Every entry's span is given as verified rows (LINE:HASH of its first and
// last line), computed from byte offsets against the file's logical lines
// (rows.Index), never from a parser's own line numbers. No entry carries
// source text beyond a name: no bodies, values, comments or fields.
//
// Formats are chosen by exact, case-sensitive extension (lang.Lookup):
//
//	.go                                  code, language go          (go/parser)
//	.py .pyi                             code, language python      (tree-sitter)
//	.ts .mts .cts .d.ts .d.mts .d.cts    code, language typescript  (tree-sitter)
//	.tsx                                 code, language typescript  (tree-sitter, TSX)
//	.js .jsx .mjs .cjs                   code, language javascript  (tree-sitter, JSX)
//	.md                                  markdown, language null    (goldmark, yaml)
//	.json                                json, language null        (own scanner)
//
// Any other file is kind "none": it is confined and checked to be regular
// by stat alone, and never opened or read.
//
// A lone CR ends a line in every format, for the parser as for the rows.
// JavaScript with a syntax error is parsed again with the TSX grammar,
// whose JSX accepts attributes spelled like reserved words (class=, for=);
// the tree with fewer bytes in error is outlined (see package lang).
//
// Partial parses never lose an entry silently: parse_complete is false
// whenever the parser needed error recovery, and the outline is what it
// recovered. The pinned TypeScript grammar reports four valid constructs
// as errors (variance annotations such as interface I<out T>, an anonymous
// default-exported overload signature, type arguments after a member of
// import() in a type, keyof readonly T[]); for these the file is marked
// incomplete but every named declaration around them is still outlined
// (the anonymous overload names nothing and is left out like any anonymous
// default export). Tests keep both facts.
//
// Inspect is the engine: a context (cancellation stops a tree-sitter parse
// in progress) and a workspace root in, a *Result or an *errs.Error out.
// Result marshals with encoding/json to the same JSON value as the bytes
// inspect_file prints (AppendJSON, which keeps field order and does not
// escape HTML).
//
// The projection rules of each language are documented in its file
// (golang.go, python.go, ecmascript.go, markdown.go, jsondoc.go).
package inspect

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/lang"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/workspace"
)

// Document kinds.
const (
	KindCode     = lang.KindCode
	KindMarkdown = lang.KindMarkdown
	KindNone     = "none"
	// KindJSON (an entry kind) is also the document kind of .json files.
)

// Failure codes of inspect's own; the others are package errs' shared
// codes (usage, not_found, not_regular, not_utf8, outside_workspace, read).
const (
	CodeParse       = "parse"        // a parser failed outright
	CodeOutputLimit = "output_limit" // not even an empty outline fits
)

// minEntryBytes is the length of the shortest entry a document can hold,
// and maxEntries more entries than MaxOutputBytes can ever hold: an outline
// keeps its first maxEntries entries, whatever the file holds, so that its
// memory does not grow with the file (it is still parsed to its end, for
// parse_complete). The JSON outliner keeps fewer, by a finer bound.
const (
	minEntryBytes = len(`{"kind":"type","name":"","line":"1:0000","line_end":"1:0000"}`) + 1 // and a comma
	maxEntries    = MaxOutputBytes/minEntryBytes + 1
)

// outliners project each format of the registry. An outliner fails only
// when ctx is done.
var outliners = map[*lang.Format]func(ctx context.Context, src []byte) (entries []Entry, complete bool, err error){
	lang.Go:         outlineGo,
	lang.Python:     outlinePython,
	lang.TypeScript: outlineScript(lang.TypeScript),
	lang.TSX:        outlineScript(lang.TSX),
	lang.JavaScript: outlineScript(lang.JavaScript),
	lang.Markdown:   outlineMarkdown,
	lang.JSON:       plain(outlineJSON),
}

// plain adapts an outliner that runs in one quick pass over the source.
func plain(fn func(src []byte) ([]Entry, bool)) func(context.Context, []byte) ([]Entry, bool, error) {
	return func(_ context.Context, src []byte) ([]Entry, bool, error) {
		entries, complete := fn(src)
		return entries, complete, nil
	}
}

// Inspect outlines the file req, a path relative to root, and returns the
// result bounded to MaxOutputBytes. Failures are *errs.Error values whose
// codes are the failure codes of inspect_file; a done ctx stops the work
// between phases and inside a tree-sitter parse (code cancelled).
func Inspect(ctx context.Context, root *workspace.Root, req string) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, cancelled(err)
	}
	if workspace.NamesDir(req) {
		// open(2) would fail with ENOTDIR on a file: only a directory can
		// have that name, and a directory is not a regular file.
		clean, _, err := root.Stat(req)
		if err != nil {
			return nil, err // coded by workspace: a directory is not_regular
		}
		return nil, errs.New(errs.NotRegular, fmt.Sprintf("%s ends in /, which names a directory, but %s is a regular file", req, clean))
	}
	f := lang.Lookup(req)
	if f == nil {
		clean, fi, err := root.Stat(req)
		if err != nil {
			return nil, err // coded by workspace
		}
		return NewResult(Data{Path: clean, Kind: KindNone, SizeBytes: fi.Size(), ParseComplete: true})
	}
	clean, src, err := root.ReadFile(req)
	if err != nil {
		return nil, err // coded by workspace
	}
	d, err := outline(ctx, f, clean, src)
	if err != nil {
		if ee, ok := rows.IsEncoding(err); ok {
			return nil, errs.New(errs.NotUTF8, clean+" is not valid UTF-8: invalid byte at offset "+strconv.FormatInt(ee.Offset, 10))
		}
		return nil, err
	}
	return NewResult(d)
}

func cancelled(err error) error {
	return errs.New(errs.Cancelled, "the inspection was cancelled: "+err.Error())
}

// OutlineSource outlines src as the file name says, without touching the
// file system: the engine behind Inspect, for benchmarks and embedders. Its
// outline holds at most the entries a document within MaxOutputBytes could
// (see maxEntries), in source order. It
// returns a *rows.EncodingError for invalid UTF-8, and an *errs.Error for
// a name without a supported format or a done ctx.
func OutlineSource(ctx context.Context, name string, src []byte) (Data, error) {
	f := lang.Lookup(name)
	if f == nil {
		return Data{}, errs.New(errs.Usage, name+" has no supported format")
	}
	return outline(ctx, f, name, src)
}

// outline projects src in format f. A panic in a parser becomes a parse
// failure rather than a crash.
func outline(ctx context.Context, f *lang.Format, path string, src []byte) (d Data, err error) {
	n := 0
	if err := rows.Lines(src, func(int, int) { n++ }); err != nil {
		return Data{}, err
	}
	defer func() {
		if p := recover(); p != nil {
			d, err = Data{}, errs.New(CodeParse, fmt.Sprintf("the %s parser failed on %s: %v", f.Name, path, p))
		}
	}()
	entries, complete, err := outliners[f](ctx, src)
	entries = entries[:min(len(entries), maxEntries)]
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		if e, ok := errs.As(err); ok && e.Code != errs.Cancelled {
			// A parser that gave up (lang's internal) is inspect_file's
			// parse: one vocabulary per tool.
			return Data{}, errs.New(CodeParse, fmt.Sprintf("the %s parser failed on %s: %s", f.Name, path, e.Msg))
		}
		if _, ok := errs.As(err); ok {
			return Data{}, err
		}
		return Data{}, cancelled(err)
	}
	d = Data{
		Path:          path,
		Kind:          f.Kind,
		SizeBytes:     int64(len(src)),
		LineCount:     &n,
		ParseComplete: complete,
		Outline:       place(src, n, entries),
	}
	if f.Language != "" {
		d.Language = &f.Language
	}
	return d, nil
}

// place sets the entries' rows from their byte spans and drops any entry
// that falls on no line (only possible in an empty file, of lines lines).
// Trailing white space and terminators inside a span do not extend it.
// The rows are found in one pass over the lines up to the last offset
// wanted, with no index of every line: an outline keeps at most
// maxEntries entries, and the memory of a large file stays its bytes.
func place(src []byte, lines int, entries []Entry) []Entry {
	out := entries[:0]
	if lines == 0 {
		return out
	}
	// The first and last byte of each entry's span.
	offs := make([]int, 0, 2*len(entries))
	for i := range entries {
		e := &entries[i]
		start, end := max(e.start, 0), min(e.end, len(src))
		for end > start+1 && isSpaceByte(src[end-1]) {
			end--
		}
		if end <= start {
			end = start + 1
		}
		e.start, e.end = start, end-1
		offs = append(offs, start, end-1)
	}
	refs := refsAt(src, offs)
	for _, e := range entries {
		a, b := refs[e.start], refs[e.end]
		if b.Line < a.Line {
			b = a
		}
		e.Span = rows.Span{Start: a, End: b}
		e.Line, e.LineEnd = a.String(), b.String()
		out = append(out, e)
	}
	return out
}

// refsAt returns the row holding each byte offset in offs (a terminator
// belongs to the row it ends; an offset past the end, to the last row).
func refsAt(src []byte, offs []int) map[int]rows.Ref {
	slices.Sort(offs)
	offs = slices.Compact(offs)
	refs := make(map[int]rows.Ref, len(offs))
	line, start := 1, 0
	for len(offs) > 0 {
		i := rows.IndexTerm(src[start:])
		next := len(src) // the start of the next line
		text := src[start:]
		if i >= 0 {
			text = src[start : start+i]
			next = start + i + 1
			if src[start+i] == '\r' && next < len(src) && src[next] == '\n' {
				next++
			}
		}
		last := i < 0 || next == len(src)
		ref := rows.Ref{}
		for len(offs) > 0 && (offs[0] < next || last) {
			if ref.Hash == "" {
				ref = rows.RefOf(line, text)
			}
			refs[offs[0]] = ref
			offs = offs[1:]
		}
		line, start = line+1, next
	}
	return refs
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
