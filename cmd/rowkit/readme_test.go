package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/cmd"
)

// The README is a guide; the reference is in docs/, one file per topic,
// and a page per command in docs/commands made from cmd.All. These tests
// keep the README, docs/ and `rowkit help` in step: a block made from the
// command table must equal what the table gives (ROWKIT_UPDATE_README=1
// rewrites it), and every link must lead somewhere.

const (
	exitsBegin    = "<!-- exit codes: made from each command's cli.Exit list; TestReadmeExitCodes keeps it equal -->\n"
	exitsEnd      = "<!-- end of exit codes -->\n"
	commandsBegin = "<!-- commands: made from cmd.All (cli.CommandTable); TestDocs keeps it equal -->\n"
	commandsEnd   = "<!-- end of commands -->\n"
	repo          = "../.."
)

// checkBlock compares the block of file between begin and end with want,
// or rewrites it under ROWKIT_UPDATE_README.
func checkBlock(t *testing.T, file, begin, end, want string) {
	t.Helper()
	path := filepath.Join(repo, file)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no block between %q and %q", file, begin, end)
	}
	if got := text[i+len(begin) : j]; got != want {
		if os.Getenv("ROWKIT_UPDATE_README") != "" {
			if err := os.WriteFile(path, []byte(text[:i+len(begin)]+want+text[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s's block %q is stale (run with ROWKIT_UPDATE_README=1 to rewrite it); want:\n%s", file, strings.TrimSpace(begin), want)
	}
}

// The exit-code table of docs/exit-codes.md is the one `rowkit help
// COMMAND` prints, so the two cannot drift apart; every command documents
// its statuses.
func TestReadmeExitCodes(t *testing.T) {
	for _, c := range cmd.All {
		if len(c.Exits) == 0 {
			t.Errorf("%s documents no exit statuses (cli.Command.Exits)", c.Name)
		}
	}
	checkBlock(t, "docs/exit-codes.md", exitsBegin, exitsEnd, cli.ExitTable(cmd.All))
}

// The README lists every command, linked to its page, from the table.
func TestDocsReadmeCommands(t *testing.T) {
	checkBlock(t, "README.md", commandsBegin, commandsEnd, cli.CommandTable(cmd.All, "docs/commands"))
	b, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cli.Documented(cmd.All) {
		if !strings.Contains(string(b), "](docs/commands/"+cli.PageFile(c)+")") {
			t.Errorf("README.md does not link %s's page", c.Name)
		}
	}
}

// Every command has a page, docs/commands/NAME.md, equal to what its
// table gives and saying what `rowkit help NAME` says; no page is left of
// a command that is gone.
func TestDocsCommandPages(t *testing.T) {
	dir := filepath.Join(repo, "docs/commands")
	var want []string
	for _, c := range cli.Documented(cmd.All) {
		name := cli.PageFile(c)
		want = append(want, name)
		page := cli.HelpPage(c)
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(b) != page {
			if os.Getenv("ROWKIT_UPDATE_README") != "" {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(page), 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				t.Errorf("docs/commands/%s is stale or missing (run with ROWKIT_UPDATE_README=1 to rewrite it): %v", name, err)
			}
		}

		// What rowkit help prints: usage, summary, contract, exit
		// statuses, each on the page.
		var out, errOut bytes.Buffer
		env := &cli.Env{Stdout: &out, Stderr: &errOut}
		if code := cli.Main(context.Background(), env, []string{"rowkit", "help", c.Name}, cmd.All); code != 0 {
			t.Fatalf("rowkit help %s: exit %d: %s", c.Name, code, errOut.String())
		}
		help := out.String()
		head, rest, _ := strings.Cut(help, "\n\n")
		summary, rest, _ := strings.Cut(rest, "\n")
		contract, exits, _ := strings.Cut(rest, "\nexit codes:\n")
		for _, part := range []string{"```\n" + head + "\n```", summary, strings.Trim(contract, "\n")} {
			if !strings.Contains(page, part) {
				t.Errorf("docs/commands/%s lacks what rowkit help %s prints:\n%s", name, c.Name, part)
			}
		}
		for _, e := range c.Exits {
			if !strings.Contains(exits, fmt.Sprintf("  %d ", e.Status)) || !strings.Contains(page, fmt.Sprintf("\n| %d | ", e.Status)) {
				t.Errorf("exit %d of %s is not both in rowkit help and on its page", e.Status, c.Name)
			}
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !slices.Contains(want, e.Name()) {
			t.Errorf("docs/commands/%s is the page of no command", e.Name())
		}
	}
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// Every link of the README and of docs/ to a file of the repository
// leads to one, and its #anchor to a heading there; every topic file of
// docs/ is linked from the README.
func TestDocsLinks(t *testing.T) {
	files := []string{"README.md"}
	for _, pattern := range []string{"docs/*.md", "docs/commands/*.md"} {
		m, err := filepath.Glob(filepath.Join(repo, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			rel, _ := filepath.Rel(repo, f)
			files = append(files, rel)
		}
	}
	linked := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(repo, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(outsideFences(string(b)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := f
			if path != "" {
				dest = filepath.Join(filepath.Dir(f), path)
			}
			if f == "README.md" {
				linked[filepath.Clean(dest)] = true
			}
			st, err := os.Stat(filepath.Join(repo, dest))
			if err != nil {
				t.Errorf("%s: the link %s leads nowhere: %v", f, target, err)
				continue
			}
			if anchor == "" {
				continue
			}
			if st.IsDir() {
				t.Errorf("%s: the link %s has an anchor into a directory", f, target)
				continue
			}
			d, err := os.ReadFile(filepath.Join(repo, dest))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(anchors(string(d)), anchor) {
				t.Errorf("%s: the link %s names no heading of %s", f, target, dest)
			}
		}
	}
	for _, f := range files {
		if strings.HasPrefix(f, "docs/") && !strings.HasPrefix(f, "docs/commands/") && !linked[f] {
			t.Errorf("README.md does not link %s", f)
		}
	}
}

// outsideFences is text without its fenced blocks.
func outsideFences(text string) string {
	var b strings.Builder
	fence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
			fence = !fence
			continue
		}
		if !fence {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

var headingLine = regexp.MustCompile(`^#{1,6} (.+?)\s*$`)

// anchors are GitHub's anchors of text's headings: lower case, spaces to
// hyphens, other punctuation but - and _ dropped, -N after a repeat.
func anchors(text string) []string {
	var out []string
	seen := map[string]int{}
	for _, line := range strings.Split(outsideFences(text), "\n") {
		m := headingLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127:
				b.WriteRune(r)
			}
		}
		s := b.String()
		if n := seen[s]; n > 0 {
			out = append(out, fmt.Sprintf("%s-%d", s, n))
		} else {
			out = append(out, s)
		}
		seen[s]++
	}
	return out
}
