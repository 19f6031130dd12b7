package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// session writes a session file as Codex 0.169 keeps one (TestCodex in
// internal/agenttest checks the real one) and returns the variables its
// shell gives a command.
func session(t *testing.T, start time.Time, body string) map[string]string {
	home := t.TempDir()
	ms := fmt.Sprintf("%012x", start.UnixMilli())
	thread := ms[:8] + "-" + ms[8:] + "-7abc-8def-0123456789ab"
	dir := filepath.Join(home, "sessions", start.Format("2006/01/02"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "rollout-"+start.Format("2006-01-02T15-04-05")+"-"+thread+".jsonl")
	if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"CODEX_HOME": home, "CODEX_THREAD_ID": thread}
}

func turn(model string) string {
	return `{"timestamp":"2026-12-04T16:49:15.177Z","ordinal":5,"type":"turn_context","payload":{"turn_id":"t","model":"` + model + `","effort":"medium"}}` + "\n"
}

func item(n int) string {
	return `{"type":"response_item","payload":{"type":"function_call_output","output":"` + strings.Repeat("x", n) + `"}}` + "\n"
}

func TestCodexModel(t *testing.T) {
	meta := `{"type":"session_meta","payload":{"id":"x","base_instructions":{"text":"` + strings.Repeat("i", 30000) + `"}}}` + "\n"
	now := time.Now()
	for _, c := range []struct {
		name, body string
		want       string
	}{
		{"one turn", meta + turn("gpt-5.5-codex") + item(100), "gpt-5.5-codex"},
		{"the last turn's model", meta + turn("gpt-4.1") + item(100) + turn("gpt-5.5") + item(100), "gpt-5.5"},
		{"a turn pushed out of the end", meta + turn("gpt-4.1") + item(1<<20), "gpt-4.1"},
		{"a model name inside a tool output is not a turn", meta + turn("gpt-4.1") + item(10) +
			`{"type":"response_item","payload":{"output":"{\"type\":\"turn_context\",\"payload\":{\"model\":\"gpt-5.5\"}}"}}` + "\n", "gpt-4.1"},
		{"no turn yet", meta, ""},
	} {
		vars := session(t, now, c.body)
		got, ok := CodexModel(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%s: %q, %v; want %q", c.name, got, ok, c.want)
		}
	}
	// HOME/.codex when CODEX_HOME is unset; nothing for a thread that is
	// not a UUID, a missing file, or no home.
	vars := session(t, now, meta+turn("gpt-5.5-codex"))
	home := filepath.Join(t.TempDir(), "h")
	os.MkdirAll(home, 0o755)
	os.Rename(vars["CODEX_HOME"], filepath.Join(home, ".codex"))
	for _, c := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"HOME": home, "CODEX_THREAD_ID": vars["CODEX_THREAD_ID"]}, "gpt-5.5-codex"},
		{map[string]string{"HOME": home, "CODEX_THREAD_ID": "../../etc"}, ""},
		{map[string]string{"HOME": home, "CODEX_THREAD_ID": "01a241f5-0000-7000-8000-000000000000"}, ""},
		{map[string]string{"CODEX_THREAD_ID": vars["CODEX_THREAD_ID"]}, ""},
		{nil, ""},
	} {
		got, ok := CodexModel(func(k string) (string, bool) { v, ok := c.vars[k]; return v, ok })
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%v: %q, %v; want %q", c.vars, got, ok, c.want)
		}
	}
	if !CodexKnows("gpt-5.5-codex") || CodexKnows("gpt-4.1") || CodexKnows("") {
		t.Error("CodexKnows")
	}
}

func TestIsThreadID(t *testing.T) {
	for s, want := range map[string]bool{
		"01a241f5-0000-7000-8000-000000000000":  true,
		"0199a2b3-c4d5-7abc-8def-0123456789ab":  true,
		"0199A2B3-c4d5-7abc-8def-0123456789ab":  false, // Codex writes lower case
		"0199a2b3-c4d5-7abc-8def-0123456789a":   false,
		"0199a2b3-c4d5-7abc-8def-0123456789abc": false,
		"0199a2b3xc4d5-7abc-8def-0123456789ab":  false,
		"../../etc":                             false,
		"0199a2b3-c4d5-7abc-8def-0123456789a/":  false,
		"":                                      false,
	} {
		if got := isThreadID(s); got != want {
			t.Errorf("%q: %v, want %v", s, got, want)
		}
	}
}
