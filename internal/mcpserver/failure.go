package mcpserver

import (
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/rowkit/rowkit/internal/errs"
)

// Failure is the structuredContent of a call that could not do its job
// (isError:true). It has the shape of inspect_file's failure document, so a
// client reads one machine code the same way from every tool.
type Failure struct {
	OK    bool         `json:"ok" jsonschema:"always false: the tool could not do its job"`
	Path  *string      `json:"path,omitempty" jsonschema:"the path argument as given, when the tool takes one"`
	Error FailureError `json:"error"`
}

// FailureError is the coded error of a Failure.
type FailureError struct {
	Code    string `json:"code" jsonschema:"stable machine code, e.g. outside_workspace, not_found, not_utf8, E_NOT_A_REPO"`
	Message string `json:"message" jsonschema:"one line saying what went wrong"`
	Hint    string `json:"hint,omitempty" jsonschema:"what to do next, when known"`
}

// CodeInvalidArguments is the code of a call whose arguments the input
// schema (or a rule the schema cannot express) rejected: the first failure
// layer, before any work starts.
const CodeInvalidArguments = errs.Usage

// failureOf turns any error into its Failure: a coded error keeps its code;
// anything else is an argument the SDK's input validation rejected.
func failureOf(err error, path *string) Failure {
	f := Failure{Path: path}
	if e, ok := errs.As(err); ok {
		f.Error = FailureError{Code: e.Code, Message: e.Msg, Hint: e.Hint}
		return f
	}
	f.Error = FailureError{Code: CodeInvalidArguments, Message: err.Error()}
	return f
}

// pathError is an error that names the path argument it concerns, so the
// Failure can carry it as inspect_file's failure document does.
type pathError struct {
	path string
	err  error
}

func (e *pathError) Error() string { return e.err.Error() }
func (e *pathError) Unwrap() error { return e.err }

func withPath(path string, err error) error {
	if err == nil {
		return nil
	}
	return &pathError{path: path, err: err}
}

// failureSchema is Failure's JSON Schema, inferred when the server is
// built, not at the start of every rowkit process.
var failureSchema = sync.OnceValue(mustSchema[Failure])

func mustSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(err)
	}
	return s
}

// outputSchema is the output schema of a tool whose success value is a T:
// either a T or a Failure. A client that validates structuredContent
// whatever isError says (the TypeScript SDK does) accepts both.
func outputSchema[T any]() *jsonschema.Schema {
	ok := mustSchema[T]()
	return &jsonschema.Schema{
		Type:  "object",
		AnyOf: []*jsonschema.Schema{ok, failureSchema()},
	}
}

// failureText is the text content of a failure: the one line the CLI
// prints, "CODE: MESSAGE" with the code in lower_snake (a seed's spelling
// stays in structuredContent), and the hint on a line of its own, as the
// CLI's "NAME: hint:" line.
func failureText(f Failure) string {
	s := errs.Snake(f.Error.Code) + ": " + f.Error.Message
	if f.Error.Hint != "" {
		s += "\nhint: " + f.Error.Hint
	}
	return s
}
