package cost

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// collOp is a collective kind.
type collOp uint8

const (
	opNone collOp = iota
	opAG
	opRS
	opAR
	opA2A
	opP2P
)

var collNames = [...]string{"", AllGather, ReduceScatter, AllReduce, AllToAll, SendRecv}

// commClass says how a collective meets the critical path (formulas.md §6).
type commClass uint8

const (
	classCritical  commClass = iota // TP/SP/CP/EP activations: on the critical path
	classWeights                    // per micro-batch weight gathers and gradient reductions (FSDP, ZeRO-2)
	classStepGrad                   // once per step gradient reduction (DP, ZeRO-1/2)
	classStepParam                  // once per step parameter gather (ZeRO-1/2)
	classPipeline                   // pipeline point-to-point sends
)

const maxTensors = 128

// attnKernelFraction is the attention core's kernel efficiency relative to a
// GEMM of the same FLOPs ([FA2]: 50-73% of peak on A100 vs MAMF 87%).
const attnKernelFraction = 0.7

// optimizerBytesPerParam is the HBM traffic of one Adam update of one
// parameter: read fp32 master, m, v and gradient (16), write master, m, v
// (12) and the bf16 weight (2) (formulas.md §2.1 mixed-precision recipe).
const optimizerBytesPerParam = 30.0
const maxEmit = 32

// emission is one collective call of a program run.
type emission struct {
	op       collOp
	roles    roleSet
	bytes    float64
	seconds  float64
	class    commClass
	pass     pass
	why      string
	hideOp   int     // op index whose compute may hide it (-1: none)
	hideFrac float64 // fraction of hideOp's time usable
	exposed  float64 // resolved exposed seconds of one call
}

// runResult is the outcome of one pass of a segment on one micro-batch.
type runResult struct {
	seconds   float64 // compute
	flops     float64 // per-chip FLOPs executed
	nEmit     int
	emit      [maxEmit]emission
	opSeconds [64]float64
}

// evaluator holds the per-call state.
type evaluator struct {
	p        *program
	mr       meshRoles
	o        Options
	eff      profiles.Efficiency
	peak     float64
	hbm      float64
	zero     int
	active   roleSet
	cls      [numClasses]roleSet
	size     [numDimIDs]float64
	full     [maxTensors]float64 // full (unsharded) bytes
	gathered [maxTensors]roleSet
	pending  [maxTensors]roleSet // weight id -> roles its gradient is still partial over
	trace    *[]Op
	degs     [1 << numRoles]float64
	// shardParams is fillShardParams' per-chip parameter counts of one
	// layer's attention, MLP and MoE, of the embedding and of the head.
	shardParams [5]float64
}

// reset prepares e for a new strategy: the fields a new evaluation adds to
// or reads before writing are cleared; the large per-tensor arrays are
// overwritten (full) or reset per pass (gathered, pending).
func (e *evaluator) reset() {
	e.mr.reset()
	e.active = 0
	e.trace = nil
}

// layout returns the role set of each dim of tensor t for this strategy.
func (e *evaluator) layout(t int) [maxRank]roleSet {
	var l [maxRank]roleSet
	tt := &e.p.tensors[t]
	for i := 0; i < tt.rank; i++ {
		l[i] = e.cls[tt.cls[i]] & e.active
	}
	return l
}

// accLayout is the layout the gradient of weight w accumulates in: the
// weight's own, plus dp on its data dim under ZeRO-2 (formulas.md §3.1).
func (e *evaluator) accLayout(w int) [maxRank]roleSet {
	l := e.layout(w)
	if e.zero >= 2 {
		tt := &e.p.tensors[w]
		for i := 0; i < tt.rank; i++ {
			if tt.cls[i] == cWData || tt.cls[i] == cWDataE {
				if tt.expert {
					l[i] |= bit(rEDP) & e.active
				} else {
					l[i] |= bit(rDP) & e.active
				}
			}
		}
	}
	return l
}

// replicaRoles are the roles over which weight w's gradient may stay partial
// until the step's reduction: the data roles that do not shard it, minus dp
// under ZeRO-2 (its accumulator is sharded over dp).
func (e *evaluator) replicaRoles(w int) roleSet {
	var stored roleSet
	for _, s := range e.accLayout(w) {
		stored |= s
	}
	return (bit(rDP) | bit(rEDP) | bit(rCP) | bit(rTP)) &^ stored & e.active
}

// degOf is the product of the degrees of the roles in set.
func (e *evaluator) degOf(set roleSet) float64 { return e.degs[set] }

// fillDegrees tabulates degOf for every role set.
func (e *evaluator) fillDegrees() {
	e.degs[0] = 1
	for s := 1; s < len(e.degs); s++ {
		low := s & -s
		r := 0
		for 1<<r != low {
			r++
		}
		e.degs[s] = e.degs[s&^low] * e.mr.deg[r]
	}
}

func rolesOf(l [maxRank]roleSet) roleSet {
	var s roleSet
	for _, x := range l {
		s |= x
	}
	return s
}

// pos finds the dim index of role r in layout l, or -1.
func pos(l [maxRank]roleSet, rank int, r role) int {
	for i := 0; i < rank; i++ {
		if l[i].has(r) {
			return i
		}
	}
	return -1
}

// dimMask is the set of dims of tensor t.
func (e *evaluator) dimMask(t int) uint32 {
	var m uint32
	tt := &e.p.tensors[t]
	for i := 0; i < tt.rank; i++ {
		m |= 1 << tt.dims[i]
	}
	return m
}

const inf = math.MaxFloat64

// placement of one role on an einsum's output before resharding.
const (
	outNone    = -1
	outPartial = -2
)

// emit records a collective of one call.
func (e *evaluator) emit(res *runResult, op collOp, roles roleSet, bytes float64, class commClass, ps pass, why string, hideOp int, hideFrac float64) float64 {
	if roles == 0 || bytes <= 0 {
		return 0
	}
	sec := e.mr.seconds(op, bytes, roles)
	if res.nEmit < maxEmit {
		res.emit[res.nEmit] = emission{op: op, roles: roles, bytes: bytes, seconds: sec, class: class, pass: ps, why: why, hideOp: hideOp, hideFrac: hideFrac}
		res.nEmit++
	}
	return sec
}

