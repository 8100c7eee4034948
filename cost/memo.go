package cost

import (
	"slices"

	"github.com/meshplan/meshplan/model"
)

// memoWays is the number of outcomes an evaluator keeps per einsum: the
// gathered states and ZeRO stages under which one op runs across the
// recompute policies of one layout are few. Four, not two: under the next
// placement a block's spare costs (evalState.swapBlock) are revalidated
// from their ops' outcomes, and with two ways the other classes' outcomes
// had mostly been evicted by then (deepseek-v3 / h800-2048: 144,000
// revalidations failed in a walk of its space, 22,000 with four;
// search.BenchmarkCosted's enumeration: +5% there, median of five
// alternating runs, 0-3% on the dense problems; eight ways no better).
const memoWays = 4

// opMemo is the outcome of one einsum of the program under one state of
// the evaluator: what the rules decided and what it cost. The einsum's
// outcome depends, for one strategy's layouts, sizes and mesh (one
// forward key of an Evaluator, one generation of the evaluator), only on
// the roles its operands have been gathered over in the pass, on whether
// the pass is the backward one, and, for a weight gradient, on whether
// ZeRO-2 shards its accumulator: the forward and recompute passes of a
// block, and the recompute and backward passes of the strategies that
// differ only in recompute policy and ZeRO stage, replay it instead of
// resolving the rules again. The replay appends the same emissions and
// adds the same seconds and FLOPs in the same order, so estimates are
// bit-identical. Through the mesh it depends only on the collective models
// (meshRoles.seconds) of the role sets it priced, all within the roles dep:
// it outlives a change of placement that leaves those models
// (meshRoles.moveTo, evaluator.fresh, Model.remesh).
type opMemo struct {
	// gen is the evaluator generation the outcome belongs to (0: none);
	// pgen the plan generation of its plans (0: none).
	gen, pgen uint64
	// stamp names the outcome among all an evaluator records
	// (evaluator.stamps): a run that used it finds it again by it
	// (memoRef) while a reprice keeps it. self is the entry's index in
	// evaluator.memo.
	stamp uint64
	self  int32
	// gA and gB are the roles the operands had been gathered over before
	// the op; zero2 whether ZeRO-2 sharded a weight gradient's
	// accumulator (false for other einsums).
	gA, gB roleSet
	zero2  bool
	// addA and addB are the roles the op gathers its operands over;
	// partial those a weight gradient stays partial over.
	addA, addB, partial roleSet
	// sec and fl are the op's compute seconds and FLOPs; mem the part of
	// sec that is memory-bound work the op brings with it (AQT's weight
	// quantisation, a TensorCore's reduction), counted as memory-bound.
	sec, fl, mem float64
	// tail is the part of sec that is the calls' fixed tails
	// (evaluator.callTail), for the breakdown.
	tail float64
	// dep are the roles the op priced collectives over, at the placement
	// epoch it was recorded in.
	dep roleSet
	at  uint32
	// emit are the op's collectives, their pass left to the replay.
	emit []emission
	// x and rs are the einsum's inputs to the rules and their resolution:
	// under another placement of the generation the rules are resolved
	// again from x, and when they resolve as rs the outcome stands with
	// its collectives priced afresh (evaluator.reprice).
	x  einsumCtx
	rs resolution
	// choices are the roles' choices on x under the collective models
	// they have had in the generation (resolveRoles).
	choices roleChoices
	// plans are the roles' plans on x (and the layout generation of x),
	// kept across generations of the same model and sequence parallelism
	// (pgen, rolePlans).
	plans rolePlans
}

