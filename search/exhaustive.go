package search

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"time"
)

// ProgressInterval is the least time between two calls of a progress
// callback (the last call, reporting completion, is always made).
const ProgressInterval = 100 * time.Millisecond

// DefaultChunkSize is the number of units (see [Exhaustive]) a worker of
// [Exhaustive] takes at a time.
const DefaultChunkSize = 4

// Exhaustive visits every gene vector of the space. It splits the space
// into units: a class of layouts (choices of the first gene whose
// strategies have the same memory, see layoutClasses) with one value of
// the genes between the first and the last three (the micro-batch size of
// a space.Space). A first pass estimates the memory of each unit's first
// layout under every value of the last three genes (recompute policy, ZeRO
// stage and schedule), which stands for every layout of its class, skips
// the units where nothing valid fits, and bounds the step time of what
// fits from below. A second pass costs the rest, the units of least bound
// first, every layout of a class under the values that fit (so that a
// cost.Evaluator reuses the forward passes and block costs of the previous
// strategy), but the strategies whose bound a costed strategy of no more
// memory already beats (branch and bound; see searchUnits). Workers take
// units in chunks; each keeps the Pareto front of what it has seen, and
// the fronts are merged with ties broken by strategy string and index, so
// the result does not depend on the number of workers or on scheduling.
// Strategies that do not fit in memory are counted as evaluated and not
// costed; those skipped by the bound as feasible.
type Exhaustive struct {
	// Workers is the number of goroutines; zero means GOMAXPROCS.
	Workers int
	// ChunkSize is the number of units a worker takes at a time; zero
	// means DefaultChunkSize.
	ChunkSize int
	// Progress, when not nil, is called with the number of gene vectors
	// visited and the space size, from one goroutine, at most once per
	// ProgressInterval and once at the end.
	Progress func(done, total int64)
	// Stage, when not nil, is called with "enumerating" as the search
	// starts.
	Stage func(name string)

	// unbounded costs every strategy that fits (no branch and bound), for
	// tests and benchmarks.
	unbounded bool
	// maxKept, when positive, replaces maxKeptFits (tests).
	maxKept int64
}

// Search enumerates p's space. It stops early, returning the context's
// error, when ctx is done.
func (e Exhaustive) Search(ctx context.Context, p *Problem) (*Result, error) {
	start := time.Now()
	sp, cards, size, err := p.radix()
	if err != nil {
		return nil, err
	}
	if size == math.MaxInt64 {
		return nil, errors.New("search: space too large for exhaustive search")
	}
	if e.Stage != nil {
		e.Stage("enumerating")
	}
	g := newGrid(cards, p.classes(sp, cards))
	all := p.searchUnits(ctx, sp, g, g.units(), unitSearch{workers: e.Workers, chunk: e.ChunkSize, progress: e.Progress, total: size, unbounded: e.unbounded, maxKept: e.maxKept})
	r := all.result(MethodExhaustive, size)
	return finish(ctx, p, r, start)
}

// startProgress calls progress(done, total) every ProgressInterval from a
// new goroutine until the returned function is called, which makes one last
// call and returns after it. A nil progress does nothing.
func startProgress(progress func(done, total int64), done *atomic.Int64, total int64) func() {
	if progress == nil {
		return func() {}
	}
	stop := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(ProgressInterval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				progress(done.Load(), total)
			}
		}
	}()
	return func() {
		close(stop)
		<-exited
		progress(done.Load(), total)
	}
}

// accumulator gathers the counts, front and smallest-memory strategy of
// a set of evaluated candidates. Its content depends only on the set added,
// not on the order.
type accumulator struct {
	visited, valid, evaluated, feasible, failed int64
	front                                       []Candidate // mutually non-dominated, unordered
	smallest                                    *Candidate  // least memory, then least index
	firstErr                                    error       // cost error of the least index
	firstErrIndex                               int64
	// costed counts the strategies costed; a unit search skips some of
	// those that fit (branch and bound), how many depends on scheduling.
	costed int64
}

// smaller reports whether a strategy of total bytes per chip and gene
// index index would be the smallest so far (least memory, then least
// index).
func (a *accumulator) smaller(total float64, index int64) bool {
	return a.smallest == nil || total < a.smallest.MemoryBytes || total == a.smallest.MemoryBytes && index < a.smallest.Index
}

// noteSmallest records c, the candidate of a valid strategy before
// costing, if it is the smallest so far. c may share its Mesh slices with
// a decoding buffer.
func (a *accumulator) noteSmallest(c *Candidate) {
	if !a.smaller(c.MemoryBytes, c.Index) {
		return
	}
	sm := *c
	sm.Strategy = cloneStrategy(c.Strategy)
	a.smallest = &sm
}

// addCosted records candidate c of a valid strategy that was costed: a
// failure, or a feasible strategy for the front. It reports whether c
// joined the front; the caller counts c as valid, evaluated and feasible.
// c may share its Mesh slices with a decoding buffer: what is kept is
// copied.
func (a *accumulator) addCosted(c *Candidate) bool {
	a.costed++
	if !c.Feasible() {
		a.failed++
		if a.firstErr == nil || c.Index < a.firstErrIndex {
			a.firstErr, a.firstErrIndex = c.Err, c.Index
		}
		return false
	}
	for i := range a.front {
		if Dominates(&a.front[i], c) {
			return false
		}
	}
	k := *c
	k.Strategy = cloneStrategy(c.Strategy)
	a.front = insertFront(a.front, &k)
	return true
}

// merge adds the content of b to a.
func (a *accumulator) merge(b *accumulator) {
	a.visited += b.visited
	a.valid += b.valid
	a.evaluated += b.evaluated
	a.feasible += b.feasible
	a.failed += b.failed
	a.costed += b.costed
	if b.smallest != nil && (a.smallest == nil || b.smallest.MemoryBytes < a.smallest.MemoryBytes ||
		b.smallest.MemoryBytes == a.smallest.MemoryBytes && b.smallest.Index < a.smallest.Index) {
		a.smallest = b.smallest
	}
	if b.firstErr != nil && (a.firstErr == nil || b.firstErrIndex < a.firstErrIndex) {
		a.firstErr, a.firstErrIndex = b.firstErr, b.firstErrIndex
	}
	for i := range b.front {
		a.front = insertFront(a.front, &b.front[i])
	}
}

// result turns the accumulated set into a Result.
func (a *accumulator) result(method string, size int64) *Result {
	return &Result{
		Method:    method,
		Front:     Front(a.front),
		SpaceSize: size,
		Visited:   a.visited,
		Valid:     a.valid,
		Evaluated: a.evaluated,
		Feasible:  a.feasible,
		Failed:    a.failed,
		smallest:  a.smallest,
		firstErr:  a.firstErr,
		costed:    a.costed,
	}
}
