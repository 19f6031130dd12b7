package lang

// The Go binding of tree-sitter routes every allocation of the C library
// through a callback into Go (cgo call-backs cost far more than malloc):
// two thirds of the time of outlining Python went there. Its callbacks only
// ever call the C allocator, so handing tree-sitter the C allocator
// directly changes nothing but the cost. This runs after the binding's own
// init, which installs the callbacks.

/*
#include <stddef.h>
void ts_set_allocator(void *(*)(size_t), void *(*)(size_t, size_t), void *(*)(void *, size_t), void (*)(void *));
static void rowkit_ts_c_allocator(void) { ts_set_allocator(NULL, NULL, NULL, NULL); }
*/
import "C"

func init() { C.rowkit_ts_c_allocator() }
