package memory

import (
	"fmt"
	"math/bits"
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
	// live again while its backward pass runs. Every such list is merged
	// into groups of tensors that shard alike (see group).
	saved, working [][][]tensorInfo
	// embedSaved and outputSaved are what the embedding and the output
	// layer keep.
	embedSaved, outputSaved []tensorInfo
	// kindWeights are the weights of each layer kind; embedWeights and
	// outputWeights those of the embedding and output blocks.
	kindWeights                 [][]tensorInfo
	embedWeights, outputWeights []tensorInfo
	// kindShared are the weights of each layer kind that belong to a
	// shared transformer block (model.Tensor.Shared, Zamba2): a pipeline
	// stage holds them once, however many of its layers invoke the block.
	kindShared [][]tensorInfo
	// kindFP8 are the weights of each layer kind that fp8 matmuls read
	// (model.Tensor.FP8Copy): the recipe keeps an fp8 copy and its transpose.
	kindFP8 [][]tensorInfo
	// tiedCopy is the last stage's copy of the embedding that a tied output
	// layer or the multi-token-prediction modules read (empty when neither).
	tiedCopy []tensorInfo
	// x is the residual stream (a layer's input), k and v the attention's
	// keys and values, xk the MoE block's routed copies (absent for a
	// dense model), logits the gradient of the logits the loss's backward
	// holds.
	x, k, v, xk, logits tensorInfo
	hasXK               bool
	// layers is the number of layers; kindStarts the layers where the
	// stack's kind changes.
	layers     int
	kindStarts []int
	// info is, per tensor, what its bytes per chip need; capped are the
	// dimensions whose split stops early.
	info   []tensorInfo
	capped []model.Dim
	// load is the busiest expert rank's routed tokens over the mean
	// (model.MoE.Load): its routed activations and dispatch buffers, the
	// tensors over the capacity dimension C, hold that many.
	load float64
}

// tensorInfo is what a tensor's (or a group of tensors') bytes per chip
// need, computed once: its bytes over the workload's dimensions, which of
// those it has, the roles that shard it (without and with sequence
// parallelism) and its capped dimension.
type tensorInfo struct {
	bytes          float64 // elements × element bytes, over the model dimensions only
	b, s, t, c     bool    // whether it has the workload's B, S, T and C dimensions
	roles          [2]space.RoleSet
	capDim         model.Dim // model.NumDim when none
	weight, expert bool
}

// NewModel derives the memory model of layer program p.
func NewModel(p *model.Program) *Model {
	mm := &Model{p: p, policies: append(model.Policies(), model.ModulePolicies(p)...), layers: p.NumLayers(), load: p.Spec.MoE.Load()}
	mm.kindStarts = p.KindStarts(nil)
	mm.fillInfo()
	none := mm.policies[0]
	for _, pol := range mm.policies {
		var saved, working [][]tensorInfo
		for _, kind := range p.Kinds {
			// What the layer keeps in HBM: its saved tensors less those the
			// policy keeps in host memory, which return for its backward
			// pass (the working set).
			s := p.Saved(kind.Blocks, pol)
			off := p.Offloaded(kind.Blocks, pol, s)
			s = slices.DeleteFunc(s, func(t int) bool { return slices.Contains(off, t) })
			// What no policy re-makes: none's, less what pol's
			// implementation never keeps (model.Policy.Unsaved).
			base := none
			base.Unsaved = pol.Unsaved
			all := p.Saved(kind.Blocks, base)
			var w []int
			for _, t := range all {
				if !slices.Contains(s, t) {
					w = append(w, t)
				}
			}
			saved = append(saved, mm.groupKept(s, pol))
			working = append(working, mm.group(w))
		}
		mm.saved = append(mm.saved, saved)
		mm.working = append(mm.working, working)
	}
	mm.embedSaved = mm.group(p.Saved([]int{p.Embedding}, none))
	mm.outputSaved = mm.group(p.Saved([]int{p.Output}, none))
	for _, kind := range p.Kinds {
		var ws, f8, sh []int
		for _, b := range kind.Blocks {
			for _, w := range p.Blocks[b].Weights {
				if p.Tensors[w].Shared {
					sh = append(sh, w)
				} else {
					ws = append(ws, w)
				}
				if p.Tensors[w].FP8Copy {
					f8 = append(f8, w)
				}
			}
		}
		mm.kindWeights = append(mm.kindWeights, mm.weightGroups(ws))
		mm.kindShared = append(mm.kindShared, mm.weightGroups(sh))
		mm.kindFP8 = append(mm.kindFP8, mm.group(f8))
	}
	mm.embedWeights = mm.weightGroups(p.Blocks[p.Embedding].Weights)
	mm.outputWeights = mm.weightGroups(p.Blocks[p.Output].Weights)
	for _, o := range p.Blocks[p.Output].Fwd {
		if o.Kind == model.Einsum && o.B >= 0 && p.Tensors[o.B].Weight && !slices.Contains(p.Blocks[p.Output].Weights, o.B) {
			mm.tiedCopy = mm.group([]int{o.B})
		}
		if o.Name == "xent" && len(o.Writes) > 0 {
			mm.logits = mm.info[o.Writes[0]]
		}
	}
	if r := p.MTP; r.Count > 0 && len(mm.tiedCopy) == 0 {
		// The multi-token-prediction modules look up the embedding on the
		// last stage: a copy of it, as for a tied output layer.
		mtp := p.Kinds[r.Kind].Blocks[0]
		for _, o := range p.Blocks[mtp].Fwd {
			if o.Kind == model.Einsum && o.B >= 0 && p.Tensors[o.B].Weight && !slices.Contains(p.Blocks[mtp].Weights, o.B) {
				mm.tiedCopy = mm.group([]int{o.B})
			}
		}
	}
	attn := p.Kinds[0].Blocks[0]
	mm.x = mm.info[p.Blocks[attn].Input]
	for _, o := range p.Blocks[attn].Fwd {
		if o.Name == "attend" {
			mm.v = mm.info[o.B]
		}
		if o.Name == "scores" {
			mm.k = mm.info[o.B]
		}
	}
	for _, kind := range p.Kinds {
		for _, b := range kind.Blocks {
			for _, o := range p.Blocks[b].Fwd {
				if o.Kind == model.Reshard && o.Name == "dispatch" {
					mm.xk, mm.hasXK = mm.info[o.A], true
				}
			}
		}
	}
	return mm
}

