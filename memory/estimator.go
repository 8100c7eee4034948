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
//     which depend on the pipeline degree, the split, the schedule's
//     placement and its loop of chunks only (kept for the last
//     maxRankSets pipelines);
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

	// sets are the candidate ranks of the last few pipelines seen (one
	// set per pipeline degree, split, loop of chunks and placement: a
	// layout's schedules, which the space varies fastest, take several),
	// rs the current strategy's and nextSet the one the next new pipeline
	// takes. sumsGen counts the changes of the terms: a set's sums are
	// those of the current terms when its gen is sumsGen. loopCounts,
	// other and rankBuf are scratch.
	sets       [maxRankSets]rankSet
	rs         *rankSet
	nextSet    int
	sumsGen    uint64
	loopCounts []int
	other      []int
	rankBuf    []int
	// flightSlot is the current strategy's slot of rs's flight terms.
	flightSlot int
}

// maxRankSets bounds the pipelines whose candidate ranks an Estimator
// keeps: a layout's schedules under one pipeline degree (1F1B and GPipe,
// the interleaved schedule's loops of chunks, V-shaped and mirrored
// placements).
const maxRankSets = 8

// rankSet is the candidate ranks of a pipeline of pp ranks under split,
// loop chunks (space.Strategy.LoopChunks) and placement pl, when ok, in
// the order Model.peakOf visits them: counts holds their layers of each
// kind, one run of len(terms) per rank. gen is the Estimator's sumsGen the
// ranks' sums are of. flightKeys are the schedules whose flight terms the
// ranks hold under those sums, nFlights of them: slot j's are
// flights[j*len(ranks):] in the ranks' order, and nextFlight the slot the
// next new schedule takes. zeroOK[z] reports whether the ranks' model
// states for ZeRO stage z are for those sums.
type rankSet struct {
	ranks      []rankEntry
	counts     []int
	pp, loop   int
	split      space.Split
	pl         space.Placement
	ok         bool
	gen        uint64
	flightKeys [maxFlights]flightKey
	nFlights   int
	nextFlight int
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
// its rankSet's counts, its sums and its model states under each ZeRO stage
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
	e := &Estimator{
		mm: mm, c: c, w: w,
		terms:   make([]kindTerms, nk),
		other:   make([]int, nk),
		rankBuf: make([]int, 0, maxRanks),
		sumsGen: 1,
	}
	for i := range e.sets {
		e.sets[i].ranks = make([]rankEntry, 0, 2*maxKinds)
		e.sets[i].counts = make([]int, 0, 2*maxKinds*nk)
	}
	return e
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
		e.recompute, e.actOffload, e.pol, e.actsOK = s.Recompute, s.ActOffload, pol, false
		e.sumsGen++
	}
	if k := (shapeKey{roles: roles, degree: s.Degree, sp: s.SP, mb: s.MB, int8: s.Int8()}); !e.shapeOK || k != e.shape {
		mm.shapeOf(e.c, e.w, &s, roles, &e.g)
		for k := range e.terms {
			mm.kindParams(&e.g, k, &e.terms[k])
		}
		e.ends = mm.ends(&e.g)
		e.micro = max(e.w.Batch/max(s.Replicas()*max(s.MB, 1), 1), 1)
		e.shape, e.shapeOK, e.actsOK = k, true, false
		e.sumsGen++
	}
	e.g.zero, e.g.policy = s.Zero, e.pol
	e.g.setOffload(&s)
	e.g.setActOffload(&s, mm.p.Spec.Layers)
	if !e.actsOK {
		for k := range e.terms {
			mm.kindActs(&e.g, k, &e.terms[k])
		}
		e.actsOK = true
		e.sumsGen++
	}
	if !e.rulesOK || s.Schedule != e.sched {
		e.sched, e.rules, e.rulesOK = s.Schedule, s.Schedule.Rules(), true
	}
	pp := max(s.Degree[space.PP], 1)
	pl := e.rules.Placement()
	if pp == 1 {
		pl = space.PlaceLinear
	}
	e.rs = e.rankSetOf(pp, e.mm.loopOf(&s, pp), s.Split, pl)
	if rs := e.rs; rs.gen != e.sumsGen {
		for i := range rs.ranks {
			en := &rs.ranks[i]
			mm.stageSums(e.terms, &e.ends, &en.st, &en.sums)
		}
		rs.gen, rs.nFlights, rs.nextFlight, rs.zeroOK = e.sumsGen, 0, 0, [numZero]bool{}
	}
	e.flightSlot = e.flightOf(flightKey{s.Schedule, s.V, s.A2AOverlap})
	b := e.peak()
	return b, hostRoom(&b, &e.c, &s)
}

// flightOf returns the slot of the current ranks' flight terms under
// schedule k, filling a slot when none holds them.
func (e *Estimator) flightOf(k flightKey) int {
	rs := e.rs
	for j := range rs.nFlights {
		if rs.flightKeys[j] == k {
			return j
		}
	}
	j := rs.nextFlight
	rs.nextFlight = (j + 1) % maxFlights
	rs.nFlights = max(rs.nFlights, j+1)
	rs.flightKeys[j] = k
	n := len(rs.ranks)
	e.fillFlight(k.v, k.a2a, rs.flights[j*n:(j+1)*n])
	return j
}

