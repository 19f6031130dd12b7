package codex

import "testing"

func TestPolicy(t *testing.T) {
	for model, want := range map[string]int{
		"gpt-5.5-codex": CataloguePolicy, "gpt-5.5-mini": CataloguePolicy, "gpt-5.5": CataloguePolicy, "gpt-6-sol-high": CataloguePolicy,
		"gpt-4.1": FallbackPolicy, "gpt-5.2-codex": FallbackPolicy, "gpt-5": FallbackPolicy, "o3": FallbackPolicy, "": FallbackPolicy, "gpt-6-foo": FallbackPolicy,
	} {
		if got := Policy(model); got != want {
			t.Errorf("Policy(%q) = %d, want %d", model, got, want)
		}
	}
}
