package cost

import (
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// segCost is one block's cost per micro-batch.
type segCost struct {
	fwd, bwd   float64                // compute seconds (bwd includes recompute)
	cat        [numCategories]float64 // compute seconds of all passes by category
	crit       float64                // exposed critical communication
	weights    float64                // overlappable per micro-batch weight communication
	weightEdge float64                // first gather + last reduction of the block's weights
	weightsB   float64                // the part of weights in the recompute and backward passes
	weightsRS  float64                // the part of weightEdge that is gradient reductions
	flops      float64
	// runs are the forward, recompute and backward passes.
	runs [3]runResult
	// stepGrad and stepParam are the once-per-step gradient reductions
	// and parameter gathers, seconds (stepPart); stepEmit their
	// collectives, kept only when the estimate lists them
	// (evaluator.stepEmit).
	stepGrad  float64
	stepParam float64
	stepEmit  []emission
	// stepOK says the once-per-step parts above were computed for the
	// cost's ZeRO stage, stepDep the roles they priced collectives over
	// and stepAt the placement epoch they were priced in: they hold while
	// none of those roles moved since (evaluator.stepFresh).
	stepOK  bool
	stepDep roleSet
	stepAt  uint32
	// wgt is the compute seconds of the weight-gradient passes (part of
	// bwd); critF and critW the exposed critical communication of the
	// forward pass and of the weight-gradient passes (parts of crit); a2aF
	// and a2aB the exposed MoE dispatch and combine of the forward pass and
	// of the recompute and backward passes (parts of crit).
	wgt, critF, critW, a2aF, a2aB float64
	// a2aFin and a2aBin are the parts of a2aF and a2aB into the experts
	// (the forward dispatch, the backward pass's combine gradient); expF,
	// expB and expW the experts' compute between the two all-to-alls: of
	// the forward pass, of the recompute and backward passes but for the
	// weight gradients, and of those (evaluator.expertPhases).
	a2aFin, a2aBin, expF, expB, expW float64
	// pending is, per weight of the block (in its Weights order), the roles
	// its gradient is still partial over after the backward pass: the input
	// of the once-per-step reductions, which depend on the ZeRO stage.
	pending []roleSet
}

// reset clears what a new evaluation accumulates into sc, keeping its memory.
func (sc *segCost) reset() {
	sc.fwd, sc.bwd, sc.crit, sc.weights, sc.weightEdge, sc.weightsB, sc.weightsRS, sc.flops = 0, 0, 0, 0, 0, 0, 0, 0
	sc.wgt, sc.critF, sc.critW, sc.a2aF, sc.a2aB = 0, 0, 0, 0, 0
	sc.a2aFin, sc.a2aBin, sc.expF, sc.expB, sc.expW = 0, 0, 0, 0, 0
	sc.cat = [numCategories]float64{}
	sc.stepGrad, sc.stepParam = 0, 0
	sc.stepEmit = sc.stepEmit[:0]
}

// run executes the ops of one pass (those only marks, all when nil).
func (e *evaluator) run(res *runResult, b int, ps pass, only []bool) {
	blk := &e.p.Blocks[b]
	k := 0
	ops := blk.Fwd
	if ps == pBwd {
		k, ops = 1, blk.Bwd
	}
	res.reset(len(ops), e.epoch)
	for i := range ops {
		o := &ops[i]
		if only != nil && !only[i] {
			res.opSeconds[i] = 0 // not re-run (expertPhases sums them)
			continue
		}
		e.opWgrad = ps == pBwd && e.m.wgrad[b][i]
		e.opReshard = o.Kind == model.Reshard
		e.opLead = e.opReshard && int32(i) == e.m.expertSpan[b][k][0]
		emitted := len(res.emit)
		var m *opMemo
		switch o.Kind {
		case model.Einsum:
			m = e.einsum(res, b, k, o, e.m.why[b][k][i], e.m.opDims[b][k][i], i, ps)
		case model.Reshard, model.Elementwise:
			var hit bool
			m, hit = e.plainMemo(b, k, i)
			if hit {
				e.replayPlain(res, m, o, i, ps)
				break
			}
			first := len(res.emit)
			e.opDep = 0
			if o.Kind == model.Reshard {
				e.reshard(res, o, e.m.why[b][k][i], i, ps)
			} else {
				e.elementwise(res, o, i, ps)
			}
			res.dep |= e.opDep
			if m != nil {
				e.stamps++
				m.record(res, i, first, e.opDep, e.epoch, e.stamps)
			}
		}
		if m != nil {
			res.refs = append(res.refs, memoRef{way: m.self, plain: o.Kind != model.Einsum,
				dep: m.dep, emits: uint16(len(res.emit) - emitted), stamp: m.stamp})
		}
	}
	e.opWgrad, e.opReshard, e.opLead = false, false, false
}

// resetCache forgets the gathered tensors of block b; when keepWeights
// (before the backward pass) the recompute pass's weight gathers are kept,
// as they serve the backward pass, and where the program keeps gathered
// inputs (model.ProgramOptions.SavesGathered, a DTensor plan) so are its
// activations' gathers over tp: autograd saves
// the gathered input a matmul reads, so the weight gradient reads the one
// the recompute re-made (a full checkpoint re-runs the forward's
// all-gather, pytorch/torchtitan@820504e20d1149fbf0b98c567af24c4b0433b22d
// torchtitan/models/llama3/parallelize_llama.py apply_ac, non-reentrant
// checkpoint_wrapper) rather than gather it a third time, as Megatron's
// linear layers do (they save the sequence-parallel shard and re-gather it
// for the weight gradient, [MEG-TP]).
func (e *evaluator) resetCache(b int, keepWeights bool) {
	keepAct := roleSet(0)
	if keepWeights && e.p.Options.SavesGathered {
		keepAct = bit(space.RoleTP)
	}
	for _, i := range e.m.blockUsed[b] {
		if !(keepWeights && e.p.Tensors[i].Weight) {
			e.gathered[i] &= keepAct
		}
	}
}

// block runs the forward, recompute and backward passes of block b on one
// micro-batch and resolves which part of each collective hides under
// compute. The recompute pass re-runs the ops the strategy's policy
// re-runs (model.Program.Reruns).
func (e *evaluator) block(b int, sc *segCost) {
	e.blockIdx = b
	e.resetCache(b, false)
	e.run(&sc.runs[0], b, pFwd, nil)
	e.blockBackward(b, sc)
}

// blockBackward runs the recompute and backward passes of block b, whose
// forward pass sc holds, and totals sc: the part of block that depends on
// the recompute policy and the ZeRO stage (the forward pass depends on
// neither).
func (e *evaluator) blockBackward(b int, sc *segCost) {
	e.blockIdx = b
	weights := e.p.Blocks[b].Weights
	for _, w := range weights {
		e.pending[w] = 0
	}
	rc, bw := &sc.runs[1], &sc.runs[2]
	e.resetCache(b, false)
	if e.p.Options.SavesGathered && e.active&bit(space.RoleTP) != 0 {
		// Autograd kept the forward pass's all-gathered inputs of the
		// column-parallel matmuls the policy does not re-make
		// (Model.spSaved, model.ProgramOptions.SavesGathered): their
		// weight gradients read them as they are.
		for _, t := range e.m.spSaved[e.policy][b] {
			e.gathered[t] |= bit(space.RoleTP)
		}
	}
	e.run(rc, b, pRecompute, e.m.reruns[e.policy][b])
	if sh := e.m.shares[e.policy][b]; sh != nil {
		addPartialReruns(rc, &sc.runs[0], e.p.Blocks[b].Fwd, sh, func(o *model.Op) float64 { return e.launchedTail(o, e.callTail(o)) })
	}
	e.resetCache(b, true)
	e.run(bw, b, pBwd, nil)
	if cap(sc.pending) < len(weights) {
		sc.pending = make([]roleSet, len(weights))
	}
	sc.pending = sc.pending[:len(weights)]
	for i, w := range weights {
		sc.pending[i] = e.pending[w]
	}
	e.sumRuns(b, sc)
	e.stepPart(b, sc)
}

// addPartialReruns adds to the recompute pass rc the shares of forward
// ops that a policy re-runs in part (model.Policy.Partial: torchtitan's
// per-op selective AC re-runs the key columns of the q, k, v projection and
// the up half of the gate and up projection, which are separate matmuls
// there): each the share of its time in the forward pass fw, its inputs
// being at hand (the recompute pass re-makes them or they are kept), so no
// collective is added (the backward pass gathers the projection's input
// for its weight gradient as without recompute). Each re-run part is one
// call, whose fixed tail (tail, evaluator.callTail) the breakdown counts
// up to its share of the op's time.
func addPartialReruns(rc, fw *runResult, ops []model.Op, shares []float64, tail func(*model.Op) float64) {
	for i, sh := range shares {
		if sh <= 0 || i >= len(fw.opSeconds) {
			continue
		}
		sec := sh * fw.opSeconds[i]
		rc.seconds += sec
		c := categoryOf(&ops[i])
		rc.cat[c] += sec
		if c == catMatmul && tail != nil {
			rc.cat[catTail] += min(sh*tail(&ops[i]), sec)
		}
	}
}

// sumRuns totals sc, reset, from its forward, recompute and backward
// passes but for the once-per-step collectives: the compute, and which
// part of each collective hides under compute.
func (e *evaluator) sumRuns(b int, sc *segCost) {
	fw, rc, bw := &sc.runs[0], &sc.runs[1], &sc.runs[2]
	sc.fwd = fw.seconds
	sc.bwd = rc.seconds + bw.seconds
	sc.flops = fw.flops + rc.flops + bw.flops
	for c := range sc.cat {
		sc.cat[c] = fw.cat[c] + rc.cat[c] + bw.cat[c]
	}
	wgt := sc.wgt
	for i, w := range e.m.wgrad[b] {
		if w {
			wgt += bw.opSeconds[i]
		}
	}
	sc.wgt = wgt
	// Accumulated in locals, in the same order as into sc: the compiler
	// keeps them in registers instead of storing each sum through sc.
	crit, critF, critW, a2aF, a2aB := sc.crit, sc.critF, sc.critW, sc.a2aF, sc.a2aB
	weights, weightEdge, weightsB, weightsRS := sc.weights, sc.weightEdge, sc.weightsB, sc.weightsRS
	for k, r := range [3]*runResult{fw, rc, bw} {
		ops := r.opSeconds
		for i := range r.emit {
			em := &r.emit[i]
			exp := em.seconds
			if em.hideOp >= 0 {
				exp = max(0, em.seconds-em.hideFrac*ops[em.hideOp])
			}
			em.exposed = exp
			switch em.class {
			case classCritical:
				crit += exp
				switch {
				case em.pass == pFwd:
					critF += exp
				case em.wgrad:
					critW += exp
				}
				switch {
				case em.dispatch && em.pass == pFwd:
					a2aF += exp
					if em.lead {
						sc.a2aFin += exp
					}
				case em.dispatch:
					a2aB += exp
					if em.lead && em.pass == pBwd {
						sc.a2aBin += exp
					}
				}
			case classWeights:
				weights += em.seconds
				if k > 0 {
					weightsB += em.seconds
				}
				if (em.pass == pFwd && em.op == opAG) || em.op == opRS {
					weightEdge += em.seconds
				}
				if em.op == opRS {
					weightsRS += em.seconds
				}
			}
		}
	}
	sc.crit, sc.critF, sc.critW, sc.a2aF, sc.a2aB = crit, critF, critW, a2aF, a2aB
	sc.weights, sc.weightEdge, sc.weightsB, sc.weightsRS = weights, weightEdge, weightsB, weightsRS
	e.expertPhases(b, sc)
}

// expertPhases adds to sc the compute of block b's experts, the ops between
// its two all-to-alls (Model.expertSpan): of the forward pass (expF), of
// the recompute and backward passes but for the weight gradients (expB),
// and of those (expW). Megatron-Core's EP overlap runs each of them beside
// one all-to-all of the paired micro-batch (rankSums.overlappedA2ASeconds).
func (e *evaluator) expertPhases(b int, sc *segCost) {
	sp := &e.m.expertSpan[b]
	if sp[0][0] < 0 || sp[1][0] < 0 {
		return
	}
	fw, rc, bw := &sc.runs[0], &sc.runs[1], &sc.runs[2]
	for i := sp[0][0] + 1; i < sp[0][1]; i++ {
		sc.expF += fw.opSeconds[i]
		sc.expB += rc.opSeconds[i] // 0 for the ops not re-run (evaluator.run)
	}
	wg := e.m.wgrad[b]
	for i := sp[1][0] + 1; i < sp[1][1]; i++ {
		if wg[i] {
			sc.expW += bw.opSeconds[i]
		} else {
			sc.expB += bw.opSeconds[i]
		}
	}
}

// stepPart computes sc's once-per-step collectives from the gradients the
// backward pass left partial (sc.pending) and the ZeRO stage: the gradient
// still partial over replica roles is all-reduced (DP) or reduce-scattered
// and the parameters re-gathered (ZeRO-1/2), docs/formulas.md §3.1.
func (e *evaluator) stepPart(b int, sc *segCost) {
	weights := e.p.Blocks[b].Weights
	sc.stepOK = true
	m, hit := e.stepMemoFor(b, sc.pending)
	if hit {
		sc.stepGrad, sc.stepParam = m.grad, m.param
		sc.stepEmit = append(sc.stepEmit[:0], m.emit...)
		sc.stepDep, sc.stepAt = m.dep, m.at
		return
	}
	sc.stepGrad, sc.stepParam = 0, 0
	sc.stepEmit = sc.stepEmit[:0]
	sc.stepDep, sc.stepAt = 0, e.epoch

	for i, w := range weights {
		P := sc.pending[i]
		t := &e.p.Tensors[w]
		if t.Bucketed || P == 0 && !(e.zero >= 2 && e.zeroRoles(w) != 0) {
			continue
		}
		why := &e.m.weightWhy[w]
		gBytes := e.bytes(t.Grad, e.accRoles(w))
		if e.zero == 0 {
			e.stepEmit(sc, opAR, P, gBytes, classStepGrad, why.ar)
			continue
		}
		e.stepEmit(sc, opRS, P, gBytes, classStepGrad, why.rs)
		wBytes := e.bytes(w, e.roles[w])
		e.stepEmit(sc, opAG, P|e.zeroRoles(w), wBytes, classStepParam, why.ag)
	}
	if m != nil {
		m.record(sc)
	}
}

// stepFresh reports whether sc's once-per-step collectives hold under
// the current placement (segCost.stepOK).
func (e *evaluator) stepFresh(sc *segCost) bool {
	return sc.stepOK && e.fresh(sc.stepDep, sc.stepAt)
}

// stepEmit records a once-per-step collective of sc.
func (e *evaluator) stepEmit(sc *segCost, op collOp, roles roleSet, bytes float64, class commClass, why whyID) {
	if roles == 0 || bytes <= 0 {
		return
	}
	sec := e.mr.seconds(op, bytes, roles)
	sc.stepDep |= roles
	if !e.o.SkipCollectives || e.trace != nil {
		// Only Estimate.Collectives reads them (evaluator.collectives).
		sc.stepEmit = append(sc.stepEmit, emission{op: op, roles: roles, bytes: bytes, seconds: sec, class: class, why: why, hideOp: -1})
	}
	if class == classStepGrad {
		sc.stepGrad += sec
	} else {
		sc.stepParam += sec
	}
}
