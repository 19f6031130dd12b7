package grep

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rowkit/rowkit/internal/errs"
)

// Action is what hgrep does with one ripgrep option.
type Action int

const (
	// Pass hands the option to ripgrep.
	Pass Action = iota
	// Drop accepts the option and removes it: it only restates what hgrep
	// output already is.
	Drop
	// Reject refuses the whole command line before ripgrep starts.
	Reject
)

func (a Action) String() string {
	switch a {
	case Pass:
		return "accepted"
	case Drop:
		return "removed"
	default:
		return "rejected"
	}
}

// Option is one row of the argv policy.
type Option struct {
	Long   []string // long names without "--"; the first is the one hgrep passes on
	Short  byte     // short letter, 0 for none
	Value  bool     // takes a value (-A 1, -A1, --context=2)
	Action Action
	Group  string // what kind of option it is, for the help text
	Why    string // for Reject and Drop: one line saying why
}

// Name returns the option as documented: -s/--long, --long or -s.
func (o *Option) Name() string {
	var parts []string
	if o.Short != 0 {
		parts = append(parts, "-"+string(o.Short))
	}
	if len(o.Long) > 0 {
		parts = append(parts, "--"+o.Long[0])
	}
	return strings.Join(parts, "/")
}

// Reasons shared by several rejected options.
const (
	whyOutput    = "an output mode; hgrep always prints complete verified rows"
	whyMultiline = "multiline matches span several rows; hgrep reports single rows"
	whyTransform = "ripgrep would search transformed input, not the file's rows"
	whyInfo      = "informational; run rg itself for it"
	whyStdin     = "hgrep searches files; its standard input is closed"
)

