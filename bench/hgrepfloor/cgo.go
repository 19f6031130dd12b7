//go:build cgo

package main

// #include <stdlib.h>
import "C"

// cgoLinked makes the binary a cgo one, as rowkit is.
var cgoLinked = C.size_t(0)
