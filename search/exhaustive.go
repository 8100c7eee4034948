package search

import (
	"context"
	"errors"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshplan/meshplan/memory"
	"github.com/meshplan/meshplan/space"
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
// the genes between the first and the last two. For each unit a worker
// estimates the memory of the class's first layout under every value of
// the last two genes (the ZeRO stage and the schedule of a space.Space),
// skips the unit when nothing valid fits, and otherwise costs every layout
// of the class under the values that fit, schedules fastest, so that a
// cost.Evaluator reuses the block costs of the previous strategy. Workers
// take units in chunks; each keeps the Pareto front of what it has seen,
// and the fronts are merged with ties broken by strategy string and
// index, so the result does not depend on the number of workers or on
// scheduling. Strategies that do not fit in memory are counted as
// evaluated and not costed.
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
	g := newGrid(cards, p.classes(sp, cards))
	units := g.units()
	all := p.searchUnits(ctx, sp, g, units, e.Workers, e.ChunkSize, e.Progress, size)
	r := all.result(MethodExhaustive, size)
	return finish(ctx, p, r, start)
}

// searchUnits costs every strategy of the given units of grid g that fits
// in memory, on workers goroutines (zero: GOMAXPROCS) taking chunk units
// at a time (zero: DefaultChunkSize), and returns what they found. total
// is the progress callback's total.
func (p *Problem) searchUnits(ctx context.Context, sp Space, g *grid, units []unit, workers, chunk int, progress func(done, total int64), total int64) *accumulator {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if chunk <= 0 {
		chunk = DefaultChunkSize
	}
	nchunks := (len(units) + chunk - 1) / chunk
	workers = max(min(workers, nchunks), 1)
	var (
		nextChunk atomic.Int64
		done      atomic.Int64
		wg        sync.WaitGroup
		ws        = make([]*unitWorker, workers)
	)
	for i := range ws {
		ws[i] = p.newUnitWorker(sp, g)
		wg.Add(1)
		go func(w *unitWorker) {
			defer wg.Done()
			for {
				k := int(nextChunk.Add(1) - 1)
				if k >= nchunks || ctx.Err() != nil {
					return
				}
				for _, u := range units[k*chunk : min((k+1)*chunk, len(units))] {
					done.Add(w.search(u))
				}
			}
		}(ws[i])
	}
	stopProgress := startProgress(progress, &done, total)
	wg.Wait()
	stopProgress()

	var all accumulator
	for _, w := range ws {
		all.merge(&w.acc)
	}
	return &all
}

// grid is the split of a space's genes that the exhaustive search walks:
// the first gene's choices grouped into layout classes, the outer genes
// (between the first and the inner ones) and the inner genes (the last
// two, or fewer when their product is too large), whose values share one
// memory table per unit.
type grid struct {
	cards      []int
	classes    layoutClasses
	innerStart int   // index of the first inner gene (at least 1)
	nOuter     int64 // product of the outer genes' cardinalities
	nInner     int   // product of the inner genes' cardinalities
}

// maxInner bounds the product of the inner genes' cardinalities.
const maxInner = 1 << 12

// newGrid splits the genes of cardinalities cards.
func newGrid(cards []int, lc layoutClasses) *grid {
	g := &grid{cards: cards, classes: lc, innerStart: len(cards), nOuter: 1, nInner: 1}
	for g.innerStart > 1 && len(cards)-g.innerStart < 2 && g.nInner*cards[g.innerStart-1] <= maxInner {
		g.innerStart--
		g.nInner *= cards[g.innerStart]
	}
	for _, c := range cards[min(1, len(cards)):g.innerStart] {
		g.nOuter *= int64(c)
	}
	return g
}

// unit is one class of layouts with one value of the outer genes.
type unit struct {
	class int
	outer int64
}

// units lists every unit of g, class by class.
func (g *grid) units() []unit {
	out := make([]unit, 0, int64(len(g.classes.members))*g.nOuter)
	for c := range g.classes.members {
		for o := range g.nOuter {
			out = append(out, unit{class: c, outer: o})
		}
	}
	return out
}