// Options is the argv policy: every ripgrep option hgrep knows, and what it
// does with it. An option not listed here is rejected, so a ripgrep flag
// hgrep has not reviewed can never reach ripgrep. The help text, the README
// and the tests are all checked against this one table.
var Options = []Option{
	// Patterns.
	{Long: []string{"regexp"}, Short: 'e', Value: true, Group: "pattern"},
	{Long: []string{"file"}, Short: 'f', Value: true, Group: "pattern"},

	// Matching.
	{Long: []string{"ignore-case"}, Short: 'i', Group: "matching"},
	{Long: []string{"smart-case"}, Short: 'S', Group: "matching"},
	{Long: []string{"case-sensitive"}, Short: 's', Group: "matching"},
	{Long: []string{"fixed-strings"}, Short: 'F', Group: "matching"},
	{Long: []string{"no-fixed-strings"}, Group: "matching"},
	{Long: []string{"word-regexp"}, Short: 'w', Group: "matching"},
	{Long: []string{"line-regexp"}, Short: 'x', Group: "matching"},
	{Long: []string{"invert-match"}, Short: 'v', Group: "matching"},
	{Long: []string{"pcre2"}, Short: 'P', Group: "matching"},
	{Long: []string{"no-pcre2"}, Group: "matching"},
	{Long: []string{"engine"}, Value: true, Group: "matching"},
	{Long: []string{"auto-hybrid-regex"}, Group: "matching"},
	{Long: []string{"no-auto-hybrid-regex"}, Group: "matching"},
	{Long: []string{"crlf"}, Group: "matching"},
	{Long: []string{"no-crlf"}, Group: "matching"},
	{Long: []string{"unicode"}, Group: "matching"},
	{Long: []string{"no-unicode"}, Group: "matching"},
	{Long: []string{"pcre2-unicode"}, Group: "matching"},
	{Long: []string{"no-pcre2-unicode"}, Group: "matching"},

	// Files, globs and types.
	{Long: []string{"glob"}, Short: 'g', Value: true, Group: "files"},
	{Long: []string{"iglob"}, Value: true, Group: "files"},
	{Long: []string{"glob-case-insensitive"}, Group: "files"},
	{Long: []string{"no-glob-case-insensitive"}, Group: "files"},
	{Long: []string{"type"}, Short: 't', Value: true, Group: "files"},
	{Long: []string{"type-not"}, Short: 'T', Value: true, Group: "files"},
	{Long: []string{"type-add"}, Value: true, Group: "files"},
	{Long: []string{"type-clear"}, Value: true, Group: "files"},
	{Long: []string{"follow"}, Short: 'L', Group: "files"},
	{Long: []string{"no-follow"}, Group: "files"},
	{Long: []string{"max-depth", "maxdepth"}, Value: true, Group: "files"},
	{Long: []string{"max-filesize"}, Value: true, Group: "files"},
	{Long: []string{"one-file-system"}, Group: "files"},
	{Long: []string{"no-one-file-system"}, Group: "files"},

	// Ignore rules.
	{Long: []string{"unrestricted"}, Short: 'u', Group: "ignore"}, // at most twice: see parse
	{Long: []string{"hidden"}, Short: '.', Group: "ignore"},
	{Long: []string{"no-hidden"}, Group: "ignore"},
	{Long: []string{"no-ignore"}, Group: "ignore"},
	{Long: []string{"ignore"}, Group: "ignore"},
	{Long: []string{"no-ignore-dot"}, Group: "ignore"},
	{Long: []string{"ignore-dot"}, Group: "ignore"},
	{Long: []string{"no-ignore-exclude"}, Group: "ignore"},
	{Long: []string{"ignore-exclude"}, Group: "ignore"},
	{Long: []string{"no-ignore-files"}, Group: "ignore"},
	{Long: []string{"ignore-files"}, Group: "ignore"},
	{Long: []string{"no-ignore-global"}, Group: "ignore"},
	{Long: []string{"ignore-global"}, Group: "ignore"},
	{Long: []string{"no-ignore-parent"}, Group: "ignore"},
	{Long: []string{"ignore-parent"}, Group: "ignore"},
	{Long: []string{"no-ignore-vcs"}, Group: "ignore"},
	{Long: []string{"ignore-vcs"}, Group: "ignore"},
	{Long: []string{"ignore-file"}, Value: true, Group: "ignore"},
	{Long: []string{"ignore-file-case-insensitive"}, Group: "ignore"},
	{Long: []string{"no-ignore-file-case-insensitive"}, Group: "ignore"},
	{Long: []string{"require-git"}, Group: "ignore"},
	{Long: []string{"no-require-git"}, Group: "ignore"},
	{Long: []string{"ignore-messages"}, Group: "ignore"},
	{Long: []string{"no-ignore-messages"}, Group: "ignore"},
	{Long: []string{"messages"}, Group: "ignore"},
	{Long: []string{"no-messages"}, Group: "ignore"},

	// Context.
	{Long: []string{"after-context"}, Short: 'A', Value: true, Group: "context"},
	{Long: []string{"before-context"}, Short: 'B', Value: true, Group: "context"},
	{Long: []string{"context"}, Short: 'C', Value: true, Group: "context"},

	// Resources.
	{Long: []string{"max-count"}, Short: 'm', Value: true, Group: "resources"},
	{Long: []string{"threads"}, Short: 'j', Value: true, Group: "resources"},
	{Long: []string{"sort"}, Value: true, Group: "resources"},
	{Long: []string{"sortr"}, Value: true, Group: "resources"},
	{Long: []string{"dfa-size-limit"}, Value: true, Group: "resources"},
	{Long: []string{"regex-size-limit"}, Value: true, Group: "resources"},
	{Long: []string{"mmap"}, Group: "resources"},
	{Long: []string{"no-mmap"}, Group: "resources"},

	// Accepted and removed.
	{Short: 'R', Action: Drop, Why: "GNU grep's recursive flag; hgrep always searches recursively"},
	{Long: []string{"line-number"}, Short: 'n', Action: Drop, Why: "every row has its line number"},
	{Long: []string{"with-filename"}, Short: 'H', Action: Drop, Why: "every row has its path"},
	{Long: []string{"no-heading"}, Action: Drop, Why: "rows never have headings"},
	{Long: []string{"no-config"}, Action: Drop, Why: "hgrep never reads a ripgrep config file"},
	{Long: []string{"no-json"}, Action: Drop, Why: "hgrep output is rows, not JSON"},
	{Long: []string{"line-buffered"}, Action: Drop, Why: "hgrep owns buffering"},
	{Long: []string{"no-line-buffered"}, Action: Drop, Why: "hgrep owns buffering"},
	{Long: []string{"block-buffered"}, Action: Drop, Why: "hgrep owns buffering"},
	{Long: []string{"no-block-buffered"}, Action: Drop, Why: "hgrep owns buffering"},
	{Long: []string{"no-column"}, Action: Drop, Why: "rows never have columns"},
	{Long: []string{"no-stats"}, Action: Drop, Why: "hgrep never prints statistics"},
	{Long: []string{"no-text"}, Action: Drop, Why: "restates the default"},
	{Long: []string{"no-binary"}, Action: Drop, Why: "restates the default"},
	{Long: []string{"no-encoding"}, Action: Drop, Why: "restates the default"},
	{Long: []string{"no-multiline"}, Action: Drop, Why: "restates the default"},
	{Long: []string{"no-multiline-dotall"}, Action: Drop, Why: "restates the default"},
	{Long: []string{"no-pre"}, Action: Drop, Why: "restates the default"},
	{Long: []string{"no-search-zip"}, Action: Drop, Why: "restates the default"},
	{Long: []string{"no-trim"}, Action: Drop, Why: "restates the default"},
	{Long: []string{"no-max-columns-preview"}, Action: Drop, Why: "restates the default"},

	// Output modes.
	{Long: []string{"json"}, Action: Reject, Why: whyOutput},
	{Long: []string{"count"}, Short: 'c', Action: Reject, Why: whyOutput},
	{Long: []string{"count-matches"}, Action: Reject, Why: whyOutput},
	{Long: []string{"include-zero"}, Action: Reject, Why: whyOutput},
	{Long: []string{"files-with-matches"}, Short: 'l', Action: Reject, Why: whyOutput},
	{Long: []string{"files-without-match"}, Action: Reject, Why: whyOutput},
	{Long: []string{"files"}, Action: Reject, Why: "lists files instead of rows"},
	{Long: []string{"only-matching"}, Short: 'o', Action: Reject, Why: "prints fragments; rows are always complete lines"},
	{Long: []string{"replace"}, Short: 'r', Value: true, Action: Reject, Why: "rewrites the printed text (hgrep is recursive without GNU's -r)"},
	{Long: []string{"vimgrep"}, Action: Reject, Why: whyOutput},
	{Long: []string{"byte-offset"}, Short: 'b', Action: Reject, Why: whyOutput},
	{Long: []string{"column"}, Action: Reject, Why: whyOutput},
	{Long: []string{"null"}, Short: '0', Action: Reject, Why: whyOutput},
	{Long: []string{"no-filename"}, Short: 'I', Action: Reject, Why: "every row needs its path"},
	{Long: []string{"no-line-number"}, Short: 'N', Action: Reject, Why: "every row needs its line number"},
	{Long: []string{"heading"}, Action: Reject, Why: whyOutput},
	{Long: []string{"pretty"}, Short: 'p', Action: Reject, Why: whyOutput},
	{Long: []string{"color"}, Value: true, Action: Reject, Why: "rows are never colored"},
	{Long: []string{"colors"}, Value: true, Action: Reject, Why: "rows are never colored"},
	{Long: []string{"context-separator"}, Value: true, Action: Reject, Why: whyOutput},
	{Long: []string{"no-context-separator"}, Action: Reject, Why: whyOutput},
	{Long: []string{"field-context-separator"}, Value: true, Action: Reject, Why: whyOutput},
	{Long: []string{"field-match-separator"}, Value: true, Action: Reject, Why: whyOutput},
	{Long: []string{"path-separator"}, Value: true, Action: Reject, Why: "rows print paths as ripgrep finds them"},
	{Long: []string{"passthru", "passthrough"}, Action: Reject, Why: "prints every line; use hread to read a file"},
	{Long: []string{"max-columns"}, Short: 'M', Value: true, Action: Reject, Why: "truncates lines; rows are always complete"},
	{Long: []string{"max-columns-preview"}, Action: Reject, Why: "truncates lines; rows are always complete"},
	{Long: []string{"trim"}, Action: Reject, Why: "trims lines; rows are always complete"},
	{Long: []string{"quiet"}, Short: 'q', Action: Reject, Why: whyOutput},
	{Long: []string{"stats"}, Action: Reject, Why: whyOutput},

	// Multiline, preprocessors and transformed input.
	{Long: []string{"multiline"}, Short: 'U', Action: Reject, Why: whyMultiline},
	{Long: []string{"multiline-dotall"}, Action: Reject, Why: whyMultiline},
	{Long: []string{"pre"}, Value: true, Action: Reject, Why: "runs a preprocessor command; " + whyTransform},
	{Long: []string{"pre-glob"}, Value: true, Action: Reject, Why: "selects files for a preprocessor; " + whyTransform},
	{Long: []string{"search-zip"}, Short: 'z', Action: Reject, Why: "decompresses files; " + whyTransform},
	{Long: []string{"null-data"}, Action: Reject, Why: "splits lines at NUL; " + whyTransform},
	{Long: []string{"text"}, Short: 'a', Action: Reject, Why: "searches binary files; " + whyTransform},
	{Long: []string{"binary"}, Action: Reject, Why: "searches binary files; " + whyTransform},
	{Long: []string{"encoding"}, Short: 'E', Value: true, Action: Reject, Why: "transcodes files (regexes need no GNU -E); " + whyTransform},

	// Informational (-h/--help is every command's: it prints 'rowkit help
	// grep').
	{Long: []string{"version"}, Short: 'V', Action: Reject, Why: whyInfo},
	{Long: []string{"type-list"}, Action: Reject, Why: whyInfo},
	{Long: []string{"pcre2-version"}, Action: Reject, Why: whyInfo},
	{Long: []string{"debug"}, Action: Reject, Why: whyInfo},
	{Long: []string{"trace"}, Action: Reject, Why: whyInfo},
}

