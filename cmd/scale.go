package cmd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/results"
	"github.com/meshplan/meshplan/search"
	"github.com/meshplan/meshplan/space"
)

// maxClusters bounds the clusters one --cluster list or range may name.
const maxClusters = 64

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

// clusterNames expands --cluster: a comma-separated list, whose items may
// be ranges; a range LO..HI of two names of the same chip that differ only
// in size, doubling from LO to HI (v5p-128..v5p-2048, or the slice count:
// 2xv5p-256..8xv5p-256); or one name or YAML file, returned as is.
func clusterNames(arg string) ([]string, error) {
	if arg == "" {
		return []string{""}, nil
	}
	if !strings.Contains(arg, ",") && !isRange(arg) {
		return []string{arg}, nil
	}
	var names []string
	for item := range strings.SplitSeq(arg, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, badInputf("--cluster %q: an empty name in the list", arg)
		}
		if !isRange(item) {
			names = append(names, item)
			continue
		}
		r, err := expandRange(item)
		if err != nil {
			return nil, badInputf("--cluster %s: %w", item, err)
		}
		names = append(names, r...)
	}
	if len(names) > maxClusters {
		return nil, badInputf("--cluster %q names %d clusters, more than %d", arg, len(names), maxClusters)
	}
	return names, nil
}

// isRange reports whether s reads as LO..HI rather than a file path.
func isRange(s string) bool {
	lo, hi, ok := strings.Cut(s, "..")
	return ok && lo != "" && hi != "" && !strings.ContainsAny(s, `/\`) &&
		!strings.HasSuffix(s, ".yaml") && !strings.HasSuffix(s, ".yml")
}

// sizedName is a cluster name split into its slice count, chip prefix and size suffix.
type sizedName struct {
	slices int    // K of a "Kx" prefix, 1 without one
	chip   string // the name between the prefix and the last '-'
	size   int    // the number after the last '-'
}

func (n sizedName) String() string {
	s := n.chip + "-" + strconv.Itoa(n.size)
	if n.slices > 1 {
		s = strconv.Itoa(n.slices) + "x" + s
	}
	return s
}

// splitName splits a cluster name such as 2xv5p-256 or h100-1024.
func splitName(name string) (sizedName, error) {
	n := sizedName{slices: 1}
	rest := strings.ToLower(strings.TrimSpace(name))
	if k, tail, ok := strings.Cut(rest, "x"); ok {
		if v, err := strconv.Atoi(k); err == nil && v >= 1 {
			n.slices, rest = v, tail
		}
	}
	i := strings.LastIndex(rest, "-")
	if i <= 0 {
		return n, fmt.Errorf("%q is not a name of the form CHIP-N", name)
	}
	size, err := strconv.Atoi(rest[i+1:])
	if err != nil || size < 1 {
		return n, fmt.Errorf("%q does not end in a size", name)
	}
	n.chip, n.size = rest[:i], size
	return n, nil
}

// expandRange expands LO..HI by doubling the size (or the slice count).
func expandRange(s string) ([]string, error) {
	los, his, _ := strings.Cut(s, "..")
	lo, err := splitName(los)
	if err != nil {
		return nil, err
	}
	hi, err := splitName(his)
	if err != nil {
		return nil, err
	}
	if lo.chip != hi.chip {
		return nil, fmt.Errorf("both ends must name the same chip, got %s and %s", lo.chip, hi.chip)
	}
	step := func(n *sizedName) {}
	from, to := 0, 0
	switch {
	case lo.slices == hi.slices:
		from, to = lo.size, hi.size
		step = func(n *sizedName) { n.size *= 2 }
	case lo.size == hi.size:
		from, to = lo.slices, hi.slices
		step = func(n *sizedName) { n.slices *= 2 }
	default:
		return nil, fmt.Errorf("the ends may differ in size or in slice count, not both")
	}
	if from > to {
		return nil, fmt.Errorf("the range runs downwards (%s is larger than %s)", los, his)
	}
	var names []string
	for n, v := lo, from; v <= to; v *= 2 {
		if len(names) > maxClusters {
			break
		}
		if _, err := profiles.Parse(n.String()); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		names = append(names, n.String())
		if v == to {
			return names, nil
		}
		step(&n)
	}
	return nil, fmt.Errorf("%s is not %s times a power of two", his, los)
}

// planClusters searches every cluster of a list or range and returns the
// plan of the recommended cluster (the fastest on the front of days
// against cost) with one ClusterOption per cluster. Nothing fitting
// anywhere is a *search.NoFitError (exit 1).
func (a *app) planClusters(ctx context.Context, m model.Spec, w space.Workload, fix space.Fix, names []string) (results.Plan, error) {
	opts := make([]results.ClusterOption, len(names))
	plans := make([]results.Plan, len(names))
	var firstNoFit error
	for i, name := range names {
		c, err := loadCluster(name)
		if err != nil {
			return results.Plan{}, err
		}
		opts[i].Cluster = results.PlanCluster{Name: c.Name, Chip: c.Chip.Name, Chips: c.Chips()}
		p, err := a.searchPlan(ctx, problem{model: m, cluster: c, workload: w}, fix, false)
		var nf *search.NoFitError
		switch {
		case errors.As(err, &nf):
			opts[i].Error = err.Error()
			if firstNoFit == nil {
				firstNoFit = err
			}
			continue
		case err != nil:
			return results.Plan{}, err
		}
		plans[i] = p
		opts[i].Feasible = p.Search.Feasible
		if p.Recommended >= 0 {
			best := p.Pareto[p.Recommended]
			opts[i].Best = &best
		}
	}
	rec := results.MarkClusterFront(opts)
	if rec < 0 {
		return results.Plan{}, fmt.Errorf("nothing fits on any of %s: %w", strings.Join(names, ", "), firstNoFit)
	}
	plan := plans[rec]
	plan.Clusters = opts
	plan.ClusterArg = names[rec]
	return plan, nil
}

// planMinChips walks the sizes of the family of the cluster name upwards,
// doubling from the smallest size the family has, and returns the plan of
// the first on which the model fits, with the smaller sizes tried.
func (a *app) planMinChips(ctx context.Context, m model.Spec, w space.Workload, fix space.Fix, name string) (results.Plan, error) {
	n, err := splitName(name)
	if err != nil {
		return results.Plan{}, badInputf("--min-chips needs a cluster name such as h100-8 or v5p-8 in --cluster: %w", err)
	}
	n.slices = 1
	var tried []results.SizeTried
	parsed := 0
	for size := 1; size <= profiles.MaxChips*2; size *= 2 {
		n.size = size
		c, err := profiles.Parse(n.String())
		if err != nil {
			continue // not a size of this family (h100-12, v5p-2)
		}
		parsed++
		plan, err := a.searchPlan(ctx, problem{model: m, cluster: c, workload: w}, fix, false)
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
	if parsed == 0 {
		return results.Plan{}, badInputf("--min-chips: %s names no family of clusters", name)
	}
	last := tried[len(tried)-1]
	return results.Plan{}, &minChipsError{family: n.chip, reason: last.Reason}
}

// minChipsError says that no size of a family fits; it counts as no fit (exit 1).
type minChipsError struct{ family, reason string }

func (e *minChipsError) Error() string {
	return fmt.Sprintf("the model fits on no %s cluster up to %d chips; on the largest: %s", e.family, profiles.MaxChips, e.reason)
}
