package results

import (
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/search"
	"github.com/meshplan/meshplan/space"
)

// PlanOf builds the plan of a search of model m on cluster c with workload
// w: the first top rows of res's front (all of them when top <= 0), the
// search summary with the seed and the --fix string used, and the fastest
// row recommended (search.Result.Recommended).
func PlanOf(m model.Spec, c profiles.Cluster, w space.Workload, res *search.Result, top int, seed int64, fix string) Plan {
	front := res.Top(top)
	evals := make([]Evaluation, len(front))
	for i, cand := range front {
		evals[i] = Evaluation{
			Model: m, Cluster: c, Workload: w,
			Strategy: cand.Strategy, Time: cand.Time, Memory: cand.Memory, UsableBytes: cand.UsableBytes,
		}
	}
	summary := SearchSummary{
		Method:      res.Method,
		Evaluated:   res.Evaluated,
		Feasible:    res.Feasible,
		ElapsedS:    res.Elapsed.Seconds(),
		SpaceSize:   res.SpaceSize,
		Seed:        seed,
		Fix:         fix,
		Visited:     res.Visited,
		Valid:       res.Valid,
		Generations: res.Generations,
		FrontSize:   len(res.Front),
	}
	return NewPlan(m, c, w, summary, evals, 0)
}