// group merges the tensors ts into groups that shard alike (the same
// workload dimensions, roles, capped dimension and expert flag): a
// group's bytes are the sum of its members', so the hot path prices a group
// once.
func (mm *Model) group(ts []int) []tensorInfo {
	return groupInfos(ts, func(t int) tensorInfo { return mm.info[t] })
}

// groupKept is group for tensors ts that policy pol keeps, each at the
// bytes per element pol keeps it in (model.Program.KeptBytes).
func (mm *Model) groupKept(ts []int, pol model.Policy) []tensorInfo {
	return groupInfos(ts, func(t int) tensorInfo { return mm.keptInfo(pol, t) })
}

// groupInfos merges the tensorInfos info gives tensors ts into groups
// that differ in nothing but bytes, summing the bytes (group).
func groupInfos(ts []int, info func(int) tensorInfo) []tensorInfo {
	var out []tensorInfo
	for _, t := range ts {
		in := info(t)
		i := slices.IndexFunc(out, func(g tensorInfo) bool {
			g.bytes = in.bytes
			return g == in
		})
		if i < 0 {
			out = append(out, in)
			continue
		}
		out[i].bytes += in.bytes
	}
	return out
}

// keptInfo is tensor t's tensorInfo at the bytes per element policy pol
// keeps it in: a narrowed tensor's (model.Policy.Narrow) scaled from its
// class's.
func (mm *Model) keptInfo(pol model.Policy, t int) tensorInfo {
	in := mm.info[t]
	if kb, eb := mm.p.KeptBytes(pol, t), mm.p.ElemBytes(t); kb != eb && eb > 0 {
		in.bytes *= kb / eb // stored narrower than its class (DeepSeek-V3 §3.3.2)
	}
	return in
}

// weightGroups is group for weights ws, except under
// Precision.TensorUnits, where each weight stays its own entry so that
// paramsAndUnit finds the largest one tensor.
func (mm *Model) weightGroups(ws []int) []tensorInfo {
	if !mm.p.Options.Precision.TensorUnits {
		return mm.group(ws)
	}
	out := make([]tensorInfo, 0, len(ws))
	for _, w := range ws {
		out = append(out, mm.info[w])
	}
	return out
}

// fillInfo computes every tensor's tensorInfo.
func (mm *Model) fillInfo() {
	p := mm.p
	whole := p.Options.ExpertsWhole
	cpw := p.Options.WeightsOverCP
	classes := [2][model.NumLogical]space.RoleSet{space.ClassRoles(false, whole, cpw), space.ClassRoles(true, whole, cpw)}
	mm.info = make([]tensorInfo, len(p.Tensors))
	for d := range p.Cap {
		if p.Cap[d] > 0 {
			mm.capped = append(mm.capped, model.Dim(d))
		}
	}
	one := p.Sizes(1, 1)
	one[model.DimC] = 1
	var gathered []bool
	if p.Options.SavesGathered {
		gathered = p.SPGathered()
	}
	for i := range p.Tensors {
		t := &p.Tensors[i]
		in := &mm.info[i]
		in.bytes = p.FullBytes(i, &one)
		in.capDim = model.NumDim
		in.weight, in.expert = t.Weight, t.Expert
		for j := 0; j < t.Rank; j++ {
			switch t.Count[j] {
			case model.DimB:
				in.b = true
			case model.DimS:
				in.s = true
			case model.DimT:
				in.t = true
			case model.DimC:
				in.c = true
			}
			for k := range classes {
				in.roles[k] |= classes[k][t.Logical[j]]
			}
			if p.Cap[t.Count[j]] > 0 && t.Logical[j] == model.Width {
				in.capDim = t.Count[j]
			}
		}
		if gathered != nil && gathered[i] {
			// Kept as the matmul reads it, all-gathered over tp
			// (model.ProgramOptions.SavesGathered).
			in.roles[1] &^= space.RoleTP.Bit()
		}
	}
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
	active space.RoleSet
	// inv is the inverse of each role's degree.
	inv [space.NumRoles]float64
	deg [space.NumRoles]float64
	// b, s, t and c are the workload's dimension sizes for one micro-batch
	// over all replicas.
	b, s, t, c float64
	// load is the busiest expert rank's routed tokens over the mean under
	// expert parallelism (model.MoE.Load), 1 without it: c holds it, and
	// the dispatch buffers' incoming side.
	load   float64
	capF   [model.NumDim]float64
	zero   int
	policy int
	sp     int // 1 with sequence parallelism, else 0
	cp     bool
	// micro is the number of micro-batches per step; comm the HBM of the
	// strategy's collective communicators.
	micro float64
	comm  float64
	// int8 is precision=int8: AQT quantises each weight inside its matmul,
	// so no 8-bit weight copies persist.
	int8 bool
	// fp8Copies is the bytes per element of the fp8 copies kept of each
	// weight an fp8 matmul reads: the copy and its transpose (2), or the
	// copy alone (1) for a per-tensor recipe on a chip whose fp8 matmuls
	// take any layout (model.FP8Recipe.PerTensor,
	// profiles.Chip.FP8AnyLayout), each of the recipe's element bytes
	// (model.FP8Recipe.Bytes: 1, NVFP4's 0.5625).
	fp8Copies float64
	// hostOpt is the share of the optimizer state in host memory, and
	// hostParams says the parameters are there too (offloadStates).
	hostOpt    float64
	hostParams bool
	// actHost is the share of the layers whose saved activations live in
	// host memory (space.Strategy.ActOffload over the model's layers).
	actHost float64
	// gather are the roles FSDP gathers a weight over before its use:
	// fsdp and efsdp, and cp where the framework's FSDP mesh spans it
	// (model.ProgramOptions.WeightsOverCP).
	gather space.RoleSet
}

