package search

import (
	"context"
	"errors"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshplan/meshplan/space"
)

// ProgressInterval is the least time between two calls of a progress
// callback (the last call, reporting completion, is always made).
const ProgressInterval = 100 * time.Millisecond

// DefaultChunkSize is the number of consecutive gene vectors a worker of
// [Exhaustive] takes at a time.
const DefaultChunkSize = 1024

// Exhaustive visits every gene vector of the space. Workers take contiguous
// chunks of indices; each keeps the Pareto front of what it has seen, and the
// fronts are merged with ties broken by strategy string and index, so the
// result does not depend on the number of workers or on scheduling.
// Strategies that do not fit in memory are counted as evaluated and not
// costed.
type Exhaustive struct {
	// Workers is the number of goroutines; zero means GOMAXPROCS.
	Workers int
	// ChunkSize is the number of consecutive indices a worker takes at a
	// time; zero means DefaultChunkSize.
	ChunkSize int
	// Progress, when not nil, is called with the number of gene vectors
	// visited and the space size, from one goroutine, at most once per
	// ProgressInterval and once at the end.
	Progress func(done, total int64)
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
	workers := e.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	chunk := int64(e.ChunkSize)
	if chunk <= 0 {
		chunk = DefaultChunkSize
	}
	nchunks := (size + chunk - 1) / chunk
	if int64(workers) > nchunks {
		workers = int(max(nchunks, 1))
	}
	skip := func([]int) int64 { return 0 }
	if sk, ok := sp.(Skipper); ok {
		skip = sk.Skip
	}
	var (
		nextChunk atomic.Int64
		done      atomic.Int64
		wg        sync.WaitGroup
		accs      = make([]accumulator, workers)
	)
	for w := range accs {
		wg.Add(1)
		go func(acc *accumulator) {
			defer wg.Done()
			genes := make([]int, len(cards))
			var s space.Strategy
			for {
				k := nextChunk.Add(1) - 1
				if k >= nchunks || ctx.Err() != nil {
					return
				}
				lo := k * chunk
				hi := min(lo+chunk, size)
				genesOf(cards, lo, genes)
				for i := lo; i < hi; i++ {
					if sp.Decode(genes, &s) {
						c := p.evaluate(&s, i, true, false)
						acc.add(&c)
					} else if n := skip(genes); n > 1 {
						// A run of invalid vectors: jump to its end.
						i = min(i+n, hi) - 1
						if i+1 < hi {
							genesOf(cards, i+1, genes)
						}
						continue
					}
					next(cards, genes)
				}
				acc.visited += hi - lo
				done.Add(hi - lo)
			}
		}(&accs[w])
	}
	stopProgress := startProgress(e.Progress, &done, size)
	wg.Wait()
	stopProgress()

	var all accumulator
	for i := range accs {
		all.merge(&accs[i])
	}
	r := all.result(MethodExhaustive, size)
	return finish(ctx, p, r, start)
}

// Skipper is a Space that knows runs of invalid gene vectors: Skip
// returns how many gene vectors from genes on (first gene slowest) are
// certainly invalid, 0 or 1 when it cannot tell. *space.Space implements
// it; an exhaustive search jumps over the runs.
type Skipper interface {
	Skip(genes []int) int64
}

var _ Skipper = (*space.Space)(nil)

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
}

// add records candidate c of a valid strategy. c may share its Mesh slices
// with a decoding buffer: what is kept is copied.
func (a *accumulator) add(c *Candidate) {
	a.valid++
	a.evaluated++
	if a.smallest == nil || c.MemoryBytes < a.smallest.MemoryBytes ||
		c.MemoryBytes == a.smallest.MemoryBytes && c.Index < a.smallest.Index {
		sm := *c
		sm.Strategy = cloneStrategy(c.Strategy)
		a.smallest = &sm
	}
	if c.Costed && !c.Feasible() {
		a.failed++
		if a.firstErr == nil || c.Index < a.firstErrIndex {
			a.firstErr, a.firstErrIndex = c.Err, c.Index
		}
	}
	if !c.Feasible() {
		return
	}
	a.feasible++
	for i := range a.front {
		if Dominates(&a.front[i], c) {
			return
		}
	}
	k := *c
	k.Strategy = cloneStrategy(c.Strategy)
	a.front = insertFront(a.front, &k)
}

// merge adds the content of b to a.
func (a *accumulator) merge(b *accumulator) {
	a.visited += b.visited
	a.valid += b.valid
	a.evaluated += b.evaluated
	a.feasible += b.feasible
	a.failed += b.failed
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
	}
}
