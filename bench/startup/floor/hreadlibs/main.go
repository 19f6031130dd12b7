// Command hreadlibs is floor/hreadcgo linked with the third-party and
// standard packages that rowkit's other commands need and whose package
// initialisers run in every rowkit process: against floor/hreadcgo, what
// they cost hread; against rowkit's hread, what rowkit's own packages
// still cost.
package main

import (
	_ "encoding/gob"
	_ "go/format"
	_ "net/http"
	_ "runtime/cgo"

	_ "github.com/google/jsonschema-go/jsonschema"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/tree-sitter/go-tree-sitter"
	_ "github.com/tree-sitter/tree-sitter-javascript/bindings/go"
	_ "github.com/tree-sitter/tree-sitter-python/bindings/go"
	_ "github.com/tree-sitter/tree-sitter-typescript/bindings/go"
	_ "github.com/yuin/goldmark/parser"
	_ "go.yaml.in/yaml/v3"

	"github.com/rowkit/rowkit/bench/startup/floor/hreadrun"
)

func main() { hreadrun.Main() }
