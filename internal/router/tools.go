package router

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/jsonstr"
	"github.com/rowkit/rowkit/internal/patch"
)

// Guidance is rowkit's central guidance: how to work with verified rows.
// It is one text, used where Codex's base instructions told the model to
// use apply_patch and in both tool descriptions, so that the model reads
// the same words everywhere.
const Guidance = "Work in `shell` and edit with `hpatch`. To find code, outline a file with " +
	"`inspect_file PATH` or search with `hgrep PATTERN [PATH...]`, then read only the rows you need " +
	"with `hread PATH START:END`. Every row prints as `LINE:HASH TEXT`: copy `LINE:HASH` exactly " +
	"as the target of an `hpatch` edit. Create and edit files only with `hpatch`, never with `cat`, " +
	"`sed -i`, redirections or Python; formatting commands and bulk mechanical rewrites may still " +
	"run in `shell`."

// hpatchDescription is the hpatch tool's description: the one HPATCH/2
// description every surface shows (patch.Language), between the router's
// own words (where the script goes, what comes back, the concurrency of
// Codex's calls) and the guidance.
const hpatchDescription = "Apply an HPATCH/2 edit script to the files of the working directory, " +
	"all of them or none. This is a FREEFORM tool: send the script itself, not JSON. It replaces " +
	"apply_patch, which is not available here.\n\n" + patch.Language + "\n" +
	"The result lists the rows around each edit (\"PATH\":LINE:HASH TEXT), ready for the next " +
	"script; a rejected script changes nothing and shows the current rows to retry with. The calls " +
	"of one response run at the same time: an edit and what depends on it belong in different " +
	"responses, or in one `shell` script (`hpatch <<'EOF' ... EOF && go test ./...`).\n\n" + Guidance

// shellDescription is the shell tool's description.
func shellDescription() string {
	return "Run one bash script in the working directory; the result is its combined " +
		"stdout and stderr and its exit status. This is a FREEFORM tool: send the script itself, not " +
		"JSON. bash runs it as a login shell, as Codex runs commands. These commands are on its PATH and " +
		"print verified rows LINE:HASH TEXT: `hread PATH [START:END]` (a file, or a range of its lines), " +
		"`hgrep PATTERN [PATH...]` (ripgrep; rows \"PATH\":LINE:HASH TEXT), `inspect_file PATH` (a " +
		"file's outline as JSON whose spans are rows) and `hpatch` (an HPATCH/2 script on stdin, e.g. " +
		"`hpatch <<'EOF' ... EOF`). Output over " + errs.Thousands(OutputBytes) + " bytes keeps its head " +
		"and tail and says what it left out. Processes the script leaves running are stopped when it ends " +
		"(`setsid -f CMD >LOG 2>&1` detaches one on purpose). A run longer than 30 s returns a " +
		"session ID to poll with write_stdin. The calls of one response run at the same time.\n\n" + Guidance
}

// Grammar is HPATCH/2 as a Lark grammar in the dialect of OpenAI's custom
// tools (llguidance: no lookaround, no priorities): it accepts exactly the
// scripts rowkit's parser (internal/patch.Parse) accepts, except a range
// that ends before it starts, which no context-free grammar can tell (the
// parser answers target-order). grammar_test.go proves it with Lark.
//
// Every line is one terminal with its terminator, so the grammar says
// exactly where a line ends: a CR before LF belongs to the terminator, as
// in the parser, and the last line may lack one (the _END terminals). The
// rules follow the parser's selection state: a file is selected (in, new)
// before it is edited, rm unselects it, and an initial value (type VALUE)
// comes right after new. Lark composes terminals into one regular
// expression, may reorder their alternatives and does not group a regex
// literal's own: so every alternation here is decided by its first
// characters, and every literal with alternatives is grouped.
//
// Built on first use: every rowkit process links the router, and only
// rowkit router needs the grammar.
var Grammar = sync.OnceValue(buildGrammar)

