package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/meshplan/meshplan/internal/text"
	"reflect"

	"github.com/meshplan/meshplan/planner"
	"github.com/meshplan/meshplan/search"
	"github.com/meshplan/meshplan/space"
)

// Solver runs the search of one cell of a grid and builds its record, the
// same plan object `plan --format json` prints for the cell's flags (the
// one planning path, planner.Solve).
type Solver struct {
	// Grid is the expanded sweep; its models and clusters are loaded once.
	Grid *Grid
	// Options select the models' options, as for plan: those of the grid's
	// framework profile (Grid.Framework.SearchOptions()), which every plan
	// names. The zero value means exactly those.
	Options search.Options
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
	if _, ok3 := g.fixes[c.Fix]; !ok || !ok2 || !ok3 {
		return Record{}, fmt.Errorf("sweep: cell %s is not in the grid", c)
	}
	opts := s.Options
	if reflect.DeepEqual(opts, search.Options{}) {
		opts = g.Framework.SearchOptions()
	}
	req := planner.Request{Model: m, Cluster: cl, Workload: space.Workload{Batch: c.Batch, SeqLen: c.Seq},
		Fix: c.Fix, Options: opts, Top: g.Search.Top, Framework: g.Framework.Name, Objective: g.Search.Objective}
	settings := search.Settings{Method: g.Search.Method, Seed: g.Search.Seed, Workers: s.Workers, Suggest: true}
	if err := search.CheckMethod(settings.Method); err != nil {
		return Record{}, fmt.Errorf("search.method must be auto, exhaustive or evolve, got %q", settings.Method)
	}
	plan, err := planner.Solve(ctx, req, settings, false)
	if ctx.Err() != nil {
		return Record{}, ctx.Err()
	}
	var nf *search.NoFitError
	var in *search.InputError
	switch {
	case errors.As(err, &in):
		return Record{Cell: c, Error: fmt.Sprintf("cannot search %s on %s: %s", m.Name, cl.Name, text.OneLine(err.Error()))}, nil
	case errors.As(err, &nf):
		return Record{Cell: c, Error: text.OneLine(err.Error())}, nil
	case err != nil:
		return Record{}, fmt.Errorf("cell %s: %w", c, err)
	}
	if t := g.Training.results(); t.Given() {
		// The training figures, and with goodput each row's goodput and
		// energy, as plan --tokens --price --goodput adds them.
		plan.SetTraining(t)
		if err := plan.ApplyBudget(cl); err != nil {
			return Record{Cell: c, Error: text.OneLine(err.Error())}, nil
		}
	}
	raw, err := json.Marshal(plan)
	if err != nil {
		return Record{}, fmt.Errorf("cell %s: encoding its plan: %w", c, err)
	}
	return Record{Cell: c, Plan: raw}, nil
}
