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

// planStages lists the distinct compositions of the pipeline's ranks (one
// rank without a pipeline; only the ranks space.CandidateRanks names can
// differ from the rank before them), reusing st's memory. The busiest of
// them sets the step time.
func (st *evalState) planStages(p *model.Program, pp int) {
	pp = max(pp, 1)
	nk := len(p.Kinds)
	n := p.NumLayers()
	st.stages = st.stages[:0]
	if st.kindStarts == nil {
		st.kindStarts = p.KindStarts([]int{})
	}
	// At most 4 runs of ranks and two ranks per change of layer kind.
	maxStages := 4 + 2*len(st.kindStarts)
	if cap(st.counts) < nk*maxStages {
		st.counts = make([]int, nk*maxStages)
	}
	nb := len(p.Blocks)
	if cap(st.mults) < nb*maxStages {
		st.mults = make([]float64, nb*maxStages)
	}
	st.ranks = space.CandidateRanks(n, pp, st.kindStarts, st.ranks[:0])
	for _, r := range st.ranks {
		first, cnt := space.StageLayers(n, pp, r)
		i := len(st.stages)
		buf := st.counts[i*nk : (i+1)*nk]
		p.CountLayers(first, first+cnt, buf)
		if r == pp-1 && p.MTP.Count > 0 {
			buf[p.MTP.Kind] += p.MTP.Count // the multi-token-prediction modules sit with the output layer
		}
		sp := stagePlan{counts: buf, layers: cnt, embed: r == 0, head: r == pp-1}
		if slices.ContainsFunc(st.stages, func(o stagePlan) bool {
			return o.embed == sp.embed && o.head == sp.head && slices.Equal(o.counts, sp.counts)
		}) {
			continue
		}
		sp.mult = st.mults[i*nb : (i+1)*nb]
		for b := range sp.mult {
			sp.mult[b] = blockMultiplicity(p, &sp, b)
		}
		st.stages = append(st.stages, sp)
	}
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

// assemble turns the block costs of st into the step time of s's pipeline
// schedule: the busiest stage's compute, exposed communication and bubble
// (docs/formulas.md §5-6).
func (cm *Model) assemble(st *evalState, in *evalInputs, s *space.Strategy) Estimate {
	p, e, M := cm.p, &st.e, st.M
	pp := max(s.Degree[space.PP], 1)
	rules := s.Schedule.Rules()
	v := rules.VirtualStages(s.V)
	bubble := rules.BubbleStages(pp, v)
	of, wof, gof := e.eff.OverlapFraction, e.eff.OverlapFraction, e.eff.OverlapFraction
	if f := in.options.Comm.WeightOverlap; f != nil {
		wof = *f
	}
	if f := in.options.Comm.GradOverlap; f != nil {
		gof = *f
	}
	best := Estimate{StepSeconds: -1}
	bestStage := 0
	for si := range st.stages {
		sp := &st.stages[si]
		var fc, bc, crit, wmb, sg, spar, params, stored, computed, fp8 float64
		var cat [numCategories]float64
		for b, n := range sp.mult {
			if n == 0 {
				continue
			}
			sc := &st.blocks[b]
			fc += n * sc.fwd
			bc += n * sc.bwd
			crit += n * sc.crit
			wmb += n * sc.weights
			sg += n * sc.stepGrad
			spar += n * sc.stepParam
			params += n * st.params[b]
			fp8 += n * st.fp8[b]
			stored += n * st.stored[b]
			computed += n * st.computed[b]
			for c := range cat {
				cat[c] += n * sc.cat[c]
			}
		}
		// Per micro-batch passes over the parameters (docs/formulas.md §1.4
		// [derived]): autocast's copies of the master weights (read the
		// master, write the copy), and the cast of the weight gradients into
		// the accumulated ones (read the bf16 gradient, read and write the
		// accumulator; the first micro-batch only writes it).
		pr := p.Precision()
		var castF, castB float64
		if pr.WeightCopies {
			castF = e.memSeconds((pr.Master + pr.Weight) * stored)
		}
		if pr.GradCast {
			castB = e.memSeconds((pr.Activation+2*pr.Grad)*computed) - e.memSeconds(pr.Grad*computed)/M
		}
		fc += castF
		bc += castB
		cat[catMemory] += castF + castB
		// FP8 weight copies (model.FP8Recipe): each weight an fp8 matmul
		// reads is quantised with its transpose, reading the weight (the
		// master under autocast) and writing 1 + 1 bytes; once per step, or
		// per micro-batch when FSDP gathers the weight afresh [TE-FP8].
		var cast8 float64
		if fp8 > 0 {
			src := pr.Weight
			if pr.WeightCopies {
				src = pr.Master
			}
			cast8 = e.memSeconds((src + 2) * fp8)
			if e.active&(bit(space.RoleFSDP)|bit(space.RoleEFSDP)) != 0 {
				fc += cast8
				cat[catMemory] += cast8
				cast8 = 0
			}
		}
		// The first gather and the last reduction of one layer's weights.
		var edge float64
		for k, kind := range p.Kinds {
			if sp.counts[k] == 0 {
				continue
			}
			var ke float64
			for _, b := range kind.Blocks {
				ke += st.blocks[b].weightEdge
			}
			edge = max(edge, ke)
		}
		units := float64(max(sp.layers, 1))
		est := Estimate{}
		// Busiest stage compute over all micro-batches, plus the optimizer
		// step: memory-bound, over the stage's parameter shard
		// (model.Precision.StepBytes: 28 bytes per parameter measured for
		// fused AdamW, docs/measured-h100.md).
		est.OptimizerSeconds = e.memSeconds(params * cm.optimizerBytes)
		est.MatmulSeconds = M * cat[catMatmul]
		est.AttentionSeconds = M * cat[catAttention]
		est.MemoryBoundSeconds = M*cat[catMemory] + cast8
		est.ComputeSeconds = M*(fc+bc) + est.OptimizerSeconds + cast8
		exposed := M * crit
		// FSDP/ZeRO-3: prefetch hides the per-micro-batch weight traffic
		// under OverlapFraction of the compute; the first gather and the last
		// reduction stay exposed ([TORCH-FSDP], docs/formulas.md §6).
		if wmb > 0 {
			exposed += max(edge, M*wmb-wof*est.ComputeSeconds)
		}
		// Gradient reduction overlaps the last micro-batch's backward and the
		// ZeRO parameter gather the first forward; the last bucket (one
		// layer) is exposed ([MEG-DDP], docs/formulas.md §6).
		if sg > 0 {
			exposed += max(sg/units, sg-gof*bc)
		}
		if spar > 0 {
			exposed += max(spar/units, spar-gof*fc)
		}
		// Pipeline sends: one forward and one backward per micro-batch per
		// virtual stage; the ramp-up and ramp-down walks over the stage
		// boundaries are exposed, the steady-state sends (on the slowest hop)
		// overlap up to OverlapFraction ([SB-GPU], docs/formulas.md §5-6).
		if pp > 1 {
			exposed += 2*st.pRamp + (1-of)*2*M*float64(v)*st.pSend
		}
		// Offloaded activations cross the host link to host memory in the
		// forward pass and back in the backward pass, asynchronously: they
		// hide under OverlapFraction of the compute (docs/frameworks.md).
		if host := in.cluster.Chip.HostBandwidthBytesPerS; host > 0 {
			var off float64
			for k, n := range sp.counts {
				if k < len(st.offload) {
					off += float64(n) * st.offload[k]
				}
			}
			if off > 0 {
				t := 2 * M * off / host
				exposed += max(0, t-of*est.ComputeSeconds)
			}
		}
		est.ExposedCommSeconds = exposed
		// Bubble: the schedule's idle stage-micro-batch times (docs/formulas.md §5).
		est.BubbleSeconds = bubble * (fc + bc + crit)
		est.StepSeconds = est.ComputeSeconds + est.ExposedCommSeconds + est.BubbleSeconds
		if est.StepSeconds > best.StepSeconds {
			best, bestStage = est, si
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
		best.Collectives = e.collectives(st, &st.stages[bestStage], M, float64(v), pp)
	}
	if e.trace != nil {
		best.Ops = *e.trace
	}
	return best
}

// fillParams sets st.params, st.stored, st.computed and st.fp8: the
// parameters of each block one chip updates, holds, computes gradients for,
// and keeps fp8 copies of.
func (st *evalState) fillParams() {
	e := &st.e
	n := len(e.p.Blocks)
	if cap(st.params) < n {
		st.params, st.stored, st.computed, st.fp8 = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	}
	st.params, st.stored, st.computed, st.fp8 = st.params[:n], st.stored[:n], st.computed[:n], st.fp8[:n]
	fsdp := bit(space.RoleFSDP) | bit(space.RoleEFSDP)
	for b := range st.params {
		st.params[b] = e.shardParams(b)
		st.stored[b], st.computed[b], st.fp8[b] = 0, 0, 0
		for _, w := range e.p.Blocks[b].Weights {
			l := rolesOf(e.layout(w))
			st.stored[b] += e.bytes(w, l) / e.p.ElemBytes(w)
			c := e.bytes(w, l&^fsdp) / e.p.ElemBytes(w)
			st.computed[b] += c
			if e.p.Tensors[w].FP8Copy {
				st.fp8[b] += c
			}
		}
	}
}

// shardParams is the parameters of block b that one chip updates: sharded
// by storage over fsdp/tp/ep, and over the pure data-parallel role (dp, or
// edp for a routed expert) by ZeRO.
func (e *evaluator) shardParams(b int) float64 {
	n := 0.0
	for _, w := range e.p.Blocks[b].Weights {
		l := rolesOf(e.layout(w))
		if e.zero >= 1 {
			l |= e.dataRole(w)
		}
		n += e.bytes(w, l) / e.p.ElemBytes(w)
	}
	return n
}
