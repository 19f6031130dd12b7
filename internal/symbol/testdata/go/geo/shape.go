// Package geo has shapes: an interface, its implementations, a generic
// helper and their callers.
package geo

import (
	"fmt"
	"strings"
)

// Shape is anything with an area and a name.
type Shape interface {
	Area() float64
	Name() string
}

// Square is a square.
type Square struct{ Side float64 }

// Area returns the area of the square.
func (s Square) Area() float64 { return s.Side * s.Side }

// Name names it.
func (s Square) Name() string { return "square" }

// Circle is a circle.
type Circle struct{ R float64 }

// Area returns the area of the circle.
func (c *Circle) Area() float64 { return 3.14159 * c.R * c.R }

// Name names it.
func (c *Circle) Name() string { return strings.ToLower("Circle") }

// Sum adds the areas of shapes of one kind.
func Sum[T Shape](shapes []T) float64 {
	total := 0.0
	for _, s := range shapes {
		total += s.Area()
	}
	return total
}

// Describe prints each shape's name and area.
func Describe(shapes ...Shape) string {
	var b strings.Builder
	for _, s := range shapes {
		fmt.Fprintf(&b, "%s %.2f\n", s.Name(), s.Area())
	}
	return b.String()
}
