package results

import "github.com/meshplan/meshplan/search"

// PlanOf builds the plan of a search of problem p: the first top rows of
// res's front (all of them when top <= 0, and at least up to the
// recommended row), the search summary with the seed and the --fix string
// used, and the row objective recommends (empty: balanced; see
// [Recommendation]) with the rule and band.
func PlanOf(p *search.Problem, res *search.Result, top int, seed int64, fix, objective string) (Plan, error) {
	m, c, w := p.Model(), p.Cluster(), p.Workload()
	rec, why, err := recommend(res.Front, objective, c)
	if err != nil {
		return Plan{}, err
	}
	if top > 0 && rec.Index >= top {
		top = rec.Index + 1
	}
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
		Failed:      res.Failed,
		ElapsedS:    res.Elapsed.Seconds(),
		SpaceSize:   res.SpaceSize,
		Seed:        seed,
		Fix:         fix,
		Visited:     res.Visited,
		Valid:       res.Valid,
		Generations: res.Generations,
		FrontSize:   len(res.Front),
	}
	plan := NewPlan(m, c, w, summary, evals, rec.Index)
	if rec.Index >= 0 {
		plan.Recommendation = &why
	}
	return plan, nil
}
