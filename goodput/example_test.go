package goodput_test

import (
	"fmt"

	"github.com/meshplan/meshplan/goodput"
)

// Llama 3 405B's interruption rate on a 16,384-chip job: an interruption
// every 2.8 hours (86400·54/466 s), a 2.8 s checkpoint write, and a checkpoint every 39 steps of
// 6 s.
func ExamplePlan() {
	rate := goodput.InterruptionsPerChipDay("nvidia-hopper")
	storage := goodput.StorageBytesPerSPerChip()
	restart := goodput.RestartSeconds()
	e, err := goodput.Plan(goodput.Job{
		Chips: 16384, StepSeconds: 6, InterruptionsPerChipDay: rate.Value,
		CheckpointBytesPerChip: 346e6, StorageBytesPerSPerChip: storage.Value, RestartSeconds: restart.Value,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("M %.0f s, write %.2f s, every %d steps, goodput %.3f\n",
		e.MeanSecondsBetweenInterruptions, e.WriteSeconds, e.IntervalSteps, e.Goodput)
	// Output: M 10012 s, write 2.83 s, every 39 steps, goodput 0.917
}

// The energy of a day on 16,384 H100 busy 80% of each step, at the
// default PUE.
func ExampleRunEnergy() {
	p, _ := goodput.ChipPower("h100")
	e, err := goodput.RunEnergy(p, 0.8, goodput.PUE().Value, 16384, 86400)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.0f W per chip, %.0f W with host and PUE, %.1f MWh\n", e.ChipWatts, e.WattsPerChip, e.MWh)
	// Output: 602 W per chip, 1295 W with host and PUE, 509.1 MWh
}

// The Young/Daly interval for a 10 s checkpoint and an interruption every
// hour: sqrt(2 · 10 · 3600) − 10.
func ExampleYoungDaly() {
	fmt.Printf("%.1f s\n", goodput.YoungDaly(10, 3600))
	// Output: 258.3 s
}