// Plan is a checked command line, split into what ripgrep gets as options
// and what names a file: a confined search (Config.Root) resolves every
// file-valued argument inside its root before ripgrep starts.
type Plan struct {
	// Options are the accepted ripgrep options in canonical --long or
	// --long=VALUE form (--long, VALUE for a value that starts with '='),
	// in command-line order, except the file-valued and the context
	// options below.
	Options []string
	// Pattern is the positional pattern; it is absent (HasPattern false)
	// when -e or -f gave the patterns, and every positional is a path.
	Pattern    string
	HasPattern bool
	// PatternFiles are the -f/--file values and IgnoreFiles the
	// --ignore-file values, in order, as given.
	PatternFiles, IgnoreFiles []string
	// Paths are the PATH arguments as given; none means the working
	// directory (or the root).
	Paths []string
	// Before and After are the context rows either side of each matched
	// row. hgrep counts them in verified rows itself (ripgrep would count
	// lines ending at LF), so ripgrep never sees -A, -B or -C.
	Before, After int
	// Follow is set when -L/--follow is in effect (the last of -L and
	// --no-follow wins).
	Follow bool
}

// ownArgs are hgrep's own ripgrep options, after the accepted ones.
// --encoding=none keeps ripgrep on the file's own bytes: without it a
// file with a byte order mark is transcoded, its NUL bytes become line
// breaks and the offsets ripgrep reports are no longer the file's.
var ownArgs = []string{"--no-config", "--json", "--encoding=none"}