// memoFor returns the memo entry of einsum i of block b's forward (k = 0)
// or backward (k = 1) ops holding the outcome under the current state, and
// whether it holds it; when it does not, the entry returned is the one to
// record the outcome in, and stale says it holds the outcome of the same
// state under an earlier placement (its x and rs hold). It returns nil
// while tracing (the traced ops are built from the resolution).
func (e *evaluator) memoFor(b, k, i int, o *model.Op, zero2 bool) (m *opMemo, hit, stale bool) {
	if e.trace != nil {
		return nil, false, false
	}
	base := (e.m.opBase[b][k] + i) * memoWays
	ways := e.memo[base : base+memoWays]
	gA, gB := e.gathered[o.A], e.gathered[o.B]
	// A way of an earlier generation takes the outcome: best one whose
	// plans are of this state (rolePlans), else one whose plans are of
	// no use any more, else the first.
	victim, rank := -1, 0
	for w := range ways {
		m := &ways[w]
		if m.gen != e.gen {
			r := 1
			switch {
			case m.pgen != e.pgen:
				r = 2
			case m.gA == gA && m.gB == gB && m.zero2 == zero2:
				r = 3
			}
			if r > rank {
				victim, rank = w, r
			}
			continue
		}
		if m.gA == gA && m.gB == gB && m.zero2 == zero2 {
			if e.fresh(m.dep, m.at) {
				return m, true, false
			}
			return m, false, true // the outcome under an earlier placement
		}
	}
	if victim < 0 {
		// Every way holds an outcome of this generation: replace the
		// first, keep the others (the last state recorded stays).
		last := ways[memoWays-1].emit
		copy(ways[1:], ways[:memoWays-1])
		victim = 0
		ways[0].emit = last[:0]
		for w := 1; w < memoWays; w++ {
			ways[w].self = int32(base + w)
		}
	}
	m = &ways[victim]
	if m.pgen != e.pgen || m.gA != gA || m.gB != gB || m.zero2 != zero2 {
		m.pgen, m.plans = e.pgen, rolePlans{}
	}
	m.gen, m.gA, m.gB, m.zero2 = e.gen, gA, gB, zero2
	m.self = int32(base + victim)
	m.stamp = 0 // none until recorded
	m.choices = roleChoices{}
	return m, false, false
}

// reprice adds to res the outcome m of einsum o (op idx of its pass ps),
// recorded under an earlier placement of the generation whose rules
// resolved as they do under the current one: its compute and layouts
// stand, and its collectives are priced on the current mesh, as
// emitEinsum would price them. m becomes the current outcome.
func (e *evaluator) reprice(res *runResult, m *opMemo, o *model.Op, idx int, ps pass) {
	e.requote(m)
	e.replay(res, m, o, idx, ps)
}

// requote prices the collectives of outcome m on the current mesh, as
// emit prices them, adding their roles to opDep, and makes m the current
// outcome, priced over opDep: what m holds but the collectives' times
// stands under the current placement.
func (e *evaluator) requote(m *opMemo) {
	for i := range m.emit {
		em := &m.emit[i]
		em.seconds = e.emissionSeconds(em.op, em.roles, em.bytes, em.class)
	}
	m.dep, m.at = e.opDep, e.epoch
}

// memoRef names the outcome an op of a run used: the memo way that held
// it when the run took it (the op's ways are the memoWays from that
// index rounded down to a multiple of memoWays, evaluator.memo) and the
// outcome's stamp; plain says the op is a reshard or an elementwise pass.
// dep are the roles the outcome priced collectives over when the run last
// took its prices, and emits the number of its emissions, the run's from
// the sum of its predecessors' on: an op none of whose dep moved since
// holds in the run as it is (evaluator.revalidateRun).
type memoRef struct {
	way   int32
	plain bool
	dep   roleSet
	emits uint16
	stamp uint64
}

// sameOutcomes reports whether two runs used the same op outcomes.
func sameOutcomes(a, b []memoRef) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].way/memoWays != b[i].way/memoWays || a[i].stamp != b[i].stamp {
			return false
		}
	}
	return true
}

// outcome returns the memo entry holding the outcome ref names, or nil
// when none does any more (a way was given to another state, or a stale
// outcome was resolved again differently).
func (e *evaluator) outcome(ref memoRef) *opMemo {
	if m := &e.memo[ref.way]; m.stamp == ref.stamp {
		return m // where it was taken (a rotation of the ways moves it)
	}
	base := int(ref.way) - int(ref.way)%memoWays
	for w := range memoWays {
		if m := &e.memo[base+w]; m.stamp == ref.stamp {
			return m
		}
	}
	return nil
}

