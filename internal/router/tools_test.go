package router

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/agent"
	"github.com/rowkit/rowkit/internal/patch"
)

// The tools are the shape of Codex's own apply_patch tool, and the texts
// name what the model needs.
func TestToolShapes(t *testing.T) {
	for _, tc := range []struct {
		tokens      int
		bound, head string
	}{
		// The bound names what Codex passes whole under each policy
		// (TestCodex, TestCodexFallback), less the carrier's margin, and
		// the head what a private command gets: the bound less the tail
		// and the note (what hread's own note names, codex_router_test).
		{agent.CodexFallbackPolicy, "9,600 bytes", "6,855 bytes"},
		{agent.CodexCataloguePolicy, "39,600 bytes", "35,159 bytes"},
	} {
		var h struct {
			Type, Name, Description string
			Format                  struct{ Type, Syntax, Definition string }
		}
		hpatchTool, shellTool := builtinTools(tc.tokens)
		if err := json.Unmarshal(hpatchTool, &h); err != nil {
			t.Fatal(err)
		}
		if h.Type != "custom" || h.Name != "hpatch" || h.Format.Type != "grammar" || h.Format.Syntax != "lark" || h.Format.Definition != Grammar() {
			t.Fatalf("hpatch tool: %+v", h)
		}
		if !strings.HasPrefix(string(hpatchTool), `{"type":"custom","name":"hpatch","description":`) {
			t.Fatalf("key order: %.60s", hpatchTool)
		}
		var s map[string]string
		if err := json.Unmarshal(shellTool, &s); err != nil {
			t.Fatal(err)
		}
		if len(s) != 3 || s["type"] != "custom" || s["name"] != "shell" {
			t.Fatalf("shell tool: %v", s)
		}
		for _, want := range []string{"hread", "hgrep", "inspect_file", "hsymbol", "hpatch", tc.bound, tc.head, "write_stdin"} {
			if !strings.Contains(s["description"], want) {
				t.Errorf("the shell description does not name %q", want)
			}
		}
		for _, want := range []string{"apply_patch", "FREEFORM", patch.Brief} {
			if !strings.Contains(h.Description, want) {
				t.Errorf("the hpatch description does not name %q", want)
			}
		}
	}
	for _, want := range []string{"inspect_file", "hgrep", "hread", "hsymbol", "LINE:HASH", "hpatch", "shell"} {
		if !strings.Contains(Guidance, want) {
			t.Errorf("the guidance does not name %q", want)
		}
	}
}
