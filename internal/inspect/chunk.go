package inspect

import (
	"bytes"
	"context"
)

// A large file is outlined in pieces, each parsed on its own and released
// before the next, so that the memory an outline needs is bounded by a
// piece, not the file: tree-sitter's tree of a 7 MB Python file takes
// about 330 MB (its own C parser alone, bench/inspectsize.sh), go/parser's
// AST and goldmark's block tree about 200 MB. The pieces hold whole
// top-level statements (or Markdown blocks), so each parses as it does in
// the whole file and the outline is the same:
//
//   - a piece ends before a line that can only start a top-level
//     statement: at column 0, with a keyword or name that cannot continue
//     the line before it (cutAt of each language);
//   - a cut inside a construct that spans it (a multi-line string, a
//     function body written at column 0, a fenced code block) leaves the
//     piece unfinished: a syntax error, or for Markdown a code or HTML
//     block open at its end. (The last statement alone does not tell:
//     tree-sitter recovers from a string left open at the end by reading
//     its content as statements.) Such a piece is parsed again, twice as
//     long, until it ends cleanly; after maxDoublings the rest of the file
//     is one piece.
//
// So a file with a real syntax error is outlined in pieces up to the piece
// that holds the error, and from there on parsed whole, as a file within
// one piece is: its memory is then that of the rest of the file.

// pieceBytes is about the size of a piece. A tree-sitter tree takes about
// 50 bytes per byte of Python, so a piece stays near 3 MB; smaller pieces
// parse no slower (BenchmarkOutlineSize), larger ones raise the peak
// (a 7 MB Python file: 55 MB of RSS with 64 KiB pieces, 195 MB with 1 MiB).
var pieceBytes = 64 << 10

// maxDoublings bounds how often a piece that does not end cleanly is
// parsed again twice as long (up to 1 MiB) before the rest of the file
// becomes one piece.
const maxDoublings = 4

// outlinePiece outlines one piece (src is the piece, first says it starts
// the file; with want false no entry is wanted, only complete and closed).
// closed reports that the piece ended cleanly, so that the cut after it
// cannot have split a construct; entries are relative to src.
type outlinePiece func(ctx context.Context, src []byte, first, want bool) (entries []Entry, complete, closed bool, err error)

// inPieces outlines src with outline, piece by piece, cutting only where
// cutAt (given a line's start offset) allows. It keeps the first
// maxEntries entries; after them the pieces are parsed for parse_complete
// alone.
func inPieces(ctx context.Context, src []byte, cutAt func(src []byte, at int) bool, outline outlinePiece) ([]Entry, bool, error) {
	if len(src) <= pieceBytes {
		entries, complete, _, err := outline(ctx, src, true, true)
		return entries, complete, err
	}
	var out []Entry
	complete := true
	for start := 0; start < len(src); {
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		size := max(pieceBytes, 1) // a piece is never empty
		for doublings := 0; ; doublings++ {
			end := nextCut(src, start+size, cutAt)
			if doublings > maxDoublings {
				end = len(src)
			}
			entries, ok, closed, err := outline(ctx, src[start:end], start == 0, len(out) < maxEntries)
			if err != nil {
				return nil, false, err
			}
			if closed || end == len(src) {
				for _, e := range entries[:min(len(entries), maxEntries-len(out))] {
					e.start += start
					e.end += start
					out = append(out, e)
				}
				complete = complete && ok
				start = end
				break
			}
			size *= 2
		}
	}
	return out, complete, nil
}

// nextCut returns the start of the first line at or after from where
// cutAt allows a cut, or len(src).
func nextCut(src []byte, from int, cutAt func(src []byte, at int) bool) int {
	at := from
	if at < len(src) && !isLineStart(src, at) {
		at = nextLine(src, at)
	}
	for ; at < len(src); at = nextLine(src, at) {
		if cutAt(src, at) {
			return at
		}
	}
	return len(src)
}

// nextLine returns the start of the line after the one holding at, or
// len(src).
func nextLine(src []byte, at int) int {
	i := bytes.IndexAny(src[at:], "\n\r")
	if i < 0 {
		return len(src)
	}
	at += i + 1
	if src[at-1] == '\r' && at < len(src) && src[at] == '\n' {
		at++
	}
	return at
}

// isLineStart reports whether a line starts at at: after LF, a lone CR, or
// the end of a CRLF.
func isLineStart(src []byte, at int) bool {
	if at == 0 {
		return true
	}
	switch src[at-1] {
	case '\n':
		return true
	case '\r':
		return at == len(src) || src[at] != '\n'
	}
	return false
}

// startsWord reports whether the line at at starts with one of words,
// followed by a byte that cannot continue the word.
func startsWord(src []byte, at int, words ...string) bool {
	rest := src[at:]
	for _, w := range words {
		if bytes.HasPrefix(rest, []byte(w)) && (len(rest) == len(w) || !isNameByte(rest[len(w)])) {
			return true
		}
	}
	return false
}

func isNameByte(c byte) bool {
	return c == '_' || c == '$' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}

// Where each language may be cut: before a line at column 0 that starts a
// declaration or statement no earlier line can continue.

func goCutAt(src []byte, at int) bool {
	return startsWord(src, at, "func", "type", "var", "const", "import")
}

func pythonCutAt(src []byte, at int) bool {
	if at >= len(src) {
		return false
	}
	c := src[at]
	if !(c == '_' || c == '@' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
		return false
	}
	// These continue the compound statement before them.
	return !startsWord(src, at, "else", "elif", "except", "finally", "case")
}

func scriptCutAt(src []byte, at int) bool {
	return at < len(src) && src[at] == '@' ||
		startsWord(src, at, "export", "import", "function", "async", "class", "abstract",
			"const", "let", "var", "interface", "type", "enum", "declare", "namespace", "module")
}

// markdownCutAt allows a cut before a line at column 0 after a blank line:
// there a list, block quote or paragraph has ended, and only a fenced code
// block or an HTML block can span the cut (see outlineMarkdownPiece).
func markdownCutAt(src []byte, at int) bool {
	if at == 0 || at >= len(src) || src[at] == ' ' || src[at] == '\t' || src[at] == '\n' || src[at] == '\r' {
		return false
	}
	// The line before must be blank.
	end := at - 1
	if src[end] == '\n' && end > 0 && src[end-1] == '\r' {
		end--
	}
	i := end
	for i > 0 && (src[i-1] == ' ' || src[i-1] == '\t') {
		i--
	}
	return i == 0 || src[i-1] == '\n' || src[i-1] == '\r'
}
