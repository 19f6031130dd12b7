// Command hreadcgo is floor/hread linked with runtime/cgo, as rowkit is
// (tree-sitter): against floor/hread, what cgo costs hread.
package main

import (
	_ "runtime/cgo"

	"github.com/rowkit/rowkit/bench/startup/floor/hreadrun"
)

func main() { hreadrun.Main() }
