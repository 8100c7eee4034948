package planner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/results"
	"github.com/meshplan/meshplan/search"
)

// LowerBoundDays is the fewest days cluster c could train model m on
// tokens tokens in: 6 FLOPs per active parameter per token (Kaplan et al.
// 2020), every chip at its fastest peak, every step useful. A cluster
// whose bound exceeds a deadline cannot meet it.
func LowerBoundDays(m model.Spec, c profiles.Cluster, tokens float64) float64 {
	peak := max(c.Chip.PeakBF16FLOPs, c.Chip.PeakFP8FLOPs)
	if peak <= 0 || c.Chips() <= 0 {
		return 0
	}
	return 6 * float64(m.Counts().Active) * tokens / (float64(c.Chips()) * peak) / 86400 // 6·N·D FLOPs at full peak
}

// DeadlineError says that no size of a family can meet a deadline even at
// full peak; it counts as nothing fitting (exit 1).
type DeadlineError struct {
	// Days is the deadline, Largest the largest size and BoundDays its
	// lower bound.
	Days      float64
	Largest   string
	BoundDays float64
}

// Error names the deadline and the largest size's bound.
func (e *DeadlineError) Error() string {
	return fmt.Sprintf("no size meets the deadline of %s: even the largest, %s, needs at least %s at full peak with no interruption",
		results.Days(e.Days), e.Largest, results.Days(e.BoundDays))
}

// Deadline plans base on the clusters of a family, smallest first, and
// returns the plan of the smallest that trains t.Tokens within
// t.Budget.DeadlineDays after interruptions, checkpoints and restarts (its
// recommended row's goodput, which solve must add), or with a price the
// cheapest, with one DeadlineSize per size considered. Sizes whose lower
// bound (LowerBoundDays) misses the deadline are not searched (the largest
// of them is listed); the walk stops at the first size that meets the
// deadline, or with a price at the first that costs more than the
// cheapest so far, or at a size no faster than the one before. When no
// size meets the deadline the plan is the fastest's, with Met false.
func Deadline(ctx context.Context, base Request, clusters []profiles.Cluster, t results.Training, solve SolveFunc) (results.Plan, error) {
	if t.Budget == nil || t.Budget.DeadlineDays <= 0 || !t.Given() {
		return results.Plan{}, &search.InputError{Err: errors.New("--deadline needs --tokens and a positive wall time such as 90d")}
	}
	days := t.Budget.DeadlineDays
	d := &results.Deadline{Days: days, Objective: results.DeadlineSmallest}
	if t.PricePerChipHour > 0 {
		d.Objective = results.DeadlineCheapest
	}
	var plans []results.Plan // plans[i] is the plan of d.Sizes[i], zero when none
	var tooSmall *results.DeadlineSize
	var firstNoFit error
	chosen, fastest := -1, -1
	for _, c := range clusters {
		pc := results.PlanCluster{Name: c.Name, Chip: c.Chip.Name, Chips: c.Chips()}
		if lb := LowerBoundDays(base.Model, c, t.Tokens); lb > days {
			tooSmall = &results.DeadlineSize{Cluster: pc, Note: fmt.Sprintf("needs at least %s even at full peak", results.Days(lb))}
			continue
		}
		if tooSmall != nil {
			d.Sizes, plans = append(d.Sizes, *tooSmall), append(plans, results.Plan{})
			tooSmall = nil
		}
		r := base
		r.Cluster = c
		plan, err := solve(ctx, r, false)
		var nf *search.NoFitError
		if errors.As(err, &nf) {
			firstNoFit = cmpErr(firstNoFit, err)
			d.Sizes, plans = append(d.Sizes, results.DeadlineSize{Cluster: pc, Note: err.Error()}), append(plans, results.Plan{})
			if fastest >= 0 {
				break // larger sizes only split the batch further
			}
			continue
		}
		if err != nil {
			return results.Plan{}, err
		}
		size := results.DeadlineSize{Cluster: pc}
		if plan.Recommended >= 0 && plan.Recommended < len(plan.Pareto) {
			best := plan.Pareto[plan.Recommended]
			size.Best = &best
		}
		g := goodputOf(size.Best)
		if g == nil {
			size.Note = "no recommended strategy with a goodput"
			d.Sizes, plans = append(d.Sizes, size), append(plans, results.Plan{})
			continue
		}
		size.MeetsDeadline = g.Days <= days
		i := len(d.Sizes)
		d.Sizes, plans = append(d.Sizes, size), append(plans, plan)
		slower := fastest >= 0 && g.Days >= goodputOf(d.Sizes[fastest].Best).Days
		if !slower {
			fastest = i
		}
		if size.MeetsDeadline {
			if chosen >= 0 && d.Objective == results.DeadlineCheapest && costOf(g) >= costOf(goodputOf(d.Sizes[chosen].Best)) {
				break // cost rises with size from here
			}
			chosen = i
			if d.Objective == results.DeadlineSmallest {
				break
			}
		}
		if slower {
			break // more chips no longer train faster
		}
	}
	if fastest < 0 {
		if firstNoFit != nil {
			return results.Plan{}, fmt.Errorf("nothing fits on any size of the family that could meet the deadline: %w", firstNoFit)
		}
		if tooSmall != nil {
			lb := LowerBoundDays(base.Model, clusterNamed(clusters, tooSmall.Cluster.Name), t.Tokens)
			return results.Plan{}, &DeadlineError{Days: days, Largest: tooSmall.Cluster.Name, BoundDays: lb}
		}
		return results.Plan{}, errors.New("no size of the family was planned")
	}
	pick := chosen
	d.Met = chosen >= 0
	if !d.Met {
		pick = fastest
	}
	d.Sizes[pick].Chosen = true
	d.Cluster, d.Chips = d.Sizes[pick].Cluster.Name, d.Sizes[pick].Cluster.Chips
	plan := plans[pick]
	plan.Deadline = d
	plan.ClusterArg = d.Cluster
	return plan, nil
}

// goodputOf is r's goodput, nil when r or its goodput is.
func goodputOf(r *results.Result) *results.Goodput {
	if r == nil {
		return nil
	}
	return r.Goodput
}

// costOf is g's effective cost, or its chip-hours without a price.
func costOf(g *results.Goodput) float64 {
	if g.Cost != nil {
		return *g.Cost
	}
	return g.ChipHours
}

// cmpErr keeps the first non-nil error.
func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// clusterNamed is the cluster of cs called name, the zero cluster when none.
func clusterNamed(cs []profiles.Cluster, name string) profiles.Cluster {
	for _, c := range cs {
		if strings.EqualFold(c.Name, name) {
			return c
		}
	}
	return profiles.Cluster{}
}