// revalidate makes block b's cost sc, computed under an earlier placement
// of the generation, current without running its passes, when every op
// outcome its stale passes used is still held and resolves under the
// current placement as it did (evaluator.einsum's stale path): their
// collectives are priced again, the passes' emissions take the new
// times and sc is totalled again but for its once-per-step collectives,
// left for stepPart (sc.stepOK is cleared). It reports whether all three
// passes are current; on false, the passes it made current stay so.
func (e *evaluator) revalidate(b int, sc *segCost) bool {
	return e.revalidateFrom(b, sc, nil, false)
}

// revalidateFrom is revalidate, taking from src, when it is not nil,
// another cost of block b in the same generation, the passes of it that
// are current and that sc shares: the forward pass (every recompute class
// and gradient sharding of a block shares it, evalState.swapBlock) and,
// for the same recompute class (sameRerun), the recompute pass (the
// gradient sharding changes only weight-gradient einsums) when it used the
// same op outcomes as sc's: the backward pass starts from the weights the
// recompute pass gathered (evaluator.blockBackward), so sc's backward
// pass holds only on the recompute pass it was costed after, which a
// placement since may have resolved differently in src.
func (e *evaluator) revalidateFrom(b int, sc, src *segCost, sameRerun bool) bool {
	if e.trace != nil {
		return false
	}
	e.blockIdx = b
	changed := false
	for k := range sc.runs {
		r := &sc.runs[k]
		if e.freshRun(r) {
			continue
		}
		if src != nil && (k == 0 || k == 1 && sameRerun && sameOutcomes(r.refs, src.runs[1].refs)) && e.freshRun(&src.runs[k]) {
			r.copyFrom(&src.runs[k])
			changed = true
			continue
		}
		if !e.revalidateRun(r) {
			return false
		}
		changed = true
	}
	if changed {
		sc.reset()
		e.sumRuns(b, sc)
		sc.stepOK = false
	}
	return true
}

// revalidateRun is revalidate for one pass r. Only the ops whose outcome
// priced a role moved since the run took its prices are looked at: the
// others' emissions stand as they are (memoRef.dep). On false, r may hold
// some new prices, its epoch unchanged: it is costed again.
func (e *evaluator) revalidateRun(r *runResult) bool {
	movedRun := e.movedSince(r.dep, r.at)
	var dep roleSet
	n := 0
	for i := range r.refs {
		ref := &r.refs[i]
		if ref.dep&movedRun == 0 {
			dep |= ref.dep
			n += int(ref.emits)
			continue
		}
		m := e.outcome(*ref)
		if m == nil {
			return false
		}
		if !e.fresh(m.dep, m.at) {
			e.opDep = 0
			if !ref.plain {
				moved := e.movedSince(m.dep, m.at)
				e.opDep = m.dep &^ moved
				if e.resolveRoles(&m.x, m.rs, moved, &m.choices, &m.plans) != m.rs {
					return false
				}
			}
			e.requote(m)
		}
		if len(m.emit) != int(ref.emits) || n+len(m.emit) > len(r.emit) {
			return false
		}
		for j := range m.emit {
			r.emit[n+j].seconds = m.emit[j].seconds
		}
		ref.dep = m.dep
		dep |= m.dep
		n += len(m.emit)
	}
	if n != len(r.emit) {
		return false
	}
	r.dep, r.at = dep, e.epoch
	return true
}

// replay adds the outcome m of einsum o (op idx of its pass ps) to res and
// the evaluator's state, as einsum would.
func (e *evaluator) replay(res *runResult, m *opMemo, o *model.Op, idx int, ps pass) {
	res.dep |= m.dep
	if pr := e.p.Tensors[o.C].Primal; pr >= 0 && e.p.Tensors[pr].Weight {
		e.pending[pr] |= m.partial
	}
	for _, em := range m.emit {
		em.pass = ps
		res.emit = append(res.emit, em)
	}
	e.gathered[o.A] |= m.addA
	e.gathered[o.B] |= m.addB
	res.addOpMem(idx, o, m.sec, m.mem)
	res.cat[catTail] += m.tail
	res.flops += m.fl
}

