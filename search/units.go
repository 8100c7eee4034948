package search

import (
	"cmp"
	"context"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/meshplan/meshplan/memory"
	"github.com/meshplan/meshplan/space"
)

// grid is the split of a space's genes that the exhaustive search walks:
// the first gene's choices grouped into layout classes, the outer genes
// (between the first and the inner ones) and the inner genes (the last
// three, or fewer when their product is too large), whose values share
// one memory table per unit. In a space.Space the outer gene is the
// micro-batch size and the inner ones the recompute policy, the ZeRO
// stage and the schedule: a layout's strategies of one micro-batch size
// are costed one after the other, which lets a cost.Evaluator keep their
// forward passes.
type grid struct {
	cards      []int
	classes    layoutClasses
	innerStart int   // index of the first inner gene (at least 1)
	nOuter     int64 // product of the outer genes' cardinalities
	nInner     int   // product of the inner genes' cardinalities
}

// maxInner bounds the product of the inner genes' cardinalities, and
// maxInnerGenes their number.
const (
	maxInner      = 1 << 12
	maxInnerGenes = 3
)

// newGrid splits the genes of cardinalities cards.
func newGrid(cards []int, lc layoutClasses) *grid {
	g := &grid{cards: cards, classes: lc, innerStart: len(cards), nOuter: 1, nInner: 1}
	for g.innerStart > 1 && len(cards)-g.innerStart < maxInnerGenes && g.nInner*cards[g.innerStart-1] <= maxInner {
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

// size is the number of gene vectors of unit u.
func (g *grid) size(u unit) int64 {
	return int64(len(g.classes.members[u.class])) * int64(g.nInner)
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

// unitSearch says how searchUnits runs.
type unitSearch struct {
	// workers is the number of goroutines (zero: GOMAXPROCS), chunk the
	// number of units they take at a time (zero: DefaultChunkSize).
	workers, chunk int
	// progress, when not nil, is called with the gene vectors visited and
	// total.
	progress func(done, total int64)
	total    int64
	// unbounded costs every strategy that fits.
	unbounded bool
	// maxKept bounds the inner values that fit the first pass keeps for
	// the second; zero means maxKeptFits.
	maxKept int64
	// seed are feasible strategies of the space costed before, whose
	// points the branch and bound starts from.
	seed []Candidate
}

// searchUnits searches the given units of grid g over p's space sp as o
// says and returns what it found: the counts of every gene vector of the
// units, the Pareto front of their strategies and the one with the least
// memory.
//
// It runs in two passes. The first estimates the memory of every unit
// (one layout of its class, see layoutClasses) and a lower bound on the
// step time of what fits (LowerBounder), and counts. The second costs the
// units that have something that fits, in ascending order of their lower
// bound, so that the fast strategies come first, and skips (branch and
// bound) the strategies whose lower bound is already beaten by a costed
// strategy of no more memory: one that is either faster than the bound or
// as fast with less memory, so that the skipped strategy cannot be on the
// front nor tie with a row of it (Front keeps one strategy per point). The
// workers share the costed points (staircase). The front and the counts do
// not depend on the order, the workers or which strategies were skipped: a
// skipped strategy fits and counts as feasible (every valid strategy that
// fits can be costed: Result.Failed is 0, TestEveryValidStrategyCosts).
func (p *Problem) searchUnits(ctx context.Context, sp Space, g *grid, units []unit, o unitSearch) *accumulator {
	workers, chunk := o.workers, o.chunk
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if chunk <= 0 {
		chunk = DefaultChunkSize
	}
	workers = max(min(workers, (len(units)+chunk-1)/chunk), 1)
	var (
		done   atomic.Int64
		stairs sharedStaircase
		ws     = make([]*unitWorker, workers)
	)
	for i := range ws {
		ws[i] = p.newUnitWorker(sp, g, &stairs)
		if o.unbounded {
			ws[i].bound = nil
		}
	}
	for i := range o.seed {
		stairs.add(o.seed[i].MemoryBytes, o.seed[i].StepSeconds)
	}
	// The gene vectors of the total in no unit (layouts no class holds:
	// invalid) are visited at once, so that a finished search reports its
	// whole total, the count its result states.
	var inUnits int64
	for _, u := range units {
		inUnits += g.size(u)
	}
	done.Add(max(o.total-inUnits, 0))
	stopProgress := startProgress(o.progress, &done, o.total)

	// First pass: memory, bounds and counts of every unit, and what fits
	// (up to maxKeptFits inner values in all).
	bounds := make([]float64, len(units))
	fitting := make([][]fitEntry, len(units))
	var kept atomic.Int64
	for _, w := range ws {
		w.kept, w.maxKept = &kept, o.maxKept
		if w.maxKept <= 0 {
			w.maxKept = maxKeptFits
		}
	}
	parallel(ctx, ws, len(units), chunk, func(w *unitWorker, k int) {
		bounds[k], fitting[k] = w.survey(units[k])
		if math.IsInf(bounds[k], 1) {
			done.Add(g.size(units[k]))
		}
	})
	// Second pass: cost what fits, the units with the least bound first.
	var order []int
	for k, b := range bounds {
		if !math.IsInf(b, 1) {
			order = append(order, k)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(bounds[a], bounds[b]) })
	parallel(ctx, ws, len(order), chunk, func(w *unitWorker, k int) {
		u := units[order[k]]
		w.search(u, fitting[order[k]])
		done.Add(g.size(u))
	})
	stopProgress()

	var all accumulator
	for _, w := range ws {
		all.merge(&w.acc)
	}
	return &all
}

// parallel calls f(w, k) for every k below n, on one goroutine per worker
// of ws, which take chunk consecutive values of k at a time; it stops
// early when ctx is done.
func parallel(ctx context.Context, ws []*unitWorker, n, chunk int, f func(w *unitWorker, k int)) {
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				lo := int(next.Add(int64(chunk))) - chunk
				if lo >= n {
					return
				}
				for k := lo; k < min(lo+chunk, n); k++ {
					f(w, k)
				}
			}
		}()
	}
	wg.Wait()
}

