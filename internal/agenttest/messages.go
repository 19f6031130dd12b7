package agenttest

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// writeMessage streams t as the Messages API does: message_start, per
// block content_block_start, its deltas (text_delta, or input_json_delta
// for a tool_use block's input) and content_block_stop, then
// message_delta with the stop reason and message_stop.
func writeMessage(w *bytes.Buffer, turn int, model string, t Turn) {
	u := t.Usage.or()
	writeEvent(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": fmt.Sprintf("msg_%d", turn), "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": u.Input, "output_tokens": 1,
			"cache_read_input_tokens": u.CachedInput, "cache_creation_input_tokens": 0},
	}})
	for i, b := range messageBlocks(t, turn) {
		start := map[string]any{}
		var delta map[string]any
		switch b["type"] {
		case "text":
			start = map[string]any{"type": "text", "text": ""}
			delta = map[string]any{"type": "text_delta", "text": b["text"]}
		case "tool_use":
			start = map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}
			delta = map[string]any{"type": "input_json_delta", "partial_json": string(b["input"].(json.RawMessage))}
		}
		writeEvent(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start})
		writeEvent(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": delta})
		writeEvent(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	writeEvent(w, "message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stopReason(t), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": u.Output}})
	writeEvent(w, "message_stop", map[string]any{"type": "message_stop"})
}

// messageJSON is t as one non-streamed Messages response.
func messageJSON(turn int, model string, t Turn) []byte {
	u := t.Usage.or()
	b, _ := json.Marshal(map[string]any{
		"id": fmt.Sprintf("msg_%d", turn), "type": "message", "role": "assistant", "model": model,
		"content": messageBlocks(t, turn), "stop_reason": stopReason(t), "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": u.Input, "output_tokens": u.Output},
	})
	return b
}

// messageBlocks are t's items as content blocks: a tool_use's input is
// kept as the JSON text the script gave.
func messageBlocks(t Turn, turn int) []map[string]any {
	var out []map[string]any
	for i, it := range t.Items {
		switch x := it.(type) {
		case Message:
			out = append(out, map[string]any{"type": "text", "text": x.Text})
		case Call:
			out = append(out, map[string]any{"type": "tool_use", "id": callID(x.ID, turn, i), "name": x.Name,
				"input": json.RawMessage(jsonText(x.Args))})
		default:
			panic(fmt.Sprintf("agenttest: item %T in a Messages turn", it))
		}
	}
	return out
}

func stopReason(t Turn) string {
	for _, it := range t.Items {
		if _, ok := it.(Call); ok {
			return "tool_use"
		}
	}
	return "end_turn"
}
