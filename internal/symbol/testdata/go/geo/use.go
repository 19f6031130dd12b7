package geo

// Total is the area of two squares and a circle; "😀 Sum" is not a call.
func Total() float64 {
	label := "😀 Sum"
	_ = label
	return Sum([]Square{{Side: 2}, {Side: 3}}) + Sum([]*Circle{{R: 1}})
}

// Report describes the shapes Total adds.
func Report() string {
	return Describe(Square{Side: 2}, &Circle{R: 1})
}