func buildGrammar() string {
	g := `start: BLANK* block* last?
block: select edit* (RM BLANK*)?
select: IN | NEW (BLANK* INIT)?
edit: TYPE | ADD | MV | BLANK
last: IN_END | NEW_END | BLANK_END | select edit* (TYPE_END | ADD_END | MV_END | RM_END) | NEW BLANK* INIT_END

BLANK: /[ \t]*\r?\n/
BLANK_END: /(?:[ \t]+\r?|\r)/
IN: IN_LINE NL
IN_END: IN_LINE CR?
NEW: NEW_LINE NL
NEW_END: NEW_LINE CR?
MV: MV_LINE NL
MV_END: MV_LINE CR?
RM: RM_LINE NL
RM_END: RM_LINE CR?
INIT: INIT_LINE NL
INIT_END: INIT_LINE CR?
TYPE: TYPE_LINE NL
TYPE_END: TYPE_LINE CR?
ADD: ADD_LINE NL
ADD_END: ADD_LINE CR?

IN_LINE: SP "in" PATH_OPERAND
NEW_LINE: SP "new" PATH_OPERAND
MV_LINE: SP "mv" PATH_OPERAND
RM_LINE: SP "rm" SP
INIT_LINE: SP "type" WS VALUE
TYPE_LINE: SP "type" WS (TARGET WS VALUE | "EOF" WS EOF_VALUE)
ADD_LINE: SP "add" WS DEST WS VALUE

PATH_OPERAND: WS (QUOTED_PATH SP | BARE_PATH SP | CR WS (BARE_TOKEN (WS BARE_TOKEN)* SP)?)
QUOTED_PATH: /"(?:CHAR|\\(?:ESCAPE))+"/
BARE_PATH: BARE_FIRST (WS BARE_TOKEN)*
BARE_FIRST: /(?:<(?:[^ \t\n<][^ \t\n]*)?|[^ \t\n"<\r][^ \t\n]*|\r[^ \t\n]+)/
BARE_TOKEN: STRING | /(?:<(?:[^ \t\n<][^ \t\n]*)?|[^ \t\n"<][^ \t\n]*)/

TARGET: ROW (".." ROW | WS NEEDLE (WS COUNT)?)? | NEEDLE (WS COUNT)?
DEST: "EOF" | ROW (WS NEEDLE (WS COUNT)?)? | NEEDLE (WS COUNT)?
ROW: LINE ":" /[0-9a-f]{4}/
LINE: /LINE_NUMBER/
COUNT: /COUNT_NUMBER/

VALUE: STRING SP | HEREDOC
EOF_VALUE: EOF_STRING SP | "<<PATCH" SP NL NL? "PATCH"
HEREDOC: "<<PATCH" SP NL BODY_LINE* "PATCH"
BODY_LINE: /(?:[^P\n][^\n]*|P(?:[^A\n][^\n]*)?|PA(?:[^T\n][^\n]*)?|PAT(?:[^C\n][^\n]*)?|PATC(?:[^H\n][^\n]*)?|PATCH(?:[^\r\n][^\n]*|\r[^\n]+))?\n/

STRING: /"(?:CHAR|\\(?:ESCAPE))*"/
NEEDLE: /"(?:CHAR|\\(?:NEEDLE_ESCAPE))+"/
EOF_STRING: /"(?:\\r|\\u000[dD])?(?:\\n|\\u000[aA])?"/

NL: /\r?\n/
CR: /\r/
WS: /[ \t]+/
SP: /[ \t]*/
`
	// A string holds any character but a quote, a backslash and the
	// controls other than TAB; a \u escape names a character (a surrogate
	// only as a pair). A text target is never empty and holds no control
	// character but TAB and LF, so no \b, \f, \r.
	const hex = `[0-9a-fA-F]`
	pair := `[dD][89abAB]` + hex + `{2}\\u[dD][c-fC-F]` + hex + `{2}`
	escape := `["\\\/bfnrt]|u(?:[0-9a-cA-CeEfF]` + hex + `{3}|[dD][0-7]` + hex + `{2}|` + pair + `)`
	needleEscape := `["\\\/nt]|u(?:000[9aA]|00[2-9a-fA-F]` + hex + `|0[1-9a-fA-F]` + hex + `{2}|[1-9a-cA-CeEfF]` + hex + `{3}|[dD][0-7]` + hex + `{2}|` + pair + `)`
	r := strings.NewReplacer(
		"NEEDLE_ESCAPE", needleEscape,
		"ESCAPE", escape,
		"CHAR", `[^"\\\x00-\x08\x0a-\x1f]`,
		// A line number is what strconv.Atoi takes, without leading zeros;
		// a count is at most 1<<20 (the parser's limits).
		"LINE_NUMBER", decimalAtMost("9223372036854775807"),
		"COUNT_NUMBER", decimalAtMost("1048576"),
	)
	return r.Replace(g)
}

// decimalAtMost is a regular expression (alternatives, longest first) for
// the positive decimal numbers without leading zeros up to max.
func decimalAtMost(max string) string {
	n := len(max)
	var alts []string
	// As many digits as max: a prefix of max, then a smaller digit, then
	// anything; or max itself.
	for i := 0; i < n; i++ {
		lo := byte('0')
		if i == 0 {
			lo = '1'
		}
		if max[i] <= lo {
			continue
		}
		hi := max[i] - 1
		class := fmt.Sprintf("[%c-%c]", lo, hi)
		if lo == hi {
			class = string(lo)
		}
		alt := max[:i] + class
		if rest := n - i - 1; rest > 0 {
			alt += fmt.Sprintf("[0-9]{%d}", rest)
		}
		alts = append(alts, alt)
	}
	alts = append(alts, max)
	if n > 1 {
		// Fewer digits: anything.
		alts = append(alts, fmt.Sprintf("[1-9][0-9]{0,%d}", n-2))
	}
	return "(?:" + strings.Join(alts, "|") + ")"
}

// builtinTools are the two tools as the request carries them, in the shape
// of Codex's own apply_patch tool: appended, in this order, to every
// rewritten request. Built on first use, as Grammar is.
var builtinTools = sync.OnceValues(func() (hpatch, shell json.RawMessage) {
	hpatch = mustTool(map[string]any{"type": "custom", "name": ToolHpatch, "description": hpatchDescription,
		"format": map[string]any{"type": "grammar", "syntax": "lark", "definition": Grammar()}})
	shell = mustTool(map[string]any{"type": "custom", "name": ToolShell, "description": shellDescription()})
	return hpatch, shell
})

// mustTool encodes a tool with a fixed key order and without HTML
// escaping, so that its bytes are the same in every request.
func mustTool(fields map[string]any) json.RawMessage {
	var b []byte
	b = append(b, '{')
	for i, k := range []string{"type", "name", "description", "format"} {
		v, ok := fields[k]
		if !ok {
			continue
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, k)
		b = append(b, ':')
		switch v := v.(type) {
		case string:
			b = jsonstr.Append(b, v)
		case map[string]any:
			b = append(b, '{')
			for j, kk := range []string{"type", "syntax", "definition"} {
				if j > 0 {
					b = append(b, ',')
				}
				b = jsonstr.Append(b, kk)
				b = append(b, ':')
				b = jsonstr.Append(b, v[kk].(string))
			}
			b = append(b, '}')
		}
	}
	b = append(b, '}')
	if !json.Valid(b) {
		panic("router: a built-in tool is not valid JSON")
	}
	return b
}
