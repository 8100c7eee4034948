package search_test

import (
	"context"
	"fmt"

	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/memory"
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/search"
	"github.com/meshplan/meshplan/space"
)

// grid is a toy strategy space: gene 0 picks the tensor-parallel degree
// (1, 2, 4 or 8), gene 1 the pipeline depth (1, 2 or 4), gene 2 the
// micro-batch size (1 to 4); the data-parallel degree takes the other chips.
type grid struct{}

func (grid) Cardinalities() []int { return []int{4, 3, 4} }

func (grid) Decode(genes []int, s *space.Strategy) bool {
	*s = space.Strategy{TP: 1 << genes[0], PP: 1 << genes[1], MB: genes[2] + 1,
		FSDP: 1, CP: 1, EP: 1, V: 1, Schedule: space.OneFOneB, Recompute: space.RecomputeNone}
	s.DP = 16 / (s.TP * s.PP)
	return s.DP >= 1
}

// Example_evolve searches a toy problem with the evolutionary method and a
// fixed seed, and prints the Pareto front.
func Example_evolve() {
	p := &search.Problem{
		Model:       model.Spec{Name: "toy"},
		Cluster:     profiles.Cluster{Name: "toy-16", Chip: profiles.Chip{PeakBF16FLOPs: 1e15}, Axes: []profiles.Axis{{Name: "x", Size: 16}}},
		Workload:    space.Workload{Batch: 64, SeqLen: 2048},
		Space:       grid{},
		UsableBytes: 40e9,
		// Memory: weights shard over TP and PP, activations grow with MB.
		Memory: func(s *space.Strategy) memory.Breakdown {
			return memory.Breakdown{
				ParamsBytes:      80e9 / float64(s.TP*s.PP),
				ActivationsBytes: 4e9 * float64(s.MB) / float64(s.TP),
			}
		},
		// Time: TP and PP cost communication and bubbles, larger MB helps.
		Time: func(s *space.Strategy) (cost.Estimate, error) {
			compute := 1.0 / (1 + 0.1*float64(s.MB))
			comm := 0.05 * float64(s.TP-1)
			bubble := 0.1 * float64(s.PP-1)
			return cost.Estimate{StepSeconds: compute + comm + bubble, ModelFLOPs: 5e15}, nil
		},
	}
	r, err := search.Evolve{Seed: 1, Populations: 2, PopulationSize: 12, Generations: 10}.Search(context.Background(), p)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range r.Front {
		fmt.Printf("tp=%d pp=%d mb=%d: %.3f s, %.1f GB, MFU %.2f\n",
			c.Strategy.TP, c.Strategy.PP, c.Strategy.MB, c.StepSeconds, c.MemoryBytes/1e9, c.MFU)
	}
	fmt.Printf("%d of %d gene vectors evaluated, %d fit\n", r.Evaluated, r.SpaceSize, r.Feasible)
	best, _ := r.Recommended()
	fmt.Printf("recommended: tp=%d pp=%d mb=%d\n", best.Strategy.TP, best.Strategy.PP, best.Strategy.MB)
	// Output:
	// tp=4 pp=1 mb=4: 0.864 s, 24.0 GB, MFU 0.36
	// tp=4 pp=1 mb=3: 0.919 s, 23.0 GB, MFU 0.34
	// tp=4 pp=2 mb=4: 0.964 s, 14.0 GB, MFU 0.32
	// tp=4 pp=2 mb=3: 1.019 s, 13.0 GB, MFU 0.31
	// tp=8 pp=1 mb=4: 1.064 s, 12.0 GB, MFU 0.29
	// tp=8 pp=1 mb=3: 1.119 s, 11.5 GB, MFU 0.28
	// tp=4 pp=2 mb=1: 1.159 s, 11.0 GB, MFU 0.27
	// tp=8 pp=2 mb=4: 1.164 s, 7.0 GB, MFU 0.27
	// tp=8 pp=2 mb=3: 1.219 s, 6.5 GB, MFU 0.26
	// tp=8 pp=2 mb=2: 1.283 s, 6.0 GB, MFU 0.24
	// tp=8 pp=2 mb=1: 1.359 s, 5.5 GB, MFU 0.23
	// 44 of 48 gene vectors evaluated, 32 fit
	// recommended: tp=4 pp=1 mb=4
}
