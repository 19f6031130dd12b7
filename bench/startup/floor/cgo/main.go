// Command cgo is empty linked with runtime/cgo: dynamically linked against
// the C library, with threads started through it, as rowkit is because of
// tree-sitter. Against empty, it measures what cgo alone costs a process.
package main

import _ "runtime/cgo"

func main() {}