// bytes is a tensor's (or group's) bytes per chip under its own layout, or
// without the roles in drop (a gathered copy): its bytes over the degrees
// of the roles that shard it (each once, as the cost model counts them),
// with the early stop of a dimension tensor parallelism splits beyond its
// cap.
func (mm *Model) bytes(g *geometry, in *tensorInfo, drop space.RoleSet) float64 {
	b := in.bytes
	if in.b {
		b *= g.b
	}
	if in.s {
		b *= g.s
	}
	if in.t {
		b *= g.t
	}
	if in.c {
		b *= g.c
	}
	set := in.roles[g.sp] & g.active &^ drop
	for x := uint8(set); x != 0; x &= x - 1 {
		b *= g.inv[bits.TrailingZeros8(x)]
	}
	if in.capDim != model.NumDim && set.Has(space.RoleTP) {
		b *= g.capF[in.capDim]
	}
	return b
}

// sum adds the per-chip bytes of the groups ts.
func (mm *Model) sum(g *geometry, ts []tensorInfo, drop space.RoleSet) float64 {
	n := 0.0
	for i := range ts {
		n += mm.bytes(g, &ts[i], drop)
	}
	return n
}

// params splits the per-chip parameters of weights ws into the dense ones
// and the routed experts' (whose ZeRO group is the expert data-parallel
// one), under their storage layout less the roles in drop.
func (mm *Model) params(g *geometry, ws []tensorInfo, drop space.RoleSet) (dense, expert float64) {
	wb := mm.p.ClassBytes(model.ClassWeight)
	for i := range ws {
		n := mm.bytes(g, &ws[i], drop) / wb
		if ws[i].expert {
			expert += n
		} else {
			dense += n
		}
	}
	return dense, expert
}

// paramsAndUnit returns params(g, ws, 0) and params(g, ws, fsdp and
// efsdp) in one pass: the per-chip parameters of weights ws under their
// storage layout (dense, expert) and before FSDP sharding (unitDense,
// unitExpert, the FSDP unit). A group no active FSDP role shards has the
// same bytes in both, computed once. Under Precision.TensorUnits the unit
// is the largest one tensor before FSDP sharding, in unitDense or
// unitExpert (the other zero).
func (mm *Model) paramsAndUnit(g *geometry, ws []tensorInfo) (dense, expert, unitDense, unitExpert float64) {
	wb := mm.p.ClassBytes(model.ClassWeight)
	fsdp := g.gather
	perTensor := mm.p.Options.Precision.TensorUnits
	for i := range ws {
		in := &ws[i]
		n := mm.bytes(g, in, 0) / wb
		u := n
		if in.roles[g.sp]&g.active&fsdp != 0 {
			u = mm.bytes(g, in, fsdp) / wb
		}
		switch {
		case perTensor:
			// XLA gathers one tensor at a time (model.Precision.TensorUnits).
			if in.expert {
				expert += n
			} else {
				dense += n
			}
			if u > unitDense+unitExpert {
				unitDense, unitExpert = 0, 0
				if in.expert {
					unitExpert = u
				} else {
					unitDense = u
				}
			}
		case in.expert:
			expert += n
			unitExpert += u
		default:
			dense += n
			unitDense += u
		}
	}
	return dense, expert, unitDense, unitExpert
}

// policy returns the index of the recompute policy named name.
func (mm *Model) policy(name string) (int, bool) {
	for i := range mm.policies {
		if mm.policies[i].Name == name {
			return i, true
		}
	}
	// A --recompute-modules list: the policy of the modules that re-run
	// something in this model.
	name = model.EffectivePolicyName(mm.p, name)
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
	host          float64 // saved activations in host memory per micro-batch (geometry.actHost)
	dense, expert float64 // parameters after storage sharding
	shared        float64 // shared-block parameters after storage sharding, held once per stage
	unit          float64 // parameters before FSDP sharding: the FSDP unit
	fp8           float64 // parameters with fp8 copies, before FSDP sharding
	hasMoE        bool
}

// maxKinds sizes the stack buffers of layer kinds; more are allocated.
const maxKinds = 4

// maxRanks sizes the stack buffer of candidate pipeline ranks (an
// alternating stack makes every rank a candidate); more are allocated.
const maxRanks = 64

// Estimate returns the per-chip memory of strategy s (validated; placed or
// not) on cluster c with workload w: the peak over the pipeline's ranks
// (the first holds the most micro-batches in flight and the embedding, the
// last the output layer and the logits, a middle one may hold more layers).
// It does not allocate for a placed strategy of a program with at most 8
// layer kinds.
func (mm *Model) Estimate(c profiles.Cluster, w space.Workload, s space.Strategy) (Breakdown, error) {
	var pk peak
	err := mm.estimate(c, w, s, &pk)
	return pk.b, err
}

// peak is a strategy's busiest pipeline rank and what its memory was
// computed from, for Parts.
type peak struct {
	b Breakdown
	g geometry
	// rank is the busiest rank; inFlight and lastInFlight its and the last
	// rank's micro-batches in flight; pp the pipeline's ranks.
	rank                   int
	inFlight, lastInFlight float64
	pp                     int
	pl                     space.Placement
}

// estimate fills pk with the busiest rank of s (Estimate).
func (mm *Model) estimate(c profiles.Cluster, w space.Workload, s space.Strategy, pk *peak) error {
	var buf [maxKinds]kindTerms
	var terms []kindTerms
	if n := len(mm.p.Kinds); n <= maxKinds {
		terms = buf[:n:n]
	} else {
		terms = make([]kindTerms, n) // a hybrid stack of many kinds
	}
	pol, ok := mm.policy(s.Recompute)
	if !ok {
		return fmt.Errorf("memory: recompute policy %q is unknown", s.Recompute)
	}
	deg, err := s.RoleDegrees(c)
	if err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	var ends endTerms
	mm.geometryOf(c, w, &s, pol, deg, &pk.g, terms, &ends)
	mm.peakOf(w, &s, &pk.g, terms, &ends, pk)
	return hostRoom(&pk.b, &c, &s)
}

