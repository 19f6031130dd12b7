package review

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Markdown renders the report for people: a summary table, one table per
// scope (detail full) or the union of paths (detail summary), validations
// with their output fenced, diagnostics grouped by severity, and what was
// left out. Every path is shown as a code span with anything that could
// break the table or the span escaped, so a hostile name stays one cell.
func (r *Report) Markdown() []byte {
	var b strings.Builder
	rp := &r.Repository
	b.WriteString("# Repository review\n\n")
	b.WriteString("| | |\n| --- | --- |\n")
	fmt.Fprintf(&b, "| repository | %s |\n", code(rp.Path))
	switch h := rp.Head; {
	case h.Unborn:
		fmt.Fprintf(&b, "| HEAD | %s, no commits yet |\n", code(h.Branch))
	case h.Detached:
		fmt.Fprintf(&b, "| HEAD | detached at %s |\n", code(short(h.Oid)))
	default:
		fmt.Fprintf(&b, "| HEAD | %s at %s |\n", code(h.Branch), code(short(h.Oid)))
	}
	if base := rp.Base; base != nil {
		mb := "no merge base"
		if base.MergeBase != "" {
			mb = "merge base " + code(short(base.MergeBase))
		}
		fmt.Fprintf(&b, "| base | %s at %s, %s |\n", code(base.Ref), code(short(base.Oid)), mb)
	} else {
		b.WriteString("| base | none |\n")
	}
	fmt.Fprintf(&b, "| verdict | %s |\n\n", r.verdict())

	c := &r.Changes
	b.WriteString("| scope | paths |\n| --- | ---: |\n")
	for _, s := range []struct {
		name string
		n    int
	}{{ScopeCommitted, c.Counts.Committed}, {ScopeStaged, c.Counts.Staged}, {ScopeUnstaged, c.Counts.Unstaged}, {ScopeUntracked, c.Counts.Untracked}} {
		if r.hasScope(s.name) {
			fmt.Fprintf(&b, "| %s | %d |\n", s.name, s.n)
		}
	}
	fmt.Fprintf(&b, "| **distinct paths** | **%d** |\n", c.Counts.Files)

	if r.Detail == DetailFull {
		type row struct{ status, path, lines string }
		entryRows := func(es []Entry) []row {
			rows := make([]row, len(es))
			for i, e := range es {
				rows[i] = row{statusCell(e.Status, e.Score), pathCell(e.Path, e.OrigPath, ""), lines(e)}
			}
			return rows
		}
		untracked := make([]row, len(c.Untracked))
		for i, u := range c.Untracked {
			untracked[i] = row{u.Status, pathCell(u.Path, "", u.Kind), ""}
		}
		for _, s := range []struct {
			name string
			list []row
			n    int
		}{{ScopeCommitted, entryRows(c.Committed), c.Counts.Committed}, {ScopeStaged, entryRows(c.Staged), c.Counts.Staged}, {ScopeUnstaged, entryRows(c.Unstaged), c.Counts.Unstaged}, {ScopeUntracked, untracked, c.Counts.Untracked}} {
			if !r.hasScope(s.name) || s.n == 0 {
				continue
			}
			fmt.Fprintf(&b, "\n## %s (%d)\n\n| status | path | lines |\n| --- | --- | ---: |\n", strings.ToUpper(s.name[:1])+s.name[1:], s.n)
			for _, e := range s.list {
				fmt.Fprintf(&b, "| %s | %s | %s |\n", e.status, e.path, e.lines)
			}
			more(&b, s.n-len(s.list))
		}
	} else if c.Counts.Files > 0 {
		fmt.Fprintf(&b, "\n## Changed paths (%d)\n\n| status | path | scopes |\n| --- | --- | --- |\n", c.Counts.Files)
		for _, f := range c.Files {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", f.Status, pathCell(f.Path, f.OrigPath, f.Kind), strings.Join(f.Scopes, ", "))
		}
		more(&b, c.Counts.Files-len(c.Files))
	}

	if len(r.Validations) > 0 {
		b.WriteString("\n## Validations\n\n| id | status | exit | time | command |\n| --- | --- | --- | ---: | --- |\n")
		for _, v := range r.Validations {
			fmt.Fprintf(&b, "| %s | %s | %s | %d ms | %s |\n", code(v.ID), v.Status, exitCell(v), v.DurationMs, code(argvText(v.Argv)))
		}
		for _, v := range r.Validations {
			if r.Detail == DetailSummary && v.Status == StatusPassed {
				continue
			}
			fmt.Fprintf(&b, "\n### %s: %s\n", code(v.ID), v.Status)
			if v.Reason != "" {
				fmt.Fprintf(&b, "\n%s\n", text(v.Reason))
			}
			for _, s := range []struct {
				name string
				st   Stream
			}{{"stdout", v.Stdout}, {"stderr", v.Stderr}} {
				if s.st.Text == "" {
					continue
				}
				fmt.Fprintf(&b, "\n%s (%d bytes", s.name, s.st.BytesTotal)
				if s.st.BytesDropped > 0 {
					fmt.Fprintf(&b, ", %d elided in the middle", s.st.BytesDropped)
				}
				b.WriteString("):\n\n")
				fence(&b, s.st.Text)
			}
		}
	}

	for _, sev := range []struct{ name, title string }{{"error", "Errors"}, {"warning", "Warnings"}} {
		first := true
		for _, d := range r.Diagnostics {
			if d.Severity != sev.name {
				continue
			}
			if first {
				fmt.Fprintf(&b, "\n## %s\n\n", sev.title)
				first = false
			}
			fmt.Fprintf(&b, "- **%s** %s", d.Code, text(d.Message))
			if d.Hint != "" {
				fmt.Fprintf(&b, " (%s)", text(d.Hint))
			}
			b.WriteString("\n")
		}
	}
	if r.Truncation.Applied {
		b.WriteString("\n## Left out\n\n")
		for _, t := range r.Truncation.Fields {
			if t.ItemsRemoved > 0 {
				fmt.Fprintf(&b, "- `%s`: %d entries not listed (%d bytes)\n", t.Field, t.ItemsRemoved, t.BytesRemoved)
			} else {
				fmt.Fprintf(&b, "- `%s`: %d bytes elided\n", t.Field, t.BytesRemoved)
			}
		}
	}
	return []byte(b.String())
}

