// Command readme-split moves the reference out of README.md into docs/,
// one file per topic, and writes guide.md (beside this file) as the new
// README. It is a migration, made to be run again: branches that still
// edit the old README are merged first (taking their README.md), then
//
//	go run ./scripts/readme-split
//
// splits the merged README the same way. Every section of the README
// goes to the file the table below names, in the README's own order,
// its text unchanged but for its heading level and its links to other
// sections (made links to the file the section is now in). A section the
// table does not name stops the program before it writes anything, so
// that a section a merged branch added is never dropped; so does a
// section the guide replaces whose text changed (the guide must say the
// new thing first), and a table entry that names no section. Run on the
// README it writes (the guide), it changes nothing.
//
// It also writes what is made from the command table (cmd.All): the
// README's command table, docs/commands/NAME.md and the exit-code table,
// as `go test ./cmd/rowkit -run Docs` with ROWKIT_UPDATE_README=1 does.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/cmd"
)

// A topic file of docs/, its title, and the commands whose reference
// pages (docs/commands) it links under its title, in the order of the
// README.
type topic struct {
	file, title string
	cmds        []string
}

var topics = []topic{
	{"commands.md", "Commands", nil},
	{"confinement.md", "Confinement: what each command may touch", nil},
	{"rows.md", "Verified rows", nil},
	{"bounds.md", "Bounds: token admission and the output bound", nil},
	{"hread.md", "hread", []string{"hread"}},
	{"hgrep.md", "hgrep", []string{"grep"}},
	{"hsymbol.md", "hsymbol", []string{"symbol"}},
	{"review.md", "review", []string{"review"}},
	{"read.md", "read", []string{"read"}},
	{"inspect.md", "inspect_file", []string{"inspect"}},
	{"hpatch.md", "hpatch", []string{"patch", "recover"}},
	{"shell.md", "shell", []string{"shell"}},
	{"mcp.md", "MCP server", []string{"mcp"}},
	{"clients.md", "What the model receives: Codex and Claude Code", nil},
	{"router.md", "Codex router", []string{"router", "carrier"}},
	{"exit-codes.md", "Exit codes", nil},
	{"layout.md", "Layout", nil},
	{"figures.md", "Figures", nil},
}

// place says where one section of the README goes. key is the `## `
// heading's text, "SECTION/SUB" for a `### ` heading, a paragraph that
// starts with a bold lead (**Lead.**; one the table does not name stays
// in its section) or a cut below. file "" is the
// guide, which replaces the section: sum is the SHA-256 (12 hex digits)
// of the text it was written from. A paragraph moved out of its
// section's file gets heading there, and a line in its section's place
// that links to it; one that stays gets heading when it is not "".
type place struct {
	key, file, heading, sum string
}

var places = []place{
	{key: "", sum: "e7d2d66dacff"}, // the title and the opening paragraph
	{key: "Quick start", sum: "11957b8c5020"},
	{key: "Commands", file: "commands.md"},
	{key: "Confinement: what each command may touch", file: "confinement.md"},
	{key: "Verified rows", file: "rows.md"},
	{key: "Verified rows/Token admission", file: "bounds.md", heading: "Token admission"},
	{key: "Verified rows/Output bound", file: "bounds.md", heading: "Output bound"},
	{key: "hread", file: "hread.md"},
	{key: "hgrep", file: "hgrep.md"},
	{key: "hsymbol", file: "hsymbol.md"},
	{key: "hsymbol/Trust", file: "confinement.md", heading: "hsymbol: trust"},
	{key: "hsymbol/codes", file: "hsymbol.md", heading: "Error codes"},
	{key: "hsymbol/Figures", file: "figures.md", heading: "hsymbol"},
	{key: "review", file: "review.md"},
	{key: "review/Trust boundary", file: "confinement.md", heading: "review: trust boundary"},
	{key: "review/exits", file: "review.md", heading: "Exit codes"},
	{key: "read", file: "read.md"},
	{key: "inspect_file", file: "inspect.md"},
	{key: "hpatch", file: "hpatch.md"},
	{key: "shell", file: "shell.md"},
	{key: "shell/Cost", file: "figures.md", heading: "rowkit shell"},
	{key: "MCP server", file: "mcp.md"},
	{key: "MCP server/Confinement", file: "confinement.md", heading: "MCP server: confinement"},
	{key: "What the model receives: Codex and Claude Code", file: "clients.md"},
	{key: "What the model receives: Codex and Claude Code/End to end, on real bug fixes", file: "figures.md", heading: "End to end, on real bug fixes"},
	{key: "What the model receives: Codex and Claude Code/client figures", file: "figures.md", heading: "What each client hands its model"},
	{key: "What the model receives: Codex and Claude Code/Every output reaches the model whole", file: "clients.md"},
	{key: "Codex router", file: "router.md"},
	{key: "Codex router/What it does not do", file: "confinement.md", heading: "Codex router: what it does not do"},
	{key: "Codex router/Cost", file: "figures.md", heading: "Codex router"},
	{key: "Exit codes", file: "exit-codes.md"},
	{key: "Layout", file: "layout.md"},
}