// unitWorker is one goroutine of a unit search: its scorer, buffers and
// what it has found.
type unitWorker struct {
	p      *Problem
	sp     Space
	skip   skipper      // nil when sp does not skip
	inner  innerDecoder // nil when sp does not decode the inner genes alone
	g      *grid
	sc     Scorer
	bound  LowerBounder // nil when sc bounds nothing
	stairs *sharedStaircase
	genes  []int
	s      space.Strategy
	// cand is the candidate being costed (fillCandidate): the
	// accumulator copies those it keeps.
	cand Candidate
	// mem, memErr, valid, fits and lb are the memory table of the current
	// unit, per inner value, and the lower bound of what fits.
	mem    []memory.Breakdown
	memErr []error
	valid  []bool
	fits   []bool
	lb     []float64
	// left and kept1 are scratch for the inner values search costs and
	// those of a unit whose table it estimates again; kept counts the
	// inner values the surveys of all workers keep.
	left, kept1 []fitEntry
	// leftGenes holds the gene vectors of left's inner values, one after
	// the other (search).
	leftGenes []int
	kept      *atomic.Int64
	maxKept   int64
	acc       accumulator
	// hides says, per schedule met, whether it hides the MoE dispatch and
	// combine (hidesDispatch).
	hides []scheduleHides
}

// decode decodes genes (in range) into w.s, and reports whether the
// strategy is valid; sameLayout says w.s holds a decoding of the same
// layout gene (decodeIn).
func (w *unitWorker) decode(genes []int, sameLayout bool) bool {
	return decodeIn(w.sp, w.inner, genes, &w.s, sameLayout)
}

// decodeIn decodes genes (in range) into s with sp, and reports whether
// the strategy is valid: the genes but the layout's alone when s holds a
// decoding of the same layout gene (sameLayout) and sp can (in, sp's
// innerDecoder or nil).
func decodeIn(sp Space, in innerDecoder, genes []int, s *space.Strategy, sameLayout bool) bool {
	if sameLayout && in != nil {
		return in.DecodeInner(genes, s)
	}
	return sp.Decode(genes, s)
}

// innerDecoder is a Space that decodes the genes but the first (the
// layout) into a strategy holding a decoding of the same first gene
// (space.Space.DecodeInner).
type innerDecoder interface {
	DecodeInner(genes []int, dst *space.Strategy) bool
}

// scheduleHides is whether a schedule hides the MoE dispatch and combine.
type scheduleHides struct {
	schedule space.Schedule
	hides    bool
}

// hidesDispatch reports whether schedule sc hides the MoE dispatch and
// combine under the paired chunk's compute, looking its rules up once per
// schedule: every strategy search costs asks.
func (w *unitWorker) hidesDispatch(sc space.Schedule) bool {
	for _, h := range w.hides {
		if h.schedule == sc {
			return h.hides
		}
	}
	h := sc.Rules().Overlaps().Has(space.OverlapExpertA2A)
	w.hides = append(w.hides, scheduleHides{schedule: sc, hides: h})
	return h
}

// newUnitWorker returns a worker over grid g of space sp that shares the
// costed points of stairs.
func (p *Problem) newUnitWorker(sp Space, g *grid, stairs *sharedStaircase) *unitWorker {
	w := &unitWorker{p: p, sp: sp, g: g, sc: p.worker(), stairs: stairs, genes: make([]int, len(g.cards)),
		mem: make([]memory.Breakdown, g.nInner), memErr: make([]error, g.nInner), valid: make([]bool, g.nInner),
		fits: make([]bool, g.nInner), lb: make([]float64, g.nInner)}
	w.bound, _ = w.sc.(LowerBounder)
	w.skip, _ = sp.(skipper)
	w.inner, _ = sp.(innerDecoder)
	return w
}

