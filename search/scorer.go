package search

import (
	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/memory"
	"github.com/meshplan/meshplan/score"
	"github.com/meshplan/meshplan/space"
)

// Scorer scores one strategy: its memory per chip and its step time.
// Both methods must be deterministic and safe for concurrent use.
type Scorer interface {
	// Memory estimates the per-chip memory of s.
	Memory(s *space.Strategy) (memory.Breakdown, error)
	// Time estimates the step time of s; trace asks for the op-by-op
	// program and the step's collectives, which a search leaves out.
	Time(s *space.Strategy, trace bool) (cost.Estimate, error)
}

// What a search asks of a Scorer beyond Scorer: each is optional, and a
// search finds it by a type assertion. The planner's scorer (NewProblem,
// package score) implements them all.

// WorkerScorer is a Scorer that hands out scorers for single goroutines,
// which may be faster: a search gives each of its goroutines one.
type WorkerScorer interface {
	// Worker returns a scorer for one goroutine, with the same estimates;
	// it need not be safe for concurrent use.
	Worker() Scorer
}

// PlacedTimer is a Scorer (a worker) with the search's hot path: the step
// time without a trace of a strategy whose placement the search names.
type PlacedTimer interface {
	// PlacedTime is Time(s, false) for a strategy whose mesh placement
	// names (see cost.Evaluator.EvaluatePlacedTo; negative: none). The
	// estimate is the scorer's own, good until its next call: the search
	// copies it into its candidate (a pointer to the candidate passed
	// through an interface would move it to the heap).
	PlacedTime(s *space.Strategy, placement int64) (*cost.Estimate, error)
}

// LowerBounder is a Scorer that bounds step times from below, which lets
// a search skip what cannot beat its front.
type LowerBounder interface {
	// LowerBound returns a lower bound on the step time of s, 0 when it
	// cannot tell; the same for every placement of a layout class.
	LowerBound(s *space.Strategy) float64
	// DispatchBound returns what the placement of s adds to LowerBound's
	// bound (the MoE dispatch and combine, cost.Bounder.DispatchBound), 0
	// when it cannot tell.
	DispatchBound(s *space.Strategy) float64
}

// MemoryKeyer is a Scorer that can tell when two layouts have the same
// memory whatever the other genes: when their keys are equal (==).
type MemoryKeyer interface {
	// MemoryKey returns the key of s's layout; false when it has none.
	MemoryKey(s *space.Strategy) (score.MemoryKey, bool)
}

// MemoryParter is a Scorer that breaks memory down by part
// (Problem.MemoryParts).
type MemoryParter interface {
	// Parts breaks the memory of s on its busiest chip down by part.
	Parts(s *space.Strategy) ([]memory.Part, error)
}

// CollectiveLister is a Scorer that lists a step's collectives apart from
// its time, which a search adds to the candidates it keeps
// (Problem.addCollectives).
type CollectiveLister interface {
	// Collectives lists the step's collectives of s.
	Collectives(s *space.Strategy) ([]cost.Collective, error)
}

// planScorer is the planner's scorer (score.Scorer) as a search sees it:
// its workers are Scorers.
type planScorer struct{ *score.Scorer }

// Worker returns a scorer for one goroutine: the same estimates, through
// cost.Evaluators of its own (score.Worker).
func (ps planScorer) Worker() Scorer { return ps.Scorer.Worker() }

var (
	_ WorkerScorer     = planScorer{}
	_ MemoryKeyer      = planScorer{}
	_ MemoryParter     = planScorer{}
	_ CollectiveLister = planScorer{}
	_ PlacedTimer      = (*score.Worker)(nil)
	_ LowerBounder     = (*score.Worker)(nil)
)
