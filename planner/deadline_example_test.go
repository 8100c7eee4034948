package planner_test

import (
	"fmt"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/planner"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/results"
)

// Llama 3 405B on 15T tokens needs at least this many days on each size,
// even at the H100's fp8 peak with no interruption: 8,192 chips cannot
// meet a 30-day deadline, 16,384 can try.
func ExampleLowerBoundDays() {
	m, err := model.Preset("llama3-405b")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range []string{"h100-8192", "h100-16384"} {
		c, err := profiles.Parse(name)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(name, results.Days(planner.LowerBoundDays(m, c, 15e12)))
	}
	// Output:
	// h100-8192 26.1 d
	// h100-16384 13.0 d
}
