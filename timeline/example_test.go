package timeline_test

import (
	"fmt"

	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/space"
	"github.com/meshplan/meshplan/timeline"
)

// Two pipeline ranks under 1F1B, two micro-batches of a 1 s forward and a
// 2 s backward: the bubble is one micro-batch's passes, (pp-1)·3 s.
func ExampleBuild() {
	est := cost.Estimate{ComputeSeconds: 6, BubbleSeconds: 3, StepSeconds: 9,
		Passes: &cost.Passes{Microbatches: 2, Chunks: 1, ForwardSeconds: 1, BackwardSeconds: 2}}
	s := space.Defaults()
	s.Degree[space.PP] = 2
	t, err := timeline.Build(est, s, space.Workload{Batch: 2, SeqLen: 4096})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range t.Events {
		fmt.Printf("rank %d %-7s %-18s %.1f-%.1f s\n", e.Rank, e.Stream, e.Name, e.StartSeconds, e.StartSeconds+e.DurSeconds)
	}
	tot := t.TotalsOf(1)
	fmt.Printf("rank 1: compute %g s, bubble %g s, step %g s\n", tot.ComputeSeconds, tot.BubbleSeconds, tot.StepSeconds)
	// Output:
	// rank 0 compute F 0                0.0-1.0 s
	// rank 0 compute F 1                1.0-2.0 s
	// rank 0 compute bubble             2.0-5.0 s
	// rank 0 compute B 0                5.0-7.0 s
	// rank 0 compute B 1                7.0-9.0 s
	// rank 1 compute bubble (ramp-up)   0.0-1.0 s
	// rank 1 compute F 0                1.0-2.0 s
	// rank 1 compute B 0                2.0-4.0 s
	// rank 1 compute F 1                4.0-5.0 s
	// rank 1 compute B 1                5.0-7.0 s
	// rank 1 compute bubble (ramp-down) 7.0-9.0 s
	// rank 1: compute 6 s, bubble 3 s, step 9 s
}
