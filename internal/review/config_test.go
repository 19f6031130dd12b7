package review

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/errs"
)

func TestParseConfig(t *testing.T) {
	good := `{"validations": {"test": {"argv": ["go", "test", "./..."], "timeoutMs": 300000, "description": "all tests"},
	  "vet": {"argv": ["go", "vet", "./..."]}}, "mcp": {"allowValidations": ["vet"]}}`
	c, err := ParseConfig([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Plan("test", time.Second)
	if err != nil || p.ID != "test" || p.Timeout != 300*time.Second || strings.Join(p.Argv, " ") != "go test ./..." {
		t.Errorf("plan test: %+v %v", p, err)
	}
	if p, _ := c.Plan("vet", 7*time.Second); p.Timeout != 7*time.Second {
		t.Errorf("default timeout: %v", p.Timeout)
	}
	if _, err := c.Plan("nope", time.Second); err == nil || errs.Code(err) != CodeValidationName || !strings.Contains(err.(*errs.Error).Hint, "test, vet") {
		t.Errorf("unknown name: %v", err)
	}

	for _, c := range []struct{ in, err string }{
		{`{"validations": {}, "extra": 1}`, `unknown key "extra"`},
		{`{"validations": {"t": {"argv": ["x"], "timeout": 5}}}`, `unknown key "validations.t.timeout"`},
		{`{"validations": {"t": {"argv": "go test"}}}`, `key "validations.t.argv"`},
		{`{"validations": {"t": {"argv": []}}}`, `key "validations.t.argv"`},
		{`{"validations": {"t": {"argv": [""]}}}`, `key "validations.t.argv"`},
		{`{"validations": {"t": {"argv": ["x"], "timeoutMs": 0}}}`, `key "validations.t.timeoutMs"`},
		{`{"validations": {"t": {"argv": ["x"], "timeoutMs": 1.5}}}`, `key "validations.t.timeoutMs"`},
		{`{"validations": {"a b": {"argv": ["x"]}}}`, `key "validations.a b"`},
		{`{"validations": {"t": {"argv": ["x"]}}, "mcp": {"allowValidations": ["u"]}}`, `key "mcp.allowValidations[0]"`},
		{`{"validations": {"t": {"argv": ["x"]}}, "mcp": {"allowValidations": ["t"], "x": 1}}`, `unknown key "mcp.x"`},
		{`{}`, `key "validations" is missing`},
		{`{"validations": {"t": []}}`, `key "validations.t" must be a JSON object`},
		{`{"validations": {}, "mcp": {"allowValidations": "t"}}`, `key "mcp.allowValidations"`},
		{`{"validations": {}} {}`, `unexpected data`},
		{`{"validations": `, `not valid JSON`},
		{`[]`, `must be a JSON object`},
	} {
		_, err := ParseConfig([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: got %v, want %q", c.in, err, c.err)
		}
	}
}

func TestLoadConfigErrors(t *testing.T) {
	_, err := LoadConfig("", filepath.Join(t.TempDir(), "missing.json"))
	if e, ok := errs.As(err); !ok || e.Code != CodeConfig || errs.ExitCode(e) != ExitUsage {
		t.Errorf("missing: %v", err)
	}
	big := filepath.Join(t.TempDir(), "big.json")
	os.WriteFile(big, []byte(strings.Repeat(" ", maxConfigBytes+1)), 0o644)
	if _, err := LoadConfig("", big); err == nil || !strings.Contains(err.Error(), "larger") {
		t.Errorf("big: %v", err)
	}
}