// geometryOf fills g, terms (one per layer kind) and ends with what the
// memory of s on cluster c with workload w depends on besides its
// pipeline schedule and virtual stages; pol is the index of s's recompute
// policy and deg its roles' degrees (space.Strategy.RoleDegrees).
func (mm *Model) geometryOf(c profiles.Cluster, w space.Workload, s *space.Strategy, pol int, deg [space.NumRoles]int, g *geometry, terms []kindTerms, ends *endTerms) {
	mm.shapeOf(c, w, s, deg, g)
	g.zero, g.policy = s.Zero, pol
	g.setOffload(s)
	g.setActOffload(s, mm.p.Spec.Layers)
	for k := range mm.p.Kinds {
		mm.kindParams(g, k, &terms[k])
		mm.kindActs(g, k, &terms[k])
	}
	*ends = mm.ends(g)
}

// shapeOf fills g with what the memory of s on cluster c with workload w
// depends on besides its ZeRO stage, recompute policy, pipeline schedule
// and virtual stages, leaving g.zero and g.policy zero; deg are s's roles'
// degrees (space.Strategy.RoleDegrees). It reads of s only what a
// shapeKey holds and its replicas (its degrees).
func (mm *Model) shapeOf(c profiles.Cluster, w space.Workload, s *space.Strategy, deg [space.NumRoles]int, g *geometry) {
	p := mm.p
	*g = geometry{int8: s.Int8(), fp8Copies: 2}
	if r := p.Options.FP8; r != nil && r.PerTensor && c.Chip.FP8AnyLayout {
		g.fp8Copies = 1
	}
	g.fp8Copies *= p.ClassBytes(model.ClassFP8)
	for r, d := range deg {
		g.deg[r] = float64(d)
		g.inv[r] = 1 / float64(d)
		if d > 1 {
			g.active |= space.Role(r).Bit()
		}
	}
	tp := max(s.Degree[space.TP], 1)
	if s.SP && tp > 1 {
		g.sp = 1
	}
	g.cp = s.Degree[space.CP] > 1
	g.gather = space.RoleFSDP.Bit() | space.RoleEFSDP.Bit()
	if p.Options.WeightsOverCP {
		g.gather |= space.RoleCP.Bit()
	}
	seq := w.SeqLen
	if seq <= 0 {
		seq = p.Spec.SeqLen
	}
	mb := max(s.MB, 1)
	sz := p.Sizes(float64(mb*s.Replicas()), float64(seq))
	// The busiest expert rank holds load times the mean's routed tokens
	// (model.MoE.Load); without expert parallelism one rank holds every
	// expert and the mean.
	g.load = 1
	if g.deg[space.RoleEP] > 1 {
		g.load = mm.load
	}
	g.b, g.s, g.t, g.c = sz[model.DimB], sz[model.DimS], sz[model.DimT], sz[model.DimC]*g.load
	for _, d := range mm.capped {
		g.capF[d] = p.CapFactor(d, tp)
	}
	// One NCCL communicator per parallel group a chip belongs to, the
	// pipeline's send and receive pair included (docs/runtime-memory.md);
	// the expert data-parallel groups are groups of their own only when
	// expert parallelism carves them out of dp and fsdp, and tp's expert
	// part only when ep takes tensor ranks.
	groups := g.active
	if !groups.Has(space.RoleEP) {
		groups &^= space.RoleEDP.Bit() | space.RoleEFSDP.Bit()
	}
	if g.deg[space.RoleTPE] == g.deg[space.RoleTP] {
		groups &^= space.RoleTPE.Bit()
	}
	n := bits.OnesCount8(uint8(groups))
	if s.Degree[space.PP] > 1 {
		n++
	}
	g.comm = float64(n) * c.Chip.CommunicatorBytes
	g.micro = float64(max(w.Batch/max(s.Replicas()*mb, 1), 1))
}

// peakOf fills pk with the busiest rank of s, whose geometry, layer kind
// terms and end terms geometryOf computed.
func (mm *Model) peakOf(w space.Workload, s *space.Strategy, g *geometry, terms []kindTerms, ends *endTerms, pk *peak) {
	p := mm.p
	mb := max(s.MB, 1)
	pp := max(s.Degree[space.PP], 1)
	m := max(w.Batch/max(s.Replicas()*mb, 1), 1)
	rules := s.Schedule.Rules()
	v := rules.VirtualStages(s.V)
	var counts [maxKinds]int
	var cnt []int
	if n := len(p.Kinds); n <= maxKinds {
		cnt = counts[:n:n]
	} else {
		cnt = make([]int, n)
	}
	pl := rules.Placement()
	if pp == 1 {
		pl = space.PlaceLinear
	}
	pk.pp, pk.pl, pk.lastInFlight = pp, pl, rules.HeadInFlight(pp, v, m)
	var other [maxKinds]int
	var cnt2 []int
	if n := len(p.Kinds); n <= maxKinds {
		cnt2 = other[:n:n]
	} else {
		cnt2 = make([]int, n)
	}
	var rankBuf [maxRanks]int
	loop := mm.loopOf(s, pp)
	nk := len(p.Kinds)
	var ranks, looped []int
	if loop > 1 {
		// Under a loop of chunks every rank's layers in one pass.
		var loopBuf [(maxRanks + 1) * maxKinds]int
		looped = mm.loopCounts(pp, loop, s.Split, loopBuf[:0])
		ranks = loopRanks(looped, pp, nk, rankBuf[:0])
	} else {
		ranks = s.Split.CandidateRanks(mm.layers, pp, mm.kindStarts, rankBuf[:0])
	}
	var (
		bz    busiest
		ss    stageSums
		rs    rankStates
		fl    flightTerms
		bufs  bufTerms
		peakS rankStates
		peakF flightTerms
	)
	for _, c := range ranks {
		// A paired placement's rank r holds linear ranks r and pp-1-r; the
		// pair changes only where either crosses a candidate rank.
		for j, r := range [2]int{c, pp - c} {
			if j == 1 && pl == space.PlaceLinear || r < 0 || r >= pp {
				continue
			}
			var st stage
			if looped != nil {
				copy(cnt, looped[r*nk:(r+1)*nk])
				st = linearStage(r, pp, cnt)
			} else {
				st = mm.rankStage(r, pp, loop, s.Split, pl, cnt, cnt2)
			}
			st.inFlight, st.lastInFlight = rules.InFlight(r, pp, v, m)+a2aOverlapInFlight(s.A2AOverlap, m, st.counts), pk.lastInFlight
			mm.stageSums(terms, ends, &st, &ss)
			mm.rankStates(g, &ss, &rs)
			mm.flightTerms(g, ends, &st, &ss, &fl, &bufs)
			if bz.offer(rs.totals(&fl)) {
				peakS, peakF, pk.rank, pk.inFlight = rs, fl, r, st.inFlight
			}
		}
	}
	if bz.seen {
		pk.b = bz.of(peakS.phases(&peakF))
	}
}