// cuts start a section where no heading or bold lead does: at the first
// line of the named section that starts with prefix, after a blank line.
var cuts = []struct{ section, prefix, name string }{
	{"hsymbol", "| code | when (exit 1; 2 for usage) |", "codes"},
	{"review", "| exit | meaning | codes", "exits"},
	{"What the model receives: Codex and Claude Code", "Figures (`bench/clients.sh`", "client figures"},
}

// links sends a link to an old section anchor to another section than
// the one that heading starts: `[output bound](#verified-rows)` is about
// the paragraph that moved to bounds.md.
var links = map[string]string{
	"verified-rows": "Verified rows/Output bound",
}

const (
	commandsBegin = "<!-- commands: made from cmd.All (cli.CommandTable); TestDocs keeps it equal -->\n"
	commandsEnd   = "<!-- end of commands -->\n"
	exitsBegin    = "<!-- exit codes: made from each command's cli.Exit list; TestReadmeExitCodes keeps it equal -->\n"
	exitsEnd      = "<!-- end of exit codes -->\n"
)

func main() {
	from := flag.String("from", "README.md", "the README to split")
	flag.Parse()
	if err := run(*from); err != nil {
		fmt.Fprintln(os.Stderr, "readme-split:", err)
		os.Exit(1)
	}
}

func run(from string) error {
	if _, err := os.Stat("go.mod"); err != nil {
		return errors.New("run it from the repository's root: go run ./scripts/readme-split")
	}
	src, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	g, err := os.ReadFile("scripts/readme-split/guide.md")
	if err != nil {
		return err
	}
	guide, err := fill(string(g), commandsBegin, commandsEnd, cli.CommandTable(cmd.All, "docs/commands"))
	if err != nil {
		return fmt.Errorf("guide.md: %v", err)
	}
	if string(src) == guide {
		fmt.Printf("%s is the guide already: nothing to split (to split again, put the full README back: git show REV:README.md > README.md)\n", from)
		return nil
	}
	files, err := split(string(src))
	if err != nil {
		return err
	}
	if files["exit-codes.md"], err = fill(files["exit-codes.md"], exitsBegin, exitsEnd, cli.ExitTable(cmd.All)); err != nil {
		return fmt.Errorf("docs/exit-codes.md: %v", err)
	}
	for _, c := range cli.Documented(cmd.All) {
		files["commands/"+cli.PageFile(c)] = cli.HelpPage(c)
	}
	if err := os.MkdirAll("docs/commands", 0o755); err != nil {
		return err
	}
	total := 0
	for name, text := range files {
		if err := os.WriteFile(filepath.Join("docs", name), []byte(text), 0o644); err != nil {
			return err
		}
		total += len(text)
	}
	if err := os.WriteFile("README.md", []byte(guide), 0o644); err != nil {
		return err
	}
	fmt.Printf("README.md: %d bytes, %d words (was %d bytes, %d words); docs/: %d files, %d bytes\n",
		len(guide), len(strings.Fields(guide)), len(src), len(strings.Fields(string(src))), len(files), total)
	return nil
}

// unit is one section of the README: a heading's text up to the next
// unit, or a paragraph's that a bold lead or a cut starts.
type unit struct {
	key, section string
	level        int    // of the heading; 0 for a paragraph unit
	heading      string // its text
	lead         string // a paragraph unit's bold lead, without its stop
	text         string // without the heading line; no blank line at either end
}

