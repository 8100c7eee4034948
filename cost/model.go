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

// Model is the cost model of one layer program: the program and what the
// rules need of it that does not depend on the strategy, computed once by
// NewModel. It is read-only and safe for concurrent use: search evaluates
// millions of strategies against one Model.
type Model struct {
	p *model.Program
	// whys are the reason texts of every collective the program may
	// cause; an emission names its own by index (whyID), which keeps
	// emissions free of pointers. why holds, per block and pass (0
	// forward, 1 backward), the index of each op's first reason: its
	// numActions reasons follow in action order (whyTexts).
	whys []string
	why  [][2][]whyID
	// weightWhy holds, per tensor, the reasons of a weight's once-per-step
	// collectives (none for other tensors).
	weightWhy []weightWhy
	// capDim is, per tensor, the counted dimension whose split stops early
	// under tensor parallelism (model.Program.Cap), or model.NumDim.
	capDim []model.Dim
	// dims is, per tensor, the bit set of its dimensions.
	dims []uint32
	// used are the tensors the cost model reads: operands, results and
	// weights with their gradients; blockUsed those of each block's ops.
	used      []int
	blockUsed [][]int
	// opDims holds, per block and pass, each einsum's dimensions (a bit
	// set) and its capped dimension (model.NumDim if none).
	opDims [][2][]opShape
	// opBase is, per block and pass (0 forward, 1 backward), the index of
	// its first op among the numOps ops of the program (evaluator.memo).
	opBase [][2]int
	numOps int
	// wgrad marks, per block, the backward ops whose result is a weight's
	// gradient: the passes a zero-bubble schedule defers (W, [ZB §2]).
	wgrad [][]bool
	// expertSpan is, per block and pass (0 forward, 1 backward), the
	// indices of its two reshards, {-1, -1} for a block without: the MoE
	// dispatch and combine forward, the combine's and the dispatch's
	// gradients backward. The ops between them are the experts' compute,
	// the phase Megatron-Core's EP overlap runs between the two all-to-alls
	// (Megatron-LM@d98e8a64 megatron/core/models/gpt/fine_grained_callables.py:
	// build_transformer_layer_callables' moe_dispatch, mlp, moe_combine).
	expertSpan [][2][2]int32
	// optimizerBytes is the HBM traffic of one optimizer step per parameter.
	optimizerBytes float64
	// routing is the MoE routing (dispatch and combine), imbalance the
	// busiest expert rank's load over the mean (1 for a dense model).
	routing   routing
	imbalance float64
	// dispatches says a block of the program reshards (the MoE dispatch
	// and combine).
	dispatches bool
	// idle marks the blocks no layer runs (the dense MLP of an all-MoE
	// stack): their cost is never counted, so it is never computed.
	idle []bool
	// tensorsPerWeight is, per block, its parameter tensors (biases and
	// norms' weights and biases included) per matmul weight: the
	// collectives of one weight a per-tensor framework makes (Comm.PerTensor).
	tensorsPerWeight []float64
	// policies are the recompute policies the model knows; offloaded the
	// tensors each keeps in host memory, per layer kind, and kept those
	// it keeps in HBM, which an activation offload moves there too
	// (space.Strategy.ActOffload; none for the multi-token-prediction
	// modules, outside the offloaded stack).
	policies  []model.Policy
	offloaded [][][]int
	kept      [][][]int
	// reruns says, per recompute policy, block and forward op, whether
	// the policy re-runs the op (model.Program.Reruns).
	reruns [][][]bool
	// shares is, per recompute policy and block, the share of each
	// forward op's work the policy re-runs beyond the ops it re-runs whole
	// (model.Program.RerunShare), nil for a block with none.
	shares [][][]float64
	// spSaved is, per recompute policy and block, the sequence-parallel
	// inputs of the block's column-parallel matmuls that the policy keeps
	// for the backward pass (model.Program.SPGathered and Saved): where the
	// program keeps gathered inputs (model.ProgramOptions.SavesGathered, a
	// DTensor plan) what it keeps is the all-gathered input.
	spSaved [][][]int
	// rerunClass is, per block and recompute policy, the first policy
	// that re-runs the same ops of the block (and the same shares of
	// ops): two policies of one class give the block the same recompute
	// and backward passes.
	rerunClass [][]int
	// states recycles evaluation working memory for one-shot Evaluate
	// calls; flops caches the FLOP counts per sequence length.
	states sync.Pool
	mu     sync.Mutex
	flops  map[int]seqFLOPs
}

