package results_test

import (
	"fmt"

	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/results"
)

// A plan's row with its goodput: 16 H100 interrupted 0.54 times per
// chip-day (every 10,000 s), 8 GB per chip written at 1 GB/s, 10-minute
// restarts; 10 failure-free days become 11.1.
func ExamplePlan_ApplyBudget() {
	c, err := profiles.Parse("h100-16")
	if err != nil {
		fmt.Println(err)
		return
	}
	p := results.Plan{
		Cluster: results.PlanCluster{Name: c.Name, Chip: c.Chip.Name, Chips: c.Chips()},
		Pareto: []results.Result{{StepTimeS: 2, TokensPerS: 1e6, Strategy: results.Strategy{DP: 2, Zero: 1, TP: 8, CP: 1, PP: 1},
			Memory: results.Memory{ParamsGB: 4, OptimizerGB: 6}, Time: results.Time{ComputeS: 1.5}}},
	}
	p.SetTraining(results.Training{Tokens: 8.64e11, Budget: &results.Budget{InterruptionsPerChipDay: 0.54, CheckpointGBPerSPerChip: 1, RestartMinutes: 10}})
	if err := p.ApplyBudget(c); err != nil {
		fmt.Println(err)
		return
	}
	r := p.Pareto[0]
	fmt.Printf("%s failure-free, goodput %s, %s effective, checkpoint every %d steps, %s\n",
		results.Days(*r.Days), results.Percent(r.Goodput.Fraction), results.Days(r.Goodput.Days), r.Goodput.CheckpointIntervalSteps, results.MWh(r.Energy.MWh))
	// Output: 10.0 d failure-free, goodput 90.1%, 11.1 d effective, checkpoint every 196 steps, 5.40 MWh
}
