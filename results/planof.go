package results

import (
	"fmt"
	"math"

	"github.com/meshplan/meshplan/search"
)

// PlanOf builds the plan of a search of problem p: the first top rows of
// res's front (all of them when top <= 0, and at least up to the
// recommended row), the search summary with the seed and the --fix string
// used, and the row objective recommends (empty: balanced; see
// [Recommendation]) with the rule and band.
func PlanOf(p *search.Problem, res *search.Result, o PlanOptions) (Plan, error) {
	top, seed, fix := o.Top, o.Seed, o.Fix
	m, c, w := p.Model(), p.Cluster(), p.Workload()
	rec, why, err := recommend(res.Front, o.Objective, c, o.Framework, o.maxOOMRisk())
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
			Framework: o.Framework, Searched: true,
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
	if len(res.Front) > 0 {
		plan.Recommendation = &why
	}
	if rec.Index < 0 && len(res.Front) > 0 {
		plan.Notes = append(plan.Notes, "nothing recommended: "+plan.WhyNoneRecommended())
	}
	return plan, nil
}

// WhyNoneRecommended says, in one clause, why no row of p is recommended
// and what would change it: every row of the front above the
// out-of-memory risk limit (the least risk among them, and the limit that
// would admit it), or no row at all.
func (p *Plan) WhyNoneRecommended() string {
	if len(p.Pareto) == 0 || p.Recommendation == nil {
		return "no strategy fits"
	}
	least := p.Pareto[0].OOMRisk
	for _, r := range p.Pareto[1:] {
		least = min(least, r.OOMRisk)
	}
	return fmt.Sprintf("every row's out-of-memory risk is above %s (--max-oom-risk); the least is %s, so --max-oom-risk %.2f or more chips would recommend one",
		Percent(p.Recommendation.MaxOOMRisk), Percent(least), math.Ceil(100*least)/100)
}

// PlanOptions are how PlanOf builds a plan.
type PlanOptions struct {
	// Top is the number of front rows kept (all when <= 0, and at least up
	// to the recommended row); Seed the search's seed and Fix its --fix.
	Top  int
	Seed int64
	Fix  string
	// Objective chooses the recommended row (empty: balanced).
	Objective string
	// Framework names the framework profile the rows ran under ("" for the
	// default): their bands depend on it.
	Framework string
	// MaxOOMRisk is the out-of-memory risk above which a row is not
	// recommended; 0 means search.DefaultMaxOOMRisk, a negative value 0.
	MaxOOMRisk float64
}

// maxOOMRisk is o's risk limit.
func (o PlanOptions) maxOOMRisk() float64 {
	switch {
	case o.MaxOOMRisk == 0:
		return search.DefaultMaxOOMRisk
	case o.MaxOOMRisk < 0:
		return 0
	}
	return o.MaxOOMRisk
}