// busiest picks the busiest of a strategy's pipeline ranks, offered in
// turn, by the totals of their two phases (rankStates.totals): a rank's
// larger phase, the forward one on a tie, and the first of the busiest
// ranks. total is its larger phase's total, step whether that is the
// step phase, seen whether a rank was offered.
type busiest struct {
	total      float64
	step, seen bool
}

// offer reports whether the rank whose phases total fwd and step bytes is
// busier than the ones offered before, keeping it if so.
func (bz *busiest) offer(fwd, step float64) bool {
	total, isStep := fwd, false
	if step > fwd {
		total, isStep = step, true
	}
	if bz.seen && !(total > bz.total) {
		return false
	}
	bz.total, bz.step, bz.seen = total, isStep, true
	return true
}

// of returns the busiest rank's larger phase among its phases fwd and
// step.
func (bz *busiest) of(fwd, step Breakdown) Breakdown {
	if bz.step {
		return step
	}
	return fwd
}

// kindTerms computes layer kind k's per-chip quantities under g.
func (mm *Model) kindTerms(g *geometry, k int) kindTerms {
	var kt kindTerms
	mm.kindParams(g, k, &kt)
	mm.kindActs(g, k, &kt)
	return kt
}

// kindParams fills the parameter terms of kt (all but act and work),
// layer kind k's under g: they do not depend on the recompute policy or
// the ZeRO stage.
func (mm *Model) kindParams(g *geometry, k int, kt *kindTerms) {
	fsdp := g.gather
	var d0, e0 float64
	kt.dense, kt.expert, d0, e0 = mm.paramsAndUnit(g, mm.kindWeights[k])
	kt.unit = d0 + e0
	if len(mm.kindShared[k]) > 0 {
		// A shared block is gathered with the layer that invokes it.
		var s0 float64
		kt.shared, _, s0, _ = mm.paramsAndUnit(g, mm.kindShared[k])
		kt.unit += s0
	}
	if !g.int8 {
		// AQT's int8 weights live inside one matmul (geometry.int8).
		d8, e8 := mm.params(g, mm.kindFP8[k], fsdp)
		kt.fp8 = d8 + e8
	} else {
		kt.fp8 = 0
	}
	kt.hasMoE = mm.p.Kinds[k].MoE && mm.p.Kinds[k].Name != model.KindMTP
}

// kindActs fills the activation terms of kt (act and work), layer kind
// k's under g and its recompute policy g.policy.
func (mm *Model) kindActs(g *geometry, k int, kt *kindTerms) {
	kt.act = mm.sum(g, mm.saved[g.policy][k], 0)
	kt.work = mm.sum(g, mm.working[g.policy][k], 0)
	kt.host = 0
	if g.actHost > 0 && mm.p.Kinds[k].Name != model.KindMTP {
		// The first layers' saved activations leave HBM once copied to the
		// host, so a step keeps (layers - offloaded) layers' worth in HBM
		// (TransformerEngine@d0067d0d transformer_engine/pytorch/cpu_offload.py:602-624,
		// DefaultOffloadSynchronizer); the kinds share the offload by
		// their layers, as a uniform stack's first layers would.
		kt.host = g.actHost * kt.act
		kt.act -= kt.host
	}
}

// rankStage returns pipeline rank r of pp under split and placement pl with its
// layers of each kind counted into cnt (other is scratch of the same
// length). A linear rank holds its own stage, the multi-token-prediction
// modules with the output layer on the last. A paired rank holds linear
// ranks r and pp-1-r: V-shaped (PlaceV), about half of each, with the
// embedding and the output layer on rank 0 [ZB §6]; mirrored
// (PlaceMirror), both stages' parameters, gradients, optimizer state and
// activations, the ends on ranks 0 and pp-1 ([DSV3 §3.2.1], Table 2: two
// copies of the parameters).
func (mm *Model) rankStage(r, pp, loop int, split space.Split, pl space.Placement, cnt, other []int) stage {
	mm.countStage(r, pp, loop, split, cnt)
	if pl == space.PlaceLinear {
		return linearStage(r, pp, cnt)
	}
	mm.countStage(pp-1-r, pp, 1, split, other)
	for k := range cnt {
		cnt[k] += other[k]
	}
	st := stage{counts: cnt, pp: pp, scale: 1, mirror: -1}
	if pl == space.PlaceV {
		st.scale = 0.5
		st.first, st.last = r == 0, r == 0
	} else {
		st.first, st.last = r == 0 || r == pp-1, r == 0 || r == pp-1
		st.mirror, st.split, st.r = pp-1-r, split, r
	}
	return st
}

// a2aOverlapInFlight is what Megatron-Core's EP overlap (a2a,
// space.Strategy.A2AOverlap) holds in flight beyond the schedule, in micro-batches of the rank's
// layers (counts, per layer kind): one layer. Each forward-backward pair
// runs the forward of layer i of one micro-batch beside the backward of
// layer n-1-i of another, which frees that layer only after the forward's
// is saved (Megatron-LM@d98e8a64 megatron/core/models/common/
// model_chunk_schedule_plan.py:588-605); the schedule's one extra warm-up
// chunk (megatron/core/pipeline_parallel/schedules.py:964-970) takes the
// place of the forward a 1F1B step runs before its backward, so the chunks
// in flight stay the schedule's (space.Rules.InFlight). A step of one
// micro-batch (m) pairs nothing.
func a2aOverlapInFlight(a2a bool, m int, counts []int) float64 {
	if !a2a || m < 2 {
		return 0
	}
	n := 0
	for _, c := range counts {
		n += c
	}
	if n == 0 {
		return 0
	}
	return 1 / float64(n)
}