// Args returns ripgrep's arguments for the plan with the file-valued
// arguments as given (an unconfined search).
func (p *Plan) Args() []string {
	args, _ := p.args(func(s string) (string, error) { return s, nil }, func(s string) (string, error) { return s, nil })
	return args
}

// args returns ripgrep's arguments after the executable name: the accepted
// options, the file-valued options through file, hgrep's own options,
// then own (the search's own options after them, so that they win), then
// "--" and the pattern and the paths through path, so that no argument can
// be read as anything but what the policy checked.
func (p *Plan) args(file, path func(string) (string, error), own ...string) ([]string, error) {
	args := append([]string(nil), p.Options...)
	for _, fo := range []struct {
		opt  string
		vals []string
	}{{"--file=", p.PatternFiles}, {"--ignore-file=", p.IgnoreFiles}} {
		for _, v := range fo.vals {
			r, err := file(v)
			if err != nil {
				return nil, err
			}
			if strings.HasPrefix(r, "=") { // as in Use
				args = append(args, strings.TrimSuffix(fo.opt, "="), r)
			} else {
				args = append(args, fo.opt+r)
			}
		}
	}
	args = append(append(append(args, ownArgs...), own...), "--")
	if p.HasPattern {
		args = append(args, p.Pattern)
	}
	for _, v := range p.Paths {
		r, err := path(v)
		if err != nil {
			return nil, err
		}
		args = append(args, r)
	}
	return args, nil
}