// plainMemo returns the memo entry of reshard or elementwise op i of block
// b's forward (k = 0) or backward (k = 1) ops, and whether it holds the
// op's outcome in the current generation: those ops read the tensors' own
// layouts only, so their outcome is one per generation. It returns nil
// while tracing.
func (e *evaluator) plainMemo(b, k, i int) (*opMemo, bool) {
	if e.trace != nil {
		return nil, false
	}
	idx := (e.m.opBase[b][k] + i) * memoWays
	m := &e.memo[idx]
	if m.gen == e.gen && e.fresh(m.dep, m.at) {
		return m, true
	}
	m.gen, m.self = e.gen, int32(idx)
	return m, false
}

// record keeps in m the outcome of op idx of res, whose collectives are
// res's emissions from first on, priced over the roles dep in placement
// epoch at, under stamp.
func (m *opMemo) record(res *runResult, idx, first int, dep roleSet, at uint32, stamp uint64) {
	m.sec, m.dep, m.at, m.stamp = res.opSeconds[idx], dep, at, stamp
	m.emit = append(m.emit[:0], res.emit[first:]...)
}

// replayPlain adds the outcome m of reshard or elementwise op o (op idx of
// its pass ps) to res, as reshard or elementwise would.
func (e *evaluator) replayPlain(res *runResult, m *opMemo, o *model.Op, idx int, ps pass) {
	res.dep |= m.dep
	for _, em := range m.emit {
		em.pass = ps
		res.emit = append(res.emit, em)
	}
	res.addOp(idx, o, m.sec)
}

// stepWays is the number of once-per-step outcomes an evaluator keeps per
// block: a few per ZeRO stage, as the block's costs for other recompute
// classes leave other roles partial (deepseek-v3 / h800-2048's walk,
// search.BenchmarkCosted: stepPart 7.6% of the profile with three, 4.3%
// with six).
const stepWays = 6

// stepMemo is the outcome of a block's once-per-step collectives
// (evaluator.stepPart) in one generation of the evaluator (its layouts,
// sizes and mesh): they depend only on the ZeRO stage, the roles the
// block's gradients are left partial over and, through the placement, the
// collective models of the role sets they price, all within the roles dep
// (evaluator.fresh): another placement that moves none of them keeps it.
type stepMemo struct {
	gen     uint64 // the evaluator generation; 0: none
	zero    int
	pending []roleSet
	// grad and param are the block's segCost.stepGrad and stepParam, emit
	// its stepEmit.
	grad, param float64
	emit        []emission
	// dep are the roles priced, at the placement epoch at.
	dep roleSet
	at  uint32
}

// stepMemoFor returns the once-per-step memo entry of block b holding the
// outcome for the current ZeRO stage and pending roles under the current
// placement, and whether it holds it; when it does not, the entry
// returned is the one to record the outcome in. It returns nil while
// tracing.
func (e *evaluator) stepMemoFor(b int, pending []roleSet) (*stepMemo, bool) {
	if e.trace != nil {
		return nil, false
	}
	ways := e.steps[b*stepWays : (b+1)*stepWays]
	victim := -1
	for w := range ways {
		m := &ways[w]
		if m.gen != e.gen {
			if victim < 0 {
				victim = w
			}
			continue
		}
		if m.zero == e.zero && slices.Equal(m.pending, pending) {
			if e.fresh(m.dep, m.at) {
				return m, true
			}
			victim = w // the outcome under an earlier placement
			break
		}
	}
	if victim < 0 {
		last := ways[stepWays-1]
		copy(ways[1:], ways[:stepWays-1])
		victim = 0
		ways[0].pending, ways[0].emit = last.pending[:0], last.emit[:0]
	}
	m := &ways[victim]
	m.gen, m.zero = e.gen, e.zero
	m.pending = append(m.pending[:0], pending...)
	return m, false
}

// record keeps in m the once-per-step outcome of sc.
func (m *stepMemo) record(sc *segCost) {
	m.grad, m.param = sc.stepGrad, sc.stepParam
	m.emit = append(m.emit[:0], sc.stepEmit...)
	m.dep, m.at = sc.stepDep, sc.stepAt
}