func (r *Report) hasScope(s string) bool {
	for _, x := range r.Scopes {
		if x == s {
			return true
		}
	}
	return false
}

func (r *Report) verdict() string {
	if len(r.Validations) == 0 {
		return "no validations run"
	}
	failed := 0
	for _, v := range r.Validations {
		if v.Status != StatusPassed {
			failed++
		}
	}
	if failed == 0 {
		return fmt.Sprintf("all %d validations passed", len(r.Validations))
	}
	return fmt.Sprintf("**%d of %d validations did not pass**", failed, len(r.Validations))
}

func short(oid string) string {
	if len(oid) > 12 {
		return oid[:12]
	}
	return oid
}

func statusCell(status string, score int) string {
	if status == "renamed" || status == "copied" {
		return fmt.Sprintf("%s %d%%", status, score)
	}
	return status
}

func pathCell(p, orig Path, kind string) string {
	s := code(string(p))
	if orig != "" {
		s = code(string(orig)) + " → " + s
	}
	if kind == "directory" {
		s += " (repository, not inspected)"
	}
	return s
}

func lines(e Entry) string {
	if e.Added == nil || e.Removed == nil {
		return "binary"
	}
	return fmt.Sprintf("+%d −%d", *e.Added, *e.Removed)
}

func exitCell(v Validation) string {
	switch {
	case v.ExitCode != nil:
		return fmt.Sprint(*v.ExitCode)
	case v.Signal != "":
		return v.Signal
	}
	return ""
}

func more(b *strings.Builder, n int) {
	if n > 0 {
		fmt.Fprintf(b, "\n%d more not listed.\n", n)
	}
}

// code renders s as a code span that cannot end early or split a table
// cell: bytes that are not printable UTF-8, backslash, backtick and pipe
// are escaped the way Go escapes strings.
func code(s string) string {
	var b strings.Builder
	b.WriteByte('`')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r == '`':
			b.WriteString(`\x60`)
		case r == '|':
			b.WriteString(`\x7c`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case !unicode.IsPrint(r) && r != ' ':
			if r < 0x80 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	b.WriteByte('`')
	return b.String()
}

// text keeps a message on one line.
func text(s string) string {
	return strings.NewReplacer("\n", " ", "\r", " ").Replace(strings.ToValidUTF8(s, "\uFFFD"))
}

// fence writes s in a code fence longer than any backtick run inside it,
// so command output can never close the fence or start Markdown.
func fence(b *strings.Builder, s string) {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	b.WriteString(f + "text\n" + s)
	if !strings.HasSuffix(s, "\n") {
		b.WriteString("\n")
	}
	b.WriteString(f + "\n")
}

// argvText shows argv as one line a reader can tell the words apart in:
// a word with anything but plain characters is single-quoted.
func argvText(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		plain := a != ""
		for j := 0; j < len(a) && plain; j++ {
			c := a[j]
			plain = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_./:=@%+,-", c) >= 0
		}
		if plain {
			words[i] = a
		} else {
			words[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(words, " ")
}