// Planner builds a Plan from options already split from their values, in
// command-line order: the command line's parser (cli.Parse, in the hgrep
// adapter) or a Query hands them over one by one, and the Planner applies
// the policy to each.
type Planner struct {
	plan         Plan
	patterns     bool // -e or -f given: every positional is a path
	unrestricted int
}

// Use applies o, an option of Options spelled as the user wrote it, with
// its value. A rejected option is a usage error naming it and why.
func (b *Planner) Use(o *Option, spelled, value string) error {
	plan := &b.plan
	switch o.Action {
	case Reject:
		return rejectErr(o, spelled)
	case Drop:
		return nil
	}
	switch {
	case o.Short == 'u':
		if b.unrestricted++; b.unrestricted > 2 {
			return usageErr("%s is rejected: a third -u means --binary, which searches binary files; %s", spelled, whyTransform)
		}
	case o.Short == 'e':
		b.patterns = true
	case o.Short == 'f':
		b.patterns = true
		if value == "-" {
			return usageErr("%s - is rejected: reading patterns from standard input is not possible; %s", spelled, whyStdin)
		}
		plan.PatternFiles = append(plan.PatternFiles, value)
		return nil
	case o.Long[0] == "ignore-file":
		plan.IgnoreFiles = append(plan.IgnoreFiles, value)
		return nil
	case o.Group == "context":
		n, err := contextValue(spelled, value)
		if err != nil {
			return err
		}
		switch o.Short {
		case 'A':
			plan.After = n
		case 'B':
			plan.Before = n
		default:
			plan.Before, plan.After = n, n
		}
		return nil
	case o.Short == 'L':
		plan.Follow = true
	case o.Long[0] == "no-follow":
		plan.Follow = false
	}
	switch {
	case o.Value && strings.HasPrefix(value, "="):
		// ripgrep 13's parser (clap 2) drops every '=' that starts the
		// value of --long=VALUE: --regexp=== matched every line, and
		// --regexp=== 'AS' every line with " 'AS'".
		// A separate argument keeps them, and one that starts with '=' is
		// never read as an option.
		plan.Options = append(plan.Options, "--"+o.Long[0], value)
	case o.Value:
		plan.Options = append(plan.Options, "--"+o.Long[0]+"="+value)
	default:
		plan.Options = append(plan.Options, "--"+o.Long[0])
	}
	return nil
}