// seqFLOPs are the FLOP counts per token that depend on the sequence
// length: the contract's model FLOPs and each recompute policy's per layer
// kind.
type seqFLOPs struct {
	model float64
	rerun [][]float64
}

// flopsFor returns the FLOP counts of sequences of seq tokens, computed once.
func (cm *Model) flopsFor(seq int) seqFLOPs {
	cm.mu.Lock()
	defer cm.mu.Unlock()
	if f, ok := cm.flops[seq]; ok {
		return f
	}
	f := seqFLOPs{model: cm.p.Spec.ModelFLOPsPerToken(seq), rerun: cm.rerunFLOPsPerToken(seq)}
	if cm.flops == nil {
		cm.flops = map[int]seqFLOPs{}
	}
	cm.flops[seq] = f
	return f
}

// weightWhy is the reasons of a weight's once-per-step collectives.
type weightWhy struct{ ar, rs, ag whyID }

// whyID is the index of a reason text among a Model's whys.
type whyID int32

// addWhy appends the reason text to cm.whys and returns its index.
func (cm *Model) addWhy(text string) whyID {
	cm.whys = append(cm.whys, text)
	return whyID(len(cm.whys) - 1)
}

// opShape is what an einsum's FLOPs need: the union of its operands'
// dimensions and the one whose split stops early.
type opShape struct {
	dims uint32
	cap  model.Dim
}

