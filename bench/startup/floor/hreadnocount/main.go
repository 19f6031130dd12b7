// Command hreadnocount is floor/hread with a token limit so high that
// nothing is ever counted (rows within the limit in bytes are admitted
// uncounted): hread's engine doing minrows's work. Against floor/hread,
// what counting tokens costs; against minrows, what the engine costs
// besides.
package main

import (
	"math"

	"github.com/rowkit/rowkit/bench/startup/floor/hreadrun"
	"github.com/rowkit/rowkit/internal/rows"
)

func main() { hreadrun.MainBudget(rows.Budget{Limit: math.MaxInt32, Ceiling: math.MaxInt32}) }