// Finish takes the positionals: the pattern, unless -e or -f gave the
// patterns, then the paths. It returns the plan.
func (b *Planner) Finish(pos []string) (*Plan, error) {
	plan := &b.plan
	plan.Paths = pos
	if !b.patterns {
		if len(pos) == 0 {
			return nil, usageErr("missing PATTERN; usage: hgrep [OPTIONS] PATTERN [PATH ...]")
		}
		plan.Pattern, plan.HasPattern, plan.Paths = pos[0], true, pos[1:]
	}
	for _, p := range plan.Paths {
		if p == "-" {
			return nil, usageErr("the path - (standard input) is rejected: %s", whyStdin)
		}
		if p == "" {
			return nil, usageErr("an empty PATH is rejected; use . for the current directory")
		}
	}
	return plan, nil
}

// Lookup returns the option of Options with the long name name (without
// "--"), or nil.
func Lookup(name string) *Option {
	for i := range Options {
		if slices.Contains(Options[i].Long, name) {
			return &Options[i]
		}
	}
	return nil
}

// MaxContext bounds a context value: more rows than any output admits,
// so that the rows kept for before-context stay few.
const MaxContext = 65536

// contextValue reads the NUM of -A, -B or -C as ripgrep does: a
// non-negative base-10 number.
func contextValue(spelled, value string) (int, error) {
	if value == "" || strings.Trim(value, "0123456789") != "" {
		return 0, usageErr("%s needs a non-negative number of rows (got %s)", spelled, quote(value))
	}
	n, err := strconv.Atoi(value)
	if err != nil || n > MaxContext {
		return 0, usageErr("%s %s is more context than any output admits; the most is %d rows", spelled, value, MaxContext)
	}
	return n, nil
}

func usageErr(format string, args ...any) error {
	return errs.Usagef(format, args...)
}

func rejectErr(o *Option, spelled string) error {
	name := spelled
	if full := o.Name(); full != spelled {
		name += " (" + full + ")"
	}
	return usageErr("%s is rejected: %s", name, o.Why)
}

// PolicyHelp documents the table for 'rowkit help grep'.
func PolicyHelp() string {
	var b strings.Builder
	groups := map[string][]string{}
	var order []string
	for i := range Options {
		o := &Options[i]
		if o.Action != Pass {
			continue
		}
		if groups[o.Group] == nil {
			order = append(order, o.Group)
		}
		name := o.Name()
		if o.Value {
			name += " X"
		}
		groups[o.Group] = append(groups[o.Group], name)
	}
	b.WriteString("accepted and passed to ripgrep (all spellings: -A1, -A 1, --context=2, -iw):\n")
	for _, g := range order {
		fmt.Fprintf(&b, "  %-10s %s\n", g+":", wrap(strings.Join(groups[g], ", "), 13))
	}
	b.WriteString("  -u/--unrestricted at most twice (a third -u means --binary)\n")
	b.WriteString("  context options are hgrep's own: NUM verified rows, at most 65536;\n")
	b.WriteString("  -C sets both sides, a later -A or -B one side\n")
	b.WriteString("\naccepted and removed, without a warning:\n")
	writeRows(&b, Drop)
	b.WriteString("\nrejected before ripgrep starts (exit 2), as is any option not listed here:\n")
	writeRows(&b, Reject)
	return b.String()
}

func writeRows(b *strings.Builder, act Action) {
	byWhy := map[string][]string{}
	var order []string
	for i := range Options {
		o := &Options[i]
		if o.Action != act {
			continue
		}
		if byWhy[o.Why] == nil {
			order = append(order, o.Why)
		}
		byWhy[o.Why] = append(byWhy[o.Why], o.Name())
	}
	for _, why := range order {
		fmt.Fprintf(b, "  %s\n      %s\n", wrap(strings.Join(byWhy[why], ", "), 2), why)
	}
}

// wrap breaks a comma-separated list at about 78 columns, indenting
// continuation lines by indent.
func wrap(s string, indent int) string {
	var b strings.Builder
	col := indent
	for i, w := range strings.Split(s, " ") {
		if i > 0 {
			if col+1+len(w) > 78 {
				b.WriteString("\n" + strings.Repeat(" ", indent))
				col = indent
			} else {
				b.WriteByte(' ')
				col++
			}
		}
		b.WriteString(w)
		col += len(w)
	}
	return b.String()
}
