// Package codex holds what rowkit adapts to in the Codex CLI's own
// behaviour, as measured with the real client (internal/agenttest's
// TestCodex and TestCodexFallback pin it): how much of a tool's output
// Codex hands its model whole, which depends on whether Codex carries
// metadata for the model.
package codex

import "strings"

// Catalogue are the models Codex 0.169 carries metadata for, by slug (its
// bundled catalogue): a model whose name starts with one of them gets the
// tool output policy of CataloguePolicy tokens, any other FallbackPolicy
// (measured: gpt-5.5-codex and gpt-5.5-mini the first, gpt-5.2-codex,
// gpt-6-foo, gpt-5, o3 and gpt-4.1 the second).
var Catalogue = []string{
	"gpt-6-astra", "gpt-6-sol", "gpt-6-luna", "gpt-6.1-sol", "gpt-6.1-terra",
	"gpt-5.6-sol", "gpt-5.6-terra", "gpt-5.6-luna", "gpt-5.5",
	"gpt-daybreak-blue-latest", "gpt-daybreak-red-latest", "codex-auto-review",
}

// Tool output policies, in tokens: Codex hands its model a command's
// output whole up to 4 x min(max_output_tokens, policy) bytes, and an MCP
// result up to about 1.2 times that.
const (
	CataloguePolicy = 10000
	FallbackPolicy  = 2500
)

// HasMetadata reports whether Codex carries metadata for model.
func HasMetadata(model string) bool {
	for _, m := range Catalogue {
		if strings.HasPrefix(model, m) {
			return true
		}
	}
	return false
}

// Policy is Codex's tool output policy for model, in tokens.
func Policy(model string) int {
	if HasMetadata(model) {
		return CataloguePolicy
	}
	return FallbackPolicy
}
