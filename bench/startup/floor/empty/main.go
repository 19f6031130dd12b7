// Command empty is the start-up of a Go program that does nothing: the
// floor under bench/startup.sh's figures for a static, cgo-free binary.
package main

func main() {}