// NewModel prepares the cost model of layer program p.
func NewModel(p *model.Program) *Model {
	cm := &Model{p: p, imbalance: 1}
	if e := p.Spec.MoE; e != nil && e.Experts > 0 {
		cm.routing = routing{copies: p.Size[model.DimR], groups: e.Groups, limit: e.GroupLimit, experts: e.Experts, topK: e.TopK}
		cm.imbalance = e.Load()
	}
	for b := range p.Blocks {
		for _, ops := range [2][]model.Op{p.Blocks[b].Fwd, p.Blocks[b].Bwd} {
			for i := range ops {
				cm.dispatches = cm.dispatches || ops[i].Kind == model.Reshard
			}
		}
	}
	cm.idle = make([]bool, len(p.Blocks))
	for b := range p.Blocks {
		cm.idle[b] = !blockRuns(p, b)
	}
	cm.weightWhy = make([]weightWhy, len(p.Tensors))
	cm.capDim = make([]model.Dim, len(p.Tensors))
	cm.dims = make([]uint32, len(p.Tensors))
	used := make([]bool, len(p.Tensors))
	cm.blockUsed = make([][]int, len(p.Blocks))
	for bi, b := range p.Blocks {
		for _, ops := range [][]model.Op{b.Fwd, b.Bwd} {
			for _, o := range ops {
				for _, t := range []int{o.A, o.B, o.C} {
					if t >= 0 {
						used[t] = true
						if !slices.Contains(cm.blockUsed[bi], t) {
							cm.blockUsed[bi] = append(cm.blockUsed[bi], t)
						}
					}
				}
			}
		}
		for _, w := range b.Weights {
			used[w] = true
			if g := p.Tensors[w].Grad; g >= 0 {
				used[g] = true
			}
		}
	}
	for i := range p.Tensors {
		t := &p.Tensors[i]
		if used[i] {
			cm.used = append(cm.used, i)
		}
		for j := 0; j < t.Rank; j++ {
			cm.dims[i] |= 1 << t.Dims[j]
		}
		cm.capDim[i] = model.NumDim
		for j := 0; j < t.Rank; j++ {
			if d := t.Count[j]; p.Cap[d] > 0 && t.Logical[j] == model.Width {
				cm.capDim[i] = d
			}
		}
		if t.Weight {
			cm.weightWhy[i] = weightWhy{
				ar: cm.addWhy("gradient of " + t.Name + ": all-reduce over the replicas once per step, after accumulation (data parallel)"),
				rs: cm.addWhy("gradient of " + t.Name + ": reduce-scatter over the replicas once per step (ZeRO optimizer shards)"),
				ag: cm.addWhy("parameters " + t.Name + ": all-gather the updated shards once per step (ZeRO)"),
			}
		}
	}
	cm.why = make([][2][]whyID, len(p.Blocks))
	cm.opDims = make([][2][]opShape, len(p.Blocks))
	cm.wgrad = make([][]bool, len(p.Blocks))
	cm.opBase = make([][2]int, len(p.Blocks))
	cm.expertSpan = make([][2][2]int32, len(p.Blocks))
	for b := range p.Blocks {
		cm.expertSpan[b] = [2][2]int32{expertSpanOf(p.Blocks[b].Fwd), expertSpanOf(p.Blocks[b].Bwd)}
		cm.opBase[b] = [2]int{cm.numOps, cm.numOps + len(p.Blocks[b].Fwd)}
		cm.numOps += len(p.Blocks[b].Fwd) + len(p.Blocks[b].Bwd)
		cm.wgrad[b] = make([]bool, len(p.Blocks[b].Bwd))
		for i, o := range p.Blocks[b].Bwd {
			cm.wgrad[b][i] = isWeightGrad(p, &o)
		}
		for k, ops := range [2][]model.Op{p.Blocks[b].Fwd, p.Blocks[b].Bwd} {
			cm.why[b][k] = make([]whyID, len(ops))
			cm.opDims[b][k] = make([]opShape, len(ops))
			for i := range ops {
				texts := whyTexts(p, &ops[i])
				cm.why[b][k][i] = whyID(len(cm.whys))
				cm.whys = append(cm.whys, texts[:]...)
				cm.opDims[b][k][i] = cm.shapeOf(&ops[i])
			}
		}
	}
	// The optimizer step's HBM traffic per parameter (model.Precision.StepBytes):
	// 30 bytes with MixedPrecision, 28 with AutocastPrecision.
	cm.optimizerBytes = p.Options.Precision.StepBytes(p.Options.Optimizer)
	cm.policies = append(model.Policies(), model.ModulePolicies(p)...)
	cm.offloaded = make([][][]int, len(cm.policies))
	cm.kept = make([][][]int, len(cm.policies))
	for pi, pol := range cm.policies {
		cm.offloaded[pi] = make([][]int, len(p.Kinds))
		cm.kept[pi] = make([][]int, len(p.Kinds))
		for k, kind := range p.Kinds {
			saved := p.Saved(kind.Blocks, pol)
			cm.offloaded[pi][k] = p.Offloaded(kind.Blocks, pol, saved)
			if kind.Name != model.KindMTP {
				cm.kept[pi][k] = slices.DeleteFunc(saved, func(t int) bool { return slices.Contains(cm.offloaded[pi][k], t) })
			}
		}
	}
	cm.reruns = make([][][]bool, len(cm.policies))
	for pi, pol := range cm.policies {
		cm.reruns[pi] = make([][]bool, len(p.Blocks))
		for b := range p.Blocks {
			cm.reruns[pi][b] = make([]bool, len(p.Blocks[b].Fwd))
			for i := range p.Blocks[b].Fwd {
				cm.reruns[pi][b][i] = p.Reruns(pol, b, &p.Blocks[b].Fwd[i])
			}
		}
	}
	cm.shares = make([][][]float64, len(cm.policies))
	for pi, pol := range cm.policies {
		cm.shares[pi] = make([][]float64, len(p.Blocks))
		for b := range p.Blocks {
			for i := range p.Blocks[b].Fwd {
				if sh := p.RerunShare(pol, b, &p.Blocks[b].Fwd[i]); sh > 0 {
					if cm.shares[pi][b] == nil {
						cm.shares[pi][b] = make([]float64, len(p.Blocks[b].Fwd))
					}
					cm.shares[pi][b][i] = sh
				}
			}
		}
	}
	cm.spSaved = make([][][]int, len(cm.policies))
	for pi := range cm.policies {
		cm.spSaved[pi] = make([][]int, len(p.Blocks))
	}
	if p.Options.SavesGathered { // the only programs that read spSaved
		spg := p.SPGathered()
		for pi, pol := range cm.policies {
			for b := range p.Blocks {
				for _, t := range p.Saved([]int{b}, pol) {
					if spg[t] {
						cm.spSaved[pi][b] = append(cm.spSaved[pi][b], t)
					}
				}
			}
		}
	}
	cm.rerunClass = make([][]int, len(p.Blocks))
	for b := range p.Blocks {
		cm.rerunClass[b] = make([]int, len(cm.policies))
		for pi := range cm.policies {
			cm.rerunClass[b][pi] = pi
			for pj := range pi {
				if slices.Equal(cm.reruns[pi][b], cm.reruns[pj][b]) && slices.Equal(cm.shares[pi][b], cm.shares[pj][b]) && slices.Equal(cm.spSaved[pi][b], cm.spSaved[pj][b]) {
					cm.rerunClass[b][pi] = pj
					break
				}
			}
		}
	}
	cm.tensorsPerWeight = make([]float64, len(p.Blocks))
	for b, blk := range p.Blocks {
		var tensors, mats float64
		for _, w := range blk.Weights {
			if p.Tensors[w].Bucketed {
				tensors += math.Ceil(p.Tensors[w].Scale) // a LayerNorm's weight and bias
			} else {
				tensors++
				mats++
			}
		}
		cm.tensorsPerWeight[b] = 1
		if mats > 0 {
			cm.tensorsPerWeight[b] = tensors / mats
		}
	}
	return cm
}

