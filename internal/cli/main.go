package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"
	"strings"
	"text/tabwriter"

	"github.com/rowkit/rowkit/internal/errs"
)

// Main runs the rowkit binary: args is os.Args. A base name of args[0] that
// is a command alias (hread, hgrep, ...) runs that command directly;
// otherwise args[1] names a subcommand. It returns the exit code.
func Main(ctx context.Context, env *Env, args []string, cmds []*Command) int {
	invoked := "rowkit"
	if len(args) > 0 {
		invoked = filepath.Base(args[0])
		args = args[1:]
	}
	if c := byAlias(cmds, invoked); c != nil {
		return c.Exec(ctx, env, invoked, args)
	}
	if len(args) == 0 {
		overview(env.Stderr, cmds)
		return errs.ExitUsage
	}
	switch name, rest := args[0], args[1:]; name {
	case "-h", "-help", "--help":
		return written(env, "rowkit", func(w io.Writer) { overview(w, cmds) })
	case "help":
		return help(env, rest, cmds)
	case "-version", "--version", "version":
		return written(env, "rowkit", func(w io.Writer) { fmt.Fprintln(w, Version()) })
	case "link":
		return linkCommand(cmds).Exec(ctx, env, "rowkit link", rest)
	default:
		if c := find(cmds, name); c != nil {
			return c.Exec(ctx, env, "rowkit "+name, rest)
		}
		if strings.HasPrefix(name, "-") {
			fmt.Fprintf(env.Stderr, "rowkit: unknown flag %s (see 'rowkit --help')\n", name)
		} else {
			fmt.Fprintf(env.Stderr, "rowkit: unknown command %q (see 'rowkit --help')\n", name)
		}
		return errs.ExitUsage
	}
}

// Lookup returns the command that Main runs for args (os.Args), or nil
// when Main answers itself (help, the version, link, a usage error): main
// uses it to set up the process for that command (Command.Signals,
// Command.GCPercent) before Main runs it.
func Lookup(args []string, cmds []*Command) *Command {
	if len(args) == 0 {
		return nil
	}
	if c := byAlias(cmds, filepath.Base(args[0])); c != nil {
		return c
	}
	if len(args) < 2 {
		return nil
	}
	return find(cmds, args[1])
}

func find(cmds []*Command, name string) *Command {
	for _, c := range cmds {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func byAlias(cmds []*Command, name string) *Command {
	for _, c := range cmds {
		for _, a := range c.Aliases {
			if a == name {
				return c
			}
		}
	}
	return nil
}

func help(env *Env, args []string, cmds []*Command) int {
	switch {
	case len(args) == 0:
		return written(env, "rowkit help", func(w io.Writer) { overview(w, cmds) })
	case len(args) > 1:
		fmt.Fprintln(env.Stderr, "rowkit help: usage: rowkit help [COMMAND]")
		return errs.ExitUsage
	}
	c := find(cmds, args[0])
	if c == nil && args[0] == "link" {
		c = linkCommand(cmds)
	}
	if c == nil {
		c = byAlias(cmds, args[0])
	}
	if c == nil {
		fmt.Fprintf(env.Stderr, "rowkit help: unknown command %q (see 'rowkit --help')\n", args[0])
		return errs.ExitUsage
	}
	return written(env, "rowkit help", func(w io.Writer) { writeHelp(w, c) })
}

// writeHelp writes c's help: its usage line, summary, contract and exit
// statuses.
func writeHelp(w io.Writer, c *Command) {
	fmt.Fprintf(w, "usage: %s\n\n%s\n", c.Usage, c.Summary)
	help := c.Help
	if c.HelpMore != nil {
		help += c.HelpMore()
	}
	if h := strings.Trim(help, "\n"); h != "" {
		fmt.Fprintf(w, "\n%s\n", h)
	}
	if len(c.Exits) > 0 {
		fmt.Fprintf(w, "\nexit codes:\n")
		width := 3 // a status and its space; wider for 128 + n
		for _, e := range c.Exits {
			width = max(width, len(fmt.Sprint(e.Status))+1)
		}
		for _, e := range c.Exits {
			writeWrapped(w, fmt.Sprintf("  %-*d", width, e.Status), strings.Repeat(" ", 2+width), e.When, 79)
		}
	}
}

// written runs print against stdout and turns the first write error into
// the write diagnostic and exit 1, so that help text is never lost silently.
func written(env *Env, name string, print func(io.Writer)) int {
	w := &stickyWriter{w: env.Stdout}
	print(w)
	if w.err != nil {
		fmt.Fprintf(env.Stderr, "%s: %s: writing output: %v\n", name, errs.Write, w.err)
		return 1
	}
	return errs.ExitOK
}

// stickyWriter keeps the first error and writes nothing after it.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	s.err = err
	return n, err
}

func overview(w io.Writer, cmds []*Command) {
	fmt.Fprint(w, `rowkit: workspace tools for coding agents whose every row is verified (LINE:HASH)

usage: rowkit COMMAND [ARGS]
       NAME [ARGS]          (when invoked as one of the shell names below)

commands:
`)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, c := range Documented(cmds) {
		fmt.Fprintf(tw, "  %s\t%s\n", c.Name, c.Summary)
	}
	tw.Flush()
	fmt.Fprintf(w, `
shell names: %s
other: rowkit help COMMAND, rowkit --version

exit codes: 0 success, 1 failure or incomplete output, 2 usage error; some
commands have more (read, patch: 3; review: 3, 4, 70; shell: its script's
status): rowkit help COMMAND
`, strings.Join(Names(cmds), ", "))
}

// writeWrapped writes text after first, wrapping at width with indent on
// every later line.
func writeWrapped(w io.Writer, first, indent, text string, width int) {
	line := first
	fresh := true
	for _, word := range strings.Fields(text) {
		if !fresh && len(line)+1+len(word) > width {
			fmt.Fprintln(w, line)
			line, fresh = indent, true
		}
		if !fresh {
			line += " "
		}
		line += word
		fresh = false
	}
	fmt.Fprintln(w, line)
}

// ExitTable is the Markdown table of every command's exit statuses that
// docs/exit-codes.md carries (a test keeps the two equal).
func ExitTable(cmds []*Command) string {
	var b strings.Builder
	b.WriteString("| command | exit | when |\n| --- | --- | --- |\n")
	for _, c := range Documented(cmds) {
		name := "rowkit " + c.Name
		if len(c.Aliases) > 0 {
			name += " (" + strings.Join(c.Aliases, ", ") + ")"
		}
		for i, e := range c.Exits {
			if i > 0 {
				name = ""
			}
			fmt.Fprintf(&b, "| %s | %d | %s |\n", name, e.Status, e.When)
		}
	}
	return b.String()
}

// Version describes the running binary from its build information.
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "rowkit (unknown version)"
	}
	v := "rowkit " + info.Main.Version
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+dirty"
			}
		}
	}
	if rev != "" {
		v += " (" + rev[:min(12, len(rev))] + modified + ")"
	}
	return v + " " + info.GoVersion
}
