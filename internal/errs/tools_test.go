package errs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestVocabulariesWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range Vocabularies {
		if seen[v.Tool] || len(v.Codes) == 0 {
			t.Errorf("%s: listed twice or empty", v.Tool)
		}
		seen[v.Tool] = true
		codes := map[string]bool{}
		for _, c := range v.Codes {
			if codes[c] || !regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`).MatchString(c) {
				t.Errorf("%s: code %q twice or malformed", v.Tool, c)
			}
			codes[c] = true
		}
		if strings.HasPrefix(v.Tool, "mcp:") && !codes[Usage] {
			t.Errorf("%s: the schema layer's usage is missing", v.Tool)
		}
	}
}

// codeSites finds the failure codes a package's sources define: constants
// named Code*, Reason* or Unsupported* with a string value, and string
// literals given as the code of a new error.
var codeSites = []*regexp.Regexp{
	regexp.MustCompile(`(?m)^\s*(?:const\s+)?(?:Code|Reason|Unsupported)[A-Z]\w*\s*=\s*"([^"]+)"`),
	regexp.MustCompile(`(?:errs\.New|errs\.Errorf|errorf|failf)\(\s*"([^"]+)"`),
}

// packageTools are the tools whose answers a package's codes can reach.
var packageTools = map[string][]string{
	"hread":     {"hread"},
	"grep":      {"grep", "mcp:search"},
	"inspect":   {"inspect", "mcp:inspect_file"},
	"lang":      {"inspect", "mcp:inspect_file"},
	"read":      {"read", "mcp:read_file"},
	"review":    {"review", "mcp:inspect_repository", "mcp:run_validations"},
	"patch":     {"patch", "mcp:edit"},
	"workspace": {"inspect", "read", "patch", "recover", "grep", "mcp:inspect_file", "mcp:read_file", "mcp:edit", "mcp:search", "mcp:inspect_repository"},
	"cli":       {"hread", "read", "grep", "review", "inspect", "patch", "recover", "mcp", "link", "help", "router", "carrier", "symbol"},
	"cmd":       {"hread", "read", "grep", "review", "inspect", "patch", "recover", "mcp", "link", "help", "router", "carrier", "symbol", "shell"},
	"router":    {"router"},
	"txn":       {"patch", "recover", "carrier", "mcp:edit"},
	"mcpserver": {"mcp:inspect_file", "mcp:read_file", "mcp:search", "mcp:edit", "mcp:inspect_repository", "mcp:run_validations"},
	"rows":      {"hread", "grep", "read", "patch"},
	"spool":     {"hread"},
	"symbol":    {"symbol", "mcp:symbol"},
	"lsp":       {"symbol", "mcp:symbol"},
}

// notAnswered are codes a package defines that no tool answers with: the
// caller turns them into something of its own vocabulary.
var notAnswered = map[string]string{
	"exists":   "workspace.Free and Load: the planner makes them file-path failures (the code stays in the message)",
	"reserved": "workspace.Free and Load: the planner makes them file-path failures (the code stays in the message)",
}

// TestVocabulariesCoverSources keeps the table true: every code that the
// sources of a package define is in the vocabulary of a tool the package
// serves, and every package that defines codes is accounted for. (The MCP
// suite checks, besides, every code its calls actually returned against
// the tool that returned it.)
func TestVocabulariesCoverSources(t *testing.T) {
	dirs, err := filepath.Glob("../*")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		pkg := filepath.Base(dir)
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") || pkg == "errs" {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, re := range codeSites {
				for _, m := range re.FindAllStringSubmatch(string(src), -1) {
					if _, ok := notAnswered[m[1]]; ok && pkg == "workspace" {
						continue
					}
					tools, ok := packageTools[pkg]
					if !ok {
						t.Errorf("%s defines the code %q but serves no tool in this test's map", f, m[1])
						continue
					}
					found := false
					for _, tool := range tools {
						found = found || Speaks(tool, m[1])
					}
					if !found {
						t.Errorf("%s: the code %q is in no vocabulary of %v", f, m[1], tools)
					}
				}
			}
		}
	}
}