// expertSpanOf returns the indices of the two reshards of a pass's ops
// (the MoE block's all-to-alls, model's moe builder), {-1, -1} unless
// there are exactly two.
func expertSpanOf(ops []model.Op) [2]int32 {
	span, n := [2]int32{-1, -1}, 0
	for i := range ops {
		if ops[i].Kind != model.Reshard {
			continue
		}
		if n < 2 {
			span[n] = int32(i)
		}
		n++
	}
	if n != 2 {
		return [2]int32{-1, -1}
	}
	return span
}

// isWeightGrad reports whether backward op o is a weight-gradient pass:
// an einsum whose result is a weight's gradient (for C = A·B with B a
// weight, the dB = Aᵀ·dC of the transposition).
func isWeightGrad(p *model.Program, o *model.Op) bool {
	if o.Kind != model.Einsum || o.C < 0 {
		return false
	}
	pr := p.Tensors[o.C].Primal
	return pr >= 0 && p.Tensors[pr].Weight
}

// policy returns the index of the recompute policy named name.
func (cm *Model) policy(name string) (int, bool) {
	for i := range cm.policies {
		if cm.policies[i].Name == name {
			return i, true
		}
	}
	// A --recompute-modules list: the policy of the modules that re-run
	// something in this model.
	name = model.EffectivePolicyName(cm.p, name)
	for i := range cm.policies {
		if cm.policies[i].Name == name {
			return i, true
		}
	}
	return -1, false
}