// einsum applies design.md's four rules to C = A·B, role by role: for every
// role (a mesh axis of the algebra) it tries leaving each operand as it is or
// gathering it, derives where the role ends up on the product (a dim, a
// partial sum U, or nowhere), adds the cost of moving that to the layout the
// next op needs (AllReduce or ReduceScatter of a partial sum, AllGather or
// AllToAll of a sharded dim, a free slice), and keeps the cheapest legal
// choice. Gathered operands are cached for the rest of the pass.
func (e *evaluator) einsum(res *runResult, o *op, idx int, ps pass) {
	p := e.p
	ta, tb, tc := &p.tensors[o.a], &p.tensors[o.b], &p.tensors[o.c]
	la, lb := e.layout(o.a), e.layout(o.b)
	for i := range la {
		la[i] &^= e.gathered[o.a]
		lb[i] &^= e.gathered[o.b]
	}
	var lc [maxRank]roleSet
	var allowU roleSet
	isWGrad := tc.primal >= 0 && p.tensors[tc.primal].weight
	if isWGrad {
		lc = e.accLayout(tc.primal)
		allowU = e.replicaRoles(tc.primal)
	} else {
		lc = e.layout(o.c)
	}
	ma, mb, mc := e.dimMask(o.a), e.dimMask(o.b), e.dimMask(o.c)
	ra, rb, rc := rolesOf(la), rolesOf(lb), rolesOf(lc)
	// In a backward pair (dA = dC·Bᵀ, dB = Aᵀ·dC) the incoming gradient dC
	// serves both einsums and stays gathered for the second, so each pays
	// half of its gather when choosing.
	shareA, shareB := 1.0, 1.0
	if ps == pBwd && o.sibling >= 0 {
		if o.a != o.siblingIn {
			shareA = 0.5
		} else {
			shareB = 0.5
		}
	}
	var gA, gB, ar, rs, agC, a2a, split, partial roleSet
	for r := role(0); r < numRoles; r++ {
		if !(ra | rb | rc).has(r) {
			continue
		}
		pa, pb, pc := pos(la, ta.rank, r), pos(lb, tb.rank, r), pos(lc, tc.rank, r)
		var dc dim = numDimIDs
		if pc >= 0 {
			dc = tc.dims[pc]
		}
		best, bestG, bestOut, bestSplit := inf, 0, 0, false
		for g := 0; g < 4; g++ {
			doA, doB := g&1 != 0, g&2 != 0
			if (doA && (pa < 0 || ta.noComm)) || (doB && (pb < 0 || tb.noComm)) {
				continue
			}
			cost := 0.0
			if doA {
				cost += shareA * e.mr.seconds(opAG, e.full[o.a]/e.degOf(ra&^bit(r)), bit(r))
			}
			if doB {
				cost += shareB * e.mr.seconds(opAG, e.full[o.b]/e.degOf(rb&^bit(r)), bit(r))
			}
			pa2, pb2 := pa, pb
			if doA {
				pa2 = -1
			}
			if doB {
				pb2 = -1
			}
			var out int
			splits := true
			switch {
			case pa2 >= 0 && pb2 >= 0:
				if ta.dims[pa2] != tb.dims[pb2] {
					continue // rule 4: one axis on two different dims: illegal
				}
				if mc&(1<<ta.dims[pa2]) != 0 {
					out = int(ta.dims[pa2])
				} else {
					out = outPartial
				}
			case pa2 >= 0:
				if mc&(1<<ta.dims[pa2]) != 0 {
					out = int(ta.dims[pa2])
				} else {
					out = outPartial // rule 2: slice B locally, reduce after
				}
			case pb2 >= 0:
				if mc&(1<<tb.dims[pb2]) != 0 {
					out = int(tb.dims[pb2])
				} else {
					out = outPartial
				}
			default:
				out = outNone
				splits = dc != numDimIDs && (ma|mb)&(1<<dc) != 0 // slice an input along C's dim for free
			}
			cBytes := e.full[o.c] / e.degOf(rc&^bit(r))
			switch {
			case out == outPartial && pc < 0:
				if !allowU.has(r) {
					if tc.noComm {
						continue
					}
					cost += e.mr.seconds(opAR, cBytes, bit(r))
				}
			case out == outPartial:
				if tc.noComm {
					continue
				}
				cost += e.mr.seconds(opRS, cBytes, bit(r))
			case out >= 0 && pc < 0:
				if tc.noComm {
					continue
				}
				cost += e.mr.seconds(opAG, cBytes, bit(r))
			case out >= 0 && dim(out) != dc:
				if tc.noComm {
					continue
				}
				cost += e.mr.seconds(opA2A, cBytes, bit(r))
			}
			if cost < best*(1-1e-9) {
				best, bestG, bestOut, bestSplit = cost, g, out, splits
			}
		}
		if best == inf {
			continue // no legal resolution: leave the role replicated (should not happen)
		}
		if bestG&1 != 0 {
			gA |= bit(r)
		}
		if bestG&2 != 0 {
			gB |= bit(r)
		}
		if bestSplit {
			split |= bit(r)
		}
		switch {
		case bestOut == outPartial && pc < 0:
			if allowU.has(r) {
				partial |= bit(r)
			} else {
				ar |= bit(r)
			}
		case bestOut == outPartial:
			rs |= bit(r)
		case bestOut >= 0 && pc < 0:
			agC |= bit(r)
		case bestOut >= 0 && dim(bestOut) != dc:
			a2a |= bit(r)
		}
	}
	if isWGrad {
		e.pending[tc.primal] |= partial
	}
	// Communication, one collective per kind over the union of its roles.
	weightIn := func(t *tensor) bool { return t.weight }
	classIn := func(t *tensor) commClass {
		if weightIn(t) {
			return classWeights
		}
		return classCritical
	}
	classOut := classCritical
	if isWGrad {
		classOut = classWeights
	}
	hide := func(t int, isOut bool, roles roleSet) (int, float64) {
		if ps == pBwd && o.sibling >= 0 && (isOut || t == o.siblingIn) {
			return o.sibling, 1 // Megatron overlaps dX's reduction with the dW GEMM and the re-gather with dX ([MEG-TP], formulas.md §6)
		}
		if o.core && roles&^bit(rCP) == 0 {
			return idx, e.eff.OverlapFraction // ring attention hides the K/V exchange under the blocks (formulas.md §3.4)
		}
		if e.o.CollectiveMatmul && roles&^(bit(rTP)|bit(rCP)) == 0 {
			return idx, 1 // collective matmul [SB-JAX]
		}
		return -1, 0
	}
	first := res.nEmit
	var commSec float64
	if gA != 0 {
		h, f := hide(o.a, false, gA)
		commSec += e.emit(res, opAG, gA, e.full[o.a]/e.degOf(ra&^gA), classIn(ta), ps, o.why[actGatherA], h, f)
		e.gathered[o.a] |= gA
	}
	if gB != 0 {
		h, f := hide(o.b, false, gB)
		commSec += e.emit(res, opAG, gB, e.full[o.b]/e.degOf(rb&^gB), classIn(tb), ps, o.why[actGatherB], h, f)
		e.gathered[o.b] |= gB
	}
	for _, x := range [...]struct {
		op    collOp
		roles roleSet
		act   action
	}{{opAR, ar, actAllReduceC}, {opRS, rs, actReduceScatterC}, {opAG, agC, actGatherC}, {opA2A, a2a, actAllToAllC}} {
		if x.roles == 0 {
			continue
		}
		h, f := hide(o.c, true, x.roles)
		commSec += e.emit(res, x.op, x.roles, e.full[o.c]/e.degOf(rc&^x.roles), classOut, ps, o.why[x.act], h, f)
	}
	// Compute: 2·Π(union of dims) FLOPs over the roles that split the work.
	fl := 2 * o.flopScale
	for d := dim(0); d < numDimIDs; d++ {
		if (ma|mb)&(1<<d) != 0 {
			fl *= e.size[d]
		}
	}
	fl /= e.degOf(split)
	bytes := 0.0
	if !ta.noHBM {
		bytes += e.full[o.a] / e.degOf(ra&^gA)
	}
	if !tb.noHBM {
		bytes += e.full[o.b] / e.degOf(rb&^gB)
	}
	if !tc.noHBM {
		bytes += e.full[o.c] / e.degOf(rc)
	}
	sec := e.roofline(fl, bytes)
	if o.core {
		// Flash-attention kernels reach ~50-73% of peak on A100 against ~87%
		// for the best GEMM ([FA2] §4, hardware.md §4.1): about 0.7 of the
		// matmul rate.
		sec = max(sec/attnKernelFraction, bytes/(e.hbm*e.eff.HBMFraction))
	}
	if idx < len(res.opSeconds) {
		res.opSeconds[idx] = sec
	}
	res.seconds += sec
	res.flops += fl
	if e.trace != nil {
		lA, lB := e.layout(o.a), e.layout(o.b)
		text := layoutText(ta, lA, 0) + " · " + layoutText(tb, lB, 0) + " -> " + layoutText(tc, lc, partial)
		e.traceOp(res, ps, text, fl, sec, first)
	}
}

