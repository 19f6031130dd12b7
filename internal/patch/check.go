package patch

import (
	"bytes"
	"encoding/json"
	goparser "go/parser"
	"go/scanner"
	gotoken "go/token"
	"path"
	"strings"

	"github.com/rowkit/rowkit/internal/rows"
)

// Checker reports the first syntax error of src in the language its path
// names: the one-based line and a one-line message, with bad set. A path
// with no known language is never bad. The command adapters pass
// lang.Check (Go, Python, JavaScript/TypeScript, JSON) once internal/lang
// is on main; StdChecker is the fallback.
type Checker func(path string, src []byte) (line int, msg string, bad bool)

// StdChecker checks Go with go/parser and JSON strictly with
// encoding/json: the languages the standard library parses.
func StdChecker(p string, src []byte) (int, string, bool) {
	switch strings.ToLower(path.Ext(p)) {
	case ".go":
		_, err := goparser.ParseFile(gotoken.NewFileSet(), p, src, goparser.SkipObjectResolution)
		if err == nil {
			return 0, "", false
		}
		if list, ok := err.(scanner.ErrorList); ok && len(list) > 0 {
			return rowLine(src, list[0].Pos.Offset), list[0].Msg, true
		}
		return 1, err.Error(), true
	case ".json":
		body := bytes.TrimPrefix(src, []byte("\ufeff"))
		var v json.RawMessage
		err := json.Unmarshal(body, &v)
		if err == nil {
			return 0, "", false
		}
		off := len(body)
		if se, ok := err.(*json.SyntaxError); ok {
			off = int(se.Offset) - 1
		}
		return rowLine(src, off+len(src)-len(body)), err.Error(), true
	}
	return 0, "", false
}

// rowLine maps a byte offset to its verified-row line (LF, CRLF and lone
// CR all end lines); an offset at or past the end is on the last line.
func rowLine(src []byte, off int) int {
	x, err := rows.NewIndex(src)
	if err != nil || x.Count() == 0 {
		return 1
	}
	off = max(0, min(off, len(src)-1))
	return max(1, min(x.LineAt(off), x.Count()))
}
