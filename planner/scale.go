package planner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/meshplan/meshplan/framework"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/results"
	"github.com/meshplan/meshplan/search"
)

// SolveFunc searches one request and returns its plan, as [Solve] does
// (the command line adds its progress bar and the training figures).
// suggest lets a plan that does not fit search for what would (larger
// clusters, shorter sequences, smaller batches); MinChips turns it off.
type SolveFunc func(ctx context.Context, r Request, suggest bool) (results.Plan, error)

// Clusters searches base on every cluster of a list or range and returns
// the plan of the recommended cluster (on the front of days against cost,
// chosen by base.Objective) with one ClusterOption per cluster. A cluster
// on which nothing fits, or on which no layout suits the model and batch
// (solve returns a *search.InputError), is an option with its reason.
// Nothing fitting anywhere is a *search.NoFitError (exit 1), or a
// *search.InputError (exit 2) when no cluster has any layout.
func Clusters(ctx context.Context, base Request, clusters []profiles.Cluster, solve SolveFunc) (results.Plan, error) {
	reqs := make([]Request, len(clusters))
	names := make([]string, len(clusters))
	for i, c := range clusters {
		reqs[i] = base
		reqs[i].Cluster = c
		names[i] = c.Name
	}
	plans, noFit, bad, err := solveEach(ctx, reqs, solve, true)
	if err != nil {
		return results.Plan{}, err
	}
	opts := make([]results.ClusterOption, len(reqs))
	for i, r := range reqs {
		c := r.Cluster
		opts[i].Cluster = results.PlanCluster{Name: c.Name, Chip: c.Chip.Name, Chips: c.Chips()}
		opts[i].Best, opts[i].Feasible, opts[i].Error = best(plans[i], firstErr([]error{noFit[i], bad[i]}))
		opts[i].NoLayout = bad[i] != nil
	}
	rec := results.MarkClusterFront(opts, base.Objective)
	if rec < 0 {
		if nf := firstErr(noFit); nf != nil {
			return results.Plan{}, fmt.Errorf("nothing fits on any of %s: %w", strings.Join(names, ", "), nf)
		}
		if in := firstErr(bad); in != nil {
			return results.Plan{}, &search.InputError{Err: fmt.Errorf("no layout suits the model on any of %s: %w", strings.Join(names, ", "), in)}
		}
		return results.Plan{}, fmt.Errorf("nothing fits on any of %s", strings.Join(names, ", "))
	}
	plan := plans[rec]
	plan.Clusters = opts
	plan.ClusterArg = names[rec]
	return plan, nil
}

// MinChips walks the sizes of the family of the cluster name upwards,
// doubling from the smallest size the family has, and returns the plan of
// the first on which base fits, with the smaller sizes tried. A name
// without a family is a *search.InputError; no size fitting is a
// *MinChipsError.
func MinChips(ctx context.Context, base Request, name string, solve SolveFunc) (results.Plan, error) {
	sizes, err := profiles.FamilySizes(name)
	if err != nil {
		return results.Plan{}, &search.InputError{Err: fmt.Errorf("--min-chips needs a cluster name such as h100-8 or v5p-8 in --cluster: %w", err)}
	}
	var tried []results.SizeTried
	for _, size := range sizes {
		c, err := profiles.Parse(size)
		if err != nil {
			return results.Plan{}, err
		}
		r := base
		r.Cluster = c
		plan, err := solve(ctx, r, false)
		var nf *search.NoFitError
		if errors.As(err, &nf) {
			tried = append(tried, results.SizeTried{Cluster: c.Name, Chips: c.Chips(), Reason: err.Error()})
			continue
		}
		if err != nil {
			return results.Plan{}, err
		}
		plan.MinChips = &results.MinChips{Cluster: c.Name, Chips: c.Chips(), Tried: tried}
		if tried == nil {
			plan.MinChips.Tried = []results.SizeTried{}
		}
		plan.ClusterArg = c.Name
		return plan, nil
	}
	last := tried[len(tried)-1]
	family := sizes[0][:strings.LastIndex(sizes[0], "-")] // FamilySizes names are CHIP-N
	return results.Plan{}, &MinChipsError{Family: family, Reason: last.Reason}
}

