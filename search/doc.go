// Package search finds the parallel strategies worth running: it scores the
// strategies of a [space.Space] with the [memory] and [cost] models and
// returns the Pareto front of step time against memory per chip.
//
// # Problem and candidates
//
// A [Problem] ties a model, a cluster and a workload to their strategy space
// and to the scorer of a strategy. [NewProblem] builds the planner's: one
// layer program (model.Program) from which both the memory and the cost
// model derive, the space built on first use. A Problem is immutable;
// [Problem.With] gives the same problem on another cluster or workload
// (calibration, the no-fit suggestions), sharing the program. [NewCustomProblem]
// takes a space and a [Scorer] of your own, which is how the tests search
// synthetic problems. [Problem.Evaluate] turns one strategy into a
// [Candidate]: its memory per chip first (the cheap model), then, when it
// fits in the usable memory, its step time, tokens per second, MFU and HFU.
//
// # Running a search
//
// [Run] searches a problem as its [Settings] say (method, seed, workers,
// progress, whether to suggest what would fit): the one entry point of
// `plan`, `plan sweep` and their variants (results.Solve wraps it with the
// output). Input the space cannot hold is an [*InputError].
//
// # Methods
//
// [Exhaustive] visits every gene vector of the space on all cores. It
// estimates memory once per layout class (the placements of one degree
// tuple, which have the same memory), skips a class's strategies when
// nothing of it fits, costs the rest and keeps per-worker Pareto fronts
// merged under a total order, so its output does not depend on scheduling. [Evolve] runs an
// island genetic algorithm (github.com/MaxHalford/eaopt) over the same genes,
// minimising step time with a finite penalty for strategies that are invalid
// or over a memory cap, once per cap (by default: twice at the usable
// memory, then at 30% and 1% of it to reach the low-memory end of the
// front); every strategy it evaluates is memoised and archived, and the
// archive's front is the result.
// [Auto] searches exhaustively when the space has at most
// [DefaultMaxExhaustiveSize] gene vectors and evolves otherwise.
//
// # Pareto front
//
// [Front] keeps the feasible candidates that no other feasible candidate
// dominates on (step time, memory per chip), drops repeated strategies and
// sorts the rest by step time, then memory, then strategy string. The
// recommended strategy ([Result.Recommended]) is the first row: the fastest
// strategy that fits. Every front row already fits in the usable memory
// (HBM minus the memory model's reserve), so no further headroom rule applies.
//
// # When nothing fits
//
// A search that finds no feasible strategy returns its [Result] together with
// a [*NoFitError], which carries the smallest memory per chip seen, its
// breakdown and dominant component, and (with Settings.Suggest) what would
// fit instead: the smallest larger cluster of the same chip, a shorter
// sequence or a smaller batch. Result.Failed counts the valid strategies
// the models could not score; it is 0 (a test draws 10,000 at random).
//
// # Determinism
//
// Both methods are deterministic: the same problem (and, for [Evolve], the
// same seed) gives the same front and the same counts, whatever the number of
// workers and however goroutines are scheduled. Only Result.Elapsed varies.
package search
