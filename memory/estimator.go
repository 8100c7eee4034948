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
//     stages), and its model states, which depend on the sums and the
//     ZeRO stage (kept for every stage below numZero).
//
// A strategy whose genes but the ZeRO stage, the recompute policy and the
// schedule are the previous one's then costs its role degrees and the sum
// of each candidate rank's kept terms. The breakdowns are
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

	// recompute is the recompute policy, of index pol, that the activation
	// terms of terms are for, when actsOK.
	recompute string
	pol       int
	actsOK    bool

	// sched is the schedule whose rules are rules, when rulesOK.
	sched   space.Schedule
	rules   space.Rules
	rulesOK bool

	// ranks are the candidate ranks of a pipeline of ranksPP ranks under
	// placement ranksPl, when ranksOK, in the order Model.peakOf visits
	// them; counts holds their layers of each kind, one run of len(terms)
	// per rank, and other and rankBuf are scratch. sumsOK reports whether
	// the ranks' sums are those of the current terms.
	ranks   []rankEntry
	ranksPP int
	ranksPl space.Placement
	ranksOK bool
	sumsOK  bool
	counts  []int
	other   []int
	rankBuf []int

	// flightOK reports whether the ranks' flight terms are for the schedule
	// flightSched with flightV virtual stages (and the current sums);
	// zeroOK[z] whether their model states for ZeRO stage z are for the
	// current sums.
	flightSched space.Schedule
	flightV     int
	flightOK    bool
	zeroOK      [numZero]bool
}

// numZero bounds the ZeRO stages whose model states an Estimator keeps per
// candidate rank (0, 1 and 2: all the stages a strategy takes).
const numZero = 3

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
}

// rankEntry is one candidate pipeline rank r of an Estimator: its stage
// (the layers it holds and, with the flight terms, its micro-batches in
// flight), where its counts start in Estimator.counts, its sums, its
// flight terms and its model states under each ZeRO stage below numZero.
type rankEntry struct {
	r      int
	off    int
	st     stage
	sums   stageSums
	flight flightTerms
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
	if !e.actsOK || s.Recompute != e.recompute {
		pol, ok := mm.policy(s.Recompute)
		if !ok {
			return mm.Estimate(e.c, e.w, s) // its error, as Estimate words it
		}
		e.recompute, e.pol, e.actsOK, e.sumsOK = s.Recompute, pol, false, false
	}
	if k := (shapeKey{roles: roles, degree: s.Degree, sp: s.SP, mb: s.MB}); !e.shapeOK || k != e.shape {
		mm.shapeOf(e.c, e.w, &s, roles, &e.g)
		for k := range e.terms {
			mm.kindParams(&e.g, k, &e.terms[k])
		}
		e.ends = mm.ends(&e.g)
		e.micro = max(e.w.Batch/max(s.Replicas()*max(s.MB, 1), 1), 1)
		e.shape, e.shapeOK, e.actsOK, e.sumsOK = k, true, false, false
	}
	e.g.zero, e.g.policy = s.Zero, e.pol
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
	if !e.ranksOK || pp != e.ranksPP || pl != e.ranksPl {
		e.fillRanks(pp, pl)
		e.sumsOK = false
	}
	if !e.sumsOK {
		for i := range e.ranks {
			en := &e.ranks[i]
			mm.stageSums(e.terms, &e.ends, &en.st, &en.sums)
		}
		e.sumsOK, e.flightOK, e.zeroOK = true, false, [numZero]bool{}
	}
	if !e.flightOK || s.Schedule != e.flightSched || s.V != e.flightV {
		e.fillFlight(s.V)
		e.flightSched, e.flightV, e.flightOK = s.Schedule, s.V, true
	}
	return e.peak(), nil
}

// fillRanks fills e.ranks with the candidate ranks of a pipeline of pp
// ranks under placement pl, as Model.peakOf visits them.
func (e *Estimator) fillRanks(pp int, pl space.Placement) {
	mm := e.mm
	nk := len(e.terms)
	e.rankBuf = space.CandidateRanks(mm.layers, pp, mm.kindStarts, e.rankBuf[:0])
	e.ranks, e.counts = e.ranks[:0], e.counts[:0]
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
			en.st = mm.rankStage(r, pp, pl, e.counts[off:off+nk], e.other)
		}
	}
	// The counts may have moved while they grew.
	for i := range e.ranks {
		en := &e.ranks[i]
		en.st.counts = e.counts[en.off : en.off+nk : en.off+nk]
	}
	e.ranksPP, e.ranksPl, e.ranksOK = pp, pl, true
}

// fillFlight fills the ranks' flight terms under the current schedule
// with v virtual stages (Model.peakOf).
func (e *Estimator) fillFlight(v int) {
	mm, rules := e.mm, &e.rules
	pp, m := e.ranksPP, e.micro
	v = rules.VirtualStages(v)
	last := rules.HeadInFlight(pp, v, m)
	for i := range e.ranks {
		en := &e.ranks[i]
		en.st.inFlight, en.st.lastInFlight = rules.InFlight(en.r, pp, v, m), last
		mm.flightTerms(&e.g, &e.ends, &en.st, &en.sums, &en.flight)
	}
}

// peak returns the busiest of e.ranks under the current geometry (its
// ZeRO stage included) and flight terms (Model.peakOf).
func (e *Estimator) peak() Breakdown {
	z := e.g.zero
	if z < 0 || z >= numZero {
		// A stage whose states are not kept.
		var best Breakdown
		for i := range e.ranks {
			en := &e.ranks[i]
			var rs rankStates
			e.mm.rankStates(&e.g, &en.sums, &rs)
			if b := larger(rs.phases(&en.flight)); i == 0 || b.TotalBytes() > best.TotalBytes() {
				best = b
			}
		}
		return best
	}
	if !e.zeroOK[z] {
		for i := range e.ranks {
			en := &e.ranks[i]
			e.mm.rankStates(&e.g, &en.sums, &en.states[z])
		}
		e.zeroOK[z] = true
	}
	var best Breakdown
	for i := range e.ranks {
		en := &e.ranks[i]
		if b := larger(en.states[z].phases(&en.flight)); i == 0 || b.TotalBytes() > best.TotalBytes() {
			best = b
		}
	}
	return best
}
