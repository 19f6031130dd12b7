package mcpserver

import (
	"context"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/inspect"
)

// InspectFileInput is the arguments of inspect_file.
type InspectFileInput struct {
	Path string `json:"path" jsonschema:"the file to outline: a path relative to the first workspace root, or an absolute path inside a root"`
}

func (s *Server) addInspectFile() {
	in := mustSchema[InspectFileInput]()
	in.Properties["path"].MinLength = iptr(1)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "inspect_file",
		Title: "Outline a file",
		Description: "Outlines a file's structure (Go, Python, TypeScript/TSX, JavaScript, Markdown, JSON): imports, types, functions, methods, headings, JSON members, each with its span as verified rows. " +
			"The text is one line per entry, ROW[..ROW] kind name, where ROW is LINE:HASH; read those rows with read_file. Other files report only their size. Bounded to 64 KiB; a truncated outline says after how many entries.",
		InputSchema:  in,
		OutputSchema: outputSchema[inspect.Result](),
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    true,
			IdempotentHint:  true,
			DestructiveHint: bptr(false),
			OpenWorldHint:   bptr(false),
		},
	}, s.inspectFile)
}

func (s *Server) inspectFile(ctx context.Context, req *mcp.CallToolRequest, in InspectFileInput) (*mcp.CallToolResult, *inspect.Result, error) {
	r, rel, err := locate(s.callRoots(ctx, req), in.Path)
	if err != nil {
		return nil, nil, withPath(in.Path, err)
	}
	res, err := inspect.Inspect(ctx, r.ws, rel)
	if err != nil {
		return nil, nil, withPath(in.Path, err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: OutlineText(res)}}}, res, nil
}

// OutlineText is the text an inspect_file call shows the model: a header
// line, then one line per entry, "ROW[..ROW] kind name". The model reads
// the text, not the structured envelope, so this is what an outline costs
// in tokens; bench/mcp.sh measures it against the file's verified rows.
func OutlineText(res *inspect.Result) string {
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
	for i := range d.Outline {
		appendEntry(&b, &d.Outline[i])
	}
	return b.String()
}

func appendEntry(b *strings.Builder, e *inspect.Entry) {
	b.WriteString(e.Line)
	if e.LineEnd != e.Line {
		b.WriteString("..")
		b.WriteString(e.LineEnd)
	}
	b.WriteByte(' ')
	b.WriteString(e.Kind)
	name := ""
	switch {
	case e.Pointer != nil:
		name = *e.Pointer
		if name == "" {
			name = "(root)"
		}
		if e.ValueType != "" {
			name += " " + e.ValueType
		}
	case e.Kind == inspect.KindHeading:
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
	if name != "" {
		b.WriteByte(' ')
		b.WriteString(oneLine(name))
	}
	b.WriteByte('\n')
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
