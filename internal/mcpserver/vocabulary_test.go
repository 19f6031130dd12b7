package mcpserver

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/errs"
)

// answeredCodes are the failure codes a structured result carries: a
// Failure's error.code, the reader's error.code and unsupported code, an
// edit's failure reasons and its error code, and a search's incomplete
// code.
func answeredCodes(structured []byte) []string {
	var doc struct {
		OK     *bool  `json:"ok"`
		Status string `json:"status"`
		Code   any    `json:"code"`
		Error  *struct {
			Code string `json:"code"`
		} `json:"error"`
		Failures []struct {
			Reason string `json:"reason"`
		} `json:"failures"`
		Incomplete *struct {
			Code string `json:"code"`
		} `json:"incomplete"`
	}
	json.Unmarshal(structured, &doc)
	var out []string
	if doc.Error != nil && doc.Error.Code != "" {
		out = append(out, doc.Error.Code)
	}
	if c, ok := doc.Code.(string); ok && doc.Status == "unsupported" {
		out = append(out, c)
	}
	for _, f := range doc.Failures {
		out = append(out, f.Reason)
	}
	if doc.Incomplete != nil {
		out = append(out, doc.Incomplete.Code)
	}
	return out
}

func init() {
	checkCodes = func(tool string, structured []byte) error {
		for _, c := range answeredCodes(structured) {
			if !errs.Speaks("mcp:"+tool, c) {
				return fmt.Errorf("%s answered %q, which is not in its vocabulary (errs.Vocabularies)", tool, c)
			}
		}
		return nil
	}
}

// One condition, one code and one shape per tool: a path outside every
// root, written relatively or absolutely, is the reader's own
// OUTSIDE_ALLOWED_ROOTS in its own result (it was outside_workspace in the
// server's envelope for /etc/passwd); a repository path that cannot exist
// is the review engine's E_REPO_NOT_FOUND (it was not_found).
func TestOneCodePerCondition(t *testing.T) {
	parent, root := hostile(t)
	cs := connect(t, newServer(t, Options{Roots: []string{root}}), nil)
	outside := []string{"../outside/secret.txt", "/etc/passwd", filepath.Join(parent, "outside", "secret.txt"), "link-out/secret.txt", root + "-evil/secret.txt"}
	for _, c := range []struct {
		tool, arg string
		paths     []string
		code      string
		shape     string // a key of the structured result
	}{
		{"read_file", "path", outside, "OUTSIDE_ALLOWED_ROOTS", "tool"},
		{"read_file", "path", []string{"a\x00b", "/a\x00b"}, "INVALID_INPUT", "tool"},
		{"inspect_file", "path", outside, "outside_workspace", "ok"},
		{"inspect_repository", "repo_path", outside, "outside_workspace", "ok"},
		{"inspect_repository", "repo_path", []string{"a\x00b", "/a\x00b"}, "E_REPO_NOT_FOUND", "ok"},
		{"inspect_repository", "repo_path", []string{"missing"}, "E_REPO_NOT_FOUND", "ok"},
	} {
		for _, p := range c.paths {
			res := call(t, cs, c.tool, map[string]any{c.arg: p})
			m := structured(t, res)
			e, _ := m["error"].(map[string]any)
			if _, ok := m[c.shape]; !ok || !res.IsError || e == nil || e["code"] != c.code {
				t.Errorf("%s %q: %s", c.tool, p, mustJSON(m))
			}
		}
	}
	// search answers outside_workspace for a relative and an absolute path
	// alike.
	for _, p := range outside {
		res := call(t, cs, "search", map[string]any{"pattern": "x", "paths": []string{p}})
		if code := failureCode(t, res); code != "outside_workspace" {
			t.Errorf("search %q: %s", p, code)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return strings.TrimSpace(string(b))
}
