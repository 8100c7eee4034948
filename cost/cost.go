package cost

// Options select cost-model variants beyond the cluster's coefficients.
// The zero value is the default model.
type Options struct {
	// Trace records the op-by-op program (Estimate.Ops) for `plan explain`.
	// Search leaves it off to stay fast.
	Trace bool
	// CollectiveMatmul overlaps tensor/sequence-parallel collectives with the
	// adjacent matmuls (collective matmul, [SB-JAX]); off by default.
	CollectiveMatmul bool
	// PerExpertGEMMs runs a grouped expert matmul as one GEMM per local
	// expert, each paying the matmul's per-call tail t₀ (Megatron-Core's
	// TEGroupedMLP over Transformer Engine's GroupedLinear); off, it is one
	// grouped kernel with one tail (torch._grouped_mm, MaxText's megablox).
	PerExpertGEMMs bool
	// SkipCollectives leaves Estimate.Collectives nil (unless Trace is set),
	// so that search evaluates without allocating.
	SkipCollectives bool
	// Comm is the framework's communication behaviour; the zero value is
	// the chip's overlap fraction everywhere and hierarchical collectives.
	Comm Comm
}

// Comm is how a framework runs and overlaps its collectives
// (docs/formulas.md §6).
type Comm struct {
	// WeightOverlap and GradOverlap, when set, replace the chip's
	// OverlapFraction for the per micro-batch weight gathers and gradient
	// reductions of FSDP and ZeRO-3 (0: synchronous, as DeepSpeed's ZeRO-3
	// of 2021 fetched parameters) and for the once-per-step gradient
	// reduction and parameter gather of data parallelism and ZeRO-1/2.
	WeightOverlap, GradOverlap *float64
	// Flat runs every collective as one ring over all its chips, paying
	// one network latency per chip, (n-1)·α, instead of a ring per mesh
	// level (NCCL's flat ring over nodes, as DeepSpeed ran it in 2021).
	Flat bool
	// PerTensor gathers and reduces every parameter tensor of a block on
	// its own (biases and norms included), paying a collective's latency
	// per tensor (DeepSpeed ZeRO-3's per-parameter fetch); otherwise the
	// small tensors ride in their block's buckets.
	PerTensor bool
	// TPPlan runs tensor parallelism as a fixed per-module plan (PyTorch
	// DTensor's ColwiseParallel, RowwiseParallel and PrepareModuleInput, as
	// torchtitan applies them: pytorch/torchtitan@820504e20d1149fbf0b98c567af24c4b0433b22d
	// torchtitan/models/llama3/parallelize_llama.py:178-203): a weight
	// sharded over tp keeps its shard (no einsum gathers a weight over
	// tp; the activations are gathered or reduce-scattered instead), and
	// the backward's tp and cp collectives run where autograd reaches
	// them, each waited on by the op that reads it, so none hides under
	// the sibling GEMM as Megatron's dX/dW overlap does (async TP, which
	// would hide them, is off by default: enable_async_tensor_parallel,
	// torchtitan/config_manager.py:301 @820504e).
	TPPlan bool
	// ChunkSync synchronises each model chunk of the interleaved schedule
	// on its own: its gradient reduction once its last micro-batch's
	// backward pass is done, its parameter gather before its first forward
	// pass (Megatron-Core's grad_sync_func and param_sync_func per model
	// chunk, NVIDIA/Megatron-LM@d98e8a64
	// megatron/core/pipeline_parallel/schedules.py:1219-1221, 1341-1353,
	// 1445-1455; syncLoads). Otherwise the data-parallel collectives of a
	// step hide under its last backward and first forward pass only.
	ChunkSync bool
	// GraphedStep says the step runs as one captured CUDA graph
	// (Megatron-Core's cuda_graph_impl "full_iteration"): the host neither
	// launches nor synchronises the kernels of its passes, so the EP
	// overlap hides its all-to-all within one NVLink domain too
	// (evaluator.epOverlapHides).
	GraphedStep bool
	// GraphedLayers says each layer's attention, router and dispatch
	// preprocessing run as captured CUDA graphs while the routed experts
	// stay eager (Megatron-Core's --cuda-graph-impl transformer_engine
	// --cuda-graph-scope attn moe_router moe_preprocess): the host, no
	// longer launching those kernels one by one, keeps ahead of the GPU,
	// and every GEMM call pays the tail of a call launched back to back
	// (streamTail) rather than a single call's t₀, as under GraphedStep.
	GraphedLayers bool
	// CPAllGather runs context parallelism's attention as PyTorch's
	// templated ring attention does under torch.compile (torchtitan's
	// context_parallel): each pass all-gathers the keys and values of the
	// other cp shards (rotate method "allgather", the default of
	// torch/distributed/tensor/experimental/_attention.py and of
	// torchtitan@9dec370 torchtitan/config_manager.py:365-377), traced
	// with its wait where it is issued (torch.compile's functional
	// collectives; inductor's compute-communication reordering is off by
	// default), so none hides under the attention blocks, and the
	// backward returns the key and value gradients over cp in fp32 (the
	// ring backward's fp32 accumulators, convert_to_f32). Otherwise the
	// ring's exchanges hide under its blocks (OverlapFraction) in the
	// activations' precision.
	CPAllGather bool
	// CPRepeatedKV says the model repeats a grouped-query attention's key
	// and value heads to the query heads before the attention kernel, so
	// context parallelism moves Heads/KVHeads times the keys' and values'
	// bytes (torchtitan's Llama repeat_kv before SDPA,
	// torchtitan@9dec370 torchtitan/models/llama/model.py:200-209, until
	// ff0829c10 of 2026-01-27 passed enable_gqa instead).
	CPRepeatedKV bool
	// GatherCopyOut says that each FSDP all-gather lands in one flat
	// buffer that the compute stream then copies into the unsharded
	// parameters before the unit runs, reading the buffer and writing the
	// parameters (PyTorch FSDP2's foreach_all_gather_copy_out, a
	// split_with_sizes_copy on the current stream after it waits on the
	// all-gather's event: pytorch/pytorch@8fc2039d
	// torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py). It runs
	// for every gather: the forward's and, with the unit resharded after
	// the forward, the backward's of every micro-batch, or once a step
	// where the pipeline keeps a stage gathered
	// (model.Precision.PipelineUnsharded). FSDP1's flat parameter and
	// DeepSpeed's partitioned parameters gather into the tensors the
	// layers read, and XLA gathers each weight at its use: none copies.
	GatherCopyOut bool
}