// reshard changes a tensor's layout: a role that stays on an equivalent dim
// is free, one that moves to another dim is an AllToAll, one that disappears
// an AllGather, one that appears a free slice ([SB-SHARD]; MoE dispatch and
// combine, formulas.md §3.5).
func (e *evaluator) reshard(res *runResult, o *op, idx int, ps pass) {
	ta, tc := &e.p.tensors[o.a], &e.p.tensors[o.c]
	la, lc := e.layout(o.a), e.layout(o.c)
	var a2a, ag roleSet
	for r := role(0); r < numRoles; r++ {
		pa := pos(la, ta.rank, r)
		if pa < 0 {
			continue
		}
		pc := pos(lc, tc.rank, r)
		switch {
		case pc < 0:
			ag |= bit(r)
		case o.same[ta.dims[pa]]&(1<<tc.dims[pc]) == 0:
			a2a |= bit(r)
		}
	}
	ra := rolesOf(la)
	first := res.nEmit
	var commSec float64
	if a2a != 0 {
		commSec += e.emit(res, opA2A, a2a, e.full[o.a]/e.degOf(ra&^a2a), classCritical, ps, o.why[actAllToAllC], -1, 0)
	}
	if ag != 0 {
		commSec += e.emit(res, opAG, ag, e.full[o.a]/e.degOf(ra&^ag), classCritical, ps, o.why[actGatherA], -1, 0)
	}
	bytes := 2 * e.full[o.a] / e.degOf(ra)
	sec := e.roofline(0, bytes)
	if idx < len(res.opSeconds) {
		res.opSeconds[idx] = sec
	}
	res.seconds += sec
	if e.trace != nil {
		text := layoutText(ta, la, 0) + " -> " + layoutText(tc, lc, 0)
		e.traceOp(res, ps, text, 0, sec, first)
	}
}

// elementwise is a memory-bound op: hbm × the local bytes of its tensor.
func (e *evaluator) elementwise(res *runResult, o *op, idx int, ps pass) {
	l := e.layout(o.a)
	bytes := o.hbm * e.full[o.a] / e.degOf(rolesOf(l))
	sec := e.roofline(0, bytes)
	if idx < len(res.opSeconds) {
		res.opSeconds[idx] = sec
	}
	res.seconds += sec
	if e.trace != nil {
		e.traceOp(res, ps, o.name+"("+layoutText(&e.p.tensors[o.a], l, 0)+")", 0, sec, res.nEmit)
	}
}