// rerunFLOPsPerToken returns, per recompute policy and layer kind, the
// FLOPs per token a layer's recomputation adds, counted like the model
// FLOPs (the attention score square in full, docs/formulas.md §1.2), for
// sequences of seq tokens.
func (cm *Model) rerunFLOPsPerToken(seq int) [][]float64 {
	p := cm.p
	sz := p.Sizes(1, float64(seq))
	out := make([][]float64, len(cm.policies))
	for pi, pol := range cm.policies {
		out[pi] = make([]float64, len(p.Kinds))
		for k, kind := range p.Kinds {
			for _, b := range kind.Blocks {
				for i := range p.Blocks[b].Fwd {
					o := &p.Blocks[b].Fwd[i]
					share := 1.0
					if !p.Reruns(pol, b, o) {
						share = p.RerunShare(pol, b, o) // a fused projection's re-run columns (model.Policy.Partial)
					}
					if o.Kind != model.Einsum || o.Work == 0 || share == 0 {
						continue
					}
					// The full square, or the keys a local kernel's query sees
					// (model.LocalKeys, the model-FLOP convention).
					fl := 2.0
					if o.Span > 0 {
						fl *= model.LocalKeys(o.Local, o.Span, float64(seq)) / float64(seq)
					}
					for d := model.Dim(0); d < model.NumDim; d++ {
						if cm.opDims[b][0][i].dims&(1<<d) != 0 {
							fl *= sz[d]
						}
					}
					out[pi][k] += share * fl / float64(seq)
				}
			}
		}
	}
	return out
}

// shapeOf returns an einsum's dimensions and capped dimension.
func (cm *Model) shapeOf(o *model.Op) opShape {
	sh := opShape{cap: model.NumDim}
	if o.Kind != model.Einsum {
		return sh
	}
	for _, t := range []int{o.A, o.B} {
		tt := &cm.p.Tensors[t]
		for j := 0; j < tt.Rank; j++ {
			sh.dims |= 1 << tt.Dims[j]
			if cm.p.Cap[tt.Dims[j]] > 0 {
				sh.cap = tt.Dims[j]
			}
		}
	}
	return sh
}

// Program returns the layer program the model was built from.
func (cm *Model) Program() *model.Program { return cm.p }

// Evaluate returns the step-time estimate of strategy s (validated; placed
// or not) for the program of p on cluster c with workload w. It prepares
// the cost model on every call; use NewModel and an Evaluator to evaluate
// many strategies.
func Evaluate(p *model.Program, c profiles.Cluster, w space.Workload, s space.Strategy, o Options) (Estimate, error) {
	return NewModel(p).Evaluate(c, w, s, o)
}

// Evaluate returns the step-time estimate of strategy s on cluster c with
// workload w, recycling working memory across calls: the path for one-shot
// evaluations under changing clusters (calibration). It is safe for
// concurrent use; a search's goroutines use an Evaluator each.
func (cm *Model) Evaluate(c profiles.Cluster, w space.Workload, s space.Strategy, o Options) (Estimate, error) {
	in := cm.inputs(c, w, o)
	st, _ := cm.states.Get().(*evalState)
	if st == nil {
		st = new(evalState)
	}
	defer cm.states.Put(st)
	if err := cm.prepare(st, &in, &s, -1); err != nil {
		return Estimate{}, err
	}
	var est Estimate
	cm.assemble(st, &in, &s, &est)
	return est, nil
}

// inputs returns the evaluation inputs of cluster c (not copied: the caller
// must not change its axes during the call), workload w and options o.
func (cm *Model) inputs(c profiles.Cluster, w space.Workload, o Options) evalInputs {
	in := evalInputs{cluster: c, workload: w, options: o, seq: w.SeqLen}
	var e evaluator
	e.fillEfficiency(c)
	in.eff = e.eff
	if in.seq <= 0 {
		in.seq = cm.p.Spec.SeqLen
	}
	if in.seq > 0 {
		f := cm.flopsFor(in.seq)
		in.modelFLOPsPerToken, in.rerunPerToken = f.model, f.rerun
	}
	return in
}

