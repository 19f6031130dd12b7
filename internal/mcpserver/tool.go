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

// checkCodes, when set (by the tests), sees the structuredContent of every
// result, failures included, and refuses a code that is not in the tool's
// vocabulary (errs.Vocabularies): the whole suite keeps the table true.
var checkCodes func(tool string, structured []byte) error

// register adds a typed tool, as mcp.AddTool does (the input schema
// validates and decodes the arguments; the output schema describes the
// result), with two differences that serve the three failure layers and
// the parity with the CLI:
//   - structuredContent is the engine's value encoded once, in struct order
//     and without HTML escaping: the CLI's JSON bytes, not a re-encoding
//     through a map;
//   - a failure, from the input schema or from the tool, is isError with a
//     Failure as structuredContent, so the machine code reaches the client.
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
	s.mcp.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := runTool(ctx, req, t.Name, h, inR, outR)
		if err == nil && checkCodes != nil {
			if cerr := checkCodes(t.Name, res.StructuredContent.(json.RawMessage)); cerr != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: cerr.Error()}
			}
		}
		return res, err
	})
}

// runTool decodes the arguments, runs the handler and encodes its value.
func runTool[In, Out any](ctx context.Context, req *mcp.CallToolRequest, name string, h handler[In, Out], inR, outR *jsonschema.Resolved) (*mcp.CallToolResult, error) {
	v, err := decodeArgs[In](req.Params.Arguments, inR)
	if err != nil {
		return failed(err), nil
	}
	res, value, err := h(ctx, req, v)
	if err != nil {
		return failed(err), nil
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

// failed is the result of a call that could not do its job.
func failed(err error) *mcp.CallToolResult {
	var path *string
	var pe *pathError
	if errors.As(err, &pe) {
		path = &pe.path
	}
	f := failureOf(err, path)
	b, _ := encode(f)
	return &mcp.CallToolResult{
		IsError:           true,
		StructuredContent: json.RawMessage(b),
		Content:           []mcp.Content{&mcp.TextContent{Text: failureText(f)}},
	}
}
