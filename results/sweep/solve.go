package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/memory"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/results"
	"github.com/meshplan/meshplan/search"
	"github.com/meshplan/meshplan/space"
)

// Solver runs the search of one cell of a grid and builds its record, the
// same plan object `plan --format json` prints for the cell's flags.
type Solver struct {
	// Grid is the expanded sweep; its models and clusters are loaded once.
	Grid *Grid
	// MemoryOptions and CostOptions tune the memory and cost models, as
	// for plan.
	MemoryOptions memory.Options
	CostOptions   cost.Options
	// Workers is the number of goroutines of an exhaustive search; zero
	// means GOMAXPROCS. The front does not depend on it.
	Workers int
}

// Solve searches c. A cell whose problem cannot be built (a fix that does
// not divide the cluster) or on which nothing fits gets a record with
// Error; the returned error is reserved for failures of the run itself,
// such as a cancelled context, and leaves the cell to be redone.
func (s *Solver) Solve(ctx context.Context, c Cell) (Record, error) {
	g := s.Grid
	m, ok := g.models[c.Model]
	cl, ok2 := g.clusters[c.Cluster]
	fix, ok3 := g.fixes[c.Fix]
	if !ok || !ok2 || !ok3 {
		return Record{}, fmt.Errorf("sweep: cell %s is not in the grid", c)
	}
	w := space.Workload{Batch: c.Batch, SeqLen: c.Seq}
	prob, err := search.NewProblem(m, cl, w, fix, s.MemoryOptions, s.CostOptions)
	if err != nil {
		return Record{Cell: c, Error: fmt.Sprintf("cannot search %s on %s: %s", m.Name, cl.Name, oneLine(err.Error()))}, nil
	}
	prob.ResolveCluster = profiles.Parse
	method, err := newMethod(g.Search, s.Workers)
	if err != nil {
		return Record{}, err
	}
	res, err := method.Search(ctx, prob)
	if ctx.Err() != nil {
		return Record{}, ctx.Err()
	}
	var nf *search.NoFitError
	if errors.As(err, &nf) {
		return Record{Cell: c, Error: oneLine(err.Error())}, nil
	}
	if err != nil {
		return Record{}, fmt.Errorf("cell %s: %w", c, err)
	}
	plan := results.PlanOf(m, cl, w, res, g.Search.Top, g.Search.Seed, c.Fix)
	raw, err := json.Marshal(plan)
	if err != nil {
		return Record{}, fmt.Errorf("cell %s: encoding its plan: %w", c, err)
	}
	return Record{Cell: c, Plan: raw}, nil
}

// newMethod returns the search method of the settings, with workers
// goroutines for exhaustive search.
func newMethod(s Search, workers int) (search.Method, error) {
	ex := search.Exhaustive{Workers: workers}
	ev := search.Evolve{Seed: s.Seed}
	switch s.Method {
	case "", search.MethodAuto:
		return search.Auto{Exhaustive: ex, Evolve: ev}, nil
	case search.MethodExhaustive:
		return ex, nil
	case search.MethodEvolve:
		return ev, nil
	}
	return nil, fmt.Errorf("search.method must be auto, exhaustive or evolve, got %q", s.Method)
}