// Collective is one kind of communication of a step, aggregated over its calls.
type Collective struct {
	// Op is AllGather, ReduceScatter, AllReduce, AllToAll or SendRecv.
	Op string `json:"op"`
	// Axes are the cluster mesh axes the collective runs over.
	Axes []string `json:"axes"`
	// Bytes is the full (unsharded over Axes) array size of one call, in bytes.
	Bytes float64 `json:"bytes"`
	// Count is the number of calls per step on one chip.
	Count int `json:"count"`
	// Seconds is the time of all Count calls.
	Seconds float64 `json:"time_s"`
	// Overlapped says the time hides under compute (up to the overlap fraction).
	Overlapped bool `json:"overlapped"`
	// Why names the op and the sharding rule that causes it.
	Why string `json:"why"`
	// Kind says when in the step the collective runs (KindActivation,
	// KindMoE, KindWeights, KindStep, KindPipeline), for a timeline.
	Kind string `json:"-"`
	// Pass is the pass of a per micro-batch collective ("fwd",
	// "recompute" or "bwd", as Op.Pass; the first pass it was found in),
	// "" for the others.
	Pass string `json:"-"`
}

// The kinds of a collective (Collective.Kind).
const (
	// KindActivation: a tp, sp or cp collective on a pass's critical path.
	KindActivation = "activation"
	// KindMoE: the MoE dispatch or combine (expert parallelism's AllToAll).
	KindMoE = "moe"
	// KindWeights: a per micro-batch weight gather or gradient reduction
	// (FSDP, ZeRO-2/3), prefetched under compute.
	KindWeights = "weights"
	// KindStep: a once-per-step gradient reduction or parameter gather.
	KindStep = "step"
	// KindPipeline: the pipeline's sends and receives.
	KindPipeline = "pipeline"
)

