package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// handler is a typed tool: the arguments decoded, a result and its output
// value, or an error that becomes a Failure.
type handler[In, Out any] func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error)

// checkOutputs validates every structuredContent against the tool's output
// schema before it is sent. The tests turn it on; a server leaves it off,
// because on a 2,000-line read the validation cost more than the read.
var checkOutputs = false

// modelText are the tools whose product is text for a model: the
// verified rows of read_file and search, the outline of inspect_file and
// the report of edit. Codex and Claude Code hand the model
// JSON.stringify(structuredContent) whenever a result has it and drop the
// text content, so the rows would arrive as {"number":4,"hash":"4c62",...}
// objects at twice the tokens. Unless the server is structured
// (Options.Structured), these tools declare no output schema and return
// their text content alone: the model reads it verbatim.
var modelText = map[string]bool{"read_file": true, "search": true, "inspect_file": true, "edit": true, "symbol": true}

// searchHints are the words Claude Code's ToolSearch matches a tool by,
// beside its name and description (the tool's _meta
// "anthropic/searchHint"): the words a model searches with. Without one,
// a search for "git changes" ranked Claude Code's worktree tools above
// inspect_repository.
var searchHints = map[string]string{
	"read_file":          "read file lines contents view cat open",
	"search":             "grep search find text code regex in files ripgrep",
	"inspect_file":       "outline symbols definitions functions classes structure",
	"edit":               "edit patch replace insert write create move delete files",
	"inspect_repository": "git status diff changes changed files",
	"run_validations":    "run tests build lint checks validations",
	"symbol":             "go to definition find references find symbol usages callers implementations hover type definition navigate code language server LSP",
}

// alwaysLoad are the tools Claude Code offers its model from the first
// request (_meta "anthropic/alwaysLoad"), rather than behind ToolSearch:
// the tools of every task. Loading them costs their definitions on every
// request (about 700 tokens for the five); a deferred tool costs the
// model a ToolSearch turn, a whole request, before its first call
// (bench/agentab: 31 turns against 37 over six tasks, 0.86x the tokens
// sent). inspect_repository and run_validations stay deferred: a bug fix
// seldom needs them, and ToolSearch finds them when one does.
var alwaysLoad = map[string]bool{"read_file": true, "search": true, "inspect_file": true, "edit": true, "symbol": true}

// checkCodes, when set (by the tests), sees the structuredContent of every
// result, failures included, and refuses a code that is not in the tool's
// vocabulary (errs.Vocabularies): the whole suite keeps the table true.
var checkCodes func(tool string, structured []byte) error

// register adds a typed tool, as mcp.AddTool does (the input schema
// validates and decodes the arguments; the output schema describes the
// result), with three differences that serve the model, the three failure
// layers and the parity with the CLI:
//   - a modelText tool of a server that is not structured has no output
//     schema and no structuredContent: its text content is the result;
//   - otherwise structuredContent is the engine's value encoded once, in
//     struct order and without HTML escaping: the CLI's JSON bytes, not a
//     re-encoding through a map;
//   - a failure, from the input schema or from the tool, is isError with
//     the one line CODE: MESSAGE (HINT) as its text and, on a structured
//     server, a Failure as structuredContent, so the machine code reaches
//     a program too.
func register[In, Out any](s *Server, t *mcp.Tool, h handler[In, Out]) {
	in, ok := t.InputSchema.(*jsonschema.Schema)
	if !ok {
		panic("register " + t.Name + ": the input schema must be a *jsonschema.Schema")
	}
	inR, err := in.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		panic(fmt.Sprintf("register %s: input schema: %v", t.Name, err))
	}
	out, _ := t.OutputSchema.(*jsonschema.Schema)
	outR, err := out.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("register %s: output schema: %v", t.Name, err))
	}
	t.InputSchema = advertised(in)
	structured := s.structured || !modelText[t.Name]
	if !structured {
		t.OutputSchema = nil
	}
	if t.Meta == nil {
		t.Meta = mcp.Meta{}
	}
	if h := searchHints[t.Name]; h != "" {
		t.Meta["anthropic/searchHint"] = h
	}
	if alwaysLoad[t.Name] {
		t.Meta["anthropic/alwaysLoad"] = true
	}
	t.Meta["anthropic/maxResultSizeChars"] = ClaudeMaxResultChars
	s.mcp.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, cancel := s.callContext(ctx)
		defer cancel()
		res, err := runTool(ctx, s, req, t.Name, structured, h, inR, outR)
		if err == nil && checkCodes != nil && res.StructuredContent != nil {
			if cerr := checkCodes(t.Name, res.StructuredContent.(json.RawMessage)); cerr != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: cerr.Error()}
			}
		}
		return res, err
	})
}