// roofline is max(FLOPs / (peak·matmul efficiency), bytes / (HBM bandwidth·
// HBMFraction)) ([SB-ROOF]); the matmul efficiency falls for small calls:
// eff(x) = MatmulFraction · x/(x + MatmulHalfFLOPs), x the per-chip FLOPs of
// the call (fits Calculon's 0.95 ≥ 128 GFLOP, 0.9 at 16, 0.6 at 1 GFLOP
// with half ≈ 0.6 GFLOP, hardware.md §3.3).
func (e *evaluator) roofline(flops, bytes float64) float64 {
	t := 0.0
	if flops > 0 {
		eff := e.eff.MatmulFraction * flops / (flops + e.eff.MatmulHalfFLOPs)
		t = flops / (e.peak * eff)
	}
	return max(t, bytes/(e.hbm*e.eff.HBMFraction))
}

// traceOp appends one traced op; its collective is the run's last emission.
func (e *evaluator) traceOp(res *runResult, ps pass, text string, fl, sec float64, firstEmit int) {
	op := Op{Pass: passNames[ps], Text: text, FLOPs: fl, Seconds: sec}
	for i := firstEmit; i < res.nEmit; i++ {
		em := &res.emit[i]
		op.Collective = Collective{Op: collNames[em.op], Axes: e.mr.axesOf(em.roles), Bytes: em.bytes, Count: 1,
			Seconds: em.seconds, Overlapped: em.class != classCritical || em.hideOp >= 0, Why: em.why}
		op.Text += fmt.Sprintf("  %s(%s) %s %s", op.Collective.Op, roleList(em.roles), fmtBytes(em.bytes), fmtSeconds(em.seconds))
		if op.Collective.Overlapped {
			op.Text += " overlapped"
		} else {
			op.Text += " exposed"
		}
	}
	*e.trace = append(*e.trace, op)
}

func fmtBytes(b float64) string {
	switch {
	case b >= 1e9:
		return fmt.Sprintf("%.2f GB", b/1e9)
	case b >= 1e6:
		return fmt.Sprintf("%.1f MB", b/1e6)
	default:
		return fmt.Sprintf("%.1f kB", b/1e3)
	}
}

func fmtSeconds(s float64) string {
	if s >= 1e-3 {
		return fmt.Sprintf("%.2f ms", s*1e3)
	}
	return fmt.Sprintf("%.1f µs", s*1e6)
}

// run executes ops of one pass (fresh gather cache unless keepWeights) and
// resolves which part of each collective hides under compute.
func (e *evaluator) run(res *runResult, ops []op, ps pass, filter func(*op) bool) {
	for i := range ops {
		o := &ops[i]
		if filter != nil && !filter(o) {
			continue
		}
		switch o.kind {
		case kEinsum:
			e.einsum(res, o, i, ps)
		case kReshard:
			e.reshard(res, o, i, ps)
		case kElementwise:
			e.elementwise(res, o, i, ps)
		}
	}
}

// resetCache forgets gathered tensors; weights are kept when keepWeights
// (the recompute pass's weight gathers serve the backward pass).
func (e *evaluator) resetCache(keepWeights bool) {
	for i := range e.p.tensors {
		if !(keepWeights && e.p.tensors[i].weight) {
			e.gathered[i] = 0
		}
	}
}

// segCost is one segment's cost per micro-batch.
type segCost struct {
	fwd, bwd     float64 // compute seconds (bwd includes recompute)
	crit         float64 // exposed critical communication
	weights      float64 // overlappable per micro-batch weight communication
	weightEdge   float64 // first gather + last reduction of one layer's weights
	flops        float64
	runs         [3]runResult
	nRuns        int
	stepGrad     float64
	stepParam    float64
	stepEmit     [16]emission
	nStep        int
	hasRecompute bool
	// pending is, per weight of the segment (in its weights order), the
	// roles its gradient is still partial over after the backward pass: the
	// input of the once-per-step reductions, which depend on the ZeRO stage.
	pending [maxSegmentWeights]roleSet
}

// maxSegmentWeights bounds the weight tensors of one segment (MoE has the
// most: router, experts in and out, shared experts in and out).
const maxSegmentWeights = 8

// reset clears what a new evaluation accumulates into sc; the arrays are
// overwritten up to the counters, so they are not cleared.
func (sc *segCost) reset() {
	sc.fwd, sc.bwd, sc.crit, sc.weights, sc.weightEdge, sc.flops = 0, 0, 0, 0, 0, 0
	sc.stepGrad, sc.stepParam = 0, 0
	sc.nRuns, sc.nStep, sc.hasRecompute = 0, 0, false
	for i := range sc.runs {
		r := &sc.runs[i]
		r.seconds, r.flops, r.nEmit = 0, 0, 0
	}
}

// segment runs fwd, recompute and bwd passes of seg on one micro-batch.
func (e *evaluator) segment(seg *segment, weights []int, recompute string, sc *segCost) {
	for _, w := range weights {
		e.pending[w] = 0
	}
	e.resetCache(false)
	fw := &sc.runs[0]
	e.run(fw, seg.fwd, pFwd, nil)
	sc.nRuns = 1
	if recompute == space.RecomputeFull || recompute == space.RecomputeSelective {
		rc := &sc.runs[1]
		e.resetCache(false)
		if recompute == space.RecomputeFull {
			e.run(rc, seg.fwd, pRecompute, nil)
		} else {
			e.run(rc, seg.fwd, pRecompute, func(o *op) bool { return o.core })
		}
		sc.nRuns = 2
		e.resetCache(true)
	} else {
		e.resetCache(false)
	}
	bw := &sc.runs[2]
	e.run(bw, seg.bwd, pBwd, nil)
	sc.fwd = fw.seconds
	sc.bwd = sc.runs[1].seconds + bw.seconds
	sc.flops = fw.flops + sc.runs[1].flops + bw.flops
	for k, r := range []*runResult{fw, &sc.runs[1], bw} {
		_ = k
		for i := 0; i < r.nEmit; i++ {
			em := &r.emit[i]
			exp := em.seconds
			if em.hideOp >= 0 {
				exp = max(0, em.seconds-em.hideFrac*r.opSeconds[em.hideOp])
			}
			em.exposed = exp
			switch em.class {
			case classCritical:
				sc.crit += exp
			case classWeights:
				sc.weights += em.seconds
				if (em.pass == pFwd && em.op == opAG) || em.op == opRS {
					sc.weightEdge += em.seconds
				}
			}
		}
	}
	for i, w := range weights {
		if i < len(sc.pending) {
			sc.pending[i] = e.pending[w]
		}
	}
	e.stepPart(weights, sc)
}