// Op is one einsum (or elementwise op) of the traced program, for explain.
type Op struct {
	// Pass is "fwd", "bwd" or "recompute".
	Pass string
	// Block names the block the op belongs to and the layers that run it,
	// e.g. "attention (sliding, 128 tokens): 12 of 24 layers".
	Block string
	// Text is the op in sharding notation followed by each collective it
	// causes, e.g. "x[B_{dp}, D] · W[D, F_{tp}] -> y[B_{dp}, F_{tp}]" or
	// "... -> y[B_{dp}, D]{U_tp}  AllReduce(tp) 50.3 MB 420.0 µs exposed".
	Text string
	// FLOPs is the per-chip FLOPs of one call.
	FLOPs float64
	// Seconds is the per-call compute time.
	Seconds float64
	// Collective is the last collective this op causes (Count 0 means none);
	// Text lists them all.
	Collective Collective
}

// Estimate is the time breakdown of one training step for one strategy.
type Estimate struct {
	// StepSeconds = ComputeSeconds + ExposedCommSeconds + BubbleSeconds.
	StepSeconds float64
	// ComputeSeconds is the busiest pipeline stage's compute over all
	// micro-batches and its optimizer step: MatmulSeconds + AttentionSeconds
	// + ScanSeconds + MemoryBoundSeconds + OptimizerSeconds.
	ComputeSeconds float64
	// MatmulSeconds is the time of the matmuls with weights.
	MatmulSeconds float64
	// MatmulTailSeconds is the part of MatmulSeconds that is the calls'
	// fixed tails, t₀ per GEMM call (profiles.Efficiency; one call per
	// local expert for per-expert GEMMs, Options.PerExpertGEMMs): what the
	// step owes to the number of calls rather than to their FLOPs, an
	// assumption a reviewer can weigh (docs/formulas.md §3.5).
	MatmulTailSeconds float64
	// AttentionSeconds is the time of the attention core's kernels.
	AttentionSeconds float64
	// ScanSeconds is the time of the chunked scans of state-space and
	// linear-attention layers (Mamba-2, Gated DeltaNet); 0 for a model
	// without them.
	ScanSeconds float64
	// MemoryBoundSeconds is the time of the memory-bound passes: norms,
	// rotary embedding, activations, residual adds, the loss, layout copies,
	// the per micro-batch casts of weights and gradients and FSDP2's copies
	// of its gathers into the parameters (Comm.GatherCopyOut).
	MemoryBoundSeconds float64
	// OptimizerSeconds is the optimizer step over the chip's parameter shard.
	OptimizerSeconds float64
	// ExposedCommSeconds is communication not hidden under compute (incl. pipeline sends).
	ExposedCommSeconds float64
	// ExposedA2ASeconds is the part of ExposedCommSeconds that is the MoE
	// dispatch and combine: all of it, less what a schedule that overlaps
	// them (DualPipe, space.OverlapExpertA2A) hides.
	ExposedA2ASeconds float64
	// CollectiveSMSeconds is the part of ExposedCommSeconds that is the
	// compute's loss of the SMs NCCL's kernels hold while the weight
	// traffic, the gradient reduction, the parameter gather and the
	// pipeline sends run beside it (collectiveSMShare of their hidden
	// seconds; the MoE all-to-all's is in its own overlap).
	CollectiveSMSeconds float64
	// ExposedOffloadSeconds is the part of ExposedCommSeconds that is host
	// offload's copies over the host link (offloaded activations, and the
	// parameters and gradients of a parameter offload) that their pass's
	// compute does not hide.
	ExposedOffloadSeconds float64
	// BubbleSeconds is pipeline idle time.
	BubbleSeconds float64
	// ModelFLOPs is the step's model FLOPs (contract MFU numerator).
	ModelFLOPs float64
	// HardwareFLOPs adds recomputed FLOPs.
	HardwareFLOPs float64
	// Collectives lists every kind of communication of the step.
	Collectives []Collective
	// Ops is the traced program when Options.Trace is set.
	Ops []Op
	// Passes splits the step into the busiest rank's passes and exposed
	// parts when Options.Trace is set (nil otherwise), for package timeline.
	Passes *Passes
}
