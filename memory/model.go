package memory

import (
	"fmt"
	"slices"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// Model is the memory model of one layer program: what each layer kind,
// the embedding and the output layer keep under each recompute policy,
// derived once from the program (model.Program.Saved) by NewModel. It is
// read-only and safe for concurrent use.
type Model struct {
	p        *model.Program
	policies []model.Policy
	// saved[policy][kind] are the tensors a layer of the kind keeps for its
	// backward pass; working[policy][kind] those it recomputes, which are
	// live again while its backward pass runs.
	saved, working [][][]int
	// embedSaved and outputSaved are what the embedding and the output
	// layer keep.
	embedSaved, outputSaved []int
	// kindWeights are the weights of each layer kind; embedWeights and
	// outputWeights those of the embedding and output blocks.
	kindWeights                 [][]int
	embedWeights, outputWeights []int
	// tiedCopy is the output layer's copy of a tied embedding (empty when
	// untied).
	tiedCopy []int
	// x is the residual stream (a layer's input), k and v the attention's
	// keys and values, xk the MoE block's routed copies (-1 for a dense
	// model), logits the output layer's fp32 logits.
	x, k, v, xk, logits int
}

// NewModel derives the memory model of layer program p.
func NewModel(p *model.Program) *Model {
	mm := &Model{p: p, policies: model.Policies(), xk: -1, k: -1, v: -1, logits: -1}
	none := mm.policies[0]
	for _, pol := range mm.policies {
		var saved, working [][]int
		for _, kind := range p.Kinds {
			s := p.Saved(kind.Blocks, pol)
			all := p.Saved(kind.Blocks, none)
			var w []int
			for _, t := range all {
				if !slices.Contains(s, t) {
					w = append(w, t)
				}
			}
			saved = append(saved, s)
			working = append(working, w)
		}
		mm.saved = append(mm.saved, saved)
		mm.working = append(mm.working, working)
	}
	mm.embedSaved = p.Saved([]int{p.Embedding}, none)
	mm.outputSaved = p.Saved([]int{p.Output}, none)
	for _, kind := range p.Kinds {
		var ws []int
		for _, b := range kind.Blocks {
			ws = append(ws, p.Blocks[b].Weights...)
		}
		mm.kindWeights = append(mm.kindWeights, ws)
	}
	mm.embedWeights = p.Blocks[p.Embedding].Weights
	mm.outputWeights = p.Blocks[p.Output].Weights
	for _, o := range p.Blocks[p.Output].Fwd {
		if o.Kind == model.Einsum && o.B >= 0 && p.Tensors[o.B].Weight && !slices.Contains(mm.outputWeights, o.B) {
			mm.tiedCopy = []int{o.B}
		}
		if o.Name == "xent" {
			mm.logits = o.C
		}
	}
	attn := p.Kinds[0].Blocks[0]
	mm.x = p.Blocks[attn].Input
	for _, o := range p.Blocks[attn].Fwd {
		if o.Name == "attend" {
			mm.v = o.B
		}
		if o.Name == "scores" {
			mm.k = o.B
		}
	}
	for _, kind := range p.Kinds {
		for _, b := range kind.Blocks {
			for _, o := range p.Blocks[b].Fwd {
				if o.Kind == model.Reshard && o.Name == "dispatch" {
					mm.xk = o.A
				}
			}
		}
	}
	return mm
}

// Program returns the layer program the model was built from.
func (mm *Model) Program() *model.Program { return mm.p }

// Estimate returns the per-chip memory of strategy s (validated; placed or
// not) for the program of p on cluster c and workload w: the peak of the
// busiest pipeline stage. It derives the memory model on every call; use
// NewModel to estimate many strategies.
func Estimate(p *model.Program, c profiles.Cluster, w space.Workload, s space.Strategy) (Breakdown, error) {
	return NewModel(p).Estimate(c, w, s)
}

// geometry is one strategy resolved for the memory model.
type geometry struct {
	deg    [space.NumRoles]float64
	cls    [model.NumLogical]space.RoleSet
	size   [model.NumDim]float64
	capF   [model.NumDim]float64
	zero   int
	policy int
	tp     int
	sp, cp bool
}

// bytes is tensor t's bytes per chip under its own layout, or without the
// roles in drop (a gathered copy).
func (mm *Model) bytes(g *geometry, t int, drop space.RoleSet) float64 {
	tt := &mm.p.Tensors[t]
	b := mm.p.FullBytes(t, &g.size)
	for i := 0; i < tt.Rank; i++ {
		set := g.cls[tt.Logical[i]] &^ drop
		for r := space.Role(0); r < space.NumRoles; r++ {
			if set.Has(r) {
				b /= g.deg[r]
			}
		}
		if set.Has(space.RoleTP) && mm.p.Cap[tt.Count[i]] > 0 {
			b *= g.capF[tt.Count[i]]
		}
	}
	return b
}

// sum adds the per-chip bytes of tensors ts.
func (mm *Model) sum(g *geometry, ts []int, drop space.RoleSet) float64 {
	n := 0.0
	for _, t := range ts {
		n += mm.bytes(g, t, drop)
	}
	return n
}

// params splits the per-chip parameters of weights ws into the dense ones
// and the routed experts' (whose ZeRO group is the expert data-parallel
// one), under their storage layout less the roles in drop.
func (mm *Model) params(g *geometry, ws []int, drop space.RoleSet) (dense, expert float64) {
	wb := mm.p.ClassBytes(model.ClassWeight)
	for _, w := range ws {
		n := mm.bytes(g, w, drop) / wb
		if mm.p.Tensors[w].Expert {
			expert += n
		} else {
			dense += n
		}
	}
	return dense, expert
}

// policy returns the index of the recompute policy named name.
func (mm *Model) policy(name string) (int, bool) {
	for i := range mm.policies {
		if mm.policies[i].Name == name {
			return i, true
		}
	}
	return -1, false
}

// kindTerms are one layer kind's per-chip quantities for one strategy.
type kindTerms struct {
	act, work     float64 // saved and recomputed activations per micro-batch
	dense, expert float64 // parameters after storage sharding
	unit          float64 // parameters before FSDP sharding: the FSDP unit
	hasMoE        bool
}

// maxKinds sizes the stack buffer of layer kinds; more kinds are allocated.
const maxKinds = 8

// Estimate returns the per-chip memory of strategy s (validated; placed or
// not) on cluster c with workload w: the peak over the pipeline's ranks
// (the first holds the most micro-batches in flight and the embedding, the
// last the output layer and the logits, a middle one may hold more layers).
// It does not allocate for a placed strategy of a program with at most 8
// layer kinds.
func (mm *Model) Estimate(c profiles.Cluster, w space.Workload, s space.Strategy) (Breakdown, error) {
	p := mm.p
	var g geometry
	pol, ok := mm.policy(s.Recompute)
	if !ok {
		return Breakdown{}, fmt.Errorf("memory: recompute policy %q is unknown", s.Recompute)
	}
	deg, err := s.RoleDegrees(c)
	if err != nil {
		return Breakdown{}, fmt.Errorf("memory: %w", err)
	}
	var active space.RoleSet
	for r, d := range deg {
		g.deg[r] = float64(d)
		if d > 1 {
			active |= space.Role(r).Bit()
		}
	}
	g.tp = max(s.Degree[space.TP], 1)
	g.sp = s.SP && g.tp > 1
	g.cp = s.Degree[space.CP] > 1
	g.cls = space.ClassRoles(g.sp)
	for l := range g.cls {
		g.cls[l] &= active
	}
	seq := w.SeqLen
	if seq <= 0 {
		seq = p.Spec.SeqLen
	}
	mb := max(s.MB, 1)
	g.size = p.Sizes(float64(mb*s.Replicas()), float64(seq))
	for d := range g.capF {
		g.capF[d] = p.CapFactor(model.Dim(d), g.tp)
	}
	g.zero, g.policy = s.Zero, pol

	var buf [maxKinds]kindTerms
	terms := buf[:0]
	if len(p.Kinds) > maxKinds {
		terms = make([]kindTerms, 0, len(p.Kinds))
	}
	fsdp := space.RoleFSDP.Bit() | space.RoleEFSDP.Bit()
	for k := range p.Kinds {
		var kt kindTerms
		kt.act = mm.sum(&g, mm.saved[pol][k], 0)
		kt.work = mm.sum(&g, mm.working[pol][k], 0)
		kt.dense, kt.expert = mm.params(&g, mm.kindWeights[k], 0)
		d0, e0 := mm.params(&g, mm.kindWeights[k], fsdp)
		kt.unit = d0 + e0
		kt.hasMoE = p.Kinds[k].Name == "moe"
		terms = append(terms, kt)
	}
	pp := max(s.Degree[space.PP], 1)
	m := max(w.Batch/max(s.Replicas()*mb, 1), 1)
	v := s.VirtualStages()
	var counts [maxKinds]int
	cnt := counts[:len(p.Kinds):len(p.Kinds)]
	if len(p.Kinds) > maxKinds {
		cnt = make([]int, len(p.Kinds))
	}
	var best Breakdown
	n := p.NumLayers()
	for r := 0; r < pp; r++ {
		first, count := space.StageLayers(n, pp, r)
		p.CountLayers(first, first+count, cnt)
		st := stage{counts: cnt, first: r == 0, last: r == pp-1, pp: pp,
			inFlight:     s.Schedule.InFlight(r, pp, v, m),
			lastInFlight: s.Schedule.InFlight(pp-1, pp, v, m)}
		b := mm.stage(&g, terms, &st)
		if r == 0 || b.TotalBytes() > best.TotalBytes() {
			best = b
		}
	}
	return best, nil
}

// stage is one pipeline rank.
type stage struct {
	counts                 []int
	first, last            bool
	pp                     int
	inFlight, lastInFlight float64
}

// stage returns the memory of one pipeline rank.
func (mm *Model) stage(g *geometry, terms []kindTerms, st *stage) Breakdown {
	p := mm.p
	pr := p.Options.Precision
	var dense, expert, unit, act, work float64
	hasMoE := false
	for k, n := range st.counts {
		if n == 0 {
			continue
		}
		t := &terms[k]
		dense += float64(n) * t.dense
		expert += float64(n) * t.expert
		act += float64(n) * t.act
		unit = max(unit, t.unit)
		work = max(work, t.work)
		hasMoE = hasMoE || t.hasMoE
	}
	fsdp := space.RoleFSDP.Bit() | space.RoleEFSDP.Bit()
	if st.first {
		// Input embedding V·h/t on the first stage [MEG-MEM].
		d, e := mm.params(g, mm.embedWeights, 0)
		d0, e0 := mm.params(g, mm.embedWeights, fsdp)
		dense, expert, unit = dense+d, expert+e, max(unit, d0+e0)
	}
	if st.last {
		// Final norm and output layer V·h/t; a copy of a tied embedding when
		// the last stage is not also the first (Megatron keeps one there to
		// compute the logits and all-reduces its gradient) [MEG-MEM].
		ws := mm.outputWeights
		d, e := mm.params(g, ws, 0)
		d0, e0 := mm.params(g, ws, fsdp)
		if len(mm.tiedCopy) > 0 && !st.first {
			dc, _ := mm.params(g, mm.tiedCopy, 0)
			dc0, _ := mm.params(g, mm.tiedCopy, fsdp)
			d += dc
			d0 += dc0
		}
		dense, expert, unit = dense+d, expert+e, max(unit, d0+e0)
	}
	// Model states: weights over their storage sharding (tp, ep, fsdp);
	// ZeRO-1 shards the optimizer state over dp, ZeRO-2 the gradients too;
	// routed experts over the expert data-parallel group edp
	// (docs/formulas.md §2.1 [ZERO §5][MEG-DDP]).
	gradDP, optDP, gradEDP, optEDP := 1.0, 1.0, 1.0, 1.0
	if g.zero >= 1 {
		optDP, optEDP = g.deg[space.RoleDP], g.deg[space.RoleEDP]
	}
	if g.zero >= 2 {
		gradDP, gradEDP = g.deg[space.RoleDP], g.deg[space.RoleEDP]
	}
	var b Breakdown
	b.ParamsBytes = pr.Weight * (dense + expert)
	b.GradsBytes = pr.Grad * (dense/gradDP + expert/gradEDP)
	b.OptimizerBytes = pr.OptimizerBytes() * (dense/optDP + expert/optEDP)
	// Layer activations × micro-batches in flight (docs/formulas.md §2.3 [KORT §4.3]).
	b.ActivationsBytes = st.inFlight * act
	b.BuffersBytes = mm.buffers(g, st, dense+expert, unit, work, hasMoE)
	return b
}
