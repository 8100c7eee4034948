package cmd

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/meshplan/meshplan/planner"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// runDeadline plans --cluster's family (or a list or range) under
// --deadline and prints the plan of the smallest size, or with --price the
// cheapest, that trains --tokens in time with interruptions, checkpoints
// and restarts (planner.Deadline).
func (a *app) runDeadline(cmd *cobra.Command) error {
	if a.cfg.MinChips || strings.Contains(a.cfg.Framework, ",") {
		return badInputf("--deadline %s plans the sizes of one family under one framework: it does not combine with --min-chips or a --framework list", a.cfg.Deadline)
	}
	names, err := deadlineSizes(a.cfg.Cluster)
	if err != nil {
		return err
	}
	fix, err := space.ParseFix(a.cfg.Fix)
	if err != nil {
		return badInputf("--fix %q: %w", a.cfg.Fix, err)
	}
	m, err := loadModel(a.cfg.Model, a.stderr)
	if err != nil {
		return err
	}
	clusters := make([]profiles.Cluster, len(names))
	for i, name := range names {
		if clusters[i], err = loadCluster(name); err != nil {
			return err
		}
	}
	t := a.cfg.Training()
	// One batch for every size: the default of the smallest size that
	// could meet the deadline, the first one searched.
	chips := clusters[len(clusters)-1].Chips()
	for _, c := range clusters {
		if planner.LowerBoundDays(m, c, t.Tokens) <= t.Budget.DeadlineDays {
			chips = c.Chips()
			break
		}
	}
	f, err := a.framework()
	if err != nil {
		return err
	}
	w, rule, err := workload(a.cfg, m, chips, f.Limits.SplitsSequences())
	if err != nil {
		return err
	}
	if rule != "" {
		rule = "the batch of the smallest size that could meet the deadline, " + rule
	}
	base := a.request(problem{model: m, workload: w, framework: f}, fix)
	plan, err := planner.Deadline(cmd.Context(), base, clusters, t, a.solve)
	if err != nil {
		return inputErr(err)
	}
	plan.SetBatchDefault(rule)
	plan.ModelArg = a.cfg.Model
	return a.printPlan(plan)
}

// deadlineSizes returns the cluster names --deadline plans for --cluster
// arg: a list or range as given, else every size of the family of a name
// (h100-1024) or a bare family (h100).
func deadlineSizes(arg string) ([]string, error) {
	if arg == "" {
		return nil, badInputf("--deadline needs --cluster: a family such as h100 or v5p, or one of its sizes such as h100-1024")
	}
	names, err := profiles.ExpandNames(arg)
	if err != nil {
		return nil, badInputf("--cluster %w", err)
	}
	if len(names) > 1 {
		return names, nil
	}
	name, bare := arg, !strings.Contains(arg, "-")
	if bare {
		name += "-1" // a bare family: its sizes from the smallest
	}
	sizes, err := profiles.FamilySizes(name)
	switch {
	case err != nil && bare:
		return nil, badInputf("--cluster %s is no chip family: --deadline needs a family such as h100 or v5p (see plan clusters), or one of its sizes such as h100-1024", arg)
	case err != nil:
		return nil, badInputf("--cluster %s: --deadline needs a family such as h100 or v5p, or one of its sizes such as h100-1024 (%v)", arg, err)
	}
	return sizes, nil
}
