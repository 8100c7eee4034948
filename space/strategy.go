package space

import "github.com/meshplan/meshplan/model"

// Recompute policies accepted in Strategy.Recompute (model.Policies has
// their rules).
const (
	RecomputeNone      = model.RecomputeNone
	RecomputeSelective = model.RecomputeSelective
	RecomputeFull      = model.RecomputeFull
)

// Share is the part of one cluster mesh axis that a parallel dimension
// occupies: the whole axis when Size equals the axis size, or a factor of it.
type Share struct {
	// Axis is the cluster axis name (profiles.Axis.Name).
	Axis string
	// Size is the number of chips of that axis the dimension spans. Parse
	// leaves it 0 for a share written without "*k" (the whole axis, size
	// not yet known); Place, Decode and Resolve resolve it against the
	// cluster.
	Size int
}

// Degrees are the degrees of the parallel dimensions, indexed by Dim.
type Degrees [NumDims]int

// Strategy is one parallel layout: the contract's strategy string as a value.
// Degrees are at least 1; Parse and Defaults fill omitted keys.
type Strategy struct {
	// Degree is the degree of each parallel dimension (dp, fsdp, tp, cp,
	// pp, ep), indexed by Dim.
	Degree Degrees
	// Zero is the ZeRO stage 0, 1 or 2 applied across DP.
	Zero int
	// SP is Megatron sequence parallelism inside the TP group.
	SP bool
	// MB is the micro-batch size in sequences per data-parallel replica.
	MB int
	// ETP is the expert-tensor parallel degree (the etp key; 0 is the
	// contract's default, 1): 1 keeps each expert's matrices whole on every
	// tp chip, which runs its own tokens' slots under sequence parallelism
	// and all of them without (ExpertsWhole); tp splits them over the tp
	// chips like the dense layers (Megatron-Core's default). Validate
	// refuses other values.
	ETP int
	// Schedule is the pipeline schedule.
	Schedule Schedule
	// V is the number of virtual stages per pipeline rank (interleaved only).
	V int
	// Split is how the pipeline spreads the decoder layers over its ranks
	// (the first and last keys); the zero Split is the default rule of
	// StageLayers.
	Split Split
	// Recompute is the activation recomputation policy: RecomputeNone,
	// RecomputeSelective or RecomputeFull.
	Recompute string
	// Precision is the matmul precision: PrecisionBF16 (also for ""),
	// PrecisionFP8, the framework's FP8 recipe (model.FP8Recipe), or
	// PrecisionInt8, the same 8-bit projections at the chip's int8 rate
	// (MaxText's AQT).
	Precision string
	// Weights is the dtype of the parameters the optimizer keeps:
	// WeightsFP32 (also for ""), an fp32 copy of every weight with fp32
	// gradients and Adam moments (mixed precision), WeightsBF16Moments,
	// the same with the two Adam moments in bf16 (DeepSeek-V3's
	// low-precision optimizer states, Megatron-Core's precision-aware
	// optimizer), or WeightsBF16, bf16 parameters, gradients and moments
	// with no fp32 copy (MaxText's weight_dtype: bfloat16).
	Weights string
	// A2AOverlap says the MoE dispatch and combine of one micro-batch run
	// under another micro-batch's compute in the 1F1B steady state
	// (Megatron-Core's --overlap-moe-expert-parallel-comm with
	// --delay-wgrad-compute); DualPipe's schedules do it by themselves.
	A2AOverlap bool
	// Dispatcher is the MoE token dispatcher: "" the planner's default
	// (node-limited dispatch for group-limited routing, the plain
	// AllToAll otherwise), DispatcherAllToAll, DispatcherDeepEP or
	// DispatcherHybridEP (Megatron-Core's --moe-token-dispatcher-type and
	// --moe-flex-dispatcher-backend).
	Dispatcher string
	// Offload is what the chips keep in host memory: "" (OffloadNone),
	// OffloadOptimizer or OffloadParamsOptimizer.
	Offload string
	// OffloadFraction is the share of the optimizer state in host memory
	// under OffloadOptimizer (Megatron-Core's --optimizer-offload-fraction);
	// 0 is the default, all of it.
	OffloadFraction float64
	// ActOffload is the number of transformer layers, the first ones,
	// whose saved activations live in host memory between their forward
	// and backward passes (Megatron-Core's --cpu-offloading-num-layers,
	// through Transformer Engine's CPU offload); 0 keeps them all in HBM.
	ActOffload int
	// Mesh lists, per dimension, the axis shares it occupies, innermost first.
	// An empty Mesh means "not placed yet": Place fills it with the default placement.
	Mesh [NumDims][]Share
}

// Workload is what one training step processes.
type Workload struct {
	// Batch is the global batch in sequences per step.
	Batch int
	// SeqLen is the sequence length in tokens.
	SeqLen int
}

// Tokens returns the tokens per step.
func (w Workload) Tokens() int { return w.Batch * w.SeqLen }

// Defaults returns the strategy with every key at its contract default: all
// degrees 1, zero 0, sp false, mb 1, schedule 1f1b, v 1, recompute none and
// an empty (unplaced) mesh, bf16 matmuls.
func Defaults() Strategy {
	var d Degrees
	for i := range d {
		d[i] = 1
	}
	return Strategy{Degree: d, MB: 1, Schedule: OneFOneB, V: 1, Recompute: RecomputeNone, Precision: PrecisionBF16}
}