// setGenes writes the genes of layout l, outer value o and inner value i.
func (g *grid) setGenes(genes []int, l int, o int64, i int) {
	if len(genes) == 0 {
		return
	}
	genes[0] = l
	genesOf(g.cards[1:g.innerStart], o, genes[1:g.innerStart])
	genesOf(g.cards[g.innerStart:], int64(i), genes[g.innerStart:])
}

// index is the mixed-radix index of layout l, outer value o and inner
// value i.
func (g *grid) index(l int, o int64, i int) int64 {
	return (int64(l)*g.nOuter+o)*int64(g.nInner) + int64(i)
}

// unitWorker is one goroutine of a unit search: its scorer, buffers and
// what it has found.
type unitWorker struct {
	p     *Problem
	sp    Space
	g     *grid
	sc    Scorer
	genes []int
	s     space.Strategy
	// mem, memErr and valid are the memory table of the current unit, per
	// inner value.
	mem    []memory.Breakdown
	memErr []error
	valid  []bool
	acc    accumulator
}

// newUnitWorker returns a worker over grid g of space sp.
func (p *Problem) newUnitWorker(sp Space, g *grid) *unitWorker {
	return &unitWorker{p: p, sp: sp, g: g, sc: p.worker(), genes: make([]int, len(g.cards)),
		mem: make([]memory.Breakdown, g.nInner), memErr: make([]error, g.nInner), valid: make([]bool, g.nInner)}
}

// search visits unit u and returns the number of gene vectors it spans.
func (w *unitWorker) search(u unit) int64 {
	g, p := w.g, w.p
	members := g.classes.members[u.class]
	n := int64(len(members))
	rep := members[0]
	var valid, fit int64
	for i := range g.nInner {
		g.setGenes(w.genes, rep, u.outer, i)
		w.valid[i] = w.sp.Decode(w.genes, &w.s)
		if !w.valid[i] {
			continue
		}
		valid++
		w.mem[i], w.memErr[i] = w.sc.Memory(&w.s)
		if w.memErr[i] != nil || p.fits(w.mem[i].TotalBytes()) {
			fit++
		}
		c := p.memoryCandidate(&w.s, g.index(rep, u.outer, i), w.mem[i], w.memErr[i])
		w.acc.noteSmallest(&c)
	}
	w.acc.visited += n * int64(g.nInner)
	w.acc.valid += n * valid
	w.acc.evaluated += n * valid
	if fit == 0 {
		return n * int64(g.nInner)
	}
	for _, l := range members {
		for i := range g.nInner {
			if !w.valid[i] || w.memErr[i] == nil && !p.fits(w.mem[i].TotalBytes()) {
				continue
			}
			g.setGenes(w.genes, l, u.outer, i)
			if !w.sp.Decode(w.genes, &w.s) {
				continue // not in a layout class's strategies (TestMemoryKey)
			}
			c := p.candidate(w.sc, &w.s, g.index(l, u.outer, i), w.mem[i], w.memErr[i], true, false)
			w.acc.addCosted(&c)
		}
	}
	return n * int64(g.nInner)
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
}

// noteSmallest records c, the candidate of a valid strategy before
// costing, if it is the smallest so far (least memory, then least index).
// c may share its Mesh slices with a decoding buffer.
func (a *accumulator) noteSmallest(c *Candidate) {
	if a.smallest != nil && (c.MemoryBytes > a.smallest.MemoryBytes || c.MemoryBytes == a.smallest.MemoryBytes && c.Index >= a.smallest.Index) {
		return
	}
	sm := *c
	sm.Strategy = cloneStrategy(c.Strategy)
	a.smallest = &sm
}

// addCosted records candidate c of a valid strategy that fits in memory
// (or whose memory the models could not estimate) and was costed; the
// caller counts it as valid and evaluated. c may share its Mesh slices
// with a decoding buffer: what is kept is copied.
func (a *accumulator) addCosted(c *Candidate) {
	if !c.Feasible() {
		a.failed++
		if a.firstErr == nil || c.Index < a.firstErrIndex {
			a.firstErr, a.firstErrIndex = c.Err, c.Index
		}
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