var (
	headingLine = regexp.MustCompile(`^(#{1,6}) (.+?)\s*$`)
	boldLead    = regexp.MustCompile(`^\*\*([^*]+?)[.:]?\*\*`)
	anchorLink  = regexp.MustCompile(`\]\(#([^)\s]+)\)`)
)

// units splits the README at its `#`, `##` and `###` headings, at its
// paragraphs that start with a bold lead (but in the sections the guide
// replaces) and at the cuts.
func units(src string) []*unit {
	var out []*unit
	cur := &unit{}
	var body []string
	flush := func() {
		cur.text = strings.Trim(strings.Join(body, "\n"), "\n")
		out = append(out, cur)
		body = nil
	}
	guide := map[string]bool{}
	for _, p := range places {
		if p.file == "" {
			guide[p.key] = true
		}
	}
	section, fence, blank := "", false, true
	for _, line := range strings.Split(strings.TrimSuffix(src, "\n"), "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
			fence = !fence
		}
		var next *unit
		if m := headingLine.FindStringSubmatch(line); !fence && m != nil && len(m[1]) <= 3 {
			switch len(m[1]) {
			case 1:
				next = &unit{key: "", level: 1, heading: m[2]}
			case 2:
				section = m[2]
				next = &unit{key: m[2], section: m[2], level: 2, heading: m[2]}
			case 3:
				next = &unit{key: section + "/" + m[2], section: section, level: 3, heading: m[2]}
			}
		} else if m := boldLead.FindStringSubmatch(line); !fence && blank && m != nil && !guide[section] {
			next = &unit{key: section + "/" + m[1], section: section, lead: m[1]}
		} else if !fence && blank {
			for _, c := range cuts {
				if c.section == section && strings.HasPrefix(line, c.prefix) {
					next = &unit{key: section + "/" + c.name, section: section}
				}
			}
		}
		if next != nil {
			flush()
			cur = next
			if next.level == 0 {
				body = []string{line} // a paragraph unit starts with its line
			}
		} else {
			body = append(body, line)
		}
		blank = strings.TrimSpace(line) == ""
	}
	flush()
	if out[0].key == "" && out[0].level == 0 && out[0].text == "" && len(out) > 1 {
		out = out[1:] // nothing before the title
	}
	return out
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])[:12]
}

