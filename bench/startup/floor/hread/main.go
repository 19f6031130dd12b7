// Command hread is hread's engine in a binary of its own, without cgo and
// without the other commands' packages: what `hread FILE` would cost if it
// were all the binary held.
package main

import "github.com/rowkit/rowkit/bench/startup/floor/hreadrun"

func main() { hreadrun.Main() }
