package agent

import "testing"

func TestCodexPolicy(t *testing.T) {
	for model, want := range map[string]int{
		"gpt-5.5-codex": CodexCataloguePolicy, "gpt-5.5-mini": CodexCataloguePolicy, "gpt-5.5": CodexCataloguePolicy, "gpt-6-sol-high": CodexCataloguePolicy,
		"gpt-4.1": CodexFallbackPolicy, "gpt-5.2-codex": CodexFallbackPolicy, "gpt-5": CodexFallbackPolicy, "o3": CodexFallbackPolicy, "": CodexFallbackPolicy, "gpt-6-foo": CodexFallbackPolicy,
	} {
		if got := CodexPolicy(model); got != want {
			t.Errorf("CodexPolicy(%q) = %d, want %d", model, got, want)
		}
	}
}
