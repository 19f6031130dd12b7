package patch

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rowkit/rowkit/internal/rows"
)

// Reason codes of a rejected script. They are stable: agents branch on them.
const (
	ReasonSyntax         = "script-syntax"
	ReasonRowMissing     = "row-missing"
	ReasonRowStale       = "row-stale"
	ReasonOccurrence     = "occurrence-missing"
	ReasonInvalidCount   = "invalid-count"
	ReasonTargetOrder    = "target-order"
	ReasonConflict       = "edit-conflict"
	ReasonActiveFile     = "active-file"
	ReasonInitialization = "initialization"
	ReasonFilePath       = "file-path"
	ReasonLanguageSyntax = "language-syntax"
)

const (
	heredocMarker = "PATCH"
	maxCount      = 1 << 20
)

// kind is a command's kind: its verb, or init for the bare type that
// initializes a new file.
type kind string

const (
	kindInit kind = "init"
	kindIn   kind = "in"
	kindNew  kind = "new"
	kindMv   kind = "mv"
	kindRm   kind = "rm"
	kindType kind = "type"
	kindAdd  kind = "add"
)

// TargetKind says what a target selects.
type TargetKind uint8

const (
	TargetRows TargetKind = iota + 1 // ROW or ROW..ROW: whole lines with terminators
	TargetText                       // ["ROW"] "TEXT" [N]: exact matches
	TargetEOF                        // the end of the file (add) or its final terminator (type)
)

// Target is a parsed TARGET or DEST.
type Target struct {
	Kind      TargetKind
	Span      rows.Span // TargetRows
	Anchored  bool      // TargetText: search from the start of Anchor
	Anchor    rows.Ref
	Needle    string // TargetText
	Count     int    // TargetText: how many matches, at least 1
	CountText string // the count as written, for messages
}

// Command is one parsed command of a script.
type Command struct {
	N      int  // one-based command number
	Line   int  // one-based line of the script where the command starts
	Kind   kind // in, new, mv, rm, type, add, or init (a bare type after new)
	Path   string
	Target Target
	Value  string
}

// Op is the command's verb as written.
func (c *Command) Op() string {
	if c.Kind == kindInit {
		return string(kindType)
	}
	return string(c.Kind)
}

// Script is a parsed HPATCH/2 script.
type Script struct {
	Commands []Command
}

// Failure is one reason a script was rejected, with the repair context:
// current verified rows around the place the command asked for.
type Failure struct {
	Command int           `json:"command" jsonschema:"one-based number of the command that failed (0: the script as a whole)"`
	Op      string        `json:"op" jsonschema:"the command's verb: in, new, mv, rm, type or add"`
	Path    string        `json:"path" jsonschema:"the file the command applied to, as the script named it (empty when none was selected)"`
	Reason  string        `json:"reason" jsonschema:"stable reason code: script-syntax, row-missing, row-stale, occurrence-missing, invalid-count, target-order, edit-conflict, active-file, initialization, file-path or language-syntax"`
	Message string        `json:"message" jsonschema:"one line of explanation"`
	Rows    []rows.Record `json:"rows,omitempty" jsonschema:"repair context: current verified rows of the file around the requested place, usable as targets in the next script"`
	// Proposed rows are lines of the content the script would have
	// produced (language-syntax): numbered, not targets.
	Proposed []rows.Record `json:"proposed,omitempty" jsonschema:"language-syntax only: numbered lines of the rejected new content around the parse error; not edit targets"`
}

// Line is the failure's first line: OP: command N, path "PATH", reason REASON: MESSAGE.
func (f *Failure) Line() string {
	return fmt.Sprintf("%s: command %d, path %s, reason %s: %s", f.Op, f.Command, quoteClamped(f.Path), f.Reason, f.Message)
}

// Parse parses an HPATCH/2 script. It reports every syntax error it finds,
// not only the first: each command line is judged on its own, and a
// heredoc body is always skipped as a body, even under a malformed header,
// so that a bad header never turns body lines into commands.
func Parse(src string) (*Script, []Failure) {
	p := &parser{lines: splitScript(src)}
	p.run()
	return &Script{Commands: p.cmds}, p.fails
}

type parser struct {
	lines []string // each with its terminator
	cmds  []Command
	fails []Failure

	n        int    // commands so far
	path     string // the selected path as the script names it ("" none)
	selected bool
	lastNew  bool // the previous command was new (an initializer may follow)
	inited   bool
}

// splitScript splits src after each LF, keeping the terminators.
func splitScript(src string) []string {
	var out []string
	for len(src) > 0 {
		i := strings.IndexByte(src, '\n')
		if i < 0 {
			out = append(out, src)
			break
		}
		out = append(out, src[:i+1])
		src = src[i+1:]
	}
	return out
}

func trimEOL(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return strings.TrimSuffix(s, "\r")
}