// linearStage is rank r of pp of a linear placement, holding the layers
// of each kind cnt.
func linearStage(r, pp int, cnt []int) stage {
	return stage{counts: cnt, first: r == 0, last: r == pp-1, pp: pp, scale: 1, mirror: -1}
}

// loopCounts returns dst (grown) holding every rank of pp's layers of each
// kind, rank r's at [r·nk, (r+1)·nk), when their layers run as loop chunks
// of loop under split (space.Split.LoopCounts), the multi-token-prediction
// modules on the last rank.
func (mm *Model) loopCounts(pp, loop int, split space.Split, dst []int) []int {
	p := mm.p
	dst = split.LoopCounts(p, pp, loop, dst)
	if p.MTP.Count > 0 {
		dst[(pp-1)*len(p.Kinds)+p.MTP.Kind] += p.MTP.Count // the multi-token-prediction modules sit with the output layer
	}
	return dst
}

// loopRanks appends to dst the candidate ranks of a pipeline of pp ranks
// holding the layers of each kind looped (loopCounts, nk kinds): the first,
// the last and every middle rank that holds other layers than the rank
// before it, which has as many micro-batches in flight or more
// (space.CandidateRanks).
func loopRanks(looped []int, pp, nk int, dst []int) []int {
	for r := range pp {
		if r == 0 || r == pp-1 || !slices.Equal(looped[r*nk:(r+1)*nk], looped[(r-1)*nk:r*nk]) {
			dst = append(dst, r)
		}
	}
	return dst
}

// loopOf returns the loop chunks of s (space.Strategy.LoopChunks) on a
// pipeline of pp ranks where they change what a rank holds of the stack's
// layer kinds (where the kind changes), 1 otherwise.
func (mm *Model) loopOf(s *space.Strategy, pp int) int {
	if pp <= 1 || len(mm.kindStarts) == 0 {
		return 1
	}
	return s.LoopChunks()
}

// countStage counts linear pipeline stage r of pp's layers of each kind
// under split into cnt, its layers run as loop chunks of loop
// (space.Strategy.LoopChunks: every pp-th run of layers,
// space.Split.VisitChunks), the multi-token-prediction modules on the last
// stage.
func (mm *Model) countStage(r, pp, loop int, split space.Split, cnt []int) {
	p := mm.p
	if loop > 1 && pp > 1 {
		// Every rank's in one pass, the MTP modules placed (loopCounts);
		// not on the search's path (Model.peakOf and the Estimator count a
		// loop's ranks once).
		nk := len(cnt)
		copy(cnt, mm.loopCounts(pp, loop, split, nil)[r*nk:(r+1)*nk])
		return
	}
	first, count := split.StageLayers(mm.layers, pp, r)
	p.CountLayers(first, first+count, cnt)
	if r == pp-1 && p.MTP.Count > 0 {
		cnt[p.MTP.Kind] += p.MTP.Count // the multi-token-prediction modules sit with the output layer
	}
}

// endTerms are the per-chip quantities of the first and last stages'
// extras and of the buffers, the same on every rank of a strategy.
type endTerms struct {
	embedDense, embedExpert, embedUnit    float64 // the embedding's parameters
	outputDense, outputExpert, outputUnit float64 // the output layer's, untied or alone
	tiedDense, tiedUnit                   float64 // the last stage's copy of a tied embedding
	embedSaved, outputSaved, logits       float64 // saved by the embedding and the output layer (each run of it); the logits
	residual, gathered, kv, routed        float64 // buffers: the residual stream, its TP gather, CP's K and V, MoE copies
}

// ends computes the endTerms of a strategy.
func (mm *Model) ends(g *geometry) endTerms {
	var e endTerms
	var d0, e0 float64
	e.embedDense, e.embedExpert, d0, e0 = mm.paramsAndUnit(g, mm.embedWeights)
	e.embedUnit = d0 + e0
	e.outputDense, e.outputExpert, d0, e0 = mm.paramsAndUnit(g, mm.outputWeights)
	e.outputUnit = d0 + e0
	if len(mm.tiedCopy) > 0 {
		e.tiedDense, _, e.tiedUnit, _ = mm.paramsAndUnit(g, mm.tiedCopy)
	}
	e.embedSaved = mm.sum(g, mm.embedSaved, 0)
	e.outputSaved = mm.p.OutputRuns() * mm.sum(g, mm.outputSaved, 0)
	e.logits = mm.bytes(g, &mm.logits, 0)
	e.residual = mm.bytes(g, &mm.x, 0)
	if g.sp == 1 {
		e.gathered = mm.bytes(g, &mm.x, space.RoleTP.Bit())
	}
	if g.cp {
		e.kv = mm.bytes(g, &mm.k, space.RoleCP.Bit()) + mm.bytes(g, &mm.v, space.RoleCP.Bit())
	}
	if mm.hasXK {
		e.routed = mm.bytes(g, &mm.xk, 0)
	}
	return e
}

// stage is one pipeline rank: it holds scale times the layers counts
// says (a V-shaped schedule's rank half of two linear ranks' layers).
type stage struct {
	counts                 []int
	scale                  float64
	first, last            bool
	pp                     int
	inFlight, lastInFlight float64
	// mirror is the linear stage a mirrored rank (DualPipe) holds besides
	// its own, r, under split; -1 for any other rank.
	mirror, r int
	split     space.Split
}

// stagePhases returns the memory of one pipeline rank in its two phases,
// which bound the step (docs/formulas.md §2.5 [derived]): the end of the
// forward pass of the last micro-batch, with every activation in flight,
// and the optimizer step, with every gradient and no activation; and its
// buffer terms.
func (mm *Model) stagePhases(g *geometry, terms []kindTerms, e *endTerms, st *stage) (fwd, step Breakdown, bufs bufTerms) {
	var sums stageSums
	mm.stageSums(terms, e, st, &sums)
	return mm.phases(g, e, st, &sums)
}

