package cmd

import (
	"errors"

	"github.com/meshplan/meshplan/planner"
	"github.com/meshplan/meshplan/results"
	"github.com/meshplan/meshplan/search"
	"github.com/meshplan/meshplan/space"
)

// evaluate scores one strategy of p with the same options as the search,
// so that the result reproduces a plan's row, with its step traced op by
// op for the breakdowns (planner.Explain). A strategy that does not suit
// the problem is bad input.
func evaluate(p problem, s space.Strategy) (results.Evaluation, error) {
	req := planner.Request{Model: p.model, Cluster: p.cluster, Workload: p.workload, Options: modelOptions(p.framework), Framework: p.framework.Name}
	e, err := planner.Explain(req, s)
	var in *search.InputError
	if errors.As(err, &in) {
		return results.Evaluation{}, badInput(in.Err)
	}
	return e, err
}
