package memory

import (
	"slices"

	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// Estimator estimates the memory of many strategies of one Model on one
// cluster and workload, as Estimate does, keeping what the previous
// strategies' memory was computed from for the next one in layers that a
// change of one gene invalidates alone (a search changes the fastest genes
// most often):
//
//   - the geometry, the layer kinds' parameter terms and the end terms,
//     which depend on the roles' degrees, the parallel degrees, sequence
//     parallelism and the micro-batch size (a shapeKey), not on the ZeRO
//     stage, the recompute policy or the pipeline schedule;
//   - the layer kinds' activation terms, which depend on the shape and the
//     recompute policy;
//   - the pipeline's candidate ranks and the layers of each kind they hold,
//     which depend on the pipeline degree and the schedule's placement only;
//   - each candidate rank's sums of the terms above;
//   - each candidate rank's activations and buffers, which depend on the
//     sums and the micro-batches in flight (the schedule and its virtual
//     stages; kept for the last maxFlights schedules), and its model
//     states, which depend on the sums and the ZeRO stage (kept for every
//     stage below numZero).
//
// A strategy that differs from the previous one only in its schedule or
// ZeRO stage (space.Space's genes: the schedule fastest, then the ZeRO
// stage, the recompute policy, the micro-batch size and the layout) then
// costs the comparison of its mesh with the previous one's and, once that
// schedule's flight terms and that stage's states are kept, a sum per
// candidate rank. Placements with the same role degrees, degrees and
// sequence parallelism share all the terms. The breakdowns are
// Model.Estimate's, bit for bit. It is not safe for concurrent use: use
// one per goroutine.
type Estimator struct {
	mm *Model
	c  profiles.Cluster
	w  space.Workload

	// mesh is the last placement whose role degrees it holds.
	mesh meshRoles

	// shape is the key that g (less its zero and policy), the parameter
	// terms of terms and ends are for, when shapeOK; micro is g.micro as
	// an int, the strategy's micro-batches per step.
	shape   shapeKey
	shapeOK bool
	g       geometry
	terms   []kindTerms
	ends    endTerms
	micro   int

	// recompute is the recompute policy, of index pol, and actOffload the
	// offloaded layers (space.Strategy.ActOffload) that the activation
	// terms of terms are for, when actsOK.
	recompute  string
	actOffload int
	pol        int
	actsOK     bool

	// sched is the schedule whose rules are rules, when rulesOK.
	sched   space.Schedule
	rules   space.Rules
	rulesOK bool

	// ranks are the candidate ranks of a pipeline of ranksPP ranks under
	// split ranksSplit, loop chunks ranksLoop and placement ranksPl, when ranksOK, in the order Model.peakOf visits
	// them; counts holds their layers of each kind, one run of len(terms)
	// per rank, and other and rankBuf are scratch. sumsOK reports whether
	// the ranks' sums are those of the current terms.
	ranks      []rankEntry
	ranksPP    int
	ranksSplit space.Split
	ranksLoop  int
	ranksPl    space.Placement
	ranksOK    bool
	sumsOK     bool
	counts     []int
	// loopCounts are every rank's layers of each kind under a loop of
	// chunks (Model.loopCounts), scratch of fillRanks.
	loopCounts []int
	other      []int
	rankBuf    []int

	// flightKeys are the schedules whose flight terms the ranks hold under
	// the current sums, nFlights of them: slot j's are flights[j*len(ranks):]
	// in the ranks' order. flightSlot is the current strategy's slot, and
	// nextFlight the slot the next new schedule takes. zeroOK[z] reports
	// whether the ranks' model states for ZeRO stage z are for the current
	// sums.
	flightKeys [maxFlights]flightKey
	nFlights   int
	nextFlight int
	flightSlot int
	flights    []flightTerms
	zeroOK     [numZero]bool
}

// numZero bounds the ZeRO stages whose model states an Estimator keeps per
// candidate rank (0, 1 and 2: all the stages a strategy takes).
const numZero = 3

// maxFlights bounds the schedules whose flight terms an Estimator keeps
// per candidate rank: more than a space lists for one pipeline degree.
const maxFlights = 16

// flightKey is what a rank's flight terms read of a strategy besides its
// shape and recompute policy: its schedule and virtual stages.
type flightKey struct {
	schedule space.Schedule
	v        int
	a2a      bool // space.Strategy.A2AOverlap (a2aOverlapInFlight)
}

// maxMeshShares bounds the shares per dimension of the placements whose
// role degrees an Estimator keeps.
const maxMeshShares = 4

// meshRoles are the role degrees (space.Strategy.RoleDegrees) of a
// placement on the Estimator's cluster, and a copy of what they were
// computed from: the degrees and the mesh, when ok.
type meshRoles struct {
	degree space.Degrees
	n      [space.NumDims]int
	shares [space.NumDims][maxMeshShares]space.Share
	roles  [space.NumRoles]int
	ok     bool
}

// of returns the role degrees of s when they are the kept ones.
func (mr *meshRoles) of(s *space.Strategy) ([space.NumRoles]int, bool) {
	if !mr.ok || s.Degree != mr.degree {
		return mr.roles, false
	}
	for d := range s.Mesh {
		if len(s.Mesh[d]) != mr.n[d] {
			return mr.roles, false
		}
		for i, sh := range s.Mesh[d] {
			if sh != mr.shares[d][i] {
				return mr.roles, false
			}
		}
	}
	return mr.roles, true
}

// keep keeps roles as the role degrees of s, unless its mesh has more
// shares per dimension than it has room for.
func (mr *meshRoles) keep(s *space.Strategy, roles [space.NumRoles]int) {
	mr.ok = false
	for d := range s.Mesh {
		if len(s.Mesh[d]) > maxMeshShares {
			return
		}
		mr.n[d] = copy(mr.shares[d][:], s.Mesh[d])
	}
	mr.degree, mr.roles, mr.ok = s.Degree, roles, true
}

// roleDegrees returns s.RoleDegrees(e.c), from the kept placement's when
// s has its degrees and mesh.
func (e *Estimator) roleDegrees(s *space.Strategy) ([space.NumRoles]int, error) {
	if roles, ok := e.mesh.of(s); ok {
		return roles, nil
	}
	roles, err := s.RoleDegrees(e.c)
	if err == nil {
		e.mesh.keep(s, roles)
	}
	return roles, err
}

// shapeKey is what Model.shapeOf reads of a strategy: its roles' degrees
// (of its placement on the cluster), parallel degrees, sequence
// parallelism and micro-batch size.
type shapeKey struct {
	roles  [space.NumRoles]int
	degree space.Degrees
	sp     bool
	mb     int
	int8   bool
}

// rankEntry is one candidate pipeline rank r of an Estimator: its stage
// (the layers it holds; its micro-batches in flight are those of the last
// schedule whose flight terms were filled), where its counts start in
// Estimator.counts, its sums and its model states under each ZeRO stage
// below numZero.
type rankEntry struct {
	r      int
	off    int
	st     stage
	sums   stageSums
	states [numZero]rankStates
}

// NewEstimator returns an Estimator of mm on cluster c (copied) with
// workload w.
func (mm *Model) NewEstimator(c profiles.Cluster, w space.Workload) *Estimator {
	c.Axes = append([]profiles.Axis(nil), c.Axes...)
	nk := len(mm.p.Kinds)
	return &Estimator{
		mm: mm, c: c, w: w,
		terms:   make([]kindTerms, nk),
		other:   make([]int, nk),
		ranks:   make([]rankEntry, 0, 2*maxKinds),
		counts:  make([]int, 0, 2*maxKinds*nk),
		rankBuf: make([]int, 0, maxRanks),
	}
}

// Estimate returns the per-chip memory of strategy s (validated; placed
// or not), as Model.Estimate does on the Estimator's cluster and workload.
// It does not allocate once it has seen a pipeline of as many candidate
// ranks.
func (e *Estimator) Estimate(s space.Strategy) (Breakdown, error) {
	mm := e.mm
	roles, err := e.roleDegrees(&s)
	if err != nil {
		return mm.Estimate(e.c, e.w, s) // its error, as Estimate words it
	}
	if !e.actsOK || s.Recompute != e.recompute || s.ActOffload != e.actOffload {
		pol, ok := mm.policy(s.Recompute)
		if !ok {
			return mm.Estimate(e.c, e.w, s) // its error, as Estimate words it
		}
		e.recompute, e.actOffload, e.pol, e.actsOK, e.sumsOK = s.Recompute, s.ActOffload, pol, false, false
	}
	if k := (shapeKey{roles: roles, degree: s.Degree, sp: s.SP, mb: s.MB, int8: s.Int8()}); !e.shapeOK || k != e.shape {
		mm.shapeOf(e.c, e.w, &s, roles, &e.g)
		for k := range e.terms {
			mm.kindParams(&e.g, k, &e.terms[k])
		}
		e.ends = mm.ends(&e.g)
		e.micro = max(e.w.Batch/max(s.Replicas()*max(s.MB, 1), 1), 1)
		e.shape, e.shapeOK, e.actsOK, e.sumsOK = k, true, false, false
	}
	e.g.zero, e.g.policy = s.Zero, e.pol
	e.g.setOffload(&s)
	e.g.setActOffload(&s, mm.p.Spec.Layers)
	if !e.actsOK {
		for k := range e.terms {
			mm.kindActs(&e.g, k, &e.terms[k])
		}
		e.actsOK, e.sumsOK = true, false
	}
	if !e.rulesOK || s.Schedule != e.sched {
		e.sched, e.rules, e.rulesOK = s.Schedule, s.Schedule.Rules(), true
	}
	pp := max(s.Degree[space.PP], 1)
	pl := e.rules.Placement()
	if pp == 1 {
		pl = space.PlaceLinear
	}
	if loop := e.mm.loopOf(&s, pp); !e.ranksOK || pp != e.ranksPP || pl != e.ranksPl || s.Split != e.ranksSplit || loop != e.ranksLoop {
		e.fillRanks(pp, loop, s.Split, pl)
		e.sumsOK = false
	}
	if !e.sumsOK {
		for i := range e.ranks {
			en := &e.ranks[i]
			mm.stageSums(e.terms, &e.ends, &en.st, &en.sums)
		}
		e.sumsOK, e.nFlights, e.nextFlight, e.zeroOK = true, 0, 0, [numZero]bool{}
	}
	e.flightSlot = e.flightOf(flightKey{s.Schedule, s.V, s.A2AOverlap})
	b := e.peak()
	return b, hostRoom(&b, &e.c, &s)
}

// flightOf returns the slot of the ranks' flight terms under schedule k,
// filling a slot when none holds them.
func (e *Estimator) flightOf(k flightKey) int {
	for j := range e.nFlights {
		if e.flightKeys[j] == k {
			return j
		}
	}
	j := e.nextFlight
	e.nextFlight = (j + 1) % maxFlights
	e.nFlights = max(e.nFlights, j+1)
	e.flightKeys[j] = k
	n := len(e.ranks)
	e.fillFlight(k.v, k.a2a, e.flights[j*n:(j+1)*n])
	return j
}

// fillRanks fills e.ranks with the candidate ranks of a pipeline of pp
// ranks under split, their layers run as loop chunks of loop, and
// placement pl, as Model.peakOf visits them.
func (e *Estimator) fillRanks(pp, loop int, split space.Split, pl space.Placement) {
	mm := e.mm
	nk := len(e.terms)
	e.rankBuf = split.LoopCandidateRanks(mm.layers, pp, loop, mm.kindStarts, e.rankBuf[:0])
	e.ranks, e.counts = e.ranks[:0], e.counts[:0]
	if loop > 1 {
		// The ranks' layers in one pass; a middle rank holding what the
		// rank before it holds has no more in flight, so it is not a
		// candidate (space.CandidateRanks).
		e.loopCounts = mm.loopCounts(pp, loop, split, e.loopCounts)
		e.rankBuf = e.rankBuf[:0]
		for r := range pp {
			if r == 0 || r == pp-1 || !slices.Equal(e.loopCounts[r*nk:(r+1)*nk], e.loopCounts[(r-1)*nk:r*nk]) {
				e.rankBuf = append(e.rankBuf, r)
			}
		}
	}
	for _, c := range e.rankBuf {
		// A paired placement's rank r holds linear ranks r and pp-1-r
		// (Model.peakOf).
		for j, r := range [2]int{c, pp - c} {
			if j == 1 && pl == space.PlaceLinear || r < 0 || r >= pp {
				continue
			}
			off := len(e.counts)
			for range nk {
				e.counts = append(e.counts, 0)
			}
			e.ranks = slices.Grow(e.ranks, 1)[:len(e.ranks)+1]
			en := &e.ranks[len(e.ranks)-1]
			en.r, en.off = r, off
			if loop > 1 {
				// A loop of chunks is a linear placement
				// (space.Strategy.LoopChunks).
				copy(e.counts[off:off+nk], e.loopCounts[r*nk:(r+1)*nk])
				en.st = linearStage(r, pp, e.counts[off:off+nk])
			} else {
				en.st = mm.rankStage(r, pp, loop, split, pl, e.counts[off:off+nk], e.other)
			}
		}
	}
	// The counts may have moved while they grew.
	for i := range e.ranks {
		en := &e.ranks[i]
		en.st.counts = e.counts[en.off : en.off+nk : en.off+nk]
	}
	if n := maxFlights * len(e.ranks); n > cap(e.flights) {
		e.flights = make([]flightTerms, n)
	} else {
		e.flights = e.flights[:n]
	}
	e.ranksPP, e.ranksSplit, e.ranksLoop, e.ranksPl, e.ranksOK = pp, split, loop, pl, true
}

// fillFlight fills fl, one per rank, with the ranks' flight terms under
// the current schedule with v virtual stages, a2a its EP overlap
// (Model.peakOf).
func (e *Estimator) fillFlight(v int, a2a bool, fl []flightTerms) {
	mm, rules := e.mm, &e.rules
	pp, m := e.ranksPP, e.micro
	v = rules.VirtualStages(v)
	last := rules.HeadInFlight(pp, v, m)
	var bufs bufTerms
	for i := range e.ranks {
		en := &e.ranks[i]
		en.st.inFlight, en.st.lastInFlight = rules.InFlight(en.r, pp, v, m)+a2aOverlapInFlight(a2a, m, en.st.counts), last
		mm.flightTerms(&e.g, &e.ends, &en.st, &en.sums, &fl[i], &bufs)
	}
}

// peak returns the busiest of e.ranks under the current geometry (its
// ZeRO stage included) and flight terms (Model.peakOf).
func (e *Estimator) peak() Breakdown {
	z := e.g.zero
	n := len(e.ranks)
	if n == 0 {
		return Breakdown{} // as Model.peakOf without a candidate rank
	}
	flights := e.flights[e.flightSlot*n : (e.flightSlot+1)*n]
	var bz busiest
	best := 0
	if z < 0 || z >= numZero || e.g.hostOpt > 0 {
		// A stage whose states are not kept, or a host offload (rare:
		// the search does not try it), priced afresh.
		var rs, peakS rankStates
		for i := range e.ranks {
			e.mm.rankStates(&e.g, &e.ranks[i].sums, &rs)
			if bz.offer(rs.totals(&flights[i])) {
				best, peakS = i, rs
			}
		}
		return bz.of(peakS.phases(&flights[best]))
	}
	if !e.zeroOK[z] {
		for i := range e.ranks {
			en := &e.ranks[i]
			e.mm.rankStates(&e.g, &en.sums, &en.states[z])
		}
		e.zeroOK[z] = true
	}
	for i := range e.ranks {
		if bz.offer(e.ranks[i].states[z].totals(&flights[i])) {
			best = i
		}
	}
	return bz.of(e.ranks[best].states[z].phases(&flights[best]))
}