func isBlank(s string) bool { return strings.Trim(s, " \t") == "" }

// token is one operand of a command line.
type token struct {
	text   string // as written
	str    bool   // a quoted string; val holds its value
	val    string
	bad    string // why the quoted string is malformed
	here   bool   // a heredoc header <<WORD
	marker string // the heredoc's word
}

func (p *parser) run() {
	for i := 0; i < len(p.lines); i++ {
		raw := p.lines[i]
		line := trimEOL(raw)
		if isBlank(line) {
			continue
		}
		p.n++
		cmd := Command{N: p.n, Line: i + 1}
		verb, rest := splitVerb(line)
		toks, tokErr := tokenize(rest)
		// The heredoc is found before anything else is judged, so its body
		// is consumed even when the header is wrong.
		hereAt, marker, hereErr := findHeredoc(toks, tokErr, rest)
		var body string
		if hereAt >= 0 || marker != "" {
			if marker == "" {
				marker = heredocMarker
			}
			var closed bool
			body, i, closed = p.readBody(i+1, marker)
			if !closed {
				hereErr = joinReason(hereErr, fmt.Sprintf("the heredoc opened on script line %d is never closed by a line %s", cmd.Line, marker))
			}
			hereErr = joinReason(hereErr, bodyEncoding(body, cmd.Line+1))
		}
		cmd.Kind = kind(verb)
		fail := func(reason, msg string) {
			op := verb
			if !isVerb(verb) {
				op = "script"
			}
			p.fails = append(p.fails, Failure{Command: cmd.N, Op: op, Path: p.path, Reason: reason, Message: msg})
		}
		if hereErr != "" {
			fail(ReasonSyntax, hereErr)
			p.afterBadCommand(verb, toks)
			continue
		}
		if tokErr != "" {
			fail(ReasonSyntax, tokErr)
			p.afterBadCommand(verb, toks)
			continue
		}
		if hereAt >= 0 && kind(verb) != kindType && kind(verb) != kindAdd {
			fail(ReasonSyntax, "only type and add take a <<PATCH value")
			p.afterBadCommand(verb, toks)
			continue
		}
		if hereAt >= 0 {
			toks[hereAt] = token{text: toks[hereAt].text, str: true, val: body}
		}
		reason, msg := p.command(&cmd, verb, rest, toks)
		if reason != "" {
			fail(reason, msg)
			continue
		}
		p.cmds = append(p.cmds, cmd)
	}
}

func joinReason(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// bodyEncoding says where a heredoc body that starts on script line first
// stops being UTF-8, or "" when it is valid. A value is written into a
// file byte for byte, and a file that is not UTF-8 is one rowkit can no
// longer read or edit, so such a body is a syntax error of the script.
func bodyEncoding(body string, first int) string {
	if utf8.ValidString(body) {
		return ""
	}
	off := rows.FirstInvalid([]byte(body))
	line := first + strings.Count(body[:off], "\n")
	col := off - (strings.LastIndexByte(body[:off], '\n') + 1) + 1
	return fmt.Sprintf("the <<PATCH body is not UTF-8: script line %d, byte %d; files must stay UTF-8 text", line, col)
}

func isVerb(v string) bool {
	switch kind(v) {
	case kindIn, kindNew, kindMv, kindRm, kindType, kindAdd:
		return true
	}
	return false
}

// afterBadCommand keeps the selection state plausible after a malformed
// command so that later commands are judged as the author meant them.
func (p *parser) afterBadCommand(verb string, toks []token) {
	switch kind(verb) {
	case kindIn, kindNew:
		p.selected = true
		p.path = ""
		if len(toks) == 1 && toks[0].str && toks[0].bad == "" {
			p.path = toks[0].val
		}
		p.lastNew = kind(verb) == kindNew
		p.inited = false
		return
	case kindRm:
		p.selected = false
		p.path = ""
	}
	p.lastNew = false
}

// readBody collects heredoc body lines from line index start up to the
// closing marker line. It returns the body, the index of the closing line
// (or the last line) and whether the heredoc was closed.
func (p *parser) readBody(start int, marker string) (string, int, bool) {
	var b strings.Builder
	for j := start; j < len(p.lines); j++ {
		if trimEOL(p.lines[j]) == marker {
			return b.String(), j, true
		}
		b.WriteString(p.lines[j])
	}
	return b.String(), len(p.lines) - 1, false
}

func splitVerb(line string) (verb, rest string) {
	line = strings.TrimLeft(line, " \t")
	i := strings.IndexAny(line, " \t")
	if i < 0 {
		return line, ""
	}
	return line[:i], strings.TrimLeft(line[i:], " \t")
}

// tokenize splits the operands of a command line: quoted JSON strings and
// runs of other non-blank bytes.
func tokenize(s string) ([]token, string) {
	var toks []token
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return toks, ""
		}
		if s[0] == '"' {
			val, n, bad := scanString(s)
			if bad != "" {
				toks = append(toks, token{text: s, str: true, bad: bad})
				return toks, "malformed quoted string: " + bad
			}
			if n < len(s) && s[n] != ' ' && s[n] != '\t' {
				toks = append(toks, token{text: s[:n], str: true, val: val})
				return toks, fmt.Sprintf("a quoted string must be followed by a space or the end of the line, not %s", quoteClamped(s[n:]))
			}
			toks = append(toks, token{text: s[:n], str: true, val: val})
			s = s[n:]
			continue
		}
		i := strings.IndexAny(s, " \t")
		if i < 0 {
			i = len(s)
		}
		t := token{text: s[:i]}
		if strings.HasPrefix(t.text, "<<") {
			t.here = true
			t.marker = t.text[2:]
		}
		toks = append(toks, t)
		s = s[i:]
	}
}

