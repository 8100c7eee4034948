package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/results"
	"github.com/meshplan/meshplan/search"
	"github.com/meshplan/meshplan/space"
)

// addReportFlags registers the flags plan and explain share for reports:
// time and cost to train and the launch configuration.
func addReportFlags(fs *pflag.FlagSet) {
	fs.String("tokens", "", "train on `N` tokens (15T, 300B, 2.5M, 2e12): adds the days and chip-hours to train to each row")
	fs.Float64("price", 0, "price of one chip for one `hour`: adds the cost to train (needs --tokens)")
	fs.String("emit", "", "print the recommended strategy as a `framework`'s launch flags or config instead: "+strings.Join(results.Frameworks(), ", "))
}

// registerEmitCompletion completes --emit's values.
func registerEmitCompletion(cmd *cobra.Command) {
	_ = cmd.RegisterFlagCompletionFunc("emit", cobra.FixedCompletions(results.Frameworks(), cobra.ShellCompDirectiveNoFileComp))
}

// planClusters searches every cluster of a list or range and returns the
// plan of the recommended cluster (the fastest on the front of days
// against cost) with one ClusterOption per cluster. Nothing fitting
// anywhere is a *search.NoFitError (exit 1). base is the problem without
// its cluster.
func (a *app) planClusters(ctx context.Context, base problem, fix space.Fix, clusters []profiles.Cluster) (results.Plan, error) {
	probs := make([]problem, len(clusters))
	names := make([]string, len(clusters))
	for i, c := range clusters {
		probs[i] = base
		probs[i].cluster = c
		names[i] = c.Name
	}
	plans, noFit, err := a.searchEach(ctx, probs, fix)
	if err != nil {
		return results.Plan{}, err
	}
	opts := make([]results.ClusterOption, len(names))
	for i, pr := range probs {
		c := pr.cluster
		opts[i].Cluster = results.PlanCluster{Name: c.Name, Chip: c.Chip.Name, Chips: c.Chips()}
		opts[i].Best, opts[i].Feasible, opts[i].Error = best(plans[i], noFit[i])
	}
	rec := results.MarkClusterFront(opts, a.cfg.Objective)
	if rec < 0 {
		return results.Plan{}, fmt.Errorf("nothing fits on any of %s: %w", strings.Join(names, ", "), firstErr(noFit))
	}
	plan := plans[rec]
	plan.Clusters = opts
	plan.ClusterArg = names[rec]
	return plan, nil
}

// searchEach searches every problem; where nothing fits, noFit holds the
// *search.NoFitError instead of a plan. Any other error stops it.
func (a *app) searchEach(ctx context.Context, probs []problem, fix space.Fix) (plans []results.Plan, noFit []error, err error) {
	plans, noFit = make([]results.Plan, len(probs)), make([]error, len(probs))
	for i, pr := range probs {
		p, err := a.searchPlan(ctx, pr, fix, false)
		var nf *search.NoFitError
		switch {
		case errors.As(err, &nf):
			noFit[i] = err
		case err != nil:
			return nil, nil, err
		default:
			plans[i] = p
		}
	}
	return plans, noFit, nil
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

// planMinChips walks the sizes of the family of the cluster name upwards,
// doubling from the smallest size the family has, and returns the plan of
// the first on which the model fits, with the smaller sizes tried.
// base is the problem without its cluster.
func (a *app) planMinChips(ctx context.Context, base problem, fix space.Fix, name string) (results.Plan, error) {
	sizes, err := profiles.FamilySizes(name)
	if err != nil {
		return results.Plan{}, badInputf("--min-chips needs a cluster name such as h100-8 or v5p-8 in --cluster: %w", err)
	}
	var tried []results.SizeTried
	for _, size := range sizes {
		c, err := profiles.Parse(size)
		if err != nil {
			return results.Plan{}, err
		}
		pr := base
		pr.cluster = c
		plan, err := a.searchPlan(ctx, pr, fix, false)
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
	return results.Plan{}, &minChipsError{family: family, reason: last.Reason}
}

// minChipsError says that no size of a family fits; it counts as no fit (exit 1).
type minChipsError struct{ family, reason string }

func (e *minChipsError) Error() string {
	return fmt.Sprintf("the model fits on no %s cluster up to %d chips; on the largest: %s", e.family, profiles.MaxChips, e.reason)
}

// planFrameworks searches the problem (without its framework) under every
// named framework and returns the plan of the fastest with one
// FrameworkOption per framework. Nothing fitting under any is a
// *search.NoFitError (exit 1).
func (a *app) planFrameworks(ctx context.Context, base problem, fix space.Fix, names []string) (results.Plan, error) {
	probs := make([]problem, len(names))
	for i, name := range names {
		f, err := loadFramework(strings.TrimSpace(name))
		if err != nil {
			return results.Plan{}, err
		}
		probs[i] = base
		probs[i].framework = f
	}
	plans, noFit, err := a.searchEach(ctx, probs, fix)
	if err != nil {
		return results.Plan{}, err
	}
	opts := make([]results.FrameworkOption, len(names))
	for i, pr := range probs {
		opts[i].Framework = pr.framework.Name
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