// stageSums are a pipeline rank's layer kind and end terms summed over
// the layers it holds: what its memory reads of them.
type stageSums struct {
	dense, expert float64 // parameters after storage sharding, the ends' included
	unit          float64 // the largest FSDP unit before it
	gathered      float64 // every FSDP unit before it, the ends' included
	layerUnit     float64 // the layers' largest FSDP unit
	embedUnit     float64 // the embedding's unit, on the first stage
	headUnit      float64 // the output layer's unit (a tied embedding's copy included), on the last stage
	act           float64 // saved activations per micro-batch
	host          float64 // saved activations in host memory per micro-batch
	actMirror     float64 // of them, those of a mirrored rank's other stage (stage.mirror)
	work          float64 // the largest layer's recomputed activations
	fp8           float64 // parameters with fp8 copies, before FSDP sharding
	fp8Unit       float64 // the largest unit's parameters with fp8 copies
	hasMoE        bool
}

// stageSums sets ss to the layer kind terms and end terms e summed over
// the layers of pipeline rank st (its counts, scale, first and last; not
// its micro-batches in flight).
func (mm *Model) stageSums(terms []kindTerms, e *endTerms, st *stage, ss *stageSums) {
	*ss = stageSums{}
	for k, n := range st.counts {
		if n == 0 {
			continue
		}
		t := &terms[k]
		f := st.scale * float64(n)
		// A shared block's weights once per stage, not once per layer.
		ss.dense += f*t.dense + st.scale*t.shared
		ss.expert += f * t.expert
		ss.act += f * t.act
		ss.host += f * t.host
		ss.fp8 += f * t.fp8
		ss.fp8Unit = max(ss.fp8Unit, t.fp8)
		ss.unit = max(ss.unit, t.unit)
		ss.gathered += f * t.unit
		ss.layerUnit = ss.unit
		ss.work = max(ss.work, t.work)
		ss.hasMoE = ss.hasMoE || t.hasMoE
	}
	if st.first {
		// Input embedding V·h/t on the first stage [MEG-MEM].
		ss.dense, ss.expert, ss.unit = ss.dense+e.embedDense, ss.expert+e.embedExpert, max(ss.unit, e.embedUnit)
		ss.gathered += e.embedUnit
		ss.embedUnit = e.embedUnit
	}
	if st.last {
		// Final norm and output layer V·h/t; a copy of a tied embedding when
		// the last stage is not also the first (Megatron keeps one there to
		// compute the logits and all-reduces its gradient) [MEG-MEM].
		d, u := e.outputDense, e.outputUnit
		if !st.first {
			d, u = d+e.tiedDense, u+e.tiedUnit
		}
		ss.dense, ss.expert, ss.unit = ss.dense+d, ss.expert+e.outputExpert, max(ss.unit, u)
		ss.gathered += u
		ss.headUnit = u
		if st.first {
			// A tied output layer reads the embedding itself, gathered again.
			ss.headUnit = max(u, e.tiedUnit)
		}
	}
	if st.mirror >= 0 {
		var buf [maxKinds]int
		var cnt []int
		if n := len(st.counts); n <= maxKinds {
			cnt = buf[:n:n]
		} else {
			cnt = make([]int, n) // a hybrid stack of many kinds
		}
		mm.countStage(st.mirror, st.pp, 1, st.split, cnt)
		for k, n := range cnt {
			ss.actMirror += st.scale * float64(n) * terms[k].act
		}
	}
}

// phases returns the memory of pipeline rank st, whose sums stageSums
// computed, in its two phases (stagePhases), and its buffer terms.
func (mm *Model) phases(g *geometry, e *endTerms, st *stage, ss *stageSums) (fwd, step Breakdown, bufs bufTerms) {
	var rs rankStates
	mm.rankStates(g, ss, &rs)
	var fl flightTerms
	mm.flightTerms(g, e, st, ss, &fl, &bufs)
	fwd, step = rs.phases(&fl)
	return fwd, step, bufs
}

// rankStates are a pipeline rank's model states in its two phases: the
// parameters, gradients and optimizer state at the end of the forward
// pass (fwd) and in the optimizer step (step); fwdHead and stepHead are
// their sums, the first terms of Breakdown.TotalBytes's sum in its order.
type rankStates struct {
	fwd, step         [3]float64
	fwdHead, stepHead float64
	host              float64 // model states in host memory (offloadStates)
}

// rankStates fills rs with the model states of the rank whose sums are ss
// under g (its ZeRO stage included).
func (mm *Model) rankStates(g *geometry, ss *stageSums, rs *rankStates) {
	rs.fwd[0], rs.fwd[1], rs.fwd[2] = mm.states(g, ss.dense, ss.expert, ss.fp8, false)
	rs.step[0], rs.step[1], rs.step[2] = mm.states(g, ss.dense, ss.expert, ss.fp8, true)
	rs.fwdHead = rs.fwd[0] + rs.fwd[1] + rs.fwd[2]
	rs.stepHead = rs.step[0] + rs.step[1] + rs.step[2]
	rs.host = 0
	if g.hostOpt > 0 {
		mm.offloadStates(g, ss, rs)
	}
}

// flightTerms are what a pipeline rank's memory reads of its micro-batches
// in flight: its activations at the end of the forward pass and its
// buffers that persist through the step and that are transient, and
// their sum, the buffers of the forward phase.
type flightTerms struct {
	act, persistent, transient float64
	host                       float64 // saved activations in host memory
	buffers                    float64
	// step is the buffers of the optimizer step: the persistent ones, or
	// under XLA those still live (bufTerms.stepXLA).
	step float64
}