// findHeredoc locates a heredoc header among the tokens: any operand that
// starts with <<, valid or not. It returns the token index (-1 when the
// line has none), the word that will close the body, and what is wrong with
// the header. When tokenizing failed, the raw line is searched for a
// trailing <<WORD so that a header behind a broken string still owns its
// body.
func findHeredoc(toks []token, tokErr, rest string) (at int, marker, reason string) {
	at = -1
	for i, t := range toks {
		if !t.here {
			continue
		}
		if at >= 0 {
			return at, marker, "a command takes at most one heredoc"
		}
		at = i
		marker = t.marker
		switch {
		case marker == "" && i+1 < len(toks) && isWord(toks[i+1].text):
			// "<< PATCH": the author's marker is the next word.
			marker = toks[i+1].text
			reason = "write the heredoc header as <<PATCH, without a space"
		case marker != heredocMarker:
			reason = "the heredoc header must be <<PATCH"
			if !isWord(marker) {
				marker = heredocMarker
			}
		case i != len(toks)-1:
			reason = "<<PATCH must be the last operand of its command"
		}
	}
	if at >= 0 {
		return at, marker, reason
	}
	if tokErr != "" {
		trimmed := strings.TrimRight(rest, " \t")
		if k := strings.LastIndex(trimmed, "<<"); k >= 0 {
			w := strings.TrimLeft(trimmed[k+2:], " \t")
			if w == "" || isWord(w) {
				if w == "" {
					w = heredocMarker
				}
				return -1, w, ""
			}
		}
	}
	return -1, "", ""
}

func isWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// command judges one tokenized command and fills cmd.
func (p *parser) command(cmd *Command, verb, rest string, toks []token) (reason, msg string) {
	wasNew := p.lastNew
	p.lastNew = false
	switch kind(verb) {
	case kindIn, kindNew, kindMv:
		path, bad := pathOperand(rest, toks)
		if kind(verb) == kindMv && !p.selected {
			return ReasonActiveFile, "mv needs a selected file; start with in PATH"
		}
		if bad != "" {
			if kind(verb) != kindMv {
				p.selected, p.path, p.inited = true, "", false
				p.lastNew = kind(verb) == kindNew
			}
			return ReasonSyntax, bad
		}
		cmd.Path = path
		p.selected = true
		p.path = path
		if kind(verb) != kindMv {
			p.inited = false
			p.lastNew = kind(verb) == kindNew
		}
		return "", ""
	case kindRm:
		if len(toks) != 0 {
			return ReasonSyntax, "rm takes no operands; it deletes the selected file"
		}
		if !p.selected {
			return ReasonActiveFile, "rm needs a selected file; start with in PATH"
		}
		p.selected, p.path = false, ""
		return "", ""
	case kindType, kindAdd:
	default:
		if verb == "" {
			return ReasonSyntax, "empty command"
		}
		return ReasonSyntax, fmt.Sprintf("unknown command %s; commands are in, new, mv, rm, type and add", quoteClamped(verb))
	}
	if len(toks) == 0 {
		return ReasonSyntax, verb + " needs a value: a JSON string or <<PATCH"
	}
	last := toks[len(toks)-1]
	if !last.str {
		return ReasonSyntax, fmt.Sprintf("%s must end with its value, a JSON string or <<PATCH (got %s)", verb, quoteClamped(last.text))
	}
	cmd.Value = last.val
	ops := toks[:len(toks)-1]
	if kind(verb) == kindType && len(ops) == 0 {
		cmd.Kind = kindInit
		switch {
		case !p.selected:
			return ReasonActiveFile, "type with only a value initializes a new file; it needs new PATH right before it"
		case p.inited:
			return ReasonInitialization, "a new file is initialized at most once"
		case !wasNew:
			return ReasonInitialization, "type with only a value is the initial content of a new file and must come directly after new PATH; to replace text give a target"
		}
		p.inited = true
		return "", ""
	}
	t, reason, msg := parseTarget(verb, ops)
	if reason != "" {
		return reason, msg
	}
	cmd.Target = t
	if t.Kind == TargetEOF && kind(verb) == kindType {
		switch cmd.Value {
		case "", "\n", "\r\n", "\r":
		default:
			return ReasonSyntax, `type EOF sets the file's final terminator: its value is "", "\n", "\r\n" or "\r"`
		}
	}
	if !p.selected {
		return ReasonActiveFile, verb + " needs a selected file; start with in PATH or new PATH"
	}
	return "", ""
}

