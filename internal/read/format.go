package read

import (
	"fmt"
	"strconv"
)

// Formats of a result's content.
const (
	FormatRows     = "rows"     // verified rows LINE:HASH TEXT, then notes (the default; MCP text content)
	FormatNumbered = "numbered" // N|TEXT, then notes
	FormatPlain    = "plain"    // TEXT, then notes
	FormatJSON     = "json"     // the whole Result (MCP structuredContent)
)

// Formats lists the formats in the order help shows them.
var Formats = []string{FormatRows, FormatNumbered, FormatPlain, FormatJSON}

// Format renders res in format (one of Formats; anything else is rows).
//
// The text formats print the view's lines, then, after a blank line, each
// note as "[read:CODE] MESSAGE". In rows, a line of a file read as is
// prints as its verified row; converted text and directory listings have
// no verified rows (their lines are not lines of a file) and print N|TEXT.
// A clamped line prints its shown prefix; its hash covers the whole line
// and the line-clamped note names it. Media parts print as one line
// "[media TYPE, N bytes: NAME]" after the notes.
func Format(res *Result, format string) []byte {
	if format == FormatJSON {
		return JSON(res)
	}
	var b []byte
	if res.View != nil {
		n := 0
		for _, l := range res.View.Lines {
			n += len(l.Text) + len(l.Hash) + 13 // number, separators, LF
		}
		b = make([]byte, 0, n+256) // and room for a few notes
		for _, l := range res.View.Lines {
			switch {
			case format == FormatPlain:
			case format == FormatRows && l.Hash != "":
				b = strconv.AppendInt(b, int64(l.Number), 10)
				b = append(append(append(b, ':'), l.Hash...), ' ')
			default:
				b = append(strconv.AppendInt(b, int64(l.Number), 10), '|')
			}
			b = append(append(b, l.Text...), '\n')
		}
	}
	if len(b) > 0 && len(res.Notes) > 0 {
		b = append(b, '\n')
	}
	for _, n := range res.Notes {
		b = fmt.Appendf(b, "[read:%s] %s\n", n.Code, oneLine(n.Message))
	}
	for _, p := range res.Parts {
		b = fmt.Appendf(b, "[media %s, %d bytes", p.MediaType, b64Len(p.Data))
		if p.Name != "" {
			b = fmt.Appendf(b, ": %s", oneLine(p.Name))
		}
		b = append(b, "]\n"...)
	}
	return b
}

// JSON is res as JSON with its fields in struct order, without HTML
// escaping, ending in a newline: the bytes of --format json and of the MCP
// tool's structuredContent.
func JSON(res *Result) []byte {
	// MarshalJSON writes it compact and unescaped already: what an
	// encoder would make of it, without its second pass over the bytes
	// (TestJSONIsTheEncoders).
	b, err := res.MarshalJSON()
	if err != nil {
		panic("read: a Result does not encode: " + err.Error()) // plain data: cannot happen
	}
	return append(b, '\n')
}

// Brief renders res as MCP read_file shows it to a model, which knows what
// it asked for: the rows as FormatRows prints them, then only what the
// model cannot know. A view that is not the whole file ends with the
// file's length, "(N lines)"; the continue note stays only when the view
// was cut short of what the model asked for (the byte or token limit, the
// default line limit, a limit clamped to the ceiling), and then names the
// cut, the length and the offset that reads on. Every other note stays as
// Format prints it. The structured result keeps every note.
func Brief(res *Result, limitGiven bool) []byte {
	c := *res
	c.Notes = make([]Note, 0, len(res.Notes))
	clamped := false
	for _, n := range res.Notes {
		clamped = clamped || n.Code == "clamped"
	}
	length := ""
	if v, tot := res.View, res.Totals; v != nil && tot != nil && v.Partial && len(v.Lines) > 0 {
		unit := "lines"
		if res.Classification != nil && res.Classification.Kind == "directory" {
			unit = "entries"
		}
		if tot.Lines != nil && tot.Exact {
			length = fmt.Sprintf("%d %s", *tot.Lines, unit)
		} else {
			length = fmt.Sprintf("more than %d %s", v.EndLine, unit)
		}
	}
	for _, n := range res.Notes {
		if n.Code == "continue" && n.Retry != nil && res.View != nil {
			reason := ""
			if n.Data != nil {
				reason = n.Data.Reason
			}
			if reason == "lines" && limitGiven && !clamped {
				continue // the view is what the model asked for
			}
			n.Message = fmt.Sprintf("cut at line %d of %s by the %s; to continue, read offset %d",
				res.View.EndLine, length, cutBy(reason, res.Request), n.Retry.Offset)
			length = ""
		}
		c.Notes = append(c.Notes, n)
	}
	b := Format(&c, FormatRows)
	if length != "" {
		if len(c.Notes) == 0 {
			b = append(b, '\n')
		}
		b = fmt.Appendf(b, "(%s)\n", length)
	}
	return b
}

// cutBy names the limit a truncation reason stands for.
func cutBy(reason string, req *Request) string {
	switch reason {
	case "lines":
		if req != nil {
			return fmt.Sprintf("%d-line limit", req.Limit)
		}
		return "line limit"
	case "budget":
		return "token limit"
	case "bytes":
		return "byte limit"
	}
	return reason + " limit"
}
