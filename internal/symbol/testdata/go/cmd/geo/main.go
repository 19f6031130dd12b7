package main

import (
	"fmt"

	"example.com/fixture/geo"
)

func main() {
	fmt.Println(geo.Total(), geo.Report())
	var s geo.Shape = geo.Square{Side: 1}
	fmt.Println(s.Area())
}
