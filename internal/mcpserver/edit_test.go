package mcpserver

import (
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/patch"
)

// The edit tool teaches HPATCH/2 as every model's tool text does
// (patch.Brief; the router's hpatch too).
func TestEditDescribesTheLanguage(t *testing.T) {
	cs := connect(t, newServer(t, Options{Roots: []string{t.TempDir()}}), nil)
	if d := toolOf(t, cs, "edit").Description; !strings.Contains(d, patch.Brief) {
		t.Errorf("the edit tool's description lacks patch.Brief:\n%s", d)
	}
}
