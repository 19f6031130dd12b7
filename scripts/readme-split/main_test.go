package main

import (
	"strings"
	"testing"
)

// A section the table does not place stops the split: a section a merged
// branch adds is never dropped.
func TestUnplacedSectionFails(t *testing.T) {
	_, err := split("# rowkit\n\nintro\n\n## Commands\n\ntable\n\n## Added by a branch\n\nnew text\n")
	if err == nil || !strings.Contains(err.Error(), `the section "Added by a branch" has no place`) {
		t.Fatalf("split = %v, want the unplaced section named", err)
	}
}

// Units start at headings, at the bold leads the table names and at the
// cuts, never inside a fenced block.
func TestUnits(t *testing.T) {
	src := "# rowkit\n\nintro\n\n## hsymbol\n\nabout\n\n```\n## not a heading\n```\n\n**Servers.** stay\n\n**Trust.** moves\n\n| code | when (exit 1; 2 for usage) |\n| --- | --- |\n"
	var got []string
	for _, u := range units(src) {
		got = append(got, u.key+"="+strings.ReplaceAll(u.text, "\n", "|"))
	}
	want := []string{
		"=intro",
		"hsymbol=about||```|## not a heading|```",
		"hsymbol/Servers=**Servers.** stay",
		"hsymbol/Trust=**Trust.** moves",
		"hsymbol/codes=| code | when (exit 1; 2 for usage) ||| --- | --- |",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("units:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"What the model receives: Codex and Claude Code": "what-the-model-receives-codex-and-claude-code",
		"inspect_file":                  "inspect_file",
		"End to end, on real bug fixes": "end-to-end-on-real-bug-fixes",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}