// flightTerms fills fl with the activations and buffers of rank st (its
// micro-batches in flight included), whose sums are ss, and bufs with its
// buffer terms.
func (mm *Model) flightTerms(g *geometry, e *endTerms, st *stage, ss *stageSums, fl *flightTerms, bufs *bufTerms) {
	// Layer activations × micro-batches in flight (docs/formulas.md §2.3 [KORT §4.3]).
	fl.act = st.inFlight * ss.act
	fl.host = st.inFlight * ss.host
	if st.mirror >= 0 && st.pp > 1 {
		// DualPipe's rank r keeps p-r chunks of its stage r and r+1 of stage
		// p-1-r at its peak, p+1 in all: each stage j keeps p-j as under
		// 1F1B, the overlapped chunk on the rank's lower stage
		// (deepseek-ai/DualPipe@3da1bbe dualpipe.py:358-396, steps 1-4;
		// [DSV3 Table 2]); the schedule's total 2·inFlight is shared so.
		p, r := float64(st.pp), float64(st.r)
		fl.act = 2 * st.inFlight / (p + 1) * ((p-r)*(ss.act-ss.actMirror) + (r+1)*ss.actMirror)
	}
	*bufs = mm.buffers(g, e, st, ss)
	fl.persistent, fl.transient = bufs.totals()
	fl.buffers = fl.persistent + fl.transient
	fl.step = fl.persistent
	if mm.p.Options.Precision.TensorUnits {
		fl.step = bufs.stepXLA()
	}
}

// phases returns the rank's memory in its two phases (stagePhases) from
// its model states rs and its flight terms fl.
func (rs *rankStates) phases(fl *flightTerms) (fwd, step Breakdown) {
	fwd = Breakdown{ParamsBytes: rs.fwd[0], GradsBytes: rs.fwd[1], OptimizerBytes: rs.fwd[2],
		ActivationsBytes: fl.act, BuffersBytes: fl.buffers, HostActivationsBytes: fl.host, HostStatesBytes: rs.host}
	step = Breakdown{ParamsBytes: rs.step[0], GradsBytes: rs.step[1], OptimizerBytes: rs.step[2],
		BuffersBytes: fl.step, HostActivationsBytes: fl.host, HostStatesBytes: rs.host}
	return fwd, step
}

// totals returns the TotalBytes of the rank's two phases (phases) without
// building them: the same sums in the same order, so the same bits.
func (rs *rankStates) totals(fl *flightTerms) (fwd, step float64) {
	const stepActivations = 0 // the step phase's ActivationsBytes
	return rs.fwdHead + fl.act + fl.buffers, rs.stepHead + stepActivations + fl.step
}

// states returns the model states of dense and expert parameters after
// storage sharding, fp8 of them with fp8 copies, in the optimizer step
// (step) or at the end of the forward pass. Weights are stored over their
// sharding (tp, ep, fsdp); ZeRO-1 shards the optimizer state over dp (dp x
// cp with model.Precision.ShardOverCP),
// ZeRO-2 the gradients too; routed experts over the expert data-parallel
// group edp (docs/formulas.md §2.1 [ZERO §5][MEG-DDP]).
func (mm *Model) states(g *geometry, dense, expert, fp8 float64, step bool) (params, grads, opt float64) {
	pr := mm.p.Options.Precision
	gradDP, optDP, gradEDP, optEDP := 1.0, 1.0, 1.0, 1.0
	edp := g.deg[space.RoleEDP]
	if mm.p.Options.ExpertsWhole {
		// Whole experts are replicated over tp's ranks that ep did not take
		// too: ZeRO shards them over edp x tpe [MEG-MOE]
		// (model.ProgramOptions.ExpertsWhole).
		edp *= g.deg[space.RoleTPE]
	}
	dp := g.deg[space.RoleDP]
	if pr.ShardOverCP {
		// ZeRO's group is dp x cp (model.Precision.ShardOverCP).
		dp *= g.deg[space.RoleCP]
	}
	if g.zero >= 1 {
		optDP, optEDP = dp, edp
	}
	if g.zero >= 2 {
		gradDP, gradEDP = dp, edp
	}
	n := dense + expert
	shards := dense/optDP + expert/optEDP
	fsdp := g.fsdp()
	if pr.WeightCopies {
		// The parameters are the master copy; the matmuls' copies exist from
		// the forward to the backward pass, one FSDP unit at a time under
		// FSDP (in the buffers), the whole shard otherwise (autocast).
		params, opt = pr.Master*n, pr.Moments*shards
		if !step && !fsdp && pr.Casts() {
			params += pr.Weight * n
		}
	} else {
		params, opt = pr.Weight*n, (pr.Master+pr.Moments)*shards
	}
	// FP8 weight copies, the weight and its transpose at 1 byte each (the
	// recipe's element bytes), or the weight alone where it serves both
	// uses (geometry.fp8Copies;
	// model.FP8Recipe): cached through the step for the stage's weights,
	// per gathered unit under FSDP (in the buffers).
	if !fsdp {
		params += g.fp8Copies * fp8
		// fp8 primary weights (model.FP8Recipe.Params, Megatron-LM
		// --fp8-param-gather, distributed optimizer only): the fp8 copies
		// replace the bf16 weight; the fp32 master copy is in
		// the optimizer state (megatron/core/distributed/param_and_grad_buffer.py
		// @d98e8a64: uint8 parameter buffer). Without data parallelism the
		// distributed optimizer holds what ZeRO-1 would.
		if r := mm.p.Options.FP8; r != nil && r.Params && (g.zero >= 1 || g.deg[space.RoleDP] <= 1) {
			params -= pr.Weight * fp8
		}
	}
	grads = pr.Grad * (dense/gradDP + expert/gradEDP)
	if pr.GradInWeight {
		// The gradients live in the parameters' storage
		// (model.Precision.GradInWeight: ColossalAI Gemini's chunks).
		grads = 0
	}
	if step && pr.MainGradCopy && pr.Grad < pr.Master {
		// The optimizer's Master-sized copy of its shard's gradients
		// (model.Precision.MainGradCopy: Megatron-LM@d98e8a64
		// megatron/core/optimizer/distrib_optimizer.py:2792).
		grads += pr.Master * shards
	}
	// Gradients freed after every step appear with the first backward pass,
	// so the first forward pass runs without them; with more micro-batches
	// the last forward pass runs with them.
	if !step && pr.TransientGrads && g.micro <= 1 {
		grads = 0
	}
	return params, grads, opt
}