// split is the docs/ files of src, by name.
func split(src string) (map[string]string, error) {
	us := units(src)
	byKey := map[string]place{}
	for _, p := range places {
		byKey[p.key] = p
	}
	titles := map[string]string{}
	for _, t := range topics {
		titles[t.file] = t.title
	}
	var problems []string
	seen := map[string]bool{}
	for _, u := range us {
		p, ok := byKey[u.key]
		if !ok && u.lead != "" {
			// A paragraph the table does not name stays in its section.
			p, ok = place{key: u.key, file: byKey[u.section].file}, true
			byKey[u.key] = p
		}
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("the section %q has no place in scripts/readme-split's table: add one (a file of docs/, or the guide)", u.key))
		case seen[u.key]:
			problems = append(problems, fmt.Sprintf("two sections are %q", u.key))
		case p.file == "" && sum(u.heading+"\n"+u.text) != p.sum:
			problems = append(problems, fmt.Sprintf("the section %q, which the guide replaces, changed (sum %s, the guide was written from %s): say what changed in scripts/readme-split/guide.md, then put the new sum in the table", u.key, sum(u.heading+"\n"+u.text), p.sum))
		case p.file != "" && titles[p.file] == "":
			problems = append(problems, fmt.Sprintf("the section %q goes to %s, which is not a topic", u.key, p.file))
		}
		seen[u.key] = true
	}
	for _, p := range places {
		if !seen[p.key] {
			problems = append(problems, fmt.Sprintf("the table places %q, which the README does not have", p.key))
		}
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "\n  "))
	}

	// Where each section lands: its file and the anchor of its heading
	// there ("" when it is the file's title). The old README's anchors,
	// GitHub's, name the sections its links point at.
	type target struct{ file, anchor string }
	at := map[string]target{}
	parts := map[string][]string{}
	slugs := map[string]map[string]int{}
	anchor := func(file, heading string) string {
		if slugs[file] == nil {
			slugs[file] = map[string]int{}
		}
		s := slug(heading)
		n := slugs[file][s]
		slugs[file][s]++
		if n > 0 {
			s += fmt.Sprintf("-%d", n)
		}
		return s
	}
	for _, t := range topics {
		anchor(t.file, t.title)
	}
	old := map[string]string{}
	oldSlugs := map[string]int{}
	titled := map[string]bool{} // sections that are their file's title
	for _, u := range us {
		p := byKey[u.key]
		if u.level > 0 {
			s := slug(u.heading)
			if n := oldSlugs[s]; n > 0 {
				s += fmt.Sprintf("-%d", n)
			}
			oldSlugs[slug(u.heading)]++
			old[s] = u.key
		}
		if p.file == "" {
			continue
		}
		home := byKey[u.section].file
		switch {
		case u.level == 2 && u.heading == titles[p.file]:
			at[u.key] = target{p.file, ""}
			titled[u.key] = true
			parts[p.file] = append(parts[p.file], u.text)
		case u.level > 0:
			level := u.level
			if level == 3 && titled[u.section] && home == p.file {
				level = 2
			}
			a := anchor(p.file, u.heading)
			at[u.key] = target{p.file, a}
			parts[p.file] = append(parts[p.file], strings.Repeat("#", level)+" "+u.heading+"\n\n"+u.text)
		case p.file != home:
			a := anchor(p.file, p.heading)
			at[u.key] = target{p.file, a}
			parts[p.file] = append(parts[p.file], "## "+p.heading+"\n\n"+u.text)
			see := fmt.Sprintf("See [%s](%s#%s) in [%s](%s).", p.heading, p.file, a, titles[p.file], p.file)
			if u.lead != "" {
				see = fmt.Sprintf("**%s.** %s", u.lead, see)
			}
			parts[home] = append(parts[home], see)
		case p.heading != "":
			// A cut that stays, given a heading of its own.
			a := anchor(p.file, p.heading)
			at[u.key] = target{p.file, a}
			parts[p.file] = append(parts[p.file], "## "+p.heading+"\n\n"+u.text)
		default:
			at[u.key] = at[u.section]
			parts[p.file] = append(parts[p.file], u.text)
		}
	}
	files := map[string]string{}
	for _, t := range topics {
		if len(parts[t.file]) == 0 {
			problems = append(problems, fmt.Sprintf("no section goes to %s", t.file))
			continue
		}
		head := "# " + t.title + "\n\n"
		if len(t.cmds) > 0 {
			var refs []string
			for _, c := range t.cmds {
				refs = append(refs, fmt.Sprintf("[`rowkit %s`](commands/%s.md)", c, c))
			}
			head += "Usage, options and exit codes, as `rowkit help` prints them: " + strings.Join(refs, ", ") + ".\n\n"
		}
		text := head + strings.Join(parts[t.file], "\n\n") + "\n"
		text = anchorLink.ReplaceAllStringFunc(text, func(m string) string {
			a := anchorLink.FindStringSubmatch(m)[1]
			key, ok := links[a]
			if !ok {
				key, ok = old[a]
			}
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: the link %s names no section of the README", t.file, m))
				return m
			}
			to := at[key]
			switch {
			case to.file == "":
				problems = append(problems, fmt.Sprintf("%s: the link %s leads to the guide", t.file, m))
				return m
			case to.file == t.file && to.anchor == "":
				return "](#" + slug(t.title) + ")"
			case to.file == t.file:
				return "](#" + to.anchor + ")"
			case to.anchor == "":
				return "](" + to.file + ")"
			}
			return "](" + to.file + "#" + to.anchor + ")"
		})
		files[t.file] = text
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "\n  "))
	}
	return files, nil
}

// slug is GitHub's anchor of a heading: lower case, spaces to hyphens,
// punctuation but hyphens and underscores dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// fill puts content between the lines begin and end of text.
func fill(text, begin, end, content string) (string, error) {
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		return "", fmt.Errorf("no block between %q and %q", begin, end)
	}
	return text[:i+len(begin)] + content + text[j:], nil
}