// advertised is an input schema as the model reads it: each property's
// type, enum and description, and what is required. The bounds the server
// checks anyway (lengths, ranges, patterns, unique or at least one item, no
// other properties) cost tokens on every request and tell a model nothing
// it acts on: a value past one is refused with a usage error naming it.
// A property that may be null shows its other type alone.
func advertised(s *jsonschema.Schema) map[string]any {
	b, err := json.Marshal(s)
	if err != nil {
		panic("advertised: " + err.Error())
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	var strip func(schema map[string]any)
	strip = func(schema map[string]any) {
		for _, k := range []string{"minLength", "maxLength", "minimum", "maximum", "pattern", "uniqueItems", "minItems", "additionalProperties"} {
			delete(schema, k)
		}
		if ts, ok := schema["type"].([]any); ok && len(ts) == 2 && ts[0] == "null" {
			schema["type"] = ts[1]
		}
		if items, ok := schema["items"].(map[string]any); ok {
			strip(items)
		}
		props, _ := schema["properties"].(map[string]any)
		for _, p := range props {
			if p, ok := p.(map[string]any); ok {
				strip(p)
			}
		}
	}
	strip(m)
	return m
}

// runTool decodes the arguments, runs the handler and, for a structured
// tool, encodes its value as structuredContent.
func runTool[In, Out any](ctx context.Context, s *Server, req *mcp.CallToolRequest, name string, structured bool, h handler[In, Out], inR, outR *jsonschema.Resolved) (*mcp.CallToolResult, error) {
	v, err := decodeArgs[In](req.Params.Arguments, inR)
	if err != nil {
		return s.failed(err), nil
	}
	res, value, err := h(ctx, req, v)
	if err != nil {
		return s.failed(err), nil
	}
	if !structured {
		if res == nil || res.Content == nil {
			return nil, fmt.Errorf("%s: the tool returned no text", name)
		}
		return res, nil
	}
	b, err := encode(value)
	if err != nil {
		return nil, fmt.Errorf("encoding the %s result: %w", name, err)
	}
	if checkOutputs {
		var doc any
		json.Unmarshal(b, &doc)
		if err := outR.Validate(doc); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s: the result does not match the output schema: %v", name, err)}
		}
	}
	if res == nil {
		res = &mcp.CallToolResult{}
	}
	res.StructuredContent = json.RawMessage(b)
	if res.Content == nil {
		res.Content = []mcp.Content{&mcp.TextContent{Text: string(b)}}
	}
	return res, nil
}

// decodeArgs validates raw against the input schema and decodes it. Any
// failure is a usage error: the first failure layer.
func decodeArgs[In any](raw json.RawMessage, schema *jsonschema.Resolved) (In, error) {
	var v In
	doc := map[string]any{}
	if len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if err := json.Unmarshal(raw, &doc); err != nil {
			return v, fmt.Errorf("the arguments are not a JSON object: %v", err)
		}
	}
	if err := schema.Validate(doc); err != nil {
		return v, fmt.Errorf("invalid arguments: %s", boundMessage(err.Error()))
	}
	b, _ := json.Marshal(doc)
	if err := json.Unmarshal(b, &v); err != nil {
		return v, fmt.Errorf("invalid arguments: %s", boundMessage(err.Error()))
	}
	return v, nil
}

// maxArgMessage bounds a validation message: the validator quotes the
// offending value, which may be megabytes long.
const maxArgMessage = 1 << 10

// boundMessage keeps the head of msg, cut on a rune boundary, and says how
// many bytes it left out.
func boundMessage(msg string) string {
	if len(msg) <= maxArgMessage {
		return msg
	}
	cut := maxArgMessage
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes left out)", msg[:cut], len(msg)-cut)
}

// encode is v's JSON as the CLI writes it: struct order, no HTML escaping,
// no trailing newline.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// failed is the result of a call that could not do its job: its text is
// the failure's one line; a structured server adds the Failure.
func (s *Server) failed(err error) *mcp.CallToolResult {
	var path *string
	var pe *pathError
	if errors.As(err, &pe) {
		path = &pe.path
	}
	f := failureOf(err, path)
	res := &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: failureText(f)}},
	}
	if s.structured {
		b, _ := encode(f)
		res.StructuredContent = json.RawMessage(b)
	}
	return res
}