// Evaluator evaluates many strategies of one Model on one cluster and
// workload. It reuses its working memory and the per-micro-batch block
// costs of the previous strategy when only the pipeline schedule or ZeRO
// stage 0 or 1 changed (and, skipping the collectives' list, their sums
// per pipeline rank while only the schedule changes: rankSums), and its
// forward passes when only the recompute policy or the ZeRO stage
// changed; for one strategy's layouts and sizes
// it resolves the rules of each op under each state of its operands once
// (opMemo) and costs each block once per recompute class and gradient
// sharding (spareBlocks), and another placement of the same degrees and
// micro-batch keeps every op outcome and pass that priced no collective
// over a role set the placement prices differently (Model.remesh), and of
// an einsum that did, its inputs to the rules, which are resolved again for
// the moved roles alone (evaluator.resolveRoles, taking a role's choice
// under a grouping it had before from the op's memo, roleChoices): when
// they resolve as before, only its collectives are priced again
// (evaluator.reprice), and a block's passes take the new prices without
// running again (evaluator.revalidate). What the rules decide from the
// layouts alone outlives a strategy's sizes and degrees: each einsum's
// memo keeps its roles' plans (the legal gather choices, their moves and
// the free choices, rolePlans) while the model and sequence parallelism
// stay, and its inputs to the rules while the degrees stay; a new
// micro-batch of the same degrees keeps the tensors' layouts (Model.setup).
// It is the fast path of search, bit for bit the estimate of a fresh
// evaluation. It is not safe for concurrent use: use one per goroutine.
type Evaluator struct {
	m  *Model
	in evalInputs
	st evalState
	// keys are the segment keys of the strategy evaluated last (keys[cur],
	// when valid) and of the one being evaluated (filled in place: a key
	// is a few hundred bytes).
	keys  [2]segmentKey
	cur   int
	valid bool
}

// evalInputs are what an Evaluator evaluates strategies on, and what
// follows from them alone.
type evalInputs struct {
	cluster  profiles.Cluster
	workload space.Workload
	options  Options
	// seq is the sequence length (the workload's, else the model's).
	seq int
	// modelFLOPsPerToken is the contract's MFU numerator per token.
	modelFLOPsPerToken float64
	// rerunPerToken is rerunFLOPsPerToken(seq).
	rerunPerToken [][]float64
	// eff is the cluster's efficiency with the chip family's defaults
	// filled in (evaluator.fillEfficiency).
	eff profiles.Efficiency
}

// NewEvaluator returns an Evaluator of cm on cluster c (copied) with
// workload w and options o.
func (cm *Model) NewEvaluator(c profiles.Cluster, w space.Workload, o Options) *Evaluator {
	c.Axes = append([]profiles.Axis(nil), c.Axes...)
	return &Evaluator{m: cm, in: cm.inputs(c, w, o)}
}

// Evaluate returns the step-time estimate of strategy s (validated; placed
// or not) on the Evaluator's cluster, workload and options.
func (ev *Evaluator) Evaluate(s space.Strategy) (Estimate, error) {
	var est Estimate
	err := ev.EvaluateTo(&s, &est)
	return est, err
}

// EvaluateTo is Evaluate writing the estimate into est (left as it was on
// an error), reading s in place: the form for a search's hot loop, which
// copies neither.
func (ev *Evaluator) EvaluateTo(s *space.Strategy, est *Estimate) error {
	return ev.EvaluatePlacedTo(s, -1, est)
}