// stepPart computes sc's once-per-step collectives from the gradients the
// backward pass left partial (sc.pending) and the ZeRO stage: the gradient
// still partial over replica roles is all-reduced (DP) or reduce-scattered
// and the parameters re-gathered (ZeRO-1/2), formulas.md §3.1.
func (e *evaluator) stepPart(weights []int, sc *segCost) {
	sc.stepGrad, sc.stepParam, sc.nStep = 0, 0, 0
	for i, w := range weights {
		if i >= len(sc.pending) {
			break
		}
		P := sc.pending[i]
		if P == 0 && !(e.zero >= 2 && e.zeroRoles(w) != 0) {
			continue
		}
		t := &e.p.tensors[w]
		acc := rolesOf(e.accLayout(w))
		gBytes := e.full[t.grad] / e.degOf(acc)
		if e.zero == 0 {
			e.stepEmit(sc, opAR, P, gBytes, classStepGrad, t.whyAR)
			continue
		}
		e.stepEmit(sc, opRS, P, gBytes, classStepGrad, t.whyRS)
		wBytes := e.full[w] / e.degOf(rolesOf(e.layout(w)))
		e.stepEmit(sc, opAG, P|e.zeroRoles(w), wBytes, classStepParam, t.whyAG)
	}
}

// zeroRoles is the dp role a ZeRO-2 accumulator of weight w is sharded over.
func (e *evaluator) zeroRoles(w int) roleSet {
	if e.zero < 2 {
		return 0
	}
	if e.p.tensors[w].expert {
		return bit(rEDP) & e.active
	}
	return bit(rDP) & e.active
}

func (e *evaluator) stepEmit(sc *segCost, op collOp, roles roleSet, bytes float64, class commClass, why string) {
	if roles == 0 || bytes <= 0 || sc.nStep >= len(sc.stepEmit) {
		return
	}
	sec := e.mr.seconds(op, bytes, roles)
	sc.stepEmit[sc.nStep] = emission{op: op, roles: roles, bytes: bytes, seconds: sec, class: class, why: why, hideOp: -1}
	sc.nStep++
	if class == classStepGrad {
		sc.stepGrad += sec
	} else {
		sc.stepParam += sec
	}
}

// fillEfficiency takes the cluster's coefficients, filling a field left zero
// with the chip family's documented default (profiles.DefaultEfficiency).
func (e *evaluator) fillEfficiency(c profiles.Cluster) {
	d, ok := profiles.DefaultEfficiency(c.Chip.Family)
	if !ok {
		d = profiles.GenericEfficiency()
	}
	e.eff = c.Efficiency
	if e.eff.MatmulFraction <= 0 {
		e.eff.MatmulFraction = d.MatmulFraction
	}
	if e.eff.MatmulHalfFLOPs <= 0 {
		e.eff.MatmulHalfFLOPs = d.MatmulHalfFLOPs
	}
	if e.eff.HBMFraction <= 0 {
		e.eff.HBMFraction = d.HBMFraction
	}
	if e.eff.OverlapFraction <= 0 {
		e.eff.OverlapFraction = d.OverlapFraction
	}
}

// stagePlan is the layers of one pipeline stage.
type stagePlan struct {
	dense, moe  int
	embed, head bool
}

// stages returns the first, a middle and the last stage of an uneven split
// of the layers: extra layers go to the middle stages first (the first and
// last carry the embedding and the output layer, [LLAMA3 §3.3.2]).
func stages(m model.Spec, pp int) ([3]stagePlan, int) {
	L, Ld := m.Layers, m.DenseLayers()
	if pp <= 1 {
		return [3]stagePlan{{dense: Ld, moe: L - Ld, embed: true, head: true}}, 1
	}
	base, extra := L/pp, L%pp
	first, mid, last := base, base, base
	if pp > 2 && extra > 0 {
		mid++ // the busiest middle stage takes one of the extra layers
		extra -= min(extra, pp-2)
	}
	if extra > 0 {
		first++
		extra--
	}
	if extra > 0 {
		last++
	}
	mix := func(k int, first bool) stagePlan {
		if first {
			d := min(k, Ld)
			return stagePlan{dense: d, moe: k - d}
		}
		mo := min(k, L-Ld)
		return stagePlan{dense: k - mo, moe: mo}
	}
	out := [3]stagePlan{mix(first, true), mix(last, false), mix(mid, false)}
	out[0].embed, out[1].head = true, true
	if pp > 2 {
		return out, 3
	}
	return out, 2
}

// Model is the layer program of one model, built once by NewModel and safe
// for concurrent use: search evaluates millions of strategies against one
// Model, so the program is not rebuilt per strategy.
type Model struct {
	spec model.Spec
	p    *program
	// states recycles evaluation working memory (tens of kB) across calls.
	states sync.Pool
}

// NewModel builds the layer program of m. o.NoFlashAttention selects the
// unfused attention core (scores materialised in HBM); the other options
// apply per call to Evaluate.
func NewModel(m model.Spec, o Options) *Model {
	m.Normalize()
	return &Model{spec: m, p: buildProgram(keyOf(m, o.NoFlashAttention))}
}

// Spec returns the normalised model the program was built from.
func (cm *Model) Spec() model.Spec { return cm.spec }

// Evaluate returns the step-time estimate of strategy s (already validated
// and placed) for model m on cluster c with workload w. It builds the model's
// program on every call; use NewModel and Model.Evaluate (or an Evaluator) to
// evaluate many strategies of one model. See the package documentation for
// the model.
func Evaluate(m model.Spec, c profiles.Cluster, w space.Workload, s space.Strategy, o Options) (Estimate, error) {
	return NewModel(m, o).Evaluate(c, w, s, o)
}