// pathOperand reads the PATH of in, new and mv: one JSON string, or the rest
// of the line taken literally.
func pathOperand(rest string, toks []token) (string, string) {
	if rest == "" {
		return "", "missing PATH"
	}
	if rest[0] == '"' {
		if len(toks) != 1 || !toks[0].str {
			return "", "a quoted PATH must be the only operand"
		}
		if toks[0].val == "" {
			return "", "PATH is empty"
		}
		return toks[0].val, ""
	}
	return strings.TrimRight(rest, " \t"), ""
}

// parseTarget reads the operands between the verb and the value.
func parseTarget(verb string, ops []token) (Target, string, string) {
	var t Target
	i := 0
	if len(ops) == 0 {
		return t, ReasonSyntax, verb + " needs a target before its value"
	}
	first := ops[0]
	switch {
	case !first.str && first.text == "EOF":
		if len(ops) != 1 {
			return t, ReasonSyntax, "EOF takes no further operands"
		}
		t.Kind = TargetEOF
		return t, "", ""
	case !first.str:
		if strings.Contains(first.text, "..") {
			if verb == string(kindAdd) {
				return t, ReasonSyntax, "add inserts before one row, a text target or EOF, not a range"
			}
			if len(ops) != 1 {
				return t, ReasonSyntax, "a range takes no text target; give ROW \"TEXT\" to search from a row"
			}
			a, b, _ := strings.Cut(first.text, "..")
			ra, err1 := rows.ParseRef(a)
			rb, err2 := rows.ParseRef(b)
			if err1 != nil || err2 != nil {
				return t, ReasonSyntax, fmt.Sprintf("malformed range %s; want LINE:HASH..LINE:HASH", quoteClamped(first.text))
			}
			// The order is judged on the rows the range resolves to
			// (plan.go), not on the numbers as written: a range whose
			// rows are stale gets the current rows, not target-order.
			t.Kind = TargetRows
			t.Span = rows.Span{Start: ra, End: rb}
			return t, "", ""
		}
		r, err := rows.ParseRef(first.text)
		if err != nil {
			return t, ReasonSyntax, fmt.Sprintf("malformed target %s; want LINE:HASH, LINE:HASH..LINE:HASH, \"TEXT\" or EOF", quoteClamped(first.text))
		}
		if len(ops) == 1 {
			t.Kind = TargetRows
			t.Span = rows.Span{Start: r, End: r}
			return t, "", ""
		}
		t.Anchored = true
		t.Anchor = r
		i = 1
	}
	// A text target: "TEXT" [N].
	if i >= len(ops) || !ops[i].str {
		return t, ReasonSyntax, "malformed target; want LINE:HASH, LINE:HASH..LINE:HASH, [LINE:HASH] \"TEXT\" [N] or EOF"
	}
	needle := ops[i].val
	switch {
	case needle == "":
		return t, ReasonSyntax, "a text target cannot be empty"
	case strings.ContainsRune(needle, '\r'):
		return t, ReasonSyntax, "a text target cannot contain CR; target the row instead"
	}
	for _, c := range []byte(needle) {
		if c < 0x20 && c != '\t' && c != '\n' {
			return t, ReasonSyntax, fmt.Sprintf("a text target cannot contain the control character %q", rune(c))
		}
	}
	t.Kind = TargetText
	t.Needle = needle
	t.Count = 1
	i++
	if i < len(ops) {
		ct := ops[i]
		if ct.str {
			return t, ReasonSyntax, "too many operands: a text target is \"TEXT\" [N], followed by one value"
		}
		// Whatever stands between the text and the value is the count.
		t.CountText = ct.text
		n, err := strconv.Atoi(ct.text)
		if err != nil || n < 1 || n > maxCount || !digits(ct.text) || ct.text[0] == '0' {
			return t, ReasonInvalidCount, fmt.Sprintf("the count %s is not a number from 1 to %d without leading zeros; a text target is [LINE:HASH] \"TEXT\" [N]", quoteClamped(ct.text), maxCount)
		}
		t.Count = n
		i++
	}
	if i != len(ops) {
		return t, ReasonSyntax, "too many operands: a text target is [LINE:HASH] \"TEXT\" [N], followed by one value"
	}
	return t, "", ""
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
