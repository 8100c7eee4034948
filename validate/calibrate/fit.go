package calibrate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/optimize"

	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/search"
	"github.com/meshplan/meshplan/space"
)

// sample is one run prepared for the objective: its strategy is fixed, its
// cost.Model built once, and only the coefficients change between calls.
type sample struct {
	id string
	// p is the run's problem, with the run's attention kernel.
	p *search.Problem
	// c is the run's own cluster with the base profile applied (Run.ClusterOf);
	// its axes are a private copy that predict overwrites.
	c profiles.Cluster
	w space.Workload
	// s is the placed strategy chosen with the starting coefficients.
	s space.Strategy
	// tokensPerChip is batch*seq/chips, so tokens/s per chip = tokensPerChip/step.
	tokensPerChip float64
	// logMeasured is log of the measured tokens/s per chip.
	logMeasured float64
}

// clone returns a copy of s that can be evaluated concurrently with s.
func (s *sample) clone() *sample {
	c := *s
	c.c.Axes = slices.Clone(s.c.Axes)
	return &c
}

// logPredicted returns log of the predicted tokens/s per chip with
// parameter values xs, or +Inf when the cost model fails.
func (s *sample) logPredicted(ps []Param, xs []float64) float64 {
	for i, p := range ps {
		p.set(&s.c, xs[i])
	}
	q, err := s.p.With(s.c, s.w)
	if err != nil {
		return math.Inf(1)
	}
	est, err := q.StepTime(s.s)
	if err != nil || !(est.StepSeconds > 0) || math.IsInf(est.StepSeconds, 0) {
		return math.Inf(1)
	}
	return math.Log(s.tokensPerChip / est.StepSeconds)
}

// problem is the robust maximum a posteriori problem over a set of
// samples. The optimiser sees only the free parameters; the others stay at
// z0.
type problem struct {
	ss      []*sample
	ps      []Param
	z0      []float64
	free    []int // indices into ps of the parameters the optimiser moves
	scatter float64
	k       float64   // Huber's threshold in units of scatter
	z, xs   []float64 // scratch: the full z and the parameter values
}

// newProblem returns the problem of fitting the free parameters of ps to
// ss with o's scatter of the runs' log errors and Huber threshold, every
// parameter starting at its default, where its prior is centred.
func newProblem(ss []*sample, ps []Param, free []int, o Options) *problem {
	z0 := zOf(ps)
	return &problem{ss: ss, ps: ps, z0: z0, free: free, scatter: o.scatter(), k: o.huberK(),
		z: slices.Clone(z0), xs: make([]float64, len(ps))}
}

// objective is the negative log posterior per run (package documentation):
//
//	f = (1/n)·[Σ_j ρ(r_j/s) + Σ_i ½((u_i − u0_i)/τ_i)²]
//
// with r_j = log predicted_j − log measured_j, s the scatter, ρ Huber's
// loss with HuberK, and u the parameter in its prior's unit. zf holds the
// free parameters' z in the order of p.free.
func (p *problem) objective(zf []float64) float64 {
	for k, i := range p.free {
		p.z[i] = zf[k]
	}
	f := 0.0
	for i, q := range p.ps {
		p.xs[i] = q.value(p.z[i])
		f += q.priorTerm(p.xs[i])
	}
	for _, s := range p.ss {
		f += huber((s.logPredicted(p.ps, p.xs)-s.logMeasured)/p.scatter, p.k)
	}
	f /= float64(len(p.ss))
	if math.IsNaN(f) {
		return math.Inf(1)
	}
	return f
}

// huber is Huber's loss with threshold k: t²/2 inside, linear outside, so
// that a run the model misses by far pulls with a bounded force (k = +Inf
// is least squares).
func huber(t, k float64) float64 {
	a := math.Abs(t)
	if a <= k {
		return t * t / 2
	}
	return k * (a - k/2)
}

// huberGrad is the derivative of huber: t clamped to ±k.
func huberGrad(t, k float64) float64 { return min(max(t, -k), k) }

// full returns the full z with the free parameters at zf.
func (p *problem) full(zf []float64) []float64 {
	z := slices.Clone(p.z0)
	for k, i := range p.free {
		z[i] = zf[k]
	}
	return z
}

