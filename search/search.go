package search

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Method names, as the --search flag spells them.
const (
	MethodAuto       = "auto"
	MethodExhaustive = "exhaustive"
	MethodEvolve     = "evolve"
)

// DefaultMaxExhaustiveSize is the largest space, in gene vectors, that [Auto]
// searches exhaustively: about 2.5 s of exhaustive search on two cores at
// the slowest rate measured, 0.1 to 1.7 s on the issue-14 problems.
// Measured with the built binary (`plan --search exhaustive`, GOMAXPROCS=2
// on two cores, wall time of the whole command, space built included,
// median of three) at plan's default batch of 4.19M tokens (gpt3-175b
// 1536 x 2048, llama3-405b 2048 x 8192):
//
//	problem                     gene vectors   wall    vectors/s
//	llama3-8b / v5e-64                 339,120  0.07 s
//	llama3-8b / h100-64                377,460  0.08 s
//	llama2-70b / v5p-256             4,156,020  0.16 s   26 M
//	llama3-70b / 2xv5e-256           4,437,000  0.14 s   31 M
//	gpt3-175b / a100-1024            8,015,040  0.27 s   30 M
//	llama3-405b / h100-16384        13,366,944  0.26 s   51 M
//	mixtral-8x22b / h100-1024       21,563,010  0.78 s   28 M
//	llama2-70b / 4xv5p-1024         22,517,550  0.83 s   27 M
//	deepseek-v3 / h800-2048         47,471,886  1.73 s   27 M
//	mixtral-8x7b / v5p-512          61,336,980  1.70 s   36 M
//
// (The MoE spaces list every layout with tp > 1 twice, the experts split
// and whole, space.Strategy.ETP; more of their strategies fit and are
// costed.) At the slowest rate, 26 million gene vectors per second on two
// cores, 64 million take about 2.5 s. All ten problems are searched
// exhaustively by default, which is exact. [Evolve] reaches the same
// optima with seeds 1 to 5 (search.Benchmark), but on spaces this small
// its polish visits much of the space anyway and takes longer. Revisit the
// figure when the cost model's speed changes.
const DefaultMaxExhaustiveSize = 64_000_000

// Method searches a problem's strategy space.
type Method interface {
	// Search returns the Pareto front of p and the search's counts. When no
	// strategy fits it returns the Result and a *NoFitError.
	Search(ctx context.Context, p *Problem) (*Result, error)
}

var (
	_ Method = Exhaustive{}
	_ Method = Evolve{}
	_ Method = Auto{}
)

// Result is the outcome of a search.
type Result struct {
	// Method is MethodExhaustive or MethodEvolve: the method that ran.
	Method string
	// Front is the Pareto front of step time against memory per chip, in
	// Front order (fastest first).
	Front []Candidate
	// SpaceSize is the number of gene vectors of the space.
	SpaceSize int64
	// Visited is the number of distinct gene vectors decoded.
	Visited int64
	// Valid is the number of those that decoded to a valid strategy.
	Valid int64
	// Evaluated is the number of valid strategies whose memory was
	// estimated (the contract's search.evaluated); those that did not fit
	// were not costed.
	Evaluated int64
	// Feasible is the number of evaluated strategies that fit and were costed.
	Feasible int64
	// Failed is the number of strategies that fit but the cost model rejected.
	Failed int64
	// Generations is the number of generations evolved (zero for exhaustive).
	Generations int
	// Seed is the evolutionary search's seed (zero for exhaustive).
	Seed int64
	// Elapsed is the wall time of the search.
	Elapsed time.Duration

	// smallest is the valid strategy with the least memory per chip.
	smallest *Candidate
	// firstErr is a cost-model error, for the NoFitError.
	firstErr error
	// costed is the number of strategies costed, which for an exhaustive
	// search depends on scheduling (branch and bound): for benchmarks.
	costed int64
}

// Recommended returns the fastest strategy that fits: the first row of
// the front, which [ObjectiveTime] recommends ([Recommend] applies the
// other objectives). It reports false when the front is empty.
func (r *Result) Recommended() (Candidate, bool) {
	if r == nil || len(r.Front) == 0 {
		return Candidate{}, false
	}
	return r.Front[0], true
}

// Top returns the first k rows of the front (all when k <= 0).
func (r *Result) Top(k int) []Candidate {
	if r == nil {
		return nil
	}
	return Top(r.Front, k)
}

