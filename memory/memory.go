package memory

import (
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// Defaults of the memory model; a zero field of [Options] selects them.
const (
	// DefaultReservedFraction of HBM is held back for allocator fragmentation,
	// the CUDA/XLA runtime context and NCCL/collective scratch buffers: about
	// 5% fragmentation (Megatron's estimator pads activations by 1.05,
	// formulas.md §2.4 [MEG-MEM]) plus 2–3% for the runtime and collective
	// buffers. A planning convention, not a measured constant.
	DefaultReservedFraction = 0.08
	// DefaultWeightBytesPerParam is bf16 weights (formulas.md §2.1 [ZERO]).
	DefaultWeightBytesPerParam = 2
	// DefaultGradBytesPerParam is bf16 gradients (formulas.md §2.1 [ZERO]);
	// set Options.GradBytesPerParam to 4 for Megatron's fp32 gradient buffer.
	DefaultGradBytesPerParam = 2
	// DefaultOptimizerBytesPerParam is Adam in mixed precision: fp32 master
	// weights, first and second moments, 4+4+4 (formulas.md §2.1 [ZERO]).
	DefaultOptimizerBytesPerParam = 12
	// ActivationBytesPerElement is the size of a saved bf16 activation.
	ActivationBytesPerElement = 2
)

// Block selects how the activations of a transformer block are counted.
type Block int

const (
	// BlockAuto counts a GPT-style block when the model has LayerNorm and
	// biases (GPT-2/3, Megatron GPT, the Korthikanti models), and a modern
	// block otherwise.
	BlockAuto Block = iota
	// BlockGPT is Korthikanti's block: dropout after attention probabilities,
	// after the attention block, after the MLP and after the embedding, each
	// with a 1-byte mask per element (formulas.md §2.2 [KORT §4.1]).
	BlockGPT
	// BlockModern is a block without dropout (Llama, Mistral, DeepSeek, ...).
	BlockModern
)

// Options tune the memory model. The zero value uses the documented defaults.
type Options struct {
	// ReservedFraction of HBM is held back for allocator fragmentation, runtime
	// context and collective buffers; zero means DefaultReservedFraction and a
	// negative value means no reserve.
	ReservedFraction float64
	// WeightBytesPerParam is the size of a resident weight; zero means
	// DefaultWeightBytesPerParam (bf16).
	WeightBytesPerParam float64
	// GradBytesPerParam is the size of a gradient element; zero means
	// DefaultGradBytesPerParam (bf16). Megatron keeps fp32 gradients: 4.
	GradBytesPerParam float64
	// OptimizerBytesPerParam is the optimizer state per parameter; zero means
	// DefaultOptimizerBytesPerParam (fp32 master weights and Adam moments).
	OptimizerBytesPerParam float64
	// Block selects the activation accounting; zero means BlockAuto.
	Block Block
	// NoFlashAttention stores the attention-score tensors (a·s² per sequence
	// and head) under recompute=none, as Korthikanti's baseline does. By
	// default attention uses a fused kernel (FlashAttention, splash attention)
	// that never materialises them.
	NoFlashAttention bool
}

func (o Options) weightBytes() float64 {
	if o.WeightBytesPerParam > 0 {
		return o.WeightBytesPerParam
	}
	return DefaultWeightBytesPerParam
}

func (o Options) gradBytes() float64 {
	if o.GradBytesPerParam > 0 {
		return o.GradBytesPerParam
	}
	return DefaultGradBytesPerParam
}

func (o Options) optimizerBytes() float64 {
	if o.OptimizerBytesPerParam > 0 {
		return o.OptimizerBytesPerParam
	}
	return DefaultOptimizerBytesPerParam
}

// gptBlock reports whether m is counted as a GPT-style (dropout) block.
func (o Options) gptBlock(m model.Spec) bool {
	switch o.Block {
	case BlockGPT:
		return true
	case BlockModern:
		return false
	}
	return m.Norm == model.LayerNorm && m.Bias
}

// Breakdown is the peak memory of the busiest chip, in bytes.
type Breakdown struct {
	ParamsBytes      float64 `json:"params_bytes"`
	GradsBytes       float64 `json:"grads_bytes"`
	OptimizerBytes   float64 `json:"optimizer_bytes"`
	ActivationsBytes float64 `json:"activations_bytes"`
	BuffersBytes     float64 `json:"buffers_bytes"`
}

// TotalBytes is the sum of the components.
func (b Breakdown) TotalBytes() float64 {
	return b.ParamsBytes + b.GradsBytes + b.OptimizerBytes + b.ActivationsBytes + b.BuffersBytes
}

// Component names returned by [Dominant]; they match the contract's memory
// keys without the "_gb" suffix.
const (
	Params      = "params"
	Grads       = "grads"
	Optimizer   = "optimizer"
	Activations = "activations"
	Buffers     = "buffers"
)

// Dominant names the largest component of b: Params, Grads, Optimizer,
// Activations or Buffers (the first of them on a tie).
func Dominant(b Breakdown) string {
	name, top := Params, b.ParamsBytes
	if b.GradsBytes > top {
		name, top = Grads, b.GradsBytes
	}
	if b.OptimizerBytes > top {
		name, top = Optimizer, b.OptimizerBytes
	}
	if b.ActivationsBytes > top {
		name, top = Activations, b.ActivationsBytes
	}
	if b.BuffersBytes > top {
		name = Buffers
	}
	return name
}

// UsableBytes is the HBM per chip a strategy may fill: HBM minus the reserve
// (Options.ReservedFraction, default DefaultReservedFraction).
func UsableBytes(c profiles.Cluster, o Options) float64 {
	f := o.ReservedFraction
	switch {
	case f == 0:
		f = DefaultReservedFraction
	case f < 0:
		f = 0
	case f > 1:
		f = 1
	}
	return c.Chip.HBMBytes * (1 - f)
}

// Fits reports whether b fits in the usable HBM of one chip of c.
func Fits(b Breakdown, c profiles.Cluster, o Options) bool {
	return b.TotalBytes() <= UsableBytes(c, o)
}

// Estimate returns the per-chip memory of strategy s (validated and placed)
// for model m on cluster c and workload w: the peak of the busiest pipeline
// stage (the first or the last, whichever needs more). m should be
// normalized ([model.Spec.Normalize]); a zero w.SeqLen means m.SeqLen. The
// terms and their sources are listed in the package documentation.
// Estimate does not allocate for normalized models.
func Estimate(m model.Spec, c profiles.Cluster, w space.Workload, s space.Strategy, o Options) Breakdown {
	m = normalized(m)
	g := newGeometry(m, w, s)
	lt := newLayerTerms(m, g, o)
	first, last := MicrobatchesInFlight(s, g.numMicrobatches)
	if g.pp == 1 {
		return stageBreakdown(m, g, o, lt, m.Layers, m.DenseLayers(), true, true, first, last)
	}
	dFirst := min(m.DenseLayers(), g.layersPerStage)
	fb := stageBreakdown(m, g, o, lt, g.layersPerStage, dFirst, true, false, first, first)
	mLast := min(m.MoELayers(), g.layersPerStage)
	lb := stageBreakdown(m, g, o, lt, g.layersPerStage, g.layersPerStage-mLast, false, true, last, last)
	if lb.TotalBytes() > fb.TotalBytes() {
		return lb
	}
	return fb
}

// stageBreakdown is the memory of one pipeline stage of n layers, of which
// dense use the dense MLP, holding inFlight micro-batches of its layers'
// activations (lastInFlight of the last-stage extras).
func stageBreakdown(m model.Spec, g geometry, o Options, lt layerTerms, n, dense int, first, last bool, inFlight, lastInFlight float64) Breakdown {
	moe := n - dense
	st := stageStates(m, g, o, lt, dense, moe, first, last)
	var b Breakdown
	b.ParamsBytes, b.GradsBytes, b.OptimizerBytes = st.weights, st.grads, st.optimizer
	// Layer activations × micro-batches in flight (formulas.md §2.3 [KORT §4.3]).
	b.ActivationsBytes = inFlight * (float64(dense)*lt.actDense + float64(moe)*lt.actMoE)
	b.BuffersBytes = buffersBytes(m, g, o, lt, st, moe, first, last, inFlight, lastInFlight)
	return b
}

// layerTerms are the per-layer quantities every stage shares, computed once
// per Estimate.
type layerTerms struct {
	paramsDense  float64 // a dense layer's parameters on one chip
	paramsMoE    float64 // an MoE layer's non-routed parameters on one chip
	paramsRouted float64 // an MoE layer's routed experts on one chip
	actDense     float64 // bytes a dense layer saves per micro-batch
	actMoE       float64 // bytes an MoE layer saves per micro-batch
	working      float64 // a layer's recomputation working set in backward
}

func newLayerTerms(m model.Spec, g geometry, o Options) layerTerms {
	var lt layerTerms
	hasMoE := m.MoE != nil && m.MoELayers() > 0
	lt.paramsDense, _ = layerParams(m, g, false)
	lt.actDense = layerActivationBytes(m, g, o, false, g.recompute)
	if hasMoE {
		lt.paramsMoE, lt.paramsRouted = layerParams(m, g, true)
		lt.actMoE = layerActivationBytes(m, g, o, true, g.recompute)
	}
	switch g.recompute {
	case space.RecomputeFull:
		// One layer's full activations are live again (formulas.md §2.2-2.4 [KORT §5]).
		lt.working = layerActivationBytes(m, g, o, false, space.RecomputeNone)
		if hasMoE {
			lt.working = max(lt.working, layerActivationBytes(m, g, o, true, space.RecomputeNone))
		}
	case space.RecomputeSelective:
		// The recomputed attention scores of one layer when no fused kernel is used.
		if o.NoFlashAttention {
			lt.working = layerActivationBytes(m, g, o, false, space.RecomputeNone) - lt.actDense
		}
	}
	return lt
}

// normalized returns m with the defaults of model.Spec.Normalize filled,
// copying the MoE block only when it needs a default (so the caller's
// pointer is never written and normalized models do not allocate).
func normalized(m model.Spec) model.Spec {
	if m.KVHeads == 0 || m.HeadDim == 0 || m.FFNHidden == 0 || m.FFN == "" || m.Norm == "" || m.SeqLen == 0 {
		moe := m.MoE
		m.MoE = nil
		m.Normalize()
		m.MoE = moe
	}
	if m.MoE != nil && (m.MoE.CapacityFactor == 0 || m.MoE.SharedFFNHidden == 0) {
		e := *m.MoE
		if e.CapacityFactor == 0 {
			e.CapacityFactor = 1
		}
		if e.SharedFFNHidden == 0 {
			e.SharedFFNHidden = e.ExpertFFNHidden
		}
		m.MoE = &e
	}
	return m
}

// geometry is the strategy's degrees as floats, resolved once per Estimate.
type geometry struct {
	t    float64 // tensor-parallel degree
	tSP  float64 // t with sequence parallelism, else 1: divides the norm/dropout tensors
	tKV  float64 // min(t, kv heads): K/V heads are replicated when t exceeds them [MEG-TP]
	cp   float64 // context-parallel degree: divides s
	pp   int     // pipeline stages
	dp   float64 // pure data-parallel replicas
	fsdp float64 // fully sharded degree
	zero int     // ZeRO stage across dp

	expertShard float64 // routed experts: ep
	expertFSDP  float64 // part of fsdp not taken by ep: fsdp/gcd(fsdp, ep)
	expertDP    float64 // remaining expert-data-parallel replicas: dp*fsdp/ep/expertFSDP

	seq             float64 // tokens per sequence
	mb              float64 // sequences per micro-batch
	numMicrobatches int     // batch/(dp*fsdp*mb), at least 1
	layersPerStage  int     // ceil(layers/pp)
	recompute       string
}

func deg(x int) int {
	if x < 1 {
		return 1
	}
	return x
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func newGeometry(m model.Spec, w space.Workload, s space.Strategy) geometry {
	t, dp, fsdp, ep := deg(s.TP), deg(s.DP), deg(s.FSDP), deg(s.EP)
	if m.MoE == nil {
		ep = 1
	}
	g := geometry{
		t:    float64(t),
		tSP:  1,
		tKV:  float64(min(t, max(m.KVHeads, 1))),
		cp:   float64(deg(s.CP)),
		pp:   deg(s.PP),
		dp:   float64(dp),
		fsdp: float64(fsdp),
		zero: s.Zero,
		seq:  float64(w.SeqLen),
		mb:   float64(deg(s.MB)),
	}
	if s.SP && t > 1 {
		g.tSP = g.t
	}
	if w.SeqLen <= 0 {
		g.seq = float64(m.SeqLen)
	}
	// EP is carved out of the data-parallel chips, FSDP first (torchtitan's
	// dp_shard borrowing); the experts' data-parallel group is dp*fsdp/ep [MEG-MOE].
	efsdp := fsdp / gcd(fsdp, ep)
	g.expertShard = float64(ep)
	g.expertFSDP = float64(efsdp)
	g.expertDP = max(1, float64(dp*fsdp)/float64(ep*efsdp))
	// num_microbatches = batch/(dp*fsdp*mb) (contract.md, strategy keys).
	g.numMicrobatches = max(1, w.Batch/(dp*fsdp*deg(s.MB)))
	g.layersPerStage = (m.Layers + g.pp - 1) / g.pp
	g.recompute = s.Recompute
	return g
}
