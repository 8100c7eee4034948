package cmd

import (
	"fmt"

	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/memory"
	"github.com/meshplan/meshplan/results"
	"github.com/meshplan/meshplan/space"
)

// evaluate scores one validated strategy of p with the same options as the
// search, so that the result reproduces a plan's row; trace records the
// program op by op for the breakdowns.
func evaluate(p problem, s space.Strategy, trace bool) (results.Evaluation, error) {
	placed, err := s.Place(p.cluster)
	if err != nil {
		return results.Evaluation{}, badInputf("strategy %s cannot be placed on the mesh of %s: %w", s, p.cluster.Name, err)
	}
	mo, co := modelOptions()
	co.Trace = trace
	est, err := cost.Evaluate(p.model, p.cluster, p.workload, placed, co)
	if err != nil {
		return results.Evaluation{}, fmt.Errorf("evaluating strategy %s: %w", placed, err)
	}
	return results.Evaluation{
		Model:       p.model,
		Cluster:     p.cluster,
		Workload:    p.workload,
		Strategy:    placed,
		Time:        est,
		Memory:      memory.Estimate(p.model, p.cluster, p.workload, placed, mo),
		UsableBytes: memory.UsableBytes(p.cluster, mo),
	}, nil
}
