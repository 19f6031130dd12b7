package inspect

import (
	"strconv"
	"strings"
)

// OutlineText is the text an inspect_file call shows the model: a header
// line, then one line per entry, "ROW[..ROW] kind name". The model reads
// the text, not the structured envelope, so this is what an outline costs
// in tokens; bench/mcp.sh measures it against the file's verified rows.
// Abbreviations keep it small where entries are dense: a run of
// consecutive imports, or of one-line variables or constants, is one line
// spanning the run with the names joined by ", "; a run of one-line JSON
// members of the same parent is one line naming the parent and its keys
// (or their count, when the keys are long); and a method inside the span
// of the class it belongs to is named without the class, which the line
// above already gives. The structured content keeps every entry.
func OutlineText(res *Result) string {
	d := res.Data
	var b strings.Builder
	b.WriteString(d.Path)
	b.WriteString(": ")
	b.WriteString(d.Kind)
	if d.Language != nil && *d.Language != d.Kind {
		b.WriteByte(' ')
		b.WriteString(*d.Language)
	}
	if d.LineCount != nil {
		b.WriteString(", ")
		b.WriteString(strconv.Itoa(*d.LineCount))
		b.WriteString(" lines")
	} else {
		b.WriteString(", ")
		b.WriteString(strconv.FormatInt(d.SizeBytes, 10))
		b.WriteString(" bytes, no outline")
	}
	if !d.ParseComplete {
		b.WriteString(", parse incomplete")
	}
	if res.Truncation != nil {
		b.WriteString(", outline truncated after ")
		b.WriteString(strconv.Itoa(res.Truncation.AfterEntries))
		b.WriteString(" entries")
	}
	b.WriteByte('\n')
	var classes []*Entry // enclosing class entries, innermost last
	for i := 0; i < len(d.Outline); i++ {
		e := &d.Outline[i]
		if j := leafChildren(d.Outline, i); j > i {
			// A JSON container whose children are all one-line leaves is
			// one line: its span, and its keys.
			keys := runName(d.Outline[i+1 : j+1])
			appendLine(&b, e.Line, e.LineEnd, e.Kind, deref(e.Pointer)+keys[len(jsonParent(&d.Outline[i+1])):])
			i = j
			continue
		}
		if j := runEnd(d.Outline, i); j > i {
			appendLine(&b, e.Line, d.Outline[j].LineEnd, e.Kind, runName(d.Outline[i:j+1]))
			i = j
			continue
		}
		for len(classes) > 0 && classes[len(classes)-1].Span.End.Line < e.Span.Start.Line {
			classes = classes[:len(classes)-1]
		}
		inClass := e.Kind == KindMethod && e.Receiver != nil && len(classes) > 0 &&
			deref(classes[len(classes)-1].Name) == *e.Receiver
		appendEntry(&b, e, inClass)
		if e.Kind == KindClass {
			classes = append(classes, e)
		}
	}
	return b.String()
}

func appendLine(b *strings.Builder, first, last, kind, name string) {
	b.WriteString(first)
	if last != first {
		b.WriteString("..")
		b.WriteString(last)
	}
	b.WriteByte(' ')
	b.WriteString(kind)
	if name != "" {
		b.WriteByte(' ')
		b.WriteString(oneLine(name))
	}
	b.WriteByte('\n')
}

func appendEntry(b *strings.Builder, e *Entry, inClass bool) {
	name := ""
	switch {
	case inClass:
		name = deref(e.Name)
	case e.Pointer != nil:
		name = *e.Pointer
		if name == "" {
			name = "(root)"
		}
		if e.ValueType != "" {
			name += " " + e.ValueType
		}
	case e.Kind == KindHeading:
		name = strings.Repeat("#", e.Level) + " " + deref(e.Name)
	case e.Receiver != nil && *e.Receiver != "":
		recv := *e.Receiver
		if strings.HasPrefix(recv, "*") {
			recv = "(" + recv + ")"
		}
		name = recv + "." + deref(e.Name)
	default:
		name = deref(e.Name)
	}
	appendLine(b, e.Line, e.LineEnd, e.Kind, name)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// oneLine keeps a name on its line: a JSON key or heading can hold a line
// break or another control character.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// maxRunKeys bounds the keys a grouped JSON line lists; past it the line
// gives their count.
const maxRunKeys = 80

// runEnd returns the last index of the run of groupable entries starting at
// i (i itself when there is no run).
func runEnd(es []Entry, i int) int {
	first := &es[i]
	single := first.Line == first.LineEnd
	j := i
	switch first.Kind {
	case KindImport:
		for j+1 < len(es) && es[j+1].Kind == KindImport {
			j++
		}
	case KindVariable, KindConstant:
		for single && j+1 < len(es) && es[j+1].Kind == first.Kind && es[j+1].Line == es[j+1].LineEnd {
			j++
		}
	case KindJSON:
		// The root ("") is nobody's sibling.
		parent := jsonParent(first)
		for single && deref(first.Pointer) != "" && j+1 < len(es) && es[j+1].Kind == KindJSON && es[j+1].Line == es[j+1].LineEnd &&
			deref(es[j+1].Pointer) != "" && jsonParent(&es[j+1]) == parent {
			j++
		}
	}
	return j
}

func jsonParent(e *Entry) string {
	p := deref(e.Pointer)
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return p
}

// runName names a run: the joined names, or for JSON members the parent
// and its keys.
func runName(run []Entry) string {
	if run[0].Kind != KindJSON {
		names := make([]string, len(run))
		for k := range run {
			names[k] = deref(run[k].Name)
		}
		return strings.Join(names, ", ")
	}
	parent := jsonParent(&run[0])
	var keys strings.Builder
	for k := range run {
		if k > 0 {
			keys.WriteByte(',')
		}
		keys.WriteString(deref(run[k].Pointer)[len(parent)+1:])
	}
	if keys.Len() > maxRunKeys {
		return parent + "/* " + strconv.Itoa(len(run)) + " members"
	}
	return parent + "/{" + keys.String() + "}"
}

// leafChildren returns the index of the last child of the JSON container
// at i when every child is a one-line entry with no children of its own
// (i itself otherwise).
func leafChildren(es []Entry, i int) int {
	e := &es[i]
	if e.Kind != KindJSON || e.Pointer == nil || i+1 >= len(es) || es[i+1].Pointer == nil ||
		jsonParent(&es[i+1]) != *e.Pointer || deref(es[i+1].Pointer) == "" {
		return i
	}
	j := runEnd(es, i+1)
	if es[i+1].Line != es[i+1].LineEnd {
		return i
	}
	if j+1 < len(es) && es[j+1].Pointer != nil && strings.HasPrefix(*es[j+1].Pointer, *e.Pointer+"/") {
		return i // more children follow, or a child has children
	}
	return j
}
