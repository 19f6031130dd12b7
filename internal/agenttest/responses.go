package agenttest

import (
	"bytes"
	"fmt"
)

// writeResponse streams t as the Responses API does: response.created,
// then per item output_item.added, its deltas and output_item.done, then
// response.completed with the items and the usage.
func writeResponse(w *bytes.Buffer, turn int, model string, t Turn) {
	seq := 0
	event := func(name string, data map[string]any) {
		data["type"] = name
		data["sequence_number"] = seq
		seq++
		writeEvent(w, name, data)
	}
	id := fmt.Sprintf("resp_%d", turn)
	resp := func(status string, output []any) map[string]any {
		m := map[string]any{"id": id, "object": "response", "created_at": 1767225600, "status": status,
			"model": model, "output": output}
		if status == "completed" {
			u := t.Usage.or()
			m["usage"] = map[string]any{
				"input_tokens": u.Input, "input_tokens_details": map[string]any{"cached_tokens": u.CachedInput},
				"output_tokens": u.Output, "output_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning},
				"total_tokens": u.Input + u.Output,
			}
		}
		return m
	}
	event("response.created", map[string]any{"response": resp("in_progress", []any{})})
	var done []any
	for i, it := range t.Items {
		if raw, ok := it.(Raw); ok {
			writeEvent(w, raw.Event, raw.Data)
			continue
		}
		idx := len(done)
		item, deltas := responseItem(it, turn, i)
		added := map[string]any{}
		for k, v := range item {
			added[k] = v
		}
		added["status"] = "in_progress"
		switch item["type"] {
		case "message":
			added["content"] = []any{}
		case "function_call":
			added["arguments"] = ""
		case "custom_tool_call":
			added["input"] = ""
		}
		event("response.output_item.added", map[string]any{"output_index": idx, "item": added})
		for _, d := range deltas {
			d["output_index"] = idx
			d["item_id"] = item["id"]
			event(d["type"].(string), d)
		}
		event("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		done = append(done, item)
	}
	event("response.completed", map[string]any{"response": resp("completed", done)})
}

// responseItem is an item's JSON and the delta events that build it.
func responseItem(it Item, turn, i int) (map[string]any, []map[string]any) {
	switch x := it.(type) {
	case Message:
		id := fmt.Sprintf("msg_%d_%d", turn, i)
		part := map[string]any{"type": "output_text", "text": x.Text, "annotations": []any{}}
		return map[string]any{"type": "message", "id": id, "role": "assistant", "status": "completed",
				"content": []any{part}},
			[]map[string]any{
				{"type": "response.content_part.added", "content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}},
				{"type": "response.output_text.delta", "content_index": 0, "delta": x.Text},
				{"type": "response.output_text.done", "content_index": 0, "text": x.Text},
				{"type": "response.content_part.done", "content_index": 0, "part": part},
			}
	case Call:
		args := jsonText(x.Args)
		m := map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d_%d", turn, i), "call_id": callID(x.ID, turn, i),
			"name": x.Name, "arguments": args, "status": "completed"}
		if x.Namespace != "" {
			m["namespace"] = x.Namespace
		}
		return m, []map[string]any{
			{"type": "response.function_call_arguments.delta", "delta": args},
			{"type": "response.function_call_arguments.done", "arguments": args},
		}
	case CustomCall:
		return map[string]any{"type": "custom_tool_call", "id": fmt.Sprintf("ctc_%d_%d", turn, i), "call_id": callID(x.ID, turn, i),
				"name": x.Name, "input": x.Input, "status": "completed"},
			[]map[string]any{
				{"type": "response.custom_tool_call_input.delta", "delta": x.Input},
				{"type": "response.custom_tool_call_input.done", "input": x.Input},
			}
	case Object:
		return x, nil
	case Reasoning:
		summary := []any{}
		if x.Summary != "" {
			summary = append(summary, map[string]any{"type": "summary_text", "text": x.Summary})
		}
		m := map[string]any{"type": "reasoning", "id": fmt.Sprintf("rs_%d_%d", turn, i), "summary": summary}
		if x.EncryptedContent != "" {
			m["encrypted_content"] = x.EncryptedContent
		}
		return m, nil
	}
	panic(fmt.Sprintf("agenttest: item %T in a Responses turn", it))
}

// writeEvent writes one server-sent event.
func writeEvent(w *bytes.Buffer, name string, data any) {
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, jsonText(data))
}
