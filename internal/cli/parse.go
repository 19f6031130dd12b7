package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rowkit/rowkit/internal/errs"
)

// Option is one option a command takes. The command's table of them is
// the whole truth about its command line: an option not in it is a usage
// error, and the help text documents the same table.
type Option struct {
	Long  []string // long names without "--"; Long[0] is the canonical one
	Short byte     // a short letter, 0 for none; 'h' is help's in every command
	Value bool     // takes a value: --name=V, --name V, -xV, -x=V or -x V
	// Repeat allows the option more than once; without it a second one
	// is a usage error (the command reads one value).
	Repeat bool
	// Refuse, when set, names an option the command knows and refuses,
	// saying why; it is refused before any value is read.
	Refuse string
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

// Arg is one option as it was given.
type Arg struct {
	*Option
	Spelled string // as written, without its value: -A, --context
	Value   string // the value, for an option that takes one
}

// Canonical is the option as a command hands it on to another program:
// --long or --long=VALUE, whatever the spelling it was given in.
func (a Arg) Canonical() string {
	s := "--" + a.Long[0]
	if a.Option.Value {
		s += "=" + a.Value
	}
	return s
}

// ErrHelp is what Parse returns when the command line asks for help (-h or
// --help where an option may stand): Command.Exec then prints the
// command's help on stdout and exits 0, the same answer for every command.
var ErrHelp = errors.New("help requested")

// Parse reads a command line (without the command's name) against the
// command's options. It calls use for each option, in command-line order,
// and returns the other arguments, the operands, in order. The rules, the
// same for every command (ripgrep's and getopt_long's):
//
//   - "--" ends the options: every argument after it is an operand;
//   - "-" alone is an operand;
//   - a long option's value follows "=" or is the next argument;
//   - short options cluster (-iw); a short option that takes a value takes
//     the rest of its argument (-A1, or -A=1 as ripgrep reads it) or,
//     when nothing is left, the next argument;
//   - options and operands mix in any order;
//   - -h or --help anywhere an option may stand asks for help (ErrHelp),
//     whatever else the line holds.
//
// An unknown or refused option, a missing value, a value given to an
// option that takes none, or a second use of an option that is not
// Repeat is a usage error naming it; an error use returns ends the parse
// and is returned as it is. name is the command's name, for the pointer to
// its help. A nil use takes every option without looking at it.
func Parse(name string, opts []Option, argv []string, use func(Arg) error) ([]string, error) {
	if use == nil {
		use = func(Arg) error { return nil }
	}
	p := parser{name: name, opts: opts}
	// Help wins over every error: look for it first, with the same rules
	// for what is a value and what is an option.
	if err := p.run(argv, nil); errors.Is(err, ErrHelp) {
		return nil, ErrHelp
	}
	p.operands, p.seen = nil, nil
	if err := p.run(argv, use); err != nil {
		return nil, err
	}
	return p.operands, nil
}

type parser struct {
	name     string
	opts     []Option
	operands []string
	seen     map[*Option]bool
}

// run walks argv. With use nil it only looks for help: every error but
// ErrHelp is ignored and an unknown option is taken for one without a value.
func (p *parser) run(argv []string, use func(Arg) error) error {
	check := use != nil
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--":
			p.operands = append(p.operands, argv[i+1:]...)
			return nil
		case strings.HasPrefix(a, "--"):
			name, value, hasValue := strings.Cut(a[2:], "=")
			spelled := "--" + name
			if name == "help" {
				return ErrHelp
			}
			o := p.long(name)
			switch {
			case o == nil:
				if check {
					return p.unknown(spelled)
				}
				continue
			case o.Refuse != "":
				if check {
					return refused(o, spelled)
				}
				continue
			case !o.Value && hasValue:
				if check {
					return usage("%s takes no value (got %q)", spelled, a)
				}
				continue
			case o.Value && !hasValue:
				if i+1 == len(argv) {
					if check {
						return usage("%s needs a value", spelled)
					}
					continue
				}
				i++
				value = argv[i]
			}
			if err := p.use(use, Arg{Option: o, Spelled: spelled, Value: value}); err != nil {
				return err
			}
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				spelled := "-" + string(a[j])
				if a[j] == 'h' {
					return ErrHelp
				}
				o := p.short(a[j])
				switch {
				case o == nil:
					if check {
						return p.unknown(shortName(a, j))
					}
					continue
				case o.Refuse != "":
					if check {
						return refused(o, spelled)
					}
					if o.Value {
						j = len(a) // the rest of the word would be its value
					}
					continue
				case !o.Value:
					if err := p.use(use, Arg{Option: o, Spelled: spelled}); err != nil {
						return err
					}
					continue
				}
				value := a[j+1:]
				switch {
				case value != "":
					// ripgrep reads -A=1 as -A 1.
					value = strings.TrimPrefix(value, "=")
				case i+1 == len(argv):
					if check {
						return usage("%s needs a value", spelled)
					}
					return nil
				default:
					i++
					value = argv[i]
				}
				if err := p.use(use, Arg{Option: o, Spelled: spelled, Value: value}); err != nil {
					return err
				}
				break
			}
		default:
			p.operands = append(p.operands, a)
		}
	}
	return nil
}

func (p *parser) use(use func(Arg) error, a Arg) error {
	if use == nil {
		return nil
	}
	if p.seen[a.Option] && !a.Repeat {
		return usage("%s is given twice", a.Spelled)
	}
	if p.seen == nil {
		p.seen = map[*Option]bool{}
	}
	p.seen[a.Option] = true
	return use(a)
}

func (p *parser) long(name string) *Option {
	for i := range p.opts {
		for _, l := range p.opts[i].Long {
			if l == name {
				return &p.opts[i]
			}
		}
	}
	return nil
}

func (p *parser) short(c byte) *Option {
	for i := range p.opts {
		if p.opts[i].Short == c {
			return &p.opts[i]
		}
	}
	return nil
}

func (p *parser) unknown(spelled string) error {
	if len(p.opts) == 0 {
		return usage("unknown option %s: this command takes no options (see 'rowkit help %s')", errs.Name(spelled), p.name)
	}
	return usage("unknown option %s (see 'rowkit help %s')", errs.Name(spelled), p.name)
}

// shortName names the short option at a[j], showing the argument it came
// in when it was part of a cluster.
func shortName(a string, j int) string {
	if len(a) == 2 {
		return a
	}
	return fmt.Sprintf("-%c (in %s)", a[j], a)
}

func refused(o *Option, spelled string) error {
	name := spelled
	if full := o.Name(); full != spelled {
		name += " (" + full + ")"
	}
	return usage("%s is rejected: %s", name, o.Refuse)
}

func usage(format string, args ...any) error { return errs.Usagef(format, args...) }