// skipper is a Space that says how many gene vectors, from a vector in
// range on in mixed-radix order, certainly decode as invalid
// ([space.Space.Skip]; 0 for a valid one), so that a unit's table jumps
// over them instead of decoding each.
type skipper interface {
	Skip(genes []int) int64
}

// table fills the memory table of unit u from its class's first layout,
// with the lower bound of each value that fits, and returns the number of
// valid values, of those that fit and the least bound (+Inf when nothing
// fits).
func (w *unitWorker) table(u unit) (valid, fit int64, least float64) {
	g, p := w.g, w.p
	rep := g.classes.members[u.class][0]
	least = math.Inf(1)
	for i := 0; i < g.nInner; i++ {
		g.setGenes(w.genes, rep, u.outer, i)
		if w.skip != nil {
			// The inner values are the last genes, so the vectors skipped
			// are the next inner values, up to the unit's last.
			if n := w.skip.Skip(w.genes); n > 0 {
				end := int(min(int64(i)+n, int64(g.nInner)))
				for j := i; j < end; j++ {
					w.valid[j], w.fits[j] = false, false
				}
				i = end - 1
				continue
			}
		}
		w.valid[i] = w.sp.Decode(w.genes, &w.s)
		w.fits[i] = false
		if !w.valid[i] {
			continue
		}
		valid++
		w.mem[i], w.memErr[i] = w.sc.Memory(&w.s)
		if w.memErr[i] != nil || !p.fits(w.mem[i].TotalBytes()) {
			continue
		}
		w.fits[i] = true
		fit++
		w.lb[i] = 0
		if w.bound != nil {
			w.lb[i] = w.bound.LowerBound(&w.s)
		}
		least = min(least, w.lb[i])
	}
	return valid, fit, least
}

// fitEntry is an inner value of a unit whose strategies fit in memory:
// the value, their memory per chip and the lower bound on their step time.
type fitEntry struct {
	inner     int
	total, lb float64
}

// maxKeptFits bounds the inner values that fit a unit search keeps from
// its first pass to its second (fitEntry, 24 bytes each); the second pass
// estimates the memory of the units beyond it again.
const maxKeptFits = 1 << 21

// survey counts the gene vectors of unit u and notes its smallest
// strategy, and returns the least lower bound on the step time of what
// fits (+Inf when nothing fits) and the inner values that fit, ascending
// (nil when nothing fits or the search keeps its maximum, maxKeptFits by
// default, already). It
// counts every strategy that fits as feasible; search takes back those
// the cost model rejects.
func (w *unitWorker) survey(u unit) (float64, []fitEntry) {
	g, p := w.g, w.p
	members := g.classes.members[u.class]
	n := int64(len(members))
	valid, fit, least := w.table(u)
	rep := members[0]
	for i := range g.nInner {
		if !w.valid[i] {
			continue
		}
		if w.memErr[i] != nil {
			// The models cannot describe the class's strategies: they
			// count as failed, the least index standing for all.
			w.acc.failed += n
			if idx := g.index(rep, u.outer, i); w.acc.firstErr == nil || idx < w.acc.firstErrIndex {
				w.acc.firstErr, w.acc.firstErrIndex = w.memErr[i], idx
			}
		}
		if total, idx := w.mem[i].TotalBytes(), g.index(rep, u.outer, i); w.acc.smaller(total, idx) {
			g.setGenes(w.genes, rep, u.outer, i)
			w.sp.Decode(w.genes, &w.s)
			c := p.memoryCandidate(&w.s, idx, w.mem[i], w.memErr[i])
			w.acc.noteSmallest(&c)
		}
	}
	w.acc.visited += n * int64(g.nInner)
	w.acc.valid += n * valid
	w.acc.evaluated += n * valid
	w.acc.feasible += n * fit
	if fit == 0 || w.kept.Add(fit) > w.maxKept {
		return least, nil
	}
	fits := make([]fitEntry, 0, fit)
	for i := range g.nInner {
		if w.fits[i] {
			fits = append(fits, fitEntry{inner: i, total: w.mem[i].TotalBytes(), lb: w.lb[i]})
		}
	}
	return least, fits
}