// EvaluatePlacedTo is EvaluateTo for a strategy whose mesh the caller
// names: when placement is not negative, every call that names it must
// pass the same s.Mesh (as a space.Space's layout gene names the mesh
// Space.Decode writes), and a call that names the placement of the call
// before takes the mesh's part of the segment key from it instead of
// reading s.Mesh again. The Evaluator also keeps the resolved meshes of
// the last few placements named, with the collective models priced under
// each, and takes them from there when a placement comes back (a search
// visits a layout class's placements once per micro-batch size). A
// negative placement names nothing (EvaluateTo).
func (ev *Evaluator) EvaluatePlacedTo(s *space.Strategy, placement int64, est *Estimate) error {
	next := ev.cur ^ 1
	var ok bool
	if prev := &ev.keys[ev.cur]; placement >= 0 && ev.valid && prev.placement == placement {
		ok = ev.keys[next].fillPlaced(s, prev)
	} else {
		ok = ev.keys[next].fill(s, ev.in.cluster.Axes)
	}
	ev.keys[next].placement = placement
	// What s shares with the strategy evaluated last: its degrees,
	// micro-batch and sequence parallelism (shape), and its placement
	// (placed: the forward passes stay), and its recompute policy and
	// gradient sharding (same: the block costs stay).
	var shape, placed, same bool
	if ok && ev.valid && !ev.in.options.Trace {
		shape, placed, same = ev.keys[next].compare(&ev.keys[ev.cur])
	}
	if !same || s.Zero != ev.st.e.zero {
		// The block costs or parameters may change: the rank views' sums
		// go (Model.assemble).
		ev.st.sumsGen++
	}
	switch {
	case shape && !placed:
		// Another placement of the same degrees and micro-batch: the sizes
		// and layouts stay, and the outcomes that priced no collective over
		// a role the placement moves.
		ev.valid = false
		moved, err := ev.m.remesh(&ev.st, &ev.in, s, placement)
		if err != nil {
			return err
		}
		if !moved {
			if err := ev.m.prepare(&ev.st, &ev.in, s, placement); err != nil {
				return err
			}
		}
		ev.cur, ev.valid = next, true
	case !placed:
		ev.valid = false
		if err := ev.m.prepare(&ev.st, &ev.in, s, placement); err != nil {
			return err
		}
		ev.cur, ev.valid = next, ok && !ev.in.options.Trace
	case !same:
		// Another recompute policy or ZeRO-2: the forward passes stay.
		ev.valid = false
		if err := ev.m.rerun(&ev.st, &ev.in, s); err != nil {
			return err
		}
		ev.cur, ev.valid = next, true
	case s.Zero != ev.st.e.zero:
		// ZeRO-0 and ZeRO-1 share the per-micro-batch passes and differ only
		// in the once-per-step collectives.
		ev.st.stepParts(s.Zero)
	}
	if ev.st.stagesStale(ev.m.p, s) {
		// Another split of the layers over the same stages, or another
		// loop of chunks: the stages' compositions and the views' sums go.
		ev.st.planStages(ev.m.p, s.Degree[space.PP], s.LoopChunks(), s.Split)
		ev.st.sumsGen++
	}
	ev.m.assemble(&ev.st, &ev.in, s, est)
	return nil
}

// maxKeyShares bounds the mesh shares a segmentKey holds; a strategy with
// more is evaluated without reuse (never dropped).
const maxKeyShares = 12

// segmentKey is everything of a strategy the per-micro-batch block costs
// depend on: all of it but the pipeline schedule and virtual stages, and of
// the ZeRO stage only whether it shards gradients (stage 2). compare
// compares every field (placement standing in for the shares when both
// name the same): keep it in step.
type segmentKey struct {
	deg       space.Degrees
	mb        int
	zero2, sp bool
	recompute string
	// dispatcher is the strategy's MoE token dispatcher, which prices the
	// dispatch and combine (routing.under).
	dispatcher string
	shares     keyShares
	// placement is the caller's name for the mesh the shares were filled
	// from (Evaluator.EvaluatePlacedTo), negative when none.
	placement int64
}

// keyShares are the mesh shares of a segmentKey, in the strategy's order.
type keyShares [maxKeyShares]keyShare

// keyShare is one mesh share of a segmentKey: its dimension, its axis (the
// index of the cluster axis of that name, plus one) and its size. Small
// integers and no padding (spare, always zero) make a key compare as one
// block of memory.
type keyShare struct {
	dim, axis uint8
	//lint:ignore U1000 it fills the hole before size, always zero
	spare uint16
	size  int32
}

