package review

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/errs"
)

func TestCodeSpan(t *testing.T) {
	for in, want := range map[string]string{
		"plain.go":        "`plain.go`",
		"with space":      "`with space`",
		"a|b":             "`a\\x7cb`",
		"tick`s":          "`tick\\x60s`",
		"new\nline\ttab":  "`new\\nline\\ttab`",
		`back\slash`:      "`back\\\\slash`",
		"bad\xff":         "`bad\\xff`",
		"ünï":             "`ünï`",
		"bell\a":          "`bell\\x07`",
		"zero\u200bwidth": "`zero\\u200bwidth`",
	} {
		if got := code(in); got != want {
			t.Errorf("code(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestFence(t *testing.T) {
	for in, want := range map[string]string{
		"ok\n":           "```text\nok\n```\n",
		"no newline":     "```text\nno newline\n```\n",
		"has ``` inside": "````text\nhas ``` inside\n````\n",
		"````` five":     "``````text\n````` five\n``````\n",
	} {
		var b strings.Builder
		fence(&b, in)
		if b.String() != want {
			t.Errorf("fence(%q) = %q, want %q", in, b.String(), want)
		}
	}
}

// The Markdown of a report with every section: summary detail shows the
// union and only failed output; diagnostics are grouped by severity.
func TestMarkdownSections(t *testing.T) {
	one := 1
	r := &Report{
		Detail: DetailSummary, Scopes: AllScopes,
		Repository: Repository{Path: "/r", Head: Head{Branch: "b", Oid: strings.Repeat("a", 40)}},
		Changes: Changes{
			Files:  []File{{Path: "x|y", Status: "renamed", OrigPath: "old", Scopes: []string{"committed", "staged"}}},
			Counts: Counts{Committed: 1, Staged: 1, Files: 2},
		},
		Validations: []Validation{
			{ID: "ok", Argv: []string{"true"}, Status: StatusPassed, ExitCode: new(int), Stdout: Stream{Text: "fine\n", BytesTotal: 5}},
			{ID: "bad", Argv: []string{"false"}, Status: StatusFailed, ExitCode: &one, Stderr: Stream{Text: "boom\n", BytesTotal: 900, BytesDropped: 800}},
		},
		Diagnostics: []Diagnostic{{Code: "W_X", Severity: "warning", Message: "two\nlines", Hint: "h"}, {Code: "E_Y", Severity: "error", Message: "e"}},
		Truncation:  Truncation{Applied: true, Fields: []Truncated{{Field: "changes.files", ItemsRemoved: 1, BytesRemoved: 40}, {Field: "validations[1].stderr", BytesRemoved: 800}}},
	}
	md := string(r.Markdown())
	for _, want := range []string{
		"| HEAD | `b` at `aaaaaaaaaaaa` |\n",
		"| verdict | **1 of 2 validations did not pass** |\n",
		"## Changed paths (2)\n",
		"| renamed | `old` → `x\\x7cy` | committed, staged |\n",
		"\n1 more not listed.\n",
		"| `bad` | failed | 1 | 0 ms | `false` |\n",
		"### `bad`: failed\n\nstderr (900 bytes, 800 elided in the middle):\n\n```text\nboom\n```\n",
		"## Errors\n\n- **E_Y** e\n\n## Warnings\n\n- **W_X** two lines (h)\n",
		"- `changes.files`: 1 entries not listed (40 bytes)\n- `validations[1].stderr`: 800 bytes elided\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("missing %q in\n%s", want, md)
		}
	}
	if strings.Contains(md, "fine") || strings.Contains(md, "## Committed") {
		t.Errorf("summary detail shows passed output or scope tables:\n%s", md)
	}
}

// Every engine error carries the exit status of its code.
func TestErrorExits(t *testing.T) {
	for code, want := range map[string]int{
		CodeUsage: 2, CodeConfig: 2, CodeValidationName: 2,
		CodeRepoNotFound: 3, CodeNotARepo: 3, CodeUnsafeRepo: 3, CodeBareRepo: 3, CodeBaseRef: 3, CodeRepoExecConfig: 3, CodeGitFailed: 3,
		errs.Outside: 3, CodeGitTimeout: 4, errs.Cancelled: 4, CodeInternal: 70, "E_SOMETHING_NEW": 70,
	} {
		if got := errs.ExitCode(errorf(code, "m", "")); got != want {
			t.Errorf("%s: exit %d, want %d", code, got, want)
		}
	}
}

func TestGitTimeout(t *testing.T) {
	dir := newRepo(t, map[string]string{"a.txt": "a\n"})
	e := inspectErr(t, Options{Repo: dir, GitTimeout: time.Nanosecond})
	if e.Code != CodeGitTimeout || errs.ExitCode(e) != ExitTimeout {
		t.Errorf("got %v", e)
	}
}

func TestArgvText(t *testing.T) {
	got := argvText([]string{"go", "test", "-run", "Test Foo|Bar", "", "it's", "./..."})
	if want := `go test -run 'Test Foo|Bar' '' 'it'\''s' ./...`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// The exit-code table of review's reference (docs/review.md) lists every
// code in the row of the status the code carries.
func TestREADMEExitTable(t *testing.T) {
	b, err := os.ReadFile("../../docs/review.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "| exit | meaning | codes (stderr: `rowkit review:")
	if i < 0 {
		t.Fatal("no review exit table in docs/review.md")
	}
	rows := map[int]string{}
	for _, l := range strings.Split(s[i:], "\n")[2:] {
		if !strings.HasPrefix(l, "| ") {
			break
		}
		var n int
		if _, err := fmt.Sscanf(l, "| %d |", &n); err != nil {
			t.Fatalf("row %q", l)
		}
		rows[n] = l
	}
	for code, exit := range exitOf {
		if !strings.Contains(rows[exit], "`"+code+"`") {
			t.Errorf("%s (exit %d) is not in the docs/review.md row %q", code, exit, rows[exit])
		}
	}
	for _, n := range []int{ExitOK, ExitValidationFailed, ExitUsage, ExitInspection, ExitTimeout, ExitInternal} {
		if rows[n] == "" {
			t.Errorf("exit %d has no row", n)
		}
	}
}