// MinChipsError says that no size of a family fits; it counts as no fit
// (exit 1).
type MinChipsError struct {
	// Family is the chip family, e.g. "h100".
	Family string
	// Reason is why nothing fits on the largest size.
	Reason string
}

// Error says that the model fits on no size of the family, and why not on
// the largest.
func (e *MinChipsError) Error() string {
	return fmt.Sprintf("the model fits on no %s cluster up to %d chips; on the largest: %s", e.Family, profiles.MaxChips, e.Reason)
}

// Frameworks searches base under every named framework profile (a
// built-in name or a YAML file) and returns the plan of the fastest with
// one FrameworkOption per framework. A name that is no profile is a
// *search.InputError; nothing fitting under any is a *search.NoFitError
// (exit 1).
func Frameworks(ctx context.Context, base Request, names []string, solve SolveFunc) (results.Plan, error) {
	reqs := make([]Request, len(names))
	for i, name := range names {
		f, err := LoadFramework(strings.TrimSpace(name))
		if err != nil {
			return results.Plan{}, err
		}
		reqs[i] = base.WithFramework(f)
	}
	plans, noFit, _, err := solveEach(ctx, reqs, solve, false)
	if err != nil {
		return results.Plan{}, err
	}
	opts := make([]results.FrameworkOption, len(reqs))
	for i, r := range reqs {
		opts[i].Framework = r.Framework
		opts[i].Best, opts[i].Feasible, opts[i].Error = best(plans[i], noFit[i])
	}
	rec := results.MarkFastestFramework(opts)
	if rec < 0 {
		return results.Plan{}, fmt.Errorf("nothing fits under any of %s: %w", strings.Join(names, ", "), firstErr(noFit))
	}
	plan := plans[rec]
	plan.Frameworks = opts
	return plan, nil
}

// LoadFramework resolves a framework argument: a built-in profile name, a
// YAML file, or "" for framework.Default. An unknown name or a bad file is
// a *search.InputError.
func LoadFramework(arg string) (framework.Profile, error) {
	if arg == "" {
		arg = framework.Default
	}
	f, err := framework.Load(arg)
	if err != nil {
		return framework.Profile{}, &search.InputError{Err: err}
	}
	return f, nil
}

// WithFramework returns r scored under framework profile f: its options
// and name.
func (r Request) WithFramework(f framework.Profile) Request {
	r.Options = f.SearchOptions()
	r.Framework = f.Name
	return r
}

// solveEach searches every request; where nothing fits, noFit holds the
// *search.NoFitError instead of a plan, and with keepBad, where the request
// is bad input (a *search.InputError: no layout suits it), bad holds that
// error. Any other error stops it.
func solveEach(ctx context.Context, reqs []Request, solve SolveFunc, keepBad bool) (plans []results.Plan, noFit, bad []error, err error) {
	plans, noFit, bad = make([]results.Plan, len(reqs)), make([]error, len(reqs)), make([]error, len(reqs))
	for i, r := range reqs {
		if err := r.Options.Limits.CheckCluster(r.Cluster); err != nil {
			// A framework that does not run on the chips (a GPU-only one on
			// TPUs) is a row that says so, not the end of the comparison.
			noFit[i] = err
			continue
		}
		p, err := solve(ctx, r, false)
		var nf *search.NoFitError
		var in *search.InputError
		switch {
		case errors.As(err, &nf):
			noFit[i] = err
		case keepBad && errors.As(err, &in):
			bad[i] = err
		case err != nil:
			return nil, nil, nil, err
		default:
			plans[i] = p
		}
	}
	return plans, noFit, bad, nil
}

// best returns a searched plan's recommended row, its feasible count and,
// when nothing fit, the reason.
func best(p results.Plan, noFit error) (*results.Result, int64, string) {
	if noFit != nil {
		return nil, 0, noFit.Error()
	}
	if p.Recommended < 0 {
		return nil, p.Search.Feasible, ""
	}
	r := p.Pareto[p.Recommended]
	return &r, p.Search.Feasible, ""
}

// firstErr returns the first non-nil error of errs.
func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