// fitResult is the outcome of fit.
type fitResult struct {
	z           []float64 // every parameter's z, the held ones at their defaults
	f           float64
	evaluations int
}

// fit minimises the objective over the free parameters with Nelder-Mead
// from start (the defaults when nil), from restarts perturbed starts and
// then again from the best point found until that stops helping
// (restarting Nelder-Mead where it stopped lets a collapsed simplex
// re-expand). Perturbations are uniform in ±restartSpread per coordinate,
// drawn from a PCG source with a fixed seed, so the fit is deterministic.
func fit(pr *problem, start []float64, restarts int, o Options) (fitResult, error) {
	z0 := make([]float64, len(pr.free))
	for k, i := range pr.free {
		z0[k] = pr.z0[i]
		if start != nil {
			z0[k] = start[i]
		}
	}
	rng := rand.New(rand.NewPCG(o.seed(), 0x6d657368706c616e)) // "meshplan"
	starts := [][]float64{slices.Clone(z0)}
	for range restarts {
		st := slices.Clone(z0)
		for k := range st {
			st[k] += restartSpread * (2*rng.Float64() - 1)
		}
		starts = append(starts, st)
	}
	best := fitResult{f: math.Inf(1)}
	var bestZ []float64
	run := func(st []float64) error {
		res, err := minimize(pr, st, o.maxEvaluations())
		if res != nil {
			best.evaluations += res.FuncEvaluations
		}
		if err != nil {
			return err
		}
		if res.F < best.f {
			bestZ, best.f = slices.Clone(res.X), res.F
		}
		return nil
	}
	var firstErr error
	for _, st := range starts {
		if err := run(st); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if bestZ == nil {
		if firstErr == nil {
			firstErr = fmt.Errorf("calibrate: the cost model fails at every start")
		}
		return best, firstErr
	}
	for range polishRounds {
		before := best.f
		if err := run(slices.Clone(bestZ)); err != nil {
			return best, err
		}
		if before-best.f <= 1e-9*math.Abs(before)+1e-12 {
			break
		}
	}
	best.z = pr.full(bestZ)
	return best, nil
}

// polishRounds bounds the restarts from the best point: each one rebuilds
// the simplex there, which un-sticks a simplex that collapsed in a narrow
// valley; they stop once one brings no improvement.
const polishRounds = 4

// restartSpread is the half-width of the perturbation of a restart in the
// transformed variables: ±1.5 moves a fraction at 0.5 between about 0.18
// and 0.82 and a scale by a factor of up to e^1.5 ≈ 4.5.
const restartSpread = 1.5

// minimize runs one Nelder-Mead search. A stop on the evaluation cap is
// accepted (the best point so far is kept); any other failure is an error.
func minimize(pr *problem, start []float64, maxEvals int) (*optimize.Result, error) {
	p := optimize.Problem{Func: pr.objective}
	settings := &optimize.Settings{
		FuncEvaluations: maxEvals,
		// docs/go-style.md §2.2 step 4; the objective is of order 0.1..10 per
		// run, so 1e-10 absolute is far below what matters.
		Converger: &optimize.FunctionConverge{Absolute: 1e-10, Relative: 1e-8, Iterations: 200},
	}
	// A simplex of 0.5 in z spans about ±12% of a fraction near the middle
	// of its range and a factor 1.6 of a scale: large enough to feel
	// parameters the runs barely see.
	method := &optimize.NelderMead{SimplexSize: 0.5}
	res, err := optimize.Minimize(p, start, settings, method)
	if err != nil {
		if res != nil && res.Status == optimize.FunctionEvaluationLimit {
			return res, nil
		}
		return res, fmt.Errorf("calibrate: nelder-mead: %v", err)
	}
	if serr := res.Status.Err(); serr != nil && res.Status != optimize.FunctionEvaluationLimit {
		return res, fmt.Errorf("calibrate: nelder-mead stopped with %v: %v", res.Status, serr)
	}
	if math.IsInf(res.F, 1) {
		return res, fmt.Errorf("calibrate: the cost model fails at the start point")
	}
	return res, nil
}