// compare reports how far k and o agree: on the degrees, the micro-batch,
// sequence parallelism and the MoE dispatcher (shape: their strategies differ at most in
// placement, recompute policy, ZeRO stage and schedule), on those and the
// mesh shares (placed: on everything the forward passes depend on), and
// on every field (same). Two keys that name the same placement have the
// same shares (Evaluator.EvaluatePlacedTo), which it then does not compare.
func (k *segmentKey) compare(o *segmentKey) (shape, placed, same bool) {
	shape = k.deg == o.deg && k.mb == o.mb && k.sp == o.sp && k.dispatcher == o.dispatcher
	placed = shape && (k.placement >= 0 && k.placement == o.placement || k.shares == o.shares)
	same = placed && k.zero2 == o.zero2 && k.recompute == o.recompute
	return shape, placed, same
}

// keyOfSegments returns the segment key of s on a cluster of axes, and
// false when s has more mesh shares than a key holds or a share the key
// cannot name (an axis not of the cluster, a size beyond int32).
func keyOfSegments(s *space.Strategy, axes []profiles.Axis) (segmentKey, bool) {
	k := segmentKey{placement: -1}
	ok := k.fill(s, axes)
	return k, ok
}

// fill makes k the segment key of s on a cluster of axes, in place, and
// reports false as keyOfSegments does.
func (k *segmentKey) fill(s *space.Strategy, axes []profiles.Axis) bool {
	k.deg, k.zero2, k.mb, k.sp, k.recompute, k.dispatcher = s.Degree, s.Zero >= 2, s.MB, s.SP, s.Recompute, s.Dispatcher
	n := 0
	for d := range s.Mesh {
		for _, sh := range s.Mesh[d] {
			a := axisNumber(axes, sh.Axis)
			if n == maxKeyShares || a == 0 || sh.Size != int(int32(sh.Size)) {
				clear(k.shares[n:])
				return false
			}
			k.shares[n] = keyShare{dim: uint8(d), axis: a, size: int32(sh.Size)}
			n++
		}
	}
	clear(k.shares[n:])
	return true
}

// fillPlaced is fill for a strategy s of the same mesh as the one prev
// was filled from: it copies prev's shares instead of reading s.Mesh.
func (k *segmentKey) fillPlaced(s *space.Strategy, prev *segmentKey) bool {
	k.deg, k.zero2, k.mb, k.sp, k.recompute, k.dispatcher = s.Degree, s.Zero >= 2, s.MB, s.SP, s.Recompute, s.Dispatcher
	k.shares = prev.shares
	return true
}

// axisNumber returns the index of the axis named name among axes plus one,
// and 0 when there is none (or too many axes to number in a byte).
func axisNumber(axes []profiles.Axis, name string) uint8 {
	for i := range axes {
		// The first bytes first: names of one cluster mostly differ there
		// ("x", "y", "z"), which spares a full comparison.
		if a := axes[i].Name; len(a) == len(name) && (len(a) == 0 || a[0] == name[0]) && a == name && i < math.MaxUint8 {
			return uint8(i + 1)
		}
	}
	return 0
}

// check rejects a cluster, workload or strategy the model cannot price and
// returns the index of s's recompute policy.
func (cm *Model) check(in *evalInputs, s *space.Strategy) (policy int, err error) {
	c, w := &in.cluster, in.workload
	if c.Chip.PeakBF16FLOPs <= 0 || c.Chip.HBMBandwidthBytesPerS <= 0 {
		return 0, fmt.Errorf("cost: cluster %q has no peak FLOP/s or HBM bandwidth", c.Name)
	}
	if in.seq <= 0 || w.Batch <= 0 {
		return 0, errors.New("cost: workload needs a batch and a sequence length")
	}
	policy, ok := cm.policy(s.Recompute)
	if !ok {
		return 0, fmt.Errorf("cost: recompute policy %q is unknown", s.Recompute)
	}
	if !s.Schedule.Known() {
		return 0, fmt.Errorf("cost: pipeline schedule %q is unknown", s.Schedule)
	}
	reps := s.Replicas() * max(s.MB, 1)
	if reps <= 0 || w.Batch%reps != 0 {
		return 0, fmt.Errorf("cost: batch %d does not divide into dp*fsdp*mb = %d", w.Batch, reps)
	}
	return policy, nil
}
