package score

import (
	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/memory"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// Scorer scores strategies with the planner's memory and cost models on
// one cluster and workload. It is safe for concurrent use; a search gives
// each of its goroutines a Worker of its own (see Worker), whose
// cost.Evaluators keep the block costs of their last strategy for the next
// one, and whose memory.Estimators its geometry.
type Scorer struct {
	ms *Models
	c  profiles.Cluster
	w  space.Workload
	o  cost.Options
}

// Scorer returns the scorer of the models on cluster c (copied) and
// workload w under the cost options o; Trace and SkipCollectives are set
// per call.
func (ms *Models) Scorer(c profiles.Cluster, w space.Workload, o cost.Options) *Scorer {
	c.Axes = append([]profiles.Axis(nil), c.Axes...)
	return &Scorer{ms: ms, c: c, w: w, o: o}
}

// Memory estimates the per-chip memory of s.
func (ps *Scorer) Memory(s *space.Strategy) (memory.Breakdown, error) {
	ms, err := ps.ms.pick(s)
	if err != nil {
		return memory.Breakdown{}, err
	}
	return ms.memory.Estimate(ps.c, ps.w, *s)
}

// Time estimates the step time of s; a search leaves trace off and lists
// the collectives of the front rows only (Collectives).
func (ps *Scorer) Time(s *space.Strategy, trace bool) (cost.Estimate, error) {
	ms, err := ps.ms.pick(s)
	if err != nil {
		return cost.Estimate{}, err
	}
	o := ps.o
	o.Trace = trace
	o.SkipCollectives = !trace
	return ms.cost.Evaluate(ps.c, ps.w, *s, o)
}

// Parts breaks the memory of s on its busiest chip down by part
// (memory.Model.Parts).
func (ps *Scorer) Parts(s *space.Strategy) ([]memory.Part, error) {
	ms, err := ps.ms.pick(s)
	if err != nil {
		return nil, err
	}
	return ms.memory.Parts(ps.c, ps.w, *s)
}

// Collectives lists the step's collectives of s.
func (ps *Scorer) Collectives(s *space.Strategy) ([]cost.Collective, error) {
	o := ps.o
	o.SkipCollectives = false
	ms, err := ps.ms.pick(s)
	if err != nil {
		return nil, err
	}
	est, err := ms.cost.Evaluate(ps.c, ps.w, *s, o)
	return est.Collectives, err
}

// MemoryKey is what a strategy's memory depends on besides its
// micro-batch size, recompute policy, ZeRO stage and schedule (see
// Scorer.MemoryKey). It is comparable: two strategies with equal keys and
// equal other genes have the same memory.
type MemoryKey struct {
	roles  [space.NumRoles]int
	degree space.Degrees
	sp     bool
	whole  bool // the experts whole on the tp chips (the layer program picked)
	bf16w  bool // bf16 weights (the layer program picked)
	bf16m  bool // bf16 Adam moments (the layer program picked)
	epOut  bool // ep spans the scale-out network: the EP overlap's in-flight layer (space.EPScaleOut)
}

// MemoryKey returns what the memory model reads of s beyond its
// micro-batch size, recompute policy, ZeRO stage and schedule: the
// parallel degrees, sequence parallelism, whole experts, the degree of
// every role (memory.Model.Estimate reads the mesh only through
// space.Strategy.RoleDegrees, and the layer program is picked by the
// degrees and etp) and whether ep spans the scale-out network (where the
// space turns the EP overlap on, which holds a layer more in flight:
// space.EPScaleOut). Two placements of the same degrees with the same key
// have the same memory (search's TestMemoryKey); false when s's mesh does
// not resolve on the cluster.
func (ps *Scorer) MemoryKey(s *space.Strategy) (MemoryKey, bool) {
	roles, err := s.RoleDegrees(ps.c)
	if err != nil {
		return MemoryKey{}, false
	}
	return MemoryKey{roles: roles, degree: s.Degree, sp: s.SP, whole: s.ExpertsWhole(), bf16w: s.BF16Weights(), bf16m: s.BF16Moments(), epOut: space.EPScaleOut(&ps.c, s)}, true
}

// Worker returns a scorer for one goroutine: the same estimates, through
// cost.Evaluators of its own.
func (ps *Scorer) Worker() *Worker {
	w := &Worker{ps: ps}
	w.pools = w.inline[:0]
	return w
}

// Worker is a Scorer for one goroutine: not safe for concurrent use. It
// keeps an evaluator, a bounder and an estimator per variant of the layer
// program it has scored with, made on first use.
type Worker struct {
	ps *Scorer
	// pools are the worker's evaluators per variant, in the order of first
	// use: a few (one per Key at most), looked up by a linear scan that
	// does not allocate, backed by inline until they outgrow it.
	pools  []pool
	inline [4]pool
	// est is the estimate PlacedTime returns.
	est cost.Estimate
}

// pool is a worker's evaluators of one variant of the layer program, each
// made on first use.
type pool struct {
	key       Key
	evaluator *cost.Evaluator
	bounder   *cost.Bounder
	estimator *memory.Estimator
}

// pool returns the worker's pool of the variant key names, adding an
// empty one on first use. The pointer is good until the next call.
func (w *Worker) pool(key Key) *pool {
	for i := range w.pools {
		if w.pools[i].key == key {
			return &w.pools[i]
		}
	}
	w.pools = append(w.pools, pool{key: key})
	return &w.pools[len(w.pools)-1]
}

// Memory estimates the per-chip memory of s with the worker's estimator
// of the models that price s.
func (w *Worker) Memory(s *space.Strategy) (memory.Breakdown, error) {
	ms, err := w.ps.ms.pick(s)
	if err != nil {
		return memory.Breakdown{}, err
	}
	p := w.pool(ms.key)
	if p.estimator == nil {
		p.estimator = ms.memory.NewEstimator(w.ps.c, w.ps.w)
	}
	return p.estimator.Estimate(*s)
}

// Time estimates the step time of s with the worker's evaluator of the
// models that price s.
func (w *Worker) Time(s *space.Strategy, trace bool) (cost.Estimate, error) {
	if trace {
		return w.ps.Time(s, true)
	}
	est, err := w.PlacedTime(s, -1)
	if err != nil {
		return cost.Estimate{}, err
	}
	return *est, nil
}

// PlacedTime is Time without a trace for a strategy whose mesh placement
// names (cost.Evaluator.EvaluatePlacedTo; negative: none), reading s in
// place: the search's hot path. The estimate is the worker's own, good
// until its next call; a caller copies what it keeps. A caller that calls
// through an interface thus passes no pointer to an estimate of its own,
// which would move that estimate to the heap.
func (w *Worker) PlacedTime(s *space.Strategy, placement int64) (*cost.Estimate, error) {
	if err := w.TimeTo(s, placement, &w.est); err != nil {
		return nil, err
	}
	return &w.est, nil
}

// TimeTo is PlacedTime writing the estimate into est (left as it was on an
// error) instead of the worker's own: the search's hot path calls it
// through the concrete type, so that est need not escape.
func (w *Worker) TimeTo(s *space.Strategy, placement int64, est *cost.Estimate) error {
	ms, err := w.ps.ms.pick(s)
	if err != nil {
		return err
	}
	p := w.pool(ms.key)
	if p.evaluator == nil {
		o := w.ps.o
		o.SkipCollectives = true
		p.evaluator = ms.cost.NewEvaluator(w.ps.c, w.ps.w, o)
	}
	return p.evaluator.EvaluatePlacedTo(s, placement, est)
}

// LowerBound returns the cost model's lower bound on the step time of s
// (0 on an error).
func (w *Worker) LowerBound(s *space.Strategy) float64 {
	return w.bounded(s, (*cost.Bounder).LowerBound)
}

// DispatchBound returns the cost model's bound on what the MoE dispatch
// and combine of s's placement add to LowerBound's (0 on an error).
func (w *Worker) DispatchBound(s *space.Strategy) float64 {
	return w.bounded(s, (*cost.Bounder).DispatchBound)
}

// bounded returns bound of the worker's Bounder of the models that price
// s, made on first use, on s (0 on an error).
func (w *Worker) bounded(s *space.Strategy, bound func(*cost.Bounder, space.Strategy) (float64, error)) float64 {
	ms, err := w.ps.ms.pick(s)
	if err != nil {
		return 0
	}
	p := w.pool(ms.key)
	if p.bounder == nil {
		p.bounder = ms.cost.NewBounder(w.ps.c, w.ps.w, w.ps.o)
	}
	lb, err := bound(p.bounder, *s)
	if err != nil {
		return 0
	}
	return lb
}
