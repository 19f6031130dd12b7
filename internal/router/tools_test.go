package router

import (
	"encoding/json"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/patch"
)

// decimalAtMost against big-number arithmetic, at and around its bound and
// at every length.
func TestDecimalAtMost(t *testing.T) {
	for _, max := range []string{"9223372036854775807", "1048576", "10", "9", "1", "100", "199", "5000"} {
		re := regexp.MustCompile(`^` + decimalAtMost(max) + `$`)
		m, _ := new(big.Int).SetString(max, 10)
		var probes []string
		for i := 0; i <= 1200; i++ {
			probes = append(probes, strconv.Itoa(i))
		}
		for _, d := range []int64{-1001, -101, -11, -2, -1, 0, 1, 2, 10, 1000} {
			probes = append(probes, new(big.Int).Add(m, big.NewInt(d)).String())
		}
		for l := 1; l <= len(max)+1; l++ {
			probes = append(probes, strings.Repeat("9", l), "1"+strings.Repeat("0", l-1), strings.Repeat("1", l))
		}
		probes = append(probes, "0"+max, "01", "00", "", "+1", "-1", "1a")
		for _, p := range probes {
			n, ok := new(big.Int).SetString(p, 10)
			want := ok && p[0] >= '1' && p[0] <= '9' && n.Cmp(m) <= 0
			if got := re.MatchString(p); got != want {
				t.Errorf("decimalAtMost(%s) on %q: %v, want %v", max, p, got, want)
			}
		}
	}
}

// The tools are the shape of Codex's own apply_patch tool, and the texts
// name what the model needs.
func TestToolShapes(t *testing.T) {
	var h struct {
		Type, Name, Description string
		Format                  struct{ Type, Syntax, Definition string }
	}
	hpatchTool, shellTool := builtinTools()
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
	for _, want := range []string{"hread", "hgrep", "inspect_file", "hpatch", "9,600 bytes", "write_stdin", Guidance} {
		if !strings.Contains(s["description"], want) {
			t.Errorf("the shell description does not name %q", want)
		}
	}
	for _, want := range []string{"apply_patch", patch.Language, Guidance} {
		if !strings.Contains(h.Description, want) {
			t.Errorf("the hpatch description does not name %q", want)
		}
	}
	for _, want := range []string{"inspect_file", "hgrep", "hread", "LINE:HASH", "hpatch", "shell"} {
		if !strings.Contains(Guidance, want) {
			t.Errorf("the guidance does not name %q", want)
		}
	}
	if strings.Contains(Grammar(), "NUMBER") || strings.Contains(Grammar(), "ESCAPE") || strings.Contains(Grammar(), "CHAR") {
		t.Error("a placeholder is left in the grammar")
	}
}
