package search_test

import (
	"context"
	"fmt"

	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/memory"
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
	*s = space.Defaults()
	s.Degree[space.TP], s.Degree[space.PP], s.MB = 1<<genes[0], 1<<genes[1], genes[2]+1
	s.Degree[space.DP] = 16 / (s.Degree[space.TP] * s.Degree[space.PP])
	return s.Degree[space.DP] >= 1
}

// toy is the example's scorer.
type toy struct{}

// Memory: weights shard over TP and PP, activations grow with MB.
func (toy) Memory(s *space.Strategy) (memory.Breakdown, error) {
	tp, pp := float64(s.Degree[space.TP]), float64(s.Degree[space.PP])
	return memory.Breakdown{
		ParamsBytes:      80e9 / (tp * pp),
		ActivationsBytes: 4e9 * float64(s.MB) / tp,
	}, nil
}

// Time: TP and PP cost communication and bubbles, larger MB helps.
func (toy) Time(s *space.Strategy, _ bool) (cost.Estimate, error) {
	compute := 1.0 / (1 + 0.1*float64(s.MB))
	comm := 0.05 * float64(s.Degree[space.TP]-1)
	bubble := 0.1 * float64(s.Degree[space.PP]-1)
	return cost.Estimate{StepSeconds: compute + comm + bubble, ModelFLOPs: 5e15}, nil
}

// Example_evolve searches a toy problem with the evolutionary method and a
// fixed seed, and prints the Pareto front.
func Example_evolve() {
	p, err := search.NewCustomProblem(search.Custom{
		Name:        "toy",
		Cluster:     profiles.Cluster{Name: "toy-16", Chip: profiles.Chip{PeakBF16FLOPs: 1e15}, Axes: []profiles.Axis{{Name: "x", Size: 16}}},
		Workload:    space.Workload{Batch: 64, SeqLen: 2048},
		Space:       grid{},
		UsableBytes: 40e9,
		Scorer:      toy{},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := search.Evolve{Seed: 1, Populations: 2, PopulationSize: 12, Generations: 10}.Search(context.Background(), p)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range r.Front {
		fmt.Printf("tp=%d pp=%d mb=%d: %.3f s, %.1f GB, MFU %.2f\n",
			c.Strategy.Degree[space.TP], c.Strategy.Degree[space.PP], c.Strategy.MB, c.StepSeconds, c.MemoryBytes/1e9, c.MFU)
	}
	fmt.Printf("%d of %d gene vectors evaluated, %d fit\n", r.Evaluated, r.SpaceSize, r.Feasible)
	best, _ := r.Recommended()
	fmt.Printf("recommended: tp=%d pp=%d mb=%d\n", best.Strategy.Degree[space.TP], best.Strategy.Degree[space.PP], best.Strategy.MB)
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
