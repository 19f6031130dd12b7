package agenttest

import (
	"encoding/json"
	"fmt"
)

// A Step answers one model request: it sees the request (and through it
// every tool output the client sent back) and returns the model's turn.
type Step func(r *Request) Turn

// Reply is a step that always answers with items.
func Reply(items ...Item) Step {
	return func(*Request) Turn { return Turn{Items: items} }
}

// Turn is one model response.
type Turn struct {
	Items []Item
	// Usage is reported at the end of the stream; zero fields get small
	// defaults.
	Usage Usage
	// Status, when not zero, answers with this HTTP status and ErrorBody
	// instead of a stream.
	Status    int
	ErrorBody string
}

// Usage is the token usage a response reports.
type Usage struct {
	Input, Output, CachedInput, Reasoning int
}

// Item is one output item of a turn: Message, Call, CustomCall, Reasoning,
// Object or Raw.
type Item interface{ item() }

// Message is assistant text.
type Message struct{ Text string }

// Call is a function call (Responses) or a tool_use block (Messages).
type Call struct {
	// ID is the call id the client echoes with the output; "" makes
	// "call_TURN_INDEX".
	ID string
	// Name is the tool's name: "read_file" with Namespace "mcp__rowkit"
	// for a Codex MCP tool, "mcp__rowkit__read_file" for Claude Code's.
	Name string
	// Namespace is the Responses namespace of the tool (Codex puts MCP
	// tools in "mcp__SERVER"); Messages has none.
	Namespace string
	// Args is the arguments: marshalled to JSON, except a string or
	// json.RawMessage, which is the JSON text itself.
	Args any
}

// CustomCall is a Responses custom (free-form) tool call, such as Codex's
// apply_patch.
type CustomCall struct {
	ID, Name, Input string
}

// Reasoning is a Responses reasoning item; Codex echoes EncryptedContent
// back in the next request.
type Reasoning struct {
	Summary          string
	EncryptedContent string
}

// Object is a Responses output item given as its JSON object, for item
// types the others do not cover (tool_search_call, web_search_call, ...).
// It is streamed as output_item.added and .done like any item.
type Object map[string]any

// Raw is one server-sent event written as given, in the place of an item:
// Event is the event name, Data its JSON (marshalled unless a string or
// json.RawMessage). It is for streams a client must cope with that the
// other items cannot express; Responses only.
type Raw struct {
	Event string
	Data  any
}

func (Message) item()    {}
func (Call) item()       {}
func (CustomCall) item() {}
func (Reasoning) item()  {}
func (Raw) item()        {}
func (Object) item()     {}

// jsonText is v as JSON text: a string or json.RawMessage as is.
func jsonText(v any) string {
	switch x := v.(type) {
	case nil:
		return "{}"
	case string:
		return x
	case json.RawMessage:
		return string(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("agenttest: arguments %#v: %v", v, err))
	}
	return string(b)
}

func callID(id string, turn, i int) string {
	if id != "" {
		return id
	}
	return fmt.Sprintf("call_%d_%d", turn, i)
}

func (u Usage) or() Usage {
	if u.Input == 0 {
		u.Input = 100
	}
	if u.Output == 0 {
		u.Output = 10
	}
	return u
}
