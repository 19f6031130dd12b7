package agent

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// CodexModels are the models Codex 0.169 carries metadata for, by slug
// prefix (its bundled catalogue): a model whose name starts with one of
// them gets a tool output policy of 10,000 tokens, any other the fallback
// of 10,000 bytes (measured: gpt-5.5-codex and gpt-5.5-mini the first,
// gpt-5.2-codex, gpt-6-foo, gpt-5, o3 and gpt-4.1 the second).
var CodexModels = []string{
	"gpt-6-astra", "gpt-6-sol", "gpt-6-luna", "gpt-6.1-sol", "gpt-6.1-terra",
	"gpt-5.6-sol", "gpt-5.6-terra", "gpt-5.6-luna", "gpt-5.5",
	"gpt-daybreak-blue-latest", "gpt-daybreak-red-latest", "codex-auto-review",
}

// CodexKnows reports whether Codex has metadata for model.
func CodexKnows(model string) bool {
	for _, m := range CodexModels {
		if strings.HasPrefix(model, m) {
			return true
		}
	}
	return false
}

// Codex's tool output policies, in tokens: Codex hands its model a
// command's output whole up to 4 x min(max_output_tokens, policy) bytes
// (CodexShellBytes, CodexFallbackShellBytes), and an MCP result up to
// about 1.2 times that.
const (
	CodexCataloguePolicy = 10000
	CodexFallbackPolicy  = 2500
)

// CodexPolicy is Codex's tool output policy for model, in tokens.
func CodexPolicy(model string) int {
	if CodexKnows(model) {
		return CodexCataloguePolicy
	}
	return CodexFallbackPolicy
}

// What Codex 0.169's exec_command hands the model of whole: stdout and
// stderr together, whatever the exit status (internal/agenttest's
// TestCodex and TestCodexFallback pin them).
const (
	// CodexShellBytes is exec_command's bound for a model Codex has
	// metadata for.
	CodexShellBytes = 40_000
	// CodexFallbackShellBytes is the bound for any other model.
	CodexFallbackShellBytes = 10_000
)

// isThreadID reports whether s is how Codex names a session: a UUID in
// lower-case hex (version 7 in 0.169). Checked by hand, not by a regular
// expression compiled at start-up, which every rowkit command pays.
func isThreadID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// rolloutPeek is how much of a session file CodexModel reads from each
// end: a turn's context comes before its calls, and a session's first
// record (its instructions) takes about 30 KB.
const rolloutPeek = 256 << 10

// CodexModel is the model of the Codex session whose shell runs a command,
// found through its environment (lookup): Codex gives a command
// CODEX_THREAD_ID and its own CODEX_HOME, and records each turn's context,
// the model among it, in the session's file
// CODEX_HOME/sessions/YYYY/MM/DD/rollout-TIME-THREAD.jsonl before the
// turn's calls run (as 0.169 does; TestCodexModel pins it). A thread ID
// of version 7 starts with the millisecond the session began, which
// names the day's directory. It returns the last turn's model found in
// the file's end, else the first in its start; ok is false when there is
// no such session file or no model in it.
func CodexModel(lookup func(string) (string, bool)) (string, bool) {
	get := func(k string) string {
		if lookup == nil {
			return ""
		}
		v, _ := lookup(k)
		return v
	}
	thread := get("CODEX_THREAD_ID")
	if !isThreadID(thread) {
		return "", false
	}
	home := get("CODEX_HOME")
	if home == "" {
		if h := get("HOME"); h != "" {
			home = filepath.Join(h, ".codex")
		}
	}
	if !filepath.IsAbs(home) {
		return "", false
	}
	f := rollout(filepath.Join(home, "sessions"), thread)
	if f == nil {
		return "", false
	}
	defer f.Close()
	return rolloutModel(f)
}

// rollout opens the session file of thread under sessions, looking in the
// directories of the days around its start (local time and UTC: the day
// Codex named it by).
func rollout(sessions, thread string) *os.File {
	ms, err := strconv.ParseInt(strings.ReplaceAll(thread, "-", "")[:12], 16, 64)
	if err != nil {
		return nil
	}
	start := time.UnixMilli(ms)
	seen := map[string]bool{}
	for _, t := range []time.Time{start.Local(), start.UTC(), start.Add(-24 * time.Hour).Local(), start.Add(24 * time.Hour).Local()} {
		day := t.Format("2006/01/02")
		if seen[day] {
			continue
		}
		seen[day] = true
		matches, _ := filepath.Glob(filepath.Join(sessions, filepath.FromSlash(day), "rollout-*-"+thread+".jsonl"))
		for _, m := range matches {
			if f, err := os.Open(m); err == nil {
				return f
			}
		}
	}
	return nil
}

// rolloutModel finds the model of the last turn context in the end of f,
// else of the first in its start.
func rolloutModel(f *os.File) (string, bool) {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	tail := make([]byte, min(fi.Size(), rolloutPeek))
	if _, err := f.ReadAt(tail, fi.Size()-int64(len(tail))); err != nil && err != io.EOF {
		return "", false
	}
	if m, ok := turnModel(tail, true); ok {
		return m, true
	}
	if fi.Size() <= rolloutPeek {
		return "", false
	}
	head := make([]byte, rolloutPeek)
	if _, err := f.ReadAt(head, 0); err != nil && err != io.EOF {
		return "", false
	}
	return turnModel(head, false)
}

// turnModel is the model of a turn_context record among the whole lines
// of b: the last one, or the first.
func turnModel(b []byte, last bool) (string, bool) {
	lines := bytes.Split(b, []byte{'\n'})
	if len(lines) < 2 {
		return "", false
	}
	lines = lines[1 : len(lines)-1] // the ends may be parts of lines
	if last {
		for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
			lines[i], lines[j] = lines[j], lines[i]
		}
	}
	for _, l := range lines {
		if !bytes.Contains(l, []byte(`"type":"turn_context"`)) {
			continue
		}
		var rec struct {
			Type    string `json:"type"`
			Payload struct {
				Model string `json:"model"`
			} `json:"payload"`
		}
		if json.Unmarshal(l, &rec) == nil && rec.Type == "turn_context" && rec.Payload.Model != "" {
			return rec.Payload.Model, true
		}
	}
	return "", false
}