// Evaluate returns the step-time estimate of strategy s for the model on
// cluster c with workload w. o.NoFlashAttention is ignored: the setting given
// to NewModel applies. It is safe for concurrent use.
func (cm *Model) Evaluate(c profiles.Cluster, w space.Workload, s space.Strategy, o Options) (Estimate, error) {
	st, _ := cm.states.Get().(*evalState)
	if st == nil {
		st = new(evalState)
	}
	defer cm.states.Put(st)
	if err := cm.prepare(st, c, w, s, o); err != nil {
		return Estimate{}, err
	}
	return cm.assemble(st, w, s, o), nil
}

// Evaluator evaluates many strategies of one Model on one cluster and
// workload. It reuses its working memory and the per-micro-batch segment
// costs of the previous strategy when only the pipeline schedule changed, so
// it is the fast path of search. It is not safe for concurrent use: use one
// per goroutine.
type Evaluator struct {
	m     *Model
	c     profiles.Cluster
	w     space.Workload
	o     Options
	st    evalState
	key   segmentKey
	valid bool
}

// NewEvaluator returns an Evaluator of cm on cluster c (copied) with
// workload w and options o.
func (cm *Model) NewEvaluator(c profiles.Cluster, w space.Workload, o Options) *Evaluator {
	c.Axes = slices.Clone(c.Axes)
	return &Evaluator{m: cm, c: c, w: w, o: o}
}

// Evaluate returns the step-time estimate of strategy s (validated and
// placed), equal to Model.Evaluate with the Evaluator's cluster, workload
// and options.
func (ev *Evaluator) Evaluate(s space.Strategy) (Estimate, error) {
	k, ok := keyOfSegments(&s)
	switch {
	case !ok || ev.o.Trace || !ev.valid || k != ev.key:
		ev.valid = false
		if err := ev.m.prepare(&ev.st, ev.c, ev.w, s, ev.o); err != nil {
			return Estimate{}, err
		}
		ev.key, ev.valid = k, ok && !ev.o.Trace
	case s.Zero != ev.st.e.zero:
		// ZeRO-0 and ZeRO-1 share the per-micro-batch passes and differ only
		// in the once-per-step collectives.
		ev.st.stepParts(s.Zero)
	}
	return ev.m.assemble(&ev.st, ev.w, s, ev.o), nil
}

// maxKeyShares bounds the mesh shares a segmentKey holds; a strategy with
// more is evaluated without reuse.
const maxKeyShares = 12

// segmentKey is everything of a strategy the per-micro-batch segment costs
// depend on: all of it but the pipeline schedule and virtual stages, and of
// the ZeRO stage only whether it shards gradients (stage 2).
type segmentKey struct {
	dp, fsdp, tp, cp, pp, ep, mb int
	zero2, sp                    bool
	recompute                    string
	shares                       [maxKeyShares]struct {
		dim  space.Dim
		axis string
		size int
	}
}

// keyOfSegments returns the segment key of s, and false when s has more
// mesh shares than a key holds.
func keyOfSegments(s *space.Strategy) (segmentKey, bool) {
	k := segmentKey{dp: s.DP, zero2: s.Zero >= 2, fsdp: s.FSDP, tp: s.TP, cp: s.CP, pp: s.PP, ep: s.EP, mb: s.MB, sp: s.SP, recompute: s.Recompute}
	n := 0
	for d, shares := range s.Mesh {
		for _, sh := range shares {
			if n == maxKeyShares {
				return k, false
			}
			k.shares[n].dim, k.shares[n].axis, k.shares[n].size = space.Dim(d), sh.Axis, sh.Size
			n++
		}
	}
	return k, true
}

// evalState is the working memory of one evaluation: the evaluator and the
// per-micro-batch cost of each segment. It is large (tens of kB), so an
// Evaluator keeps one and resets only what a new strategy overwrites.
type evalState struct {
	e                         evaluator
	attn, mlp, moe, emb, head segCost
	pSend                     float64 // one pipeline send, seconds
	M                         float64 // micro-batches per step
	seq                       int
}

// stepParts recomputes every segment's once-per-step collectives for ZeRO
// stage zero, keeping the per-micro-batch passes (valid for stages 0 and 1
// alike).
func (st *evalState) stepParts(zero int) {
	e := &st.e
	e.zero = zero
	e.fillShardParams()
	w := &e.p.weights
	e.stepPart(w.attn, &st.attn)
	e.stepPart(w.mlp, &st.mlp)
	if len(e.p.moe.fwd) > 0 {
		e.stepPart(w.moe, &st.moe)
	}
	e.stepPart(w.embed, &st.emb)
	e.stepPart(w.head, &st.head)
}

