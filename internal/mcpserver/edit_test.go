package mcpserver

import (
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/patch"
)

// The edit tool teaches the one description of HPATCH/2 that rowkit help
// patch shows.
func TestEditDescribesTheLanguage(t *testing.T) {
	cs := connect(t, newServer(t, Options{Roots: []string{t.TempDir()}}), nil)
	if d := toolOf(t, cs, "edit").Description; !strings.Contains(d, patch.Language) {
		t.Errorf("the edit tool's description lacks patch.Language:\n%s", d)
	}
}