// rankSetOf returns the kept candidate ranks of a pipeline of pp ranks
// under loop chunks, split and placement pl, filling the next set when
// none holds them.
func (e *Estimator) rankSetOf(pp, loop int, split space.Split, pl space.Placement) *rankSet {
	if rs := e.rs; rs != nil && rs.ok && rs.pp == pp && rs.loop == loop && rs.split == split && rs.pl == pl {
		return rs
	}
	for i := range e.sets {
		if rs := &e.sets[i]; rs.ok && rs.pp == pp && rs.loop == loop && rs.split == split && rs.pl == pl {
			return rs
		}
	}
	rs := &e.sets[e.nextSet]
	e.nextSet = (e.nextSet + 1) % maxRankSets
	e.fillRanks(rs, pp, loop, split, pl)
	return rs
}

// fillRanks fills rs with the candidate ranks of a pipeline of pp ranks
// under split, their layers run as loop chunks of loop, and placement pl,
// as Model.peakOf visits them; their sums are for no terms yet.
func (e *Estimator) fillRanks(rs *rankSet, pp, loop int, split space.Split, pl space.Placement) {
	mm := e.mm
	nk := len(e.terms)
	rs.ranks, rs.counts = rs.ranks[:0], rs.counts[:0]
	if loop > 1 {
		// The ranks' layers in one pass (loopRanks).
		e.loopCounts = mm.loopCounts(pp, loop, split, e.loopCounts)
		e.rankBuf = loopRanks(e.loopCounts, pp, nk, e.rankBuf[:0])
	} else {
		e.rankBuf = split.CandidateRanks(mm.layers, pp, mm.kindStarts, e.rankBuf[:0])
	}
	for _, c := range e.rankBuf {
		// A paired placement's rank r holds linear ranks r and pp-1-r
		// (Model.peakOf).
		for j, r := range [2]int{c, pp - c} {
			if j == 1 && pl == space.PlaceLinear || r < 0 || r >= pp {
				continue
			}
			off := len(rs.counts)
			for range nk {
				rs.counts = append(rs.counts, 0)
			}
			rs.ranks = slices.Grow(rs.ranks, 1)[:len(rs.ranks)+1]
			en := &rs.ranks[len(rs.ranks)-1]
			en.r, en.off = r, off
			if loop > 1 {
				// A loop of chunks is a linear placement
				// (space.Strategy.LoopChunks).
				copy(rs.counts[off:off+nk], e.loopCounts[r*nk:(r+1)*nk])
				en.st = linearStage(r, pp, rs.counts[off:off+nk])
			} else {
				en.st = mm.rankStage(r, pp, loop, split, pl, rs.counts[off:off+nk], e.other)
			}
		}
	}
	// The counts may have moved while they grew.
	for i := range rs.ranks {
		en := &rs.ranks[i]
		en.st.counts = rs.counts[en.off : en.off+nk : en.off+nk]
	}
	if n := maxFlights * len(rs.ranks); n > cap(rs.flights) {
		rs.flights = make([]flightTerms, n)
	} else {
		rs.flights = rs.flights[:n]
	}
	rs.pp, rs.split, rs.loop, rs.pl, rs.ok, rs.gen = pp, split, loop, pl, true, 0
}

// fillFlight fills fl, one per rank, with the ranks' flight terms under
// the current schedule with v virtual stages, a2a its EP overlap
// (Model.peakOf).
func (e *Estimator) fillFlight(v int, a2a bool, fl []flightTerms) {
	mm, rules, rs := e.mm, &e.rules, e.rs
	pp, m := rs.pp, e.micro
	v = rules.VirtualStages(v)
	last := rules.HeadInFlight(pp, v, m)
	var bufs bufTerms
	for i := range rs.ranks {
		en := &rs.ranks[i]
		en.st.inFlight, en.st.lastInFlight = rules.InFlight(en.r, pp, v, m)+a2aOverlapInFlight(a2a, m, en.st.counts), last
		mm.flightTerms(&e.g, &e.ends, &en.st, &en.sums, &fl[i], &bufs)
	}
}

// peak returns the busiest of the current ranks under the current
// geometry (its ZeRO stage included) and flight terms (Model.peakOf).
func (e *Estimator) peak() Breakdown {
	z, rs := e.g.zero, e.rs
	n := len(rs.ranks)
	if n == 0 {
		return Breakdown{} // as Model.peakOf without a candidate rank
	}
	flights := rs.flights[e.flightSlot*n : (e.flightSlot+1)*n]
	var bz busiest
	best := 0
	if z < 0 || z >= numZero || e.g.hostOpt > 0 {
		// A stage whose states are not kept, or a host offload (rare:
		// the search does not try it), priced afresh.
		var st, peakS rankStates
		for i := range rs.ranks {
			e.mm.rankStates(&e.g, &rs.ranks[i].sums, &st)
			if bz.offer(st.totals(&flights[i])) {
				best, peakS = i, st
			}
		}
		return bz.of(peakS.phases(&flights[best]))
	}
	if !rs.zeroOK[z] {
		for i := range rs.ranks {
			en := &rs.ranks[i]
			e.mm.rankStates(&e.g, &en.sums, &en.states[z])
		}
		rs.zeroOK[z] = true
	}
	for i := range rs.ranks {
		if bz.offer(rs.ranks[i].states[z].totals(&flights[i])) {
			best = i
		}
	}
	return bz.of(rs.ranks[best].states[z].phases(&flights[best]))
}