// prepare resolves s on c and w and computes the per-micro-batch segment
// costs into st: everything that does not depend on the pipeline schedule.
func (cm *Model) prepare(st *evalState, c profiles.Cluster, w space.Workload, s space.Strategy, o Options) error {
	m := cm.spec
	if m.Layers <= 0 || m.Hidden <= 0 || m.Heads <= 0 || m.Vocab <= 0 {
		return errors.New("cost: model needs layers, hidden, heads and vocab")
	}
	if c.Chip.PeakBF16FLOPs <= 0 || c.Chip.HBMBandwidthBytesPerS <= 0 {
		return fmt.Errorf("cost: cluster %q has no peak FLOP/s or HBM bandwidth", c.Name)
	}
	seq := w.SeqLen
	if seq <= 0 {
		seq = m.SeqLen
	}
	if seq <= 0 || w.Batch <= 0 {
		return errors.New("cost: workload needs a batch and a sequence length")
	}
	dp, fsdp, pp, mbs := max(s.DP, 1), max(s.FSDP, 1), max(s.PP, 1), max(s.MB, 1)
	if w.Batch%(dp*fsdp*mbs) != 0 {
		return fmt.Errorf("cost: batch %d does not divide into dp*fsdp*mb = %d", w.Batch, dp*fsdp*mbs)
	}
	st.M = float64(w.Batch / (dp * fsdp * mbs))
	st.seq = seq

	e := &st.e
	e.reset()
	if err := resolveMesh(c, s, &e.mr); err != nil {
		return err
	}
	e.p = cm.p
	e.o = o
	e.fillEfficiency(c)
	e.peak, e.hbm = c.Chip.PeakBF16FLOPs, c.Chip.HBMBandwidthBytesPerS
	e.zero = s.Zero
	e.fillDegrees()
	for r := role(0); r < numRoles; r++ {
		if e.mr.deg[r] > 1 {
			e.active |= bit(r)
		}
	}
	sp := s.SP && s.TP > 1
	e.cls = [numClasses]roleSet{
		cData:     bit(rDP) | bit(rFSDP),
		cDataMoE:  bit(rEP) | bit(rEDP) | bit(rEFSDP),
		cSeqResid: bit(rCP),
		cSeq:      bit(rCP),
		cModel:    bit(rTP),
		cWData:    bit(rFSDP),
		cWDataE:   bit(rEFSDP),
		cExpert:   bit(rEP),
		cTokMoE:   bit(rEDP) | bit(rEFSDP) | bit(rCP),
	}
	if sp {
		e.cls[cSeqResid] |= bit(rTP)
		e.cls[cTokMoE] |= bit(rTP)
	}
	e.size = e.p.size
	e.size[dB] = float64(mbs * dp * fsdp)
	e.size[dS], e.size[dT] = float64(seq), float64(seq)
	e.size[dC] = e.size[dB] * e.size[dS] * e.size[dR] / e.size[dE]
	for i := range e.p.tensors {
		t := &e.p.tensors[i]
		b := t.elemBytes
		for j := 0; j < t.rank; j++ {
			b *= e.size[t.size[j]]
		}
		e.full[i] = b
	}
	e.fillShardParams()
	if o.Trace {
		e.trace = new([]Op)
	}

	// Per-micro-batch cost of each segment.
	for _, sc := range []*segCost{&st.attn, &st.mlp, &st.moe, &st.emb, &st.head} {
		sc.reset()
	}
	e.segment(&e.p.attn, e.p.weights.attn, s.Recompute, &st.attn)
	e.segment(&e.p.mlp, e.p.weights.mlp, s.Recompute, &st.mlp)
	if len(e.p.moe.fwd) > 0 {
		e.segment(&e.p.moe, e.p.weights.moe, s.Recompute, &st.moe)
	}
	e.segment(&e.p.embed, e.p.weights.embed, "", &st.emb)
	e.segment(&e.p.head, e.p.weights.head, "", &st.head)

	// Pipeline send: the residual stream's local shard [MEG-SCHED], formulas.md §3.3.
	st.pSend = 0
	if pp > 1 && e.mr.npp > 0 {
		st.pSend = SendRecvSeconds(e.sendBytes(), e.mr.pp[0])
	}
	return nil
}

// assemble turns the segment costs of st into the step time of s's pipeline
// schedule: the busiest stage's compute, exposed communication and bubble.
func (cm *Model) assemble(st *evalState, w space.Workload, s space.Strategy, o Options) Estimate {
	m, e, M, seq, pSend := cm.spec, &st.e, st.M, st.seq, st.pSend
	pp := max(s.PP, 1)
	v := 1
	if s.Schedule == space.Interleaved {
		v = max(s.V, 1)
	}
	attn, mlp, moe, emb, head := &st.attn, &st.mlp, &st.moe, &st.emb, &st.head
	of := e.eff.OverlapFraction
	best := Estimate{StepSeconds: -1}
	var bestStage stagePlan
	plans, nPlans := stages(m, pp)
	for _, sp := range plans[:nPlans] {
		var fc, bc, crit, wmb, edge, sg, spar float64
		add := func(sc *segCost, n float64) {
			fc += n * sc.fwd
			bc += n * sc.bwd
			crit += n * sc.crit
			wmb += n * sc.weights
			sg += n * sc.stepGrad
			spar += n * sc.stepParam
		}
		nl := float64(sp.dense + sp.moe)
		add(attn, nl)
		add(mlp, float64(sp.dense))
		add(moe, float64(sp.moe))
		edge = attn.weightEdge + max(mlp.weightEdge, moe.weightEdge)
		if sp.embed {
			add(emb, 1)
		}
		if sp.head {
			add(head, 1)
		}
		units := max(nl, 1)
		est := Estimate{}
		// Busiest stage compute over all micro-batches, plus the optimizer step.
		est.ComputeSeconds = M*(fc+bc) + e.optimizerSeconds(sp)
		exposed := M * crit
		// FSDP/ZeRO-3: prefetch hides the per-micro-batch weight traffic
		// under OverlapFraction of the compute; the first gather and the last
		// reduction stay exposed ([TORCH-FSDP], formulas.md §6).
		if wmb > 0 {
			exposed += max(edge, M*wmb-of*est.ComputeSeconds)
		}
		// Gradient reduction overlaps the last micro-batch's backward and the
		// ZeRO parameter gather the first forward; the last bucket (one
		// layer) is exposed ([MEG-DDP], formulas.md §6).
		if sg > 0 {
			exposed += max(sg/units, sg-of*bc)
		}
		if spar > 0 {
			exposed += max(spar/units, spar-of*fc)
		}
		// Pipeline sends: one forward and one backward per micro-batch per
		// virtual stage; the ramp-up and ramp-down transfers are exposed, the
		// steady-state ones overlap up to OverlapFraction ([SB-GPU], formulas.md §5-6).
		if pp > 1 {
			exposed += 2*float64(pp-1)*pSend + (1-of)*2*M*float64(v)*pSend
		}
		est.ExposedCommSeconds = exposed
		// Bubble: (pp-1)/v stage-micro-batch times of idle ([NARA §2.2], formulas.md §5).
		est.BubbleSeconds = float64(pp-1) / float64(v) * (fc + bc + crit)
		est.StepSeconds = est.ComputeSeconds + est.ExposedCommSeconds + est.BubbleSeconds
		if est.StepSeconds > best.StepSeconds {
			best, bestStage = est, sp
		}
	}

	tokens := float64(w.Batch) * float64(seq)
	best.ModelFLOPs = m.ModelFLOPsPerToken(seq) * tokens
	best.HardwareFLOPs = best.ModelFLOPs + recomputeFLOPsPerToken(m, seq, s.Recompute)*tokens
	if !o.SkipCollectives || o.Trace {
		best.Collectives = e.collectives(bestStage, M, float64(v), pp, pSend, attn, mlp, moe, emb, head)
	}
	if e.trace != nil {
		best.Ops = *e.trace
	}
	return best
}

