package lsp

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
)

// The protocol types rowkit sends and reads: only the fields it uses, in
// the LSP 3.17 spelling. Fields a server adds are ignored when decoding.

// Position is a zero-based line and a character offset in UTF-16 code
// units (the one encoding every server speaks; see Client.Initialize).
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is [Start, End) in a document.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Location is a range in a document named by URI.
type Location struct {
	URI   string `json:"uri"`
	Range Range  `json:"range"`
}

// locationOrLink decodes a Location or a LocationLink (whose target range
// is the place: linkSupport is off, but a server may answer with links
// anyway).
type locationOrLink struct {
	URI                  string `json:"uri"`
	Range                *Range `json:"range"`
	TargetURI            string `json:"targetUri"`
	TargetSelectionRange *Range `json:"targetSelectionRange"`
	TargetRange          *Range `json:"targetRange"`
}

// DecodeLocations reads the answer of a definition-like request: null, a
// Location, a Location array, or a LocationLink array.
func DecodeLocations(raw json.RawMessage) ([]Location, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return nil, nil
	}
	var list []locationOrLink
	if strings.HasPrefix(s, "{") {
		var one locationOrLink
		if err := json.Unmarshal(raw, &one); err != nil {
			return nil, err
		}
		list = []locationOrLink{one}
	} else if err := json.Unmarshal(raw, &list); err != nil {
		return nil, err
	}
	out := make([]Location, 0, len(list))
	for _, l := range list {
		switch {
		case l.URI != "" && l.Range != nil:
			out = append(out, Location{URI: l.URI, Range: *l.Range})
		case l.TargetURI != "" && l.TargetSelectionRange != nil:
			out = append(out, Location{URI: l.TargetURI, Range: *l.TargetSelectionRange})
		case l.TargetURI != "" && l.TargetRange != nil:
			out = append(out, Location{URI: l.TargetURI, Range: *l.TargetRange})
		}
	}
	return out, nil
}

// TextDocumentPositionParams names a position in a document.
type TextDocumentPositionParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
	Position     Position               `json:"position"`
}

// TextDocumentIdentifier names a document.
type TextDocumentIdentifier struct {
	URI string `json:"uri"`
}

// ReferenceParams are the parameters of textDocument/references.
type ReferenceParams struct {
	TextDocumentPositionParams
	Context struct {
		IncludeDeclaration bool `json:"includeDeclaration"`
	} `json:"context"`
}

// SymbolInformation is one answer of workspace/symbol (the older form;
// WorkspaceSymbol's location may lack a range, which DecodeSymbols
// drops).
type SymbolInformation struct {
	Name          string          `json:"name"`
	Kind          int             `json:"kind"`
	ContainerName string          `json:"containerName,omitempty"`
	Location      json.RawMessage `json:"location"`
}

// Symbol is a workspace symbol with a place.
type Symbol struct {
	Name          string
	Kind          int
	ContainerName string
	Location      Location
}

// DecodeSymbols reads the answer of workspace/symbol; a symbol whose
// location has no range (WorkspaceSymbol's lazy form) is dropped, since
// workspaceSymbol/resolve is not announced.
func DecodeSymbols(raw json.RawMessage) ([]Symbol, error) {
	var list []SymbolInformation
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, err
	}
	out := make([]Symbol, 0, len(list))
	for _, s := range list {
		var l locationOrLink
		if err := json.Unmarshal(s.Location, &l); err != nil || l.URI == "" || l.Range == nil {
			continue
		}
		out = append(out, Symbol{Name: s.Name, Kind: s.Kind, ContainerName: s.ContainerName, Location: Location{URI: l.URI, Range: *l.Range}})
	}
	return out, nil
}

// SymbolKindName is the LSP SymbolKind as a word.
func SymbolKindName(k int) string {
	names := [...]string{"", "file", "module", "namespace", "package", "class", "method", "property", "field",
		"constructor", "enum", "interface", "function", "variable", "constant", "string", "number", "boolean",
		"array", "object", "key", "null", "enum_member", "struct", "event", "operator", "type_parameter"}
	if k > 0 && k < len(names) {
		return names[k]
	}
	return "symbol"
}

// CallHierarchyItem is one item of the call hierarchy; Data is kept as the
// server sent it, to be handed back.
type CallHierarchyItem struct {
	Name           string          `json:"name"`
	Kind           int             `json:"kind"`
	Detail         string          `json:"detail,omitempty"`
	URI            string          `json:"uri"`
	Range          Range           `json:"range"`
	SelectionRange Range           `json:"selectionRange"`
	Tags           json.RawMessage `json:"tags,omitempty"`
	Data           json.RawMessage `json:"data,omitempty"`
}

// CallHierarchyIncomingCall is a caller and where in it the calls are.
type CallHierarchyIncomingCall struct {
	From       CallHierarchyItem `json:"from"`
	FromRanges []Range           `json:"fromRanges"`
}

// CallHierarchyOutgoingCall is a callee and where the calls to it are (in
// the item asked about).
type CallHierarchyOutgoingCall struct {
	To         CallHierarchyItem `json:"to"`
	FromRanges []Range           `json:"fromRanges"`
}

// Hover is the answer of textDocument/hover.
type Hover struct {
	Contents json.RawMessage `json:"contents"`
	Range    *Range          `json:"range,omitempty"`
}

// HoverText flattens a hover's contents (MarkupContent, a MarkedString,
// or an array of them) to text.
func HoverText(raw json.RawMessage) string {
	var markup struct {
		Kind  string `json:"kind"`
		Value string `json:"value"`
	}
	var str string
	var list []json.RawMessage
	switch {
	case json.Unmarshal(raw, &str) == nil:
		return str
	case json.Unmarshal(raw, &list) == nil:
		parts := make([]string, 0, len(list))
		for _, p := range list {
			if t := HoverText(p); t != "" {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "\n\n")
	case json.Unmarshal(raw, &markup) == nil:
		if markup.Kind == "" && markup.Value != "" {
			// A MarkedString {language, value}.
			var ms struct {
				Language string `json:"language"`
				Value    string `json:"value"`
			}
			json.Unmarshal(raw, &ms)
			return "```" + ms.Language + "\n" + ms.Value + "\n```"
		}
		return markup.Value
	}
	return ""
}

// URI is the file URI of an absolute path.
func URI(path string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path)}
	return u.String()
}

// Path is the absolute path of a file URI, or "" when uri is not one.
func Path(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return ""
	}
	return filepath.FromSlash(u.Path)
}