// ExpertTP is the expert-tensor parallel degree s runs: ETP, or 1 when ETP
// is 0.
func (s *Strategy) ExpertTP() int { return max(s.ETP, 1) }

// ExpertsWhole reports whether s keeps each expert's matrices whole on
// every tensor-parallel chip: etp=1 with tp > 1.
func (s Strategy) ExpertsWhole() bool { return s.ETP <= 1 && s.Degree[TP] > 1 }

// Matmul precisions accepted in Strategy.Precision.
const (
	PrecisionBF16 = "bf16"
	PrecisionFP8  = "fp8"
	PrecisionInt8 = "int8"
)

// Weight dtypes accepted in Strategy.Weights.
const (
	WeightsFP32        = "fp32"
	WeightsBF16        = "bf16"
	WeightsBF16Moments = "bf16-moments"
)

// weightsNames lists the weight dtypes for messages.
func weightsNames() []string {
	return []string{WeightsFP32, WeightsBF16Moments, WeightsBF16}
}

// BF16Moments reports whether s keeps fp32 master weights and gradients
// with Adam's two moments in bf16 (Strategy.Weights).
func (s Strategy) BF16Moments() bool { return s.Weights == WeightsBF16Moments }

// BF16Weights reports whether s keeps its parameters, gradients and Adam
// moments in bf16, without an fp32 copy (Strategy.Weights).
func (s Strategy) BF16Weights() bool { return s.Weights == WeightsBF16 }

// FP8 reports whether s runs its projections in fp8.
func (s Strategy) FP8() bool { return s.Precision == PrecisionFP8 }

// Int8 reports whether s runs its projections in int8 (AQT).
func (s Strategy) Int8() bool { return s.Precision == PrecisionInt8 }

// EightBit reports whether s runs its projections on 8-bit copies of their
// operands, in fp8 or in int8: the same layer program, at the chip's fp8 or
// int8 rate.
func (s Strategy) EightBit() bool { return s.FP8() || s.Int8() }

// With returns s with the degrees of the given dimensions set, for
// building strategies in code: space.Defaults().With(space.TP, 8, space.PP, 4).
// Arguments come in (Dim, degree) pairs; a trailing Dim without a degree
// is ignored.
func (s Strategy) With(pairs ...any) Strategy {
	for i := 0; i+1 < len(pairs); i += 2 {
		d, ok1 := pairs[i].(Dim)
		n, ok2 := pairs[i+1].(int)
		if ok1 && ok2 && d >= 0 && d < NumDims {
			s.Degree[d] = n
		}
	}
	return s
}

// Chips returns the product of the degrees of the dimensions with chips of
// their own (dp*fsdp*tp*cp*pp), the number of chips the strategy occupies
// (saturating at the largest int instead of overflowing).
func (s Strategy) Chips() int {
	n := 1
	for _, d := range ownDims() {
		n = mulSat(n, s.Degree[d])
	}
	return n
}

// Replicas returns dp*fsdp, the number of data-parallel replicas the global
// batch is split over.
func (s Strategy) Replicas() int { return mulSat(s.Degree[DP], s.Degree[FSDP]) }

// NumMicrobatches returns batch/(dp*fsdp*mb), the micro-batches each
// data-parallel replica processes per step (gradient accumulation steps when
// pp is 1), or 0 when the numbers do not divide (Validate says why).
func (s Strategy) NumMicrobatches(w Workload) int {
	r := mulSat(s.Replicas(), s.MB)
	if r <= 0 || w.Batch <= 0 || w.Batch%r != 0 {
		return 0
	}
	return w.Batch / r
}

// VirtualStages returns the virtual stages per pipeline rank the schedule
// runs: V for a schedule that interleaves chunks, its fixed chunks for a
// V-shaped one (2), else 1.
func (s Strategy) VirtualStages() int { return s.Schedule.Rules().VirtualStages(s.V) }

// LoopChunks returns the chunks per rank s's schedule runs in a loop, each
// rank holding every pp-th run of layers (Split.VisitChunks): its virtual
// stages under the interleaved schedule, 1 for one chunk per rank and for
// a V-shaped or mirrored placement (pairs of stages, space.Placement).
func (s Strategy) LoopChunks() int {
	if s.Schedule == Interleaved { // the one schedule of virtual stages in a linear placement (Rules)
		return max(s.V, 1)
	}
	return 1
}

// VirtualStages returns the virtual stages per rank a schedule of these
// rules runs with v asked for: v when it takes virtual stages, its fixed
// chunks per rank (2 for ZB-V and DualPipeV), else 1.
func (r Rules) VirtualStages(v int) int {
	if r.Virtual() {
		return max(v, 1)
	}
	return max(r.spec.chunks, 1)
}

// mulSat multiplies two ints, saturating at the largest int; it returns 0
// when either is not positive.
func mulSat(a, b int) int {
	const maxInt = int(^uint(0) >> 1)
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > maxInt/b {
		return maxInt
	}
	return a * b
}