// sendBytes is one chip's pipeline send: the residual stream's local shard,
// divided over tp also without SP (Megatron's scatter/gather, [NARA §4.1],
// formulas.md §3.3). Tensor 0 is the attention block's input x.
func (e *evaluator) sendBytes() float64 {
	l := rolesOf(e.layout(0)) | bit(rTP)&e.active
	return e.full[0] / e.degOf(l)
}

// optimizerSeconds is the memory-bound Adam update of the stage's parameter
// shard on one chip (sharded over fsdp/tp/ep by storage and over dp by ZeRO).
func (e *evaluator) optimizerSeconds(st stagePlan) float64 {
	sh := &e.shardParams
	params := float64(st.dense+st.moe)*sh[0] + float64(st.dense)*sh[1] + float64(st.moe)*sh[2]
	if st.embed {
		params += sh[3]
	}
	if st.head {
		params += sh[4]
	}
	return params * optimizerBytesPerParam / (e.hbm * e.eff.HBMFraction)
}

// fillShardParams sets shardParams: the parameters of one layer's attention,
// dense MLP and MoE weights, of the embedding and of the output layer that
// one chip updates (sharded by storage over fsdp/tp/ep, and over dp by ZeRO).
func (e *evaluator) fillShardParams() {
	shard := func(ids []int) float64 {
		n := 0.0
		for _, w := range ids {
			l := rolesOf(e.layout(w))
			if e.zero >= 1 {
				l |= (bit(rDP) | bit(rEDP)) & e.active
				if e.p.tensors[w].expert {
					l &^= bit(rDP)
				} else {
					l &^= bit(rEDP)
				}
			}
			n += e.full[w] / bytesWeight / e.degOf(l)
		}
		return n
	}
	w := &e.p.weights
	e.shardParams = [5]float64{shard(w.attn), shard(w.mlp), shard(w.moe), shard(w.embed), shard(w.head)}
}

// recomputeFLOPsPerToken is the extra forward work of a recompute policy,
// full-square attention (formulas.md §1.2): selective re-runs the core,
// 4·s·q per layer; full re-runs every layer's forward, 2·Ψ_layers + 4·s·q·L.
func recomputeFLOPsPerToken(m model.Spec, seq int, policy string) float64 {
	core := 4 * float64(seq) * float64(m.QDim()) * float64(m.Layers)
	switch policy {
	case space.RecomputeSelective:
		return core
	case space.RecomputeFull:
		c := m.Counts()
		return 2*float64(c.ActiveNonEmbedding-m.FinalNormParams()) + core
	}
	return 0
}

// collectives aggregates the busiest stage's emissions into per-step calls.
func (e *evaluator) collectives(st stagePlan, M, v float64, pp int, pSend float64, segs ...*segCost) []Collective {
	mult := [...]float64{float64(st.dense + st.moe), float64(st.dense), float64(st.moe), 0, 0}
	if st.embed {
		mult[3] = 1
	}
	if st.head {
		mult[4] = 1
	}
	n := 1
	for _, sc := range segs {
		for r := range sc.runs {
			n += sc.runs[r].nEmit
		}
		n += sc.nStep
	}
	out := make([]Collective, 0, n)
	// One backing array for all axis lists; one list per role set.
	names := make([]string, 0, 4*numRoles)
	var axes [1 << numRoles][]string
	axesOf := func(set roleSet) []string {
		if axes[set] == nil {
			var gs [maxGroups]space.Group
			k := e.mr.union(set, &gs)
			start := len(names)
			for i := 0; i < k; i++ {
				names = append(names, gs[i].Axis.Name)
			}
			axes[set] = names[start:len(names):len(names)]
		}
		return axes[set]
	}
	add := func(em *emission, count float64, overlapped bool) {
		if count <= 0 {
			return
		}
		for i := range out {
			c := &out[i]
			if c.Why == em.why && c.Bytes == em.bytes && c.Op == collNames[em.op] {
				c.Count += int(math.Round(count))
				c.Seconds += count * em.seconds
				return
			}
		}
		out = append(out, Collective{Op: collNames[em.op], Axes: axesOf(em.roles), Bytes: em.bytes,
			Count: int(math.Round(count)), Seconds: count * em.seconds, Overlapped: overlapped, Why: em.why})
	}
	for k, sc := range segs {
		if mult[k] == 0 {
			continue
		}
		for r := range sc.runs {
			run := &sc.runs[r]
			for i := 0; i < run.nEmit; i++ {
				em := &run.emit[i]
				add(em, mult[k]*M, em.class != classCritical || em.exposed < em.seconds)
			}
		}
		for i := 0; i < sc.nStep; i++ {
			add(&sc.stepEmit[i], mult[k], true)
		}
	}
	if pp > 1 && e.mr.npp > 0 {
		em := emission{op: opP2P, bytes: e.sendBytes(), seconds: pSend,
			why: "pipeline: activations forward and gradients backward across each stage boundary, per micro-batch (×v interleaved)"}
		out = append(out, Collective{Op: SendRecv, Axes: e.mr.axesOfGroup(0), Bytes: em.bytes,
			Count: int(2 * M * v), Seconds: 2 * M * v * pSend, Overlapped: true, Why: em.why})
	}
	return out
}