// Auto searches exhaustively when the space has at most MaxExhaustiveSize
// gene vectors, and evolves otherwise.
type Auto struct {
	// Exhaustive is the method used for small spaces.
	Exhaustive Exhaustive
	// Evolve is the method used for large spaces.
	Evolve Evolve
	// MaxExhaustiveSize is the largest space searched exhaustively; zero
	// means DefaultMaxExhaustiveSize.
	MaxExhaustiveSize int64
}

// Search runs the method chosen for p's space size.
func (a Auto) Search(ctx context.Context, p *Problem) (*Result, error) {
	_, _, size, err := p.radix()
	if err != nil {
		return nil, err
	}
	if a.choose(size) == MethodExhaustive {
		return a.Exhaustive.Search(ctx, p)
	}
	return a.Evolve.Search(ctx, p)
}

// choose returns the method Auto runs on a space of size gene vectors.
func (a Auto) choose(size int64) string {
	limit := a.MaxExhaustiveSize
	if limit <= 0 {
		limit = DefaultMaxExhaustiveSize
	}
	if size <= limit {
		return MethodExhaustive
	}
	return MethodEvolve
}

// Settings say how Run searches a problem. The zero value is the default
// search: auto, seed 0, all cores, no progress, no suggestions.
type Settings struct {
	// Method is MethodAuto (or empty), MethodExhaustive or MethodEvolve.
	Method string
	// Seed seeds the evolutionary search; the same problem and seed give
	// the same result.
	Seed int64
	// Workers is the number of goroutines of an exhaustive search; zero
	// means GOMAXPROCS. The result does not depend on it.
	Workers int
	// Progress, when not nil, is called with the work done and the total
	// of the current stage, at most once per ProgressInterval and once at
	// the end of the stage, when done is total (unless ctx was cancelled):
	// the gene vectors of the space for an exhaustive search, the count
	// its result states; generations, then polish rounds, for an
	// evolutionary one (see Evolve.Progress).
	Progress func(done, total int64)
	// Stage, when not nil, is called as the search enters each stage:
	// "enumerating" for an exhaustive search, "evolving" and then
	// "polishing" for an evolutionary one.
	Stage func(name string)
	// Suggest makes a search where nothing fits look for what would: the
	// smallest larger cluster of the same chip, a shorter sequence, a
	// smaller batch (see NoFitError).
	Suggest bool
}

// method returns the search method the settings name.
func (s Settings) method() (Method, error) {
	ex := Exhaustive{Workers: s.Workers, Progress: s.Progress, Stage: s.Stage}
	ev := Evolve{Seed: s.Seed, Workers: s.Workers, Progress: s.Progress, Stage: s.Stage}
	switch s.Method {
	case "", MethodAuto:
		return Auto{Exhaustive: ex, Evolve: ev}, nil
	case MethodExhaustive:
		return ex, nil
	case MethodEvolve:
		return ev, nil
	}
	return nil, fmt.Errorf("search: unknown method %q (want %s, %s or %s)", s.Method, MethodAuto, MethodExhaustive, MethodEvolve)
}

// CheckMethod reports an unknown method name.
func CheckMethod(name string) error {
	_, err := Settings{Method: name}.method()
	return err
}

// Run searches p as the settings say and returns the Pareto front. When no
// strategy fits it returns the result and a *NoFitError (with suggestions
// when s.Suggest); an input that admits no strategy space is an *InputError.
func Run(ctx context.Context, p *Problem, s Settings) (*Result, error) {
	m, err := s.method()
	if err != nil {
		return nil, err
	}
	r, err := m.Search(ctx, p)
	var nf *NoFitError
	if s.Suggest && errors.As(err, &nf) {
		nf.suggest(ctx, p, r)
	}
	return r, err
}

// finish completes a result: the front, the elapsed time, and a NoFitError
// when nothing is feasible.
func finish(ctx context.Context, p *Problem, r *Result, start time.Time) (*Result, error) {
	p.addCollectives(r.Front)
	r.Elapsed = time.Since(start)
	if err := ctx.Err(); err != nil {
		return r, fmt.Errorf("search: %s search stopped: %w", r.Method, err)
	}
	if r.Feasible == 0 {
		return r, newNoFitError(p, r)
	}
	return r, nil
}
