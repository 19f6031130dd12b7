package cli

import (
	"fmt"
	"strings"
)

// Documented is every command `rowkit help` lists, in its order: cmds,
// then link, which the binary answers itself.
func Documented(cmds []*Command) []*Command {
	return append(cmds[:len(cmds):len(cmds)], linkCommand(cmds))
}

// PageFile is the name of c's reference page under docs/commands.
func PageFile(c *Command) string { return c.Name + ".md" }

// CommandTable is the Markdown table of every command that the README
// carries, each linked to its reference page under dir (docs/commands):
// made from the same fields `rowkit help` prints, so the two cannot drift.
func CommandTable(cmds []*Command, dir string) string {
	var b strings.Builder
	b.WriteString("| command | shell name | what it does |\n| --- | --- | --- |\n")
	for _, c := range Documented(cmds) {
		alias := ""
		if len(c.Aliases) > 0 {
			alias = "`" + strings.Join(c.Aliases, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| [`rowkit %s`](%s/%s) | %s | %s |\n", c.Name, dir, PageFile(c), alias, cell(c.Summary))
	}
	return b.String()
}

// HelpPage is c's reference page in Markdown: its usage, summary, contract
// (options included) and exit statuses, the fields `rowkit help NAME`
// prints, so the page and the help cannot disagree.
func HelpPage(c *Command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- made from cmd.All (cli.HelpPage): `rowkit help %s` prints the same; TestDocsCommandPages keeps it equal (ROWKIT_UPDATE_README=1 rewrites it) -->\n", c.Name)
	fmt.Fprintf(&b, "# rowkit %s\n\n", c.Name)
	if len(c.Aliases) > 0 {
		fmt.Fprintf(&b, "Shell name: `%s` (`rowkit link DIR` makes it).\n\n", strings.Join(c.Aliases, "`, `"))
	}
	fmt.Fprintf(&b, "%s\n\n```\nusage: %s\n```\n", c.Summary, c.Usage)
	help := c.Help
	if c.HelpMore != nil {
		help += c.HelpMore()
	}
	if h := strings.Trim(help, "\n"); h != "" {
		fmt.Fprintf(&b, "\n## Contract\n\n```text\n%s\n```\n", h)
	}
	if len(c.Exits) > 0 {
		b.WriteString("\n## Exit codes\n\n| exit | when |\n| --- | --- |\n")
		for _, e := range c.Exits {
			fmt.Fprintf(&b, "| %d | %s |\n", e.Status, cell(e.When))
		}
	}
	return b.String()
}

// cell is s as a Markdown table cell: a | would end it.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