// search costs the strategies of unit u that fit in memory (fits, from
// survey), but those a costed strategy of no more memory beats (see
// searchUnits). The memory of what is left is estimated again, on the
// class's first layout, for the candidates' breakdowns.
func (w *unitWorker) search(u unit, fits []fitEntry) {
	g, p := w.g, w.p
	fresh := fits == nil
	if fresh {
		// The survey kept nothing of u (maxKeptFits): its table again.
		w.table(u)
		fits = w.kept1[:0]
		for i := range g.nInner {
			if w.fits[i] {
				fits = append(fits, fitEntry{inner: i, total: w.mem[i].TotalBytes(), lb: w.lb[i]})
			}
		}
		w.kept1 = fits
	}
	stairs := w.stairs.load()
	left := w.left[:0]
	for _, f := range fits {
		if !stairs.beats(f.total, f.lb) {
			left = append(left, f)
		}
	}
	w.left = left
	if len(left) == 0 {
		return
	}
	// The gene vectors of the inner values left, on the class's first
	// layout: each layout's differ from them in the first gene alone.
	rep, n := g.classes.members[u.class][0], len(g.cards)
	w.leftGenes = slices.Grow(w.leftGenes[:0], len(left)*n)[:len(left)*n]
	for j, f := range left {
		g.setGenes(w.leftGenes[j*n:(j+1)*n], rep, u.outer, f.inner)
	}
	if !fresh {
		for j, f := range left {
			w.sp.Decode(w.leftGenes[j*n:(j+1)*n], &w.s)
			w.mem[f.inner], w.memErr[f.inner] = w.sc.Memory(&w.s) // as survey found it: no error, fits
		}
	}
	for _, l := range g.classes.members[u.class] {
		// The placement's MoE dispatch and combine, the same for every
		// inner value whose schedule does not hide them (computed on first
		// need, -1 before), tighten the unit's bounds.
		comm := -1.0
		stairs = w.stairs.load()
		for j, f := range left {
			i := f.inner
			genes := w.leftGenes[j*n : (j+1)*n]
			if n > 0 {
				genes[0] = l
			}
			if !w.decode(genes, j > 0) {
				continue // not in a layout class's strategies (TestMemoryKey)
			}
			if w.bound != nil && !w.s.A2AOverlap && !w.hidesDispatch(w.s.Schedule) {
				if comm < 0 {
					comm = w.bound.DispatchBound(&w.s)
				}
				if comm > 0 && stairs.beats(f.total, f.lb+comm) {
					continue
				}
			}
			c := &w.cand
			p.fillCandidate(c, w.sc, &w.s, g.index(l, u.outer, i), &w.mem[i], nil, true, false)
			if !c.Feasible() {
				w.acc.feasible-- // survey counted it
			}
			if w.acc.addCosted(c) {
				w.stairs.add(c.MemoryBytes, c.StepSeconds)
			}
		}
	}
}

// staircase is a set of feasible (memory, step time) points that do not
// dominate one another, by ascending memory and so descending step time.
// It is immutable: with returns a new one.
type staircase struct {
	mem, step []float64
}

// beats reports whether a point of s strictly beats every strategy of
// memory mem whose step time is at least lb: it is faster than lb with no
// more memory, or as fast as lb with less memory.
func (s *staircase) beats(mem, lb float64) bool {
	j := sort.SearchFloat64s(s.mem, math.Nextafter(mem, math.Inf(1))) - 1 // the last point with memory <= mem
	if j < 0 {
		return false
	}
	return s.step[j] < lb || s.step[j] == lb && s.mem[j] < mem
}

// with returns s with the point (mem, step) added and the points it
// dominates removed, and false when a point of s already dominates or
// equals it (s is returned).
func (s *staircase) with(mem, step float64) (*staircase, bool) {
	j := sort.SearchFloat64s(s.mem, math.Nextafter(mem, math.Inf(1))) - 1
	if j >= 0 && s.step[j] <= step {
		return s, false
	}
	out := &staircase{mem: make([]float64, 0, len(s.mem)+1), step: make([]float64, 0, len(s.mem)+1)}
	added := false
	for k := range s.mem {
		if !added && s.mem[k] >= mem {
			out.mem, out.step = append(out.mem, mem), append(out.step, step)
			added = true
		}
		if s.mem[k] >= mem && s.step[k] >= step {
			continue // dominated by the new point
		}
		out.mem, out.step = append(out.mem, s.mem[k]), append(out.step, s.step[k])
	}
	if !added {
		out.mem, out.step = append(out.mem, mem), append(out.step, step)
	}
	return out, true
}

// sharedStaircase is a staircase that the workers of a search read without
// locking and add to under a lock.
type sharedStaircase struct {
	mu  sync.Mutex
	cur atomic.Pointer[staircase]
}

// load returns the current staircase.
func (ss *sharedStaircase) load() *staircase {
	if s := ss.cur.Load(); s != nil {
		return s
	}
	return &staircase{}
}

// add adds the point (mem, step).
func (ss *sharedStaircase) add(mem, step float64) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if s, ok := ss.load().with(mem, step); ok {
		ss.cur.Store(s)
	}
}
