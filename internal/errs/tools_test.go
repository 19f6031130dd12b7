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
	"grep":      {"grep", "mcp:search"},
	"inspect":   {"inspect", "mcp:inspect_file"},
	"lang":      {"inspect", "mcp:inspect_file"},
	"read":      {"read", "mcp:read_file", "hread"},
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

// hpatchReasons are the edit language's reasons: its failure lines spell
// them as the language defines them ("reason row-stale"), inside the line
// of the code rejected; they are not a code of a stderr line's own.
var hpatchReasons = map[string]bool{"script-syntax": true, "row-missing": true, "row-stale": true,
	"occurrence-missing": true, "invalid-count": true, "target-order": true, "edit-conflict": true,
	"active-file": true, "initialization": true, "file-path": true, "language-syntax": true}

// TestOneDialect: every code a command or MCP tool answers with reaches a
// stderr line or an MCP failure text in lower_snake (Snake); the seeds'
// spellings are all in the one table, and map to lower_snake codes. It
// counts the spellings a line can show: four before this table (not_found,
// NOT_FOUND, E_NOT_A_REPO, and W_DETACHED_HEAD on review's stderr), one now.
func TestOneDialect(t *testing.T) {
	styles := map[string]bool{}
	style := func(c string) string {
		switch {
		case IsSnake(c):
			return "lower_snake"
		case strings.HasPrefix(c, "E_"), strings.HasPrefix(c, "W_"):
			return "E_UPPER"
		case strings.ToUpper(c) == c:
			return "UPPER_SNAKE"
		}
		return "other"
	}
	for _, v := range Vocabularies {
		for _, c := range v.Codes {
			if hpatchReasons[c] {
				continue
			}
			printed := Snake(c)
			styles[style(printed)] = true
			if !IsSnake(printed) {
				t.Errorf("%s: %q is printed as %q, not lower_snake (add its seed spelling to seedCodes)", v.Tool, c, printed)
			}
		}
	}
	if len(styles) != 1 {
		t.Errorf("lines show %d spellings of codes: %v", len(styles), styles)
	}
	for _, p := range seedCodes {
		if seed, c := p.seed, p.code; IsSnake(seed) || !IsSnake(c) {
			t.Errorf("seedCodes: %q -> %q: a seed spelling must map to a lower_snake code", p.seed, p.code)
		}
	}
	for _, c := range []string{"not_found", "E_NOT_A_REPO", "NOT_FOUND", "row_stale"} {
		if got := Snake(c); !IsSnake(got) {
			t.Errorf("Snake(%q) = %q", c, got)
		}
	}
	// The same condition, one code: a missing path.
	if Snake("NOT_FOUND") != NotFound || Snake("E_REPO_NOT_FOUND") != NotFound {
		t.Error("a missing path is not not_found in read and review")
	}
}

// IsSnake reports whether code is spelled lower_snake: lower-case words
// of letters and digits, the first starting with a letter, joined by one
// underscore.
func IsSnake(code string) bool {
	if code == "" || code[0] < 'a' || code[0] > 'z' || strings.HasSuffix(code, "_") || strings.Contains(code, "__") {
		return false
	}
	for _, c := range code {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}
