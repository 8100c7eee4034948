package cost

import (
	"slices"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// stagePlan is what one pipeline rank holds: its layers of each kind, and
// the embedding (first rank) or the output layer and the
// multi-token-prediction modules (last rank).
type stagePlan struct {
	counts      []int // per layer kind
	layers      int
	embed, head bool
	// mult is how many times the stage runs each block per micro-batch.
	mult []float64
}

// planStages lists the distinct compositions of the pipeline's ranks under
// split, each rank's layers run as loop chunks (space.Strategy.LoopChunks)
// (one rank without a pipeline; only the ranks space.CandidateRanks names can
// differ from the rank before them, and every rank where looped chunks
// cross a change of layer kind), reusing st's memory. The busiest of them
// sets the step time.
func (st *evalState) planStages(p *model.Program, pp, loop int, split space.Split) {
	pp = max(pp, 1)
	loop = st.loopOf(p, pp, loop)
	st.split, st.loop = split, loop
	for i := range st.stageSets {
		if ss := &st.stageSets[i]; ss.ok && ss.pp == pp && ss.loop == loop && ss.split == split {
			st.stages, st.ranks, st.rankStage = ss.stages, ss.ranks, ss.rankStage
			return
		}
	}
	ss := &st.stageSets[st.nextStageSet]
	st.nextStageSet = (st.nextStageSet + 1) % maxStageSets
	st.stages, st.ranks, st.rankStage = ss.stages[:0], ss.ranks[:0], ss.rankStage[:0]
	nk := len(p.Kinds)
	n := p.NumLayers()
	// A rank of looped chunks holds every pp-th run of layers: where the
	// layer kind changes, its composition is its chunks' (space.Split.LoopCounts).
	looped := loop > 1
	// At most 4 runs of ranks and two ranks per change of layer kind, or
	// every rank when looped.
	maxStages := 4 + 2*len(st.kindStarts)
	if looped {
		maxStages = max(maxStages, pp)
		st.rankCounts = split.LoopCounts(p, pp, loop, st.rankCounts)
	}
	if cap(ss.counts) < nk*maxStages {
		ss.counts = make([]int, nk*maxStages)
	}
	nb := len(p.Blocks)
	if cap(ss.mults) < nb*maxStages {
		ss.mults = make([]float64, nb*maxStages)
	}
	st.ranks = split.LoopCandidateRanks(n, pp, loop, st.kindStarts, st.ranks)
	for _, r := range st.ranks {
		first, cnt := split.StageLayers(n, pp, r)
		i := len(st.stages)
		buf := ss.counts[i*nk : (i+1)*nk]
		if looped {
			copy(buf, st.rankCounts[r*nk:(r+1)*nk])
		} else {
			p.CountLayers(first, first+cnt, buf)
		}
		if r == pp-1 && p.MTP.Count > 0 {
			buf[p.MTP.Kind] += p.MTP.Count // the multi-token-prediction modules sit with the output layer
		}
		sp := stagePlan{counts: buf, layers: cnt, embed: r == 0, head: r == pp-1}
		if j := slices.IndexFunc(st.stages, func(o stagePlan) bool {
			return o.embed == sp.embed && o.head == sp.head && slices.Equal(o.counts, sp.counts)
		}); j >= 0 {
			st.rankStage = append(st.rankStage, j)
			continue
		}
		st.rankStage = append(st.rankStage, i)
		sp.mult = ss.mults[i*nb : (i+1)*nb]
		for b := range sp.mult {
			sp.mult[b] = blockMultiplicity(p, &sp, b)
		}
		st.stages = append(st.stages, sp)
	}
	ss.stages, ss.ranks, ss.rankStage = st.stages, st.ranks, st.rankStage
	ss.pp, ss.loop, ss.split, ss.ok = pp, loop, split, true
}

// maxStageSets bounds the pipelines whose stage plans an evalState keeps:
// a layout's schedules under one pipeline degree and split (one chunk a
// rank, and the interleaved schedule's loops of chunks where the layer
// kind changes).
const maxStageSets = 8

// stageSet is the stage plans of a pipeline of pp ranks under split and
// loop chunks, when ok (planStages): its stages, candidate ranks and each
// one's stage, and the backing of the stages' compositions (counts) and
// block multiplicities (mults). A Model's program is fixed, so the key
// holds every input.
type stageSet struct {
	pp, loop         int
	split            space.Split
	ok               bool
	stages           []stagePlan
	ranks, rankStage []int
	counts           []int
	mults            []float64
}

// loopOf returns the loop chunks (space.Strategy.LoopChunks) that change
// what a rank of pp holds of p's layer kinds: loop where the stack's kind
// changes, 1 otherwise (every rank's composition is then its count of the
// one kind, looped or not).
func (st *evalState) loopOf(p *model.Program, pp, loop int) int {
	if st.kindStarts == nil {
		st.kindStarts = p.KindStarts([]int{})
	}
	if loop > 1 && pp > 1 && len(st.kindStarts) > 0 {
		return loop
	}
	return 1
}

// stagesStale reports whether the stage plans of st are not those of s
// (planStages): another split of the layers, or another loop of chunks
// where it matters.
func (st *evalState) stagesStale(p *model.Program, s *space.Strategy) bool {
	return s.Split != st.split || st.loopOf(p, s.Degree[space.PP], s.LoopChunks()) != st.loop
}

// blockMultiplicity returns how many times stage sp runs block b per
// micro-batch.
func blockMultiplicity(p *model.Program, sp *stagePlan, b int) float64 {
	switch b {
	case p.Embedding:
		if sp.embed {
			return 1
		}
		return 0
	case p.Output:
		if sp.head {
			return p.OutputRuns()
		}
		return 0
	}
	n := 0
	for k, kind := range p.Kinds {
		for _, kb := range kind.Blocks {
			if kb == b {
				n += sp.counts[k]
			}
		}
	}
	return float64(n)
}

// rankView is what one pipeline rank runs and holds: per block, its runs
// per micro-batch (mult) and the copies of its parameters the rank holds
// (params); per layer kind, the layers it runs per micro-batch (kinds);
// and the layers it holds (layers). A linear placement's is a stage plan's;
// a V-shaped or mirrored one's mixes two (pairedView).
type rankView struct {
	mult, params, kinds []float64
	layers              float64
}

// grow sizes v for nb blocks and nk layer kinds, keeping its memory.
func (v *rankView) grow(nb, nk int) {
	if cap(v.mult) < nb {
		v.mult, v.params = make([]float64, nb), make([]float64, nb)
	}
	if cap(v.kinds) < nk {
		v.kinds = make([]float64, nk)
	}
	v.mult, v.params, v.kinds = v.mult[:nb], v.params[:nb], v.kinds[:nk]
}

// linearView fills st.lin with stage plan si as its rank runs it (its
// mult and params are the plan's).
func (st *evalState) linearView(si int) *rankView {
	sp, v := &st.stages[si], &st.lin
	if cap(v.kinds) < len(sp.counts) {
		v.kinds = make([]float64, len(sp.counts))
	}
	v.kinds = v.kinds[:len(sp.counts)]
	v.mult, v.params = sp.mult, sp.mult
	for k, n := range sp.counts {
		v.kinds[k] = float64(n)
	}
	v.layers = float64(sp.layers)
	return v
}

// stageOf returns the index in st.stages of rank r's composition: that of
// the last candidate rank at or before r (space.CandidateRanks).
func (st *evalState) stageOf(r int) int {
	i := 0
	for j, c := range st.ranks {
		if c > r {
			break
		}
		i = j
	}
	return st.rankStage[i]
}

// pairedView fills st.view with rank r of pp under placement pl, which
// runs linear rank r's layers and rank pp-1-r's: V-shaped, chunks r and
// 2pp-1-r for every micro-batch, about half of each, with the embedding
// and the output layer on rank 0 [ZB §6]; mirrored, stage r for half the
// micro-batches and stage pp-1-r for the other half, holding both stages'
// parameters [DSV3 §3.2.1].
func (st *evalState) pairedView(p *model.Program, r, pp int, pl space.Placement) *rankView {
	a, b := &st.stages[st.stageOf(r)], &st.stages[st.stageOf(pp-1-r)]
	v := &st.view
	v.grow(len(p.Blocks), len(p.Kinds))
	for blk := range v.mult {
		m := (a.mult[blk] + b.mult[blk]) / 2
		held := m
		switch {
		case pl == space.PlaceMirror:
			held = a.mult[blk] + b.mult[blk]
		case blk == p.Embedding || blk == p.Output:
			m, held = 0, 0
			if r == 0 {
				m, held = 1, 1
			}
		}
		v.mult[blk], v.params[blk] = m, held
	}
	for k := range v.kinds {
		v.kinds[k] = float64(a.counts[k]+b.counts[k]) / 2
	}
	v.layers = float64(a.layers+b.layers) / 2
	if pl == space.PlaceMirror {
		v.layers = float64(a.layers + b.layers)
	}
	return v
}

// stepRules are what of a strategy's schedule and framework one rank's step
// time needs.
type stepRules struct {
	pp           int
	v, M         float64
	of, wof, gof float64
	bubble       space.Bubble
	hideA2A      bool    // the schedule overlaps the MoE dispatch and combine
	phased       bool    // Megatron-Core's EP overlap: phase by phase (overlappedA2ASeconds)
	overlapped   float64 // micro-batches run as overlapped pairs
	virtual      bool    // the interleaved schedule's v chunks per rank, each synchronised on its own (syncLoads)
}

// stepRulesOf returns the step rules of kr's schedule for pp stages, V
// virtual stages asked, M micro-batches, overlap fraction of and options
// o, kept among the last few asked. The key holds every input, the
// overlap fractions o gives included: an evalState recycled by
// Model.Evaluate serves calls with other options.
func (kr *knownRules) stepRulesOf(pp, V int, M, of float64, a2a bool, o *Options) *stepRules {
	wof, gof := of, of
	if f := o.Comm.WeightOverlap; f != nil {
		wof = *f
	}
	if f := o.Comm.GradOverlap; f != nil {
		gof = *f
	}
	for i := range kr.srs {
		if c := &kr.srs[i]; c.ok && c.sr.pp == pp && c.v == V && c.a2a == a2a && c.sr.M == M && c.sr.of == of && c.sr.wof == wof && c.sr.gof == gof {
			return &c.sr
		}
	}
	c := &kr.srs[kr.next]
	kr.next = (kr.next + 1) % len(kr.srs)
	rules := &kr.rules
	v := rules.VirtualStages(V)
	c.sr = stepRules{pp: pp, v: float64(v), M: M, bubble: rules.Bubble(pp, v),
		of: of, wof: wof, gof: gof,
		hideA2A:    rules.Overlaps().Has(space.OverlapExpertA2A),
		overlapped: rules.OverlappedMicrobatches(pp, int(M)), virtual: rules.Virtual()}
	if a2a && !c.sr.hideA2A {
		// Megatron-Core's overlap_moe_expert_parallel_comm: the 1F1B
		// steady state's forward-backward pairs hide each other's MoE
		// dispatch and combine, as DualPipe's do
		// (space.A2AOverlapMicrobatches).
		c.sr.hideA2A, c.sr.phased = true, true
		c.sr.overlapped = space.A2AOverlapMicrobatches(pp, v, int(M))
	}
	c.v, c.a2a, c.ok = V, a2a, true
	return &c.sr
}

// assemble writes into out the step time the block costs of st give s's
// pipeline schedule: the busiest rank's compute, exposed communication
// and bubble (docs/formulas.md §5-6).
func (cm *Model) assemble(st *evalState, in *evalInputs, s *space.Strategy, out *Estimate) {
	p, e, M := cm.p, &st.e, st.M
	pp := max(s.Degree[space.PP], 1)
	st.host = hostOffloadOf(s)
	st.actHost = 0
	if s.ActOffload > 0 {
		st.actHost = float64(s.ActOffload) / float64(cm.p.Spec.Layers)
	}
	kr := st.rulesOf(s.Schedule)
	rules := &kr.rules
	sr := kr.stepRulesOf(pp, s.V, M, e.eff.OverlapFraction, s.A2AOverlap && e.epOverlapHides(in.options.Comm.GraphedStep), &in.options)
	v := int(sr.v)
	// The best view's estimate and the next one's, swapped, not copied.
	var bufs [2]Estimate
	best, est := &bufs[0], &bufs[1]
	best.StepSeconds = -1
	bestStage := 0
	// The views' sums are kept while the block costs stay (sumsGen): for
	// a strategy that differs from the one before only in its schedule.
	// The best paired view's multiplicities are kept for the collectives,
	// so only a search's evaluation, which skips them, reuses the sums.
	reuse := st.sumsGen != 0 && in.options.SkipCollectives && !in.options.Trace
	if pl := rules.Placement(); pl == space.PlaceLinear || pp == 1 {
		for si := range st.stages {
			cm.rankStep(st, in, st.viewSums(si, reuse, func() *rankView { return st.linearView(si) }), sr, est)
			if est.StepSeconds > best.StepSeconds {
				best, est, bestStage = est, best, si
			}
		}
	} else {
		// The pair of compositions changes only where rank r or rank
		// pp-1-r crosses a candidate rank.
		slot := len(st.stages)
		if pl == space.PlaceMirror {
			slot += 2 * len(st.ranks)
		}
		for ci, c := range st.ranks {
			for j, r := range [2]int{c, pp - c} {
				if r < 0 || r >= pp {
					continue
				}
				cm.rankStep(st, in, st.viewSums(slot+2*ci+j, reuse, func() *rankView { return st.pairedView(p, r, pp, pl) }), sr, est)
				if est.StepSeconds > best.StepSeconds {
					best, est = est, best
					if !reuse {
						st.best.grow(len(p.Blocks), 0)
						copy(st.best.mult, st.view.mult)
						copy(st.best.params, st.view.params)
					}
				}
			}
		}
	}

	tokens := float64(in.workload.Batch) * float64(in.seq)
	best.ModelFLOPs = in.modelFLOPsPerToken * tokens
	var rerun float64
	for _, r := range p.Stack {
		rerun += float64(r.Count) * in.rerunPerToken[e.policy][r.Kind]
	}
	if r := p.MTP; r.Count > 0 {
		rerun += float64(r.Count) * in.rerunPerToken[e.policy][r.Kind]
	}
	best.HardwareFLOPs = best.ModelFLOPs + rerun*tokens
	if !in.options.SkipCollectives || in.options.Trace {
		mult, held := st.best.mult, st.best.params
		if rules.Placement() == space.PlaceLinear || pp == 1 {
			mult, held = st.stages[bestStage].mult, st.stages[bestStage].mult
		}
		best.Collectives = e.collectives(st, mult, held, M, float64(v), pp, sr.hideA2A)
		if best.Passes != nil {
			best.Passes.RecomputeSeconds = st.recomputeSeconds(mult)
		}
	}
	if e.trace != nil {
		best.Ops = *e.trace
	}
	*out = *best
}

// rankSums are the block costs and parameters of one rank view (rankView)
// summed over its blocks and layer kinds: what its step time takes of the
// blocks, whatever the schedule (rankStep).
type rankSums struct {
	// fc and bc are the compute of the forward and backward passes (the
	// recompute in bc), crit the critical communication, wmb the per
	// micro-batch weight traffic (wmbB its part in the recompute and
	// backward passes), sg and spar the once-per-step gradient
	// reductions and parameter gathers, params the parameters updated,
	// stored and computed those held and computed with (fillParams), fp8
	// those with fp8 copies, cat the compute by category, wc the weight
	// gradients' compute, critF and critW the critical communication of
	// the forward pass and of the weight gradients, a2aF and a2aB the MoE
	// dispatch and combine of each pass (segCost), edge the first gather
	// and last reduction of the heaviest layer, off the activation bytes
	// offloaded per micro-batch and kept those kept in HBM (of which an
	// activation offload moves a share), layers the layers held, wOnce the weight
	// traffic of one forward gather and one gradient reduction of every
	// block and wOnceRS its reductions (model.Precision.PipelineUnsharded).
	fc, bc, crit, wmb, sg, spar, params, stored, computed, fp8  float64
	wc, critF, critW, a2aF, a2aB, edge, off, kept, layers, wmbB float64
	wOnce, wOnceRS                                              float64
	// gathered is the parameters the rank's FSDP gathers make whole (its
	// weights sharded over fsdp, efsdp or the cp an FSDP mesh spans), per
	// gather.
	gathered float64
	// a2aFin, a2aBin, expF, expB and expW are segCost's, summed: the
	// all-to-alls into the experts and the experts' compute; endsF and
	// endsB the forward and backward compute of the embedding and the
	// output layer, which run outside the layers' pairs.
	a2aFin, a2aBin, expF, expB, expW, endsF, endsB float64
	// sgEmb and sparEmb are sg's and spar's share of the embedding,
	// sgEnds and sparEnds of the embedding and the output layer.
	sgEmb, sparEmb, sgEnds, sparEnds float64
	cat                              [numCategories]float64
	// gen is the evalState.sumsGen the sums are of (0: none).
	gen uint64
}

// viewSums returns the sums of view slot i of the current block costs: the
// kept ones with reuse when they are of the current sumsGen, else those
// of the view that view fills (kept in slot i with reuse).
func (st *evalState) viewSums(i int, reuse bool, view func() *rankView) *rankSums {
	if !reuse {
		st.sumScratch.of(st, view())
		return &st.sumScratch
	}
	if i >= len(st.sums) {
		st.sums = append(st.sums, make([]rankSums, i+1-len(st.sums))...)
	}
	s := &st.sums[i]
	if s.gen != st.sumsGen {
		s.of(st, view())
		s.gen = st.sumsGen
	}
	return s
}

// of sets s to the sums of rank view rv over st's block costs.
func (s *rankSums) of(st *evalState, rv *rankView) {
	p := st.e.p
	*s = rankSums{layers: rv.layers}
	for b, n := range rv.mult {
		if n == 0 && rv.params[b] == 0 {
			continue
		}
		sc, h := st.blocks[b], rv.params[b]
		s.fc += n * sc.fwd
		s.bc += n * sc.bwd
		s.crit += n * sc.crit
		s.wmb += n * sc.weights
		s.wmbB += n * sc.weightsB
		s.wOnce += n * sc.weightEdge
		s.wOnceRS += n * sc.weightsRS
		s.sg += h * sc.stepGrad
		s.spar += h * sc.stepParam
		if b == p.Embedding || b == p.Output {
			s.endsF += n * sc.fwd
			s.endsB += n * sc.bwd
			s.sgEnds += h * sc.stepGrad
			s.sparEnds += h * sc.stepParam
			if b == p.Embedding {
				s.sgEmb += h * sc.stepGrad
				s.sparEmb += h * sc.stepParam
			}
		}
		s.params += h * st.params[b]
		s.stored += n * st.stored[b]
		s.computed += n * st.computed[b]
		s.gathered += n * st.gathered[b]
		s.fp8 += n * st.fp8[b]
		for c := range s.cat {
			s.cat[c] += n * sc.cat[c]
		}
		s.wc += n * sc.wgt
		s.critF += n * sc.critF
		s.critW += n * sc.critW
		s.a2aF += n * sc.a2aF
		s.a2aB += n * sc.a2aB
		s.a2aFin += n * sc.a2aFin
		s.a2aBin += n * sc.a2aBin
		s.expF += n * sc.expF
		s.expB += n * sc.expB
		s.expW += n * sc.expW
	}
	// The first gather and the last reduction of one layer's weights.
	for k, kind := range p.Kinds {
		if rv.kinds[k] == 0 {
			continue
		}
		var ke float64
		for _, b := range kind.Blocks {
			ke += st.blocks[b].weightEdge
		}
		s.edge = max(s.edge, ke)
	}
	for k, n := range rv.kinds {
		if k < len(st.offload) {
			s.off += n * st.offload[k]
			s.kept += n * st.kept[k]
		}
	}
}

// rankStep writes into est the step time of the rank whose sums are rs
// under the schedule and framework rules sr.
func (cm *Model) rankStep(st *evalState, in *evalInputs, rs *rankSums, sr *stepRules, est *Estimate) {
	p, e, M := cm.p, &st.e, sr.M
	fc, bc, crit, wmb, sg, spar := rs.fc, rs.bc, rs.crit, rs.wmb, rs.sg, rs.spar
	params, stored, computed, fp8 := rs.params, rs.stored, rs.computed, rs.fp8
	wc, critF, critW, a2aF, a2aB := rs.wc, rs.critF, rs.critW, rs.a2aF, rs.a2aB
	cat := rs.cat
	// Per micro-batch passes over the parameters (docs/formulas.md §1.4
	// [derived]): autocast's copies of the master weights (read the
	// master, write the copy), and the cast of the weight gradients into
	// the accumulated ones (read the bf16 gradient, read and write the
	// accumulator; the first micro-batch only writes it).
	pr := &p.Options.Precision
	var castF, castB float64
	if pr.Casts() {
		castF = e.memSeconds((pr.Master + pr.Weight) * stored)
	}
	if pr.GradCast {
		castB = e.memSeconds((pr.Activation+2*pr.Grad)*computed) - e.memSeconds(pr.Grad*computed)/M
	}
	fc += castF
	bc += castB
	cat[catMemory] += castF + castB
	// FSDP2's copy-out (Comm.GatherCopyOut): each gather's flat buffer
	// read and the unsharded parameters written on the compute stream,
	// Weight bytes each way per parameter gathered
	// (foreach_all_gather_copy_out, pytorch/pytorch@8fc2039d). The
	// forward's and the backward's gathers of every micro-batch, or one
	// gather a step where the pipeline keeps the stage gathered.
	var copyOnce float64
	if in.options.Comm.GatherCopyOut && rs.gathered > 0 {
		cp := e.memSeconds(2 * pr.Weight * rs.gathered)
		if pr.PipelineUnsharded && sr.pp > 1 {
			copyOnce = cp
		} else {
			fc += cp
			bc += cp
			cat[catMemory] += 2 * cp
		}
	}
	// FP8 weight copies (model.FP8Recipe): each weight an fp8 matmul
	// reads is quantised with its transpose, reading the weight (the
	// master under autocast) and writing 1 + 1 bytes (the recipe's element
	// bytes each, model.FP8Recipe.Bytes); once per step, or per
	// micro-batch when FSDP gathers the weight afresh [TE-FP8].
	var cast8 float64
	if fp8 > 0 && !e.int8 { // AQT quantises a weight inside each int8 matmul call instead (aqtWeightBytes)
		src := pr.Weight
		if pr.WeightCopies {
			src = pr.Master
		}
		cast8 = e.memSeconds((src + 2*p.ClassBytes(model.ClassFP8)) * fp8)
		if e.active&(bit(space.RoleFSDP)|bit(space.RoleEFSDP)) != 0 {
			fc += cast8
			cat[catMemory] += cast8
			cast8 = 0
		}
	}
	edge := rs.edge
	units := max(rs.layers, 1)
	*est = Estimate{}
	// Busiest stage compute over all micro-batches, plus the optimizer
	// step: memory-bound, over the stage's parameter shard
	// (model.Precision.StepBytes: 28 bytes per parameter measured for
	// fused AdamW, docs/measured-h100.md).
	est.OptimizerSeconds = e.memSeconds(params * cm.optimizerBytes)
	if st.host.opt > 0 {
		// Host offload: the chip's share, then the host's (offloadStep).
		est.OptimizerSeconds = cm.offloadStep(e, &in.cluster.Chip, st.host, params)
	}
	est.MatmulSeconds = M * cat[catMatmul]
	est.AttentionSeconds = M * cat[catAttention]
	est.ScanSeconds = M * cat[catScan]
	est.MatmulTailSeconds = M * cat[catTail]
	est.MemoryBoundSeconds = M*cat[catMemory] + cast8 + copyOnce
	est.ComputeSeconds = M*(fc+bc) + est.OptimizerSeconds + cast8 + copyOnce
	exposed := M * crit
	// A schedule that runs a forward and a backward chunk of two
	// micro-batches as one pair hides each one's MoE dispatch and combine
	// under the other's compute, up to OverlapFraction of it, for the pairs
	// it runs ([DSV3 §3.2.1], docs/formulas.md §6).
	var hidden float64
	switch {
	case sr.phased:
		// Megatron-Core's EP overlap: each all-to-all under the compute
		// of its phase, less the SMs its kernels take.
		hidden = rs.overlappedA2ASeconds(fc, bc, sr.of, e.a2aSMShare)
		exposed -= sr.overlapped * hidden
	case sr.hideA2A:
		hidden = min(a2aF, sr.of*bc) + min(a2aB, sr.of*fc)
		exposed -= sr.overlapped * hidden
	}
	est.ExposedA2ASeconds = M*(a2aF+a2aB) - sr.overlapped*hidden
	var ppExp, offT, offExp float64
	chunks := 1.0
	if sr.virtual && in.options.Comm.ChunkSync {
		chunks = sr.v
	}
	wm, wBwd := M, rs.wmbB
	if p.Options.Precision.PipelineUnsharded && sr.pp > 1 {
		// FSDP under the pipeline keeps the stage gathered through the
		// step: one gather in the first forward pass and one reduction
		// after the last backward pass (model.Precision.PipelineUnsharded).
		wm, wmb, wBwd = 1, rs.wOnce, rs.wOnceRS
	}
	wExp, gExp, pExp, smsExp := syncLoads{
		m: wm, fwd: fc, bwd: bc, compute: est.ComputeSeconds, wof: sr.wof, gof: sr.gof, share: e.collSMShare,
		chunks: chunks, group: min(float64(sr.pp), M),
		weights: wmb, weightsBwd: wBwd, weightEdge: edge,
		grad: sg, gradEdge: (sg-rs.sgEnds)/units + rs.sgEmb,
		param: spar, paramEdge: (spar-rs.sparEnds)/units + rs.sparEmb,
	}.exposed()
	exposed += wExp + gExp + pExp
	// Pipeline sends: one forward and one backward per micro-batch per
	// virtual stage; the ramp-up and ramp-down walks over the stage
	// boundaries are exposed, the steady-state sends (on the slowest hop)
	// overlap up to OverlapFraction ([SB-GPU], docs/formulas.md §5-6),
	// less the SMs their kernels take from the compute beside them
	// (collectiveSMShare).
	if sr.pp > 1 {
		ppSMs := e.collSMShare * sr.of * 2 * M * sr.v * st.pSend
		ppExp = (1-sr.of)*2*M*sr.v*st.pSend + ppSMs
		smsExp += ppSMs
		exposed += 2*st.pRamp + ppExp
	}
	// Offloaded activations cross the host link to host memory in the
	// forward pass and back in the backward pass, asynchronously, and
	// parameters on the host come to the chip for each pass
	// (offloadPassSeconds): each pass's transfers hide under
	// OverlapFraction of that pass's compute, not the step's (a tensor
	// leaves when the forward pass makes it and returns before the backward
	// pass reads it; docs/frameworks.md).
	// An activation offload copies the first layers' kept activations
	// out after each layer's forward pass and back before its backward
	// pass on a stream of its own (TransformerEngine@d0067d0d
	// transformer_engine/pytorch/cpu_offload.py:602-647), so they join
	// the same passes' transfers.
	off := rs.off + st.actHost*rs.kept
	if host := in.cluster.Chip.HostBandwidthBytesPerS; host > 0 && (off > 0 || st.host.params) {
		tF, tB := cm.offloadPassSeconds(st.host, params, off, host)
		offT = M * (tF + tB)
		offExp = M * (max(0, tF-sr.of*fc) + max(0, tB-sr.of*bc))
		exposed += offExp
	}
	est.ExposedCommSeconds = exposed
	est.CollectiveSMSeconds = smsExp
	est.ExposedOffloadSeconds = offExp
	// Bubble: the schedule's idle passes of one micro-batch over the
	// rank's layers (docs/formulas.md §5). T_F is the forward pass, T_W the
	// weight-gradient passes, T_B the rest of the backward pass (recompute
	// included), each with its exposed critical communication; an
	// overlapped pair is all three less what it hides.
	if b := sr.bubble; b.Uniform() {
		est.BubbleSeconds = b.F * (fc + bc + crit)
	} else {
		tF, tW := fc+critF, wc+critW
		tB := bc - wc + crit - critF - critW
		tFB := tF + tB + tW - hidden
		est.BubbleSeconds = max(0, b.F*tF+b.B*tB+b.W*tW+b.FB*tFB)
	}
	est.StepSeconds = est.ComputeSeconds + est.ExposedCommSeconds + est.BubbleSeconds
	if in.options.Trace {
		est.Passes = &Passes{Microbatches: M, Chunks: sr.v, ForwardSeconds: fc, BackwardSeconds: bc, WeightGradSeconds: wc,
			CriticalSeconds: crit, CriticalForwardSeconds: critF, CriticalWeightGradSeconds: critW,
			A2AForwardSeconds: a2aF, A2ABackwardSeconds: a2aB, HiddenA2ASeconds: hidden, OverlappedMicrobatches: sr.overlapped,
			A2AIntoExpertsForwardSeconds: rs.a2aFin, A2AIntoExpertsBackwardSeconds: rs.a2aBin, A2ASMShare: e.a2aSMShare,
			ExpertForwardSeconds: rs.expF, ExpertBackwardSeconds: rs.expB, ExpertWeightGradSeconds: rs.expW,
			EndsForwardSeconds: rs.endsF, EndsBackwardSeconds: rs.endsB,
			OptimizerSeconds: est.OptimizerSeconds, FP8CastSeconds: cast8,
			WeightTrafficSeconds: wm * wmb, WeightTrafficExposedSeconds: wExp,
			GradReduceSeconds: sg, GradReduceExposedSeconds: gExp, ParamGatherSeconds: spar, ParamGatherExposedSeconds: pExp,
			OffloadSeconds: offT, OffloadExposedSeconds: offExp}
		if sr.pp > 1 {
			est.Passes.PipelineRampSeconds = 2 * st.pRamp
			est.Passes.PipelineSends = 2 * M * sr.v
			est.Passes.PipelineSendSeconds = st.pSend
			est.Passes.PipelineSendExposedSeconds = ppExp
		}
	}
}

// syncLoads are what the exposure of a step's weight traffic and
// once-per-step data-parallel collectives depends on: m micro-batches of
// fwd and bwd compute seconds each (the recompute in bwd), the step's
// compute, the overlap fractions of the weight traffic (wof) and of the
// once-per-step collectives (gof), the per micro-batch weight traffic
// (FSDP, ZeRO-2/3) and its part in the backward pass, the first gather
// and last reduction of the heaviest layer, and the once-per-step gradient
// reduction and parameter gather with their last bucket and first gather.
type syncLoads struct {
	m, fwd, bwd, compute, wof, gof float64
	// share is the share of the chip's SMs the collectives' kernels take
	// from the compute they overlap (collectiveSMShare).
	share                            float64
	weights, weightsBwd, weightEdge  float64
	grad, gradEdge, param, paramEdge float64
	// chunks is the model chunks a rank runs under the interleaved
	// schedule, each synchronised on its own (1 otherwise), and group the
	// micro-batches of one chunk the schedule runs back to back, min(pp, M).
	chunks, group float64
}

// exposed returns the exposed seconds of the weight traffic, the
// gradient reduction and the parameter gather (docs/formulas.md §6), and
// sms, the part of them that is the compute's loss of the SMs the hidden
// collectives take.
//
// FSDP/ZeRO-3 prefetch hides the per micro-batch weight traffic under
// wof of the compute; the first gather and the last reduction stay
// exposed [TORCH-FSDP]. The first forward's gathers have only that
// forward to hide under, and the last backward's gathers and reductions
// only that backward: the optimizer step waits for them.
//
// The gradient reduction overlaps the last micro-batch's backward and the
// ZeRO parameter gather the first forward; the last bucket is exposed
// [MEG-DDP]: the first layer's with the embedding's gradient, which the
// backward pass computes last, so no compute is left to hide it
// (Megatron-Core and PyTorch DDP fill their buckets in reverse order of
// the parameters, the embedding's last:
// megatron/core/distributed/param_and_grad_buffer.py @d98e8a64), and
// symmetrically the first gather, which the embedding's lookup waits for.
// Their window is what that pass's own weight traffic leaves of it: the
// weight traffic and the data-parallel collectives cross the same links,
// which carry one's bytes at a time, and a layer waits for its weights
// but the optimizer alone for the reduced gradients (under hybrid
// sharding, PyTorch FSDP all-reduces a unit's gradient shard over the
// replicas after its reduce-scatter: _reduce_grad in pytorch/pytorch
// torch/distributed/fsdp/_runtime_utils.py @3ade90a6; InternEvo issues a bucket's
// all-reduce from the gradient hook, InternLM/InternEvo@c628a8c8
// internlm/solver/optimizer/hybrid_zero_optim.py).
//
// Under the interleaved schedule with Comm.ChunkSync each of a rank's
// model chunks is synchronised on its own: Megatron-Core launches a chunk's gradient
// reduction once its last micro-batch's backward pass is done and gathers
// a chunk's parameters before its first forward pass, chunks 0 and 1 at
// the start (grad_sync_func and param_sync_func per model chunk,
// NVIDIA/Megatron-LM@d98e8a64 megatron/core/pipeline_parallel/schedules.py:1219-1221,
// 1341-1353, 1445-1455). The schedule runs each chunk for a group of
// min(pp, M) micro-batches before the next, so every chunk's reduction but
// the last one's has the next chunk's group of backward passes to hide
// under, and every chunk's gather but the first one's the previous chunk's
// group of forward passes; the last reduction and the first gather keep
// their own pass, as one chunk does.
func (l syncLoads) exposed() (weights, grad, param, sms float64) {
	fwdWeights := l.weights - l.weightsBwd
	if l.weights > 0 {
		ends := max(0, fwdWeights-l.wof*l.fwd) + max(0, l.weightsBwd-l.wof*l.bwd)
		weights = max(l.weightEdge, l.m*l.weights-l.wof*l.compute, ends)
	}
	v := max(l.chunks, 1)
	if l.grad > 0 {
		// One chunk's reduction, its own backward pass and the next
		// chunk's group to hide under (the weight traffic crossing the
		// same links first).
		g, own := l.grad/v, max(0, l.gof*l.bwd-l.weightsBwd)/v
		next := max(0, l.gof*l.group*l.bwd-l.group*l.weightsBwd) / v
		grad = max(l.gradEdge, max(0, g-own)+(v-1)*max(0, g-next))
	}
	if l.param > 0 {
		p, own := l.param/v, max(0, l.gof*l.fwd-fwdWeights)/v
		prev := max(0, l.gof*l.group*l.fwd-l.group*fwdWeights) / v
		param = max(l.paramEdge, max(0, p-own)+(v-1)*max(0, p-prev))
	}
	// While a collective runs beside the compute, its kernels hold share
	// of the SMs, which the compute loses: the hidden part of each load
	// costs share of its seconds, as the MoE all-to-all's
	// (phaseHiddenSeconds) [derived].
	if l.share > 0 {
		if h := l.m*l.weights - weights; h > 0 {
			sms += l.share * h
			weights += l.share * h
		}
		if h := l.grad - grad; h > 0 {
			sms += l.share * h
			grad += l.share * h
		}
		if h := l.param - param; h > 0 {
			sms += l.share * h
			param += l.share * h
		}
	}
	return weights, grad, param, sms
}

// fillParams sets st.sharded (st.params for both ZeRO shardings),
// st.params, st.stored, st.computed and st.fp8: the
// parameters of each block one chip updates, holds, computes gradients for,
// and keeps fp8 copies of.
func (st *evalState) fillParams() {
	e := &st.e
	n := len(e.p.Blocks)
	if cap(st.stored) < n {
		st.sharded = [2][]float64{make([]float64, n), make([]float64, n)}
		st.stored, st.computed, st.fp8 = make([]float64, n), make([]float64, n), make([]float64, n)
		st.gathered = make([]float64, n)
	}
	st.sharded[0], st.sharded[1] = st.sharded[0][:n], st.sharded[1][:n]
	st.stored, st.computed, st.fp8 = st.stored[:n], st.computed[:n], st.fp8[:n]
	st.gathered = st.gathered[:n]
	st.pickParams()
	fsdp := bit(space.RoleFSDP) | bit(space.RoleEFSDP)
	// The weights FSDP gathers: those sharded over fsdp or efsdp, and over
	// cp where the FSDP mesh spans it (model.ProgramOptions.WeightsOverCP).
	gather := fsdp
	if e.p.Options.WeightsOverCP {
		gather |= bit(space.RoleCP)
	}
	for b := range st.stored {
		st.sharded[0][b], st.sharded[1][b] = e.shardParams(b, 0), e.shardParams(b, 1)
		st.stored[b], st.computed[b], st.fp8[b], st.gathered[b] = 0, 0, 0, 0
		for _, w := range e.p.Blocks[b].Weights {
			l := e.roles[w]
			st.stored[b] += e.bytes(w, l) / e.p.ElemBytes(w)
			c := e.bytes(w, l&^fsdp) / e.p.ElemBytes(w)
			st.computed[b] += c
			if l&gather != 0 {
				st.gathered[b] += e.bytes(w, l&^gather) / e.p.ElemBytes(w)
			}
			if e.p.Tensors[w].FP8Copy {
				st.fp8[b] += c
			}
		}
	}
}

// shardParams is the parameters of block b that one chip updates: sharded
// by storage over fsdp/tp/ep, and over the pure data-parallel role (dp, or
// edp for a routed expert) by ZeRO.
func (e *evaluator) shardParams(b, zero int) float64 {
	n := 0.0
	for _, w := range e.p.Blocks[b].Weights {
		l := e.roles[w]
		if zero >= 1 {
			l |= e.dataRole(w)
		}
		n += e.bytes(w, l) / e.p.ElemBytes(w)
	}
	return n
}
