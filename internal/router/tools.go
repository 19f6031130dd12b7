package router

import (
	"encoding/json"
	"io"
	"sync"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/jsonstr"
	"github.com/rowkit/rowkit/internal/patch"
	"github.com/rowkit/rowkit/internal/shell"
)

// Guidance is rowkit's central guidance: how to work with verified rows.
// It is one text, used where Codex's base instructions told the model to
// use apply_patch. The tool descriptions, sent with every request too, do
// not repeat it.
const Guidance = "Work in `shell` and edit with `hpatch`. To see a function, outline its file with " +
	"`inspect_file --text PATH` or find its definition with `hsymbol def PATH ROW NAME`, and read its span with " +
	"`hread PATH START:END`, rather than `hgrep` with wide context; find code with `hgrep PATTERN " +
	"[PATH...]`, references with `hsymbol refs`. Every row prints as `LINE:HASH TEXT`: copy " +
	"`LINE:HASH` exactly as the target of an `hpatch` edit. Create and edit files only with `hpatch`, " +
	"never with `cat`, `sed -i`, redirections or Python; formatting commands and bulk mechanical " +
	"rewrites may still run in `shell`."

// hpatchDescription is the hpatch tool's description: the router's own
// words (where the script goes, what comes back, the concurrency of
// Codex's calls), then HPATCH/2 as every model's tool text teaches it
// (patch.Brief). The guidance is in the instructions: the tools go out
// with every request too.
const hpatchDescription = "Edits files with an HPATCH/2 script, all or none; FREEFORM (the script itself, " +
	"not JSON), in place of apply_patch. The result shows the rows around each edit; a rejected script " +
	"changes nothing and shows the current rows. Calls of one response run at once: put an edit and " +
	"what depends on it in separate responses, or in one `shell` script (`hpatch <<'EOF' ... EOF` then " +
	"the tests).\n\n" + patch.Brief

// shellDescription is the shell tool's description under a tool output
// policy of tokens: it names the carrier's bound (OutputBound) and the
// room a private command gets within it, the first bytes of the output
// that the shell keeps whole (shell.Output).
func shellDescription(tokens int) string {
	bound := OutputBound(tokens)
	head := shell.NewOutput(io.Discard, bound).Room()
	return "Run a bash script in the working directory (a login shell, as Codex runs commands); the " +
		"result is its stdout and stderr together and its exit status. FREEFORM: send the script itself, " +
		"not JSON. These commands are on its PATH and print verified rows LINE:HASH TEXT: `hread PATH " +
		"[START:END]` (a file, or lines of it), `hgrep PATTERN [PATH...]` (ripgrep; rows " +
		"\"PATH\":LINE:HASH TEXT), `inspect_file [--text] PATH` (an outline whose spans are rows; JSON, or a line per entry), " +
		"`hsymbol OP PATH ROW NAME` (the language server's def, refs, impl, hover, calls-in, calls-out) and " +
		"`hpatch <<'EOF' ... EOF` (an HPATCH/2 script). Output over " + errs.Thousands(bound) +
		" bytes keeps its head and tail and says what it left out; hread, hgrep, hsymbol and inspect_file stop at a " +
		"whole row within the first " + errs.Thousands(head) + " bytes and say how to go on. Processes the " +
		"script leaves running are stopped when it ends (`setsid -f CMD >LOG 2>&1` detaches one). A run over 30 s returns a " +
		"session ID to poll with write_stdin. The calls of one response run at the same time."
}

// Grammar is HPATCH/2 as a Lark grammar in the dialect of OpenAI's custom
// tools (llguidance: no lookaround, no priorities). It accepts every
// script rowkit's parser (internal/patch.Parse) accepts and rejects every
// script the parser rejects for its structure. It also accepts a few the
// parser refuses for a value that no grammar of this size bounds: a range
// that ends before it starts (no context-free grammar compares numbers),
// a line number past 2^63-1 or a count past 2^20 (the grammar bounds
// their digits), a \u escape of a lone surrogate, or of a control
// character in a text target. The model then reads the parser's one-line
// refusal; the grammar is sent on every request, and deciding those values
// took half its tokens. grammar_test.go proves all of it with Lark.
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
var Grammar = sync.OnceValue(func() string { return grammar })

const grammar = `start: BLANK* block* last?
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
TYPE_LINE: SP "type" WS (TARGET | "EOF") WS VALUE
ADD_LINE: SP "add" WS DEST WS VALUE

PATH_OPERAND: WS (QUOTED SP | BARE_PATH SP | CR WS (BARE_TOKEN (WS BARE_TOKEN)* SP)?)
BARE_PATH: BARE_FIRST (WS BARE_TOKEN)*
BARE_FIRST: /(?:<(?:[^ \t\n<][^ \t\n]*)?|[^ \t\n"<\r][^ \t\n]*|\r[^ \t\n]+)/
BARE_TOKEN: STRING | /(?:<(?:[^ \t\n<][^ \t\n]*)?|[^ \t\n"<][^ \t\n]*)/

TARGET: ROW (".." ROW | WS QUOTED (WS COUNT)?)? | QUOTED (WS COUNT)?
DEST: "EOF" | ROW (WS QUOTED (WS COUNT)?)? | QUOTED (WS COUNT)?
ROW: /[1-9][0-9]*:[0-9a-f]{4}/
COUNT: /[1-9][0-9]*/

VALUE: STRING SP | HEREDOC
HEREDOC: "<<PATCH" SP NL BODY_LINE* "PATCH"
BODY_LINE: /(?:[^P\n][^\n]*|P(?:[^A\n][^\n]*)?|PA(?:[^T\n][^\n]*)?|PAT(?:[^C\n][^\n]*)?|PATC(?:[^H\n][^\n]*)?|PATCH(?:[^\r\n][^\n]*|\r[^\n]+))?\n/

STRING: "\"" (CH | ESC)* "\""
QUOTED: "\"" (CH | ESC)+ "\""
CH: /[^"\\\x00-\x08\x0a-\x1f]/
ESC: /\\(?:["\\\/bfnrt]|u[0-9a-fA-F]{4})/

NL: /\r?\n/
CR: /\r/
WS: /[ \t]+/
SP: /[ \t]*/
`

// builtinTools are the two tools as a request for a model with a tool
// output policy of tokens carries them, in the shape of Codex's own
// apply_patch tool: appended, in this order, to every rewritten request.
// Built on first use, as Grammar is, once for each policy.
func builtinTools(tokens int) (hpatch, shell json.RawMessage) {
	t := toolsFor(tokens)
	return t[0], t[1]
}

var (
	toolsMu    sync.Mutex
	toolsCache = map[int][2]json.RawMessage{}
)

func toolsFor(tokens int) [2]json.RawMessage {
	toolsMu.Lock()
	defer toolsMu.Unlock()
	if t, ok := toolsCache[tokens]; ok {
		return t
	}
	t := [2]json.RawMessage{
		mustTool(map[string]any{"type": "custom", "name": ToolHpatch, "description": hpatchDescription,
			"format": map[string]any{"type": "grammar", "syntax": "lark", "definition": Grammar()}}),
		mustTool(map[string]any{"type": "custom", "name": ToolShell, "description": shellDescription(tokens)}),
	}
	toolsCache[tokens] = t
	return t
}

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
