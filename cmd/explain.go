package cmd

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/memory"
	"github.com/meshplan/meshplan/results"
	"github.com/meshplan/meshplan/space"
)

// newExplainCommand builds `plan explain`.
func newExplainCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "explain --model M --cluster C --batch N [--seq S] --strategy SPEC",
		Short: "Evaluate one strategy and print its program, time and memory breakdowns",
		Long: `Evaluate one strategy: check it against the model, cluster and batch (every
violated rule is listed), place it on the mesh, and print the program op by op
in sharding notation with the collective each op causes, then the step-time and
memory breakdowns and every collective of the step.

The strategy string is comma-separated key=value (every key optional):
dp, zero, fsdp, tp, sp, cp, pp, ep, mb, schedule, v, recompute, mesh.
Each row of a plan prints the string that reproduces it here.`,
		Example: `  plan explain --model llama3-8b --cluster v5p-16 --batch 32 --strategy fsdp=8
  plan explain --model llama70b --cluster v5p-256 --batch 512 --strategy 'fsdp=16,tp=8,mesh=tp:z;fsdp:x.y' --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runExplain() },
	}
	addProblemFlags(cmd.Flags())
	cmd.Flags().String("strategy", "", "the strategy `SPEC` to evaluate, e.g. fsdp=16,tp=8,mb=1")
	return cmd
}

// runExplain evaluates the configured strategy and prints it.
func (a *app) runExplain() error {
	p, err := a.loadProblem()
	if err != nil {
		return err
	}
	if a.cfg.Strategy == "" {
		return badInputf("--strategy is required, e.g. --strategy fsdp=8,tp=4")
	}
	s, err := space.Parse(a.cfg.Strategy)
	if err != nil {
		return badInputf("--strategy %q: %w", a.cfg.Strategy, err)
	}
	if err := s.Validate(p.model, p.cluster, p.workload); err != nil {
		return badInputf("strategy %s does not work for %s on %s with a batch of %d x %d tokens:\n%w",
			s, p.model.Name, p.cluster.Name, p.workload.Batch, p.workload.SeqLen, err)
	}
	placed, err := s.Place(p.cluster)
	if err != nil {
		return badInputf("strategy %s cannot be placed on the mesh of %s: %w", s, p.cluster.Name, err)
	}
	mo, co := modelOptions()
	co.Trace = true
	est, err := cost.Evaluate(p.model, p.cluster, p.workload, placed, co)
	if err != nil {
		return fmt.Errorf("evaluating strategy %s: %w", placed, err)
	}
	ev := results.Evaluation{
		Model:       p.model,
		Cluster:     p.cluster,
		Workload:    p.workload,
		Strategy:    placed,
		Time:        est,
		Memory:      memory.Estimate(p.model, p.cluster, p.workload, placed, mo),
		UsableBytes: memory.UsableBytes(p.cluster, mo),
	}
	return a.emit(func(w io.Writer) error {
		if a.cfg.Format == formatJSON {
			return results.WriteResultJSON(w, ev)
		}
		return results.WriteExplainTable(w, ev)
	})
}
