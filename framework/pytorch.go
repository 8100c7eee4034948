package framework

import (
	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// The PyTorch profiles model the two setups measured on one H100
// (docs/measured-h100.md, train-steps.csv): a Hugging Face Llama with fp32
// parameters under torch.autocast(bfloat16), SDPA attention and fused
// AdamW without gradient clipping, eager (pytorch) and wrapped in
// torch.compile (torchtitan). Bytes are per element of the tensor each pass
// is priced on (model.Pass), with the residual stream in fp32 (4 bytes) and
// activations in bf16 (2), counted op by op from the modules' code
// (docs/frameworks.md has the tables).

// torchtitan is torch.compile'd training with autocast and fp32
// parameters. Inductor fuses each elementwise chain into one kernel:
//
//   - norm: reads the fp32 stream, writes the bf16 normalised input
//     (4+2); backward reads its gradient and the stream and writes the
//     stream's gradient (2+4+4); it keeps 8 bytes per element of its own,
//     two fp32 intermediates (the normalised x and its product with the
//     fp32 weight), fitted: with the loss's 2+2 below, it makes the
//     compiled rows' peak memory grow per token as measured for both models
//     (2.35 MB per token for Llama 3.2 1B, 1.92 MB for the 8-layer Llama 2
//     7B), which a count of the program's tensors alone misses by 24% on
//     the second;
//   - rope: reads and writes bf16 q and k (2+2) both ways;
//   - act: SwiGLU as FusedKernels (3 and 5 bytes per element of gate and up);
//   - residual: reads the bf16 branch and the fp32 stream, writes the fp32
//     sum (2+4+4); backward reads the stream's gradient, adds the branch's
//     and writes the bf16 branch gradient (4+4+2);
//   - loss: reads the bf16 logits for the fp32 log-sum-exp (2+2),
//     backward reads them again and writes their gradient (2+2); it keeps
//     the bf16 logits (2) and its backward a bf16 gradient (2);
//   - lookup: gathers fp32 rows (4+4); backward scatter-adds into the fp32
//     gradient (4+4+4).
//
// The attention runs at AttentionRate of the flash kernel: under
// torch.compile the Hugging Face model passes a materialised causal mask to
// SDPA (the compiled rows' peak memory grows by 2 bytes per token per
// sequence token, a bf16 [B,1,S,S] mask), which rules out the flash
// backend. The compiled rows' step time grows with the score square 3.6
// times as fast as the flash kernel's measured rate (the eager rows' growth
// matches it); the least-squares rate over the 12 compiled rows is 0.35,
// the difference being Inductor fusing more elementwise work than one
// kernel per pass, which these rows cannot separate from the attention. A
// model that calls SDPA with is_causal, as torchtitan's own Llama does,
// runs the flash kernel: set attention_rate: 1 in a YAML profile.
func torchtitan() Profile {
	k := model.FusedKernels()
	k.Passes[model.PassNorm] = model.PassCost{FwdBytes: 6, BwdBytes: 10, SavedBytes: 8}
	k.Passes[model.PassResidual] = model.PassCost{FwdBytes: 10, BwdBytes: 10}
	k.Passes[model.PassLoss] = model.PassCost{FwdBytes: 4, BwdBytes: 4, SavedBytes: 2, TransientBytes: 2}
	k.Passes[model.PassLookup] = model.PassCost{FwdBytes: 8, BwdBytes: 12}
	k.AttentionRate = compiledAttentionRate
	k.SeparateProjections = true
	return Profile{
		Name: "torchtitan",
		Description: "torch.compile'd PyTorch as measured on one H100 (docs/measured-h100.md): fused elementwise kernels, " +
			"autocast over fp32 parameters (bf16 copies per micro-batch, fp32 residual stream, fp32 gradients freed by zero_grad), fused AdamW, " +
			"SDPA with a materialised causal mask at 0.35 of the flash kernel's rate",
		Kernels:   k,
		Precision: fullyShard(model.AutocastPrecision()),
		// Its tensor parallelism is DTensor's per-module plan: the weights
		// keep their column or row shard, the sequence-parallel inputs are
		// all-gathered and the outputs reduce-scattered, in the backward
		// too with nothing hidden under the sibling GEMM (vanilla TP; async
		// TP is off by default) (cost.Comm.TPPlan). Its context
		// parallelism is PyTorch's templated ring attention under
		// torch.compile: the keys and values all-gathered and waited on
		// where traced, their gradients returned in fp32
		// (cost.Comm.CPAllGather; pytorch/torchtitan@9dec370
		// torchtitan/utils.py:171-222, config_manager.py:365-377).
		// Its FSDP is FSDP2 (fully_shard), which copies each all-gather
		// out of its flat buffer into the parameters on the compute
		// stream (cost.Comm.GatherCopyOut).
		Comm: cost.Comm{TPPlan: true, CPAllGather: true, GatherCopyOut: true},
		// torchtitan shards optimizer state through FSDP2 only and runs
		// tensor parallelism with sequence parallelism (--emit torchtitan's
		// rules); its activation checkpointing is selective (op) or full.
		// Its pipelines are torch.distributed.pipelining's schedules
		// (pipeline_parallel_schedule): 1F1B, GPipe and Interleaved1F1B,
		// and the V-shaped ZBVZeroBubble and DualPipeV; its multi-stage
		// schedules need two or more stages per rank, so the zero-bubble
		// InterleavedZeroBubble cannot run ZB-H1's one, and it has no
		// two-direction DualPipe [PT-SCHED][TT-PP].
		//
		// Its rules at v0.2.2, the last release that reads TOML
		// (pytorch/torchtitan@73a0e6979dd10b6b1904098eb3c8f62c18ab87ce):
		// CUDA/ROCm only; ranks ordered pp, dp_replicate, dp_shard, cp, tp
		// from the outermost (torchtitan/distributed/parallel_dims.py:140-160);
		// experts spread over dp_shard x cp (x tp when etp=1), the efsdp
		// mesh, laid etp, ep, efsdp from the innermost; DDP only one-dimensional (models/llama3/infra/parallelize.py:151);
		// any split of the layers over the stages (its default counts the
		// embedding and the output layer as a layer each and spreads the
		// rest as evenly as the planner's default split,
		// torchtitan/distributed/pipeline_parallel.py:236-340, and
		// module_fqns_per_model_part names each stage's modules, which
		// --emit torchtitan writes when the stages differ); per-op selective AC saves every other
		// matmul's output and the attention output and recomputes the rest
		// (parallelize.py:36-51), the opposite of the planner's selective,
		// which is not offered: it is its own policy (selective_op).
		// FSDP2's CPUOffloadPolicy (training.enable_cpu_offload):
		// parameters, gradients and the optimizer step on the host together.
		// Its MoE dispatch is the plain all-to-all or DeepEP
		// (parallelism.expert_parallel_comm_backend "standard" or "deepep",
		// torchtitan/config/job_config.py:474 at the commit above).
		Limits: space.Limits{Framework: "torchtitan", NoA2AOverlap: true, Dispatchers: []string{space.DispatcherAllToAll, space.DispatcherDeepEP}, Offloads: []string{space.OffloadParamsOptimizer}, Zeros: []int{0}, RequireSP: true, NoInt8: true,
			Schedules:  []space.Schedule{space.OneFOneB, space.GPipe, space.Interleaved, space.ZBV, space.DualPipeV},
			Recomputes: []string{model.RecomputeNone, model.RecomputeSelectiveOp, model.RecomputeFull},
			GPUOnly:    true, Instead: "--framework maxtext (or --emit maxtext)",
			RankOrder:      []space.Dim{space.TP, space.CP, space.FSDP, space.DP, space.PP},
			ExpertOrder:    []space.Dim{space.TP, space.CP, space.FSDP},
			ReplicateAlone: true, ExpertsFromShard: true,
			// Its FSDP mesh is dp_shard x cp: "we always assume that when cp
			// is used, FSDP is also applied" (parallel_dims.py:82-84, 137,
			// 151-152), so a cp row shards the weights over fsdp x cp.
			WeightsOverCP: true},
		Sharded: fullyShardVariant(k),
		Release: Release{Name: "v0.2.2, the last release that reads TOML", Repo: "pytorch/torchtitan", Commit: "73a0e6979dd10b6b1904098eb3c8f62c18ab87ce"},
		// torchao's float8 training with dynamic tensorwise scaling
		// (torchtitan's float8 converter).
		FP8: recipe(model.FP8Torchao),
	}
}

// fullyShardVariant is torchtitan under FSDP2 (fsdp or cp above 1): its
// maybe_enable_amp hands mixed precision to fully_shard there
// (MixedPrecisionPolicy param_dtype bf16, reduce_dtype fp32) and uses
// torch.autocast only on one device or under plain data parallelism. The
// layers then run on bf16 parameters all-gathered per unit (WeightCopies),
// so the residual stream, the norms and the embedding are bf16 and the
// elementwise passes move FusedKernels' bytes; each unit's bf16 weight
// gradients are cast to fp32 for the reduce-scatter (GradCast). The loss
// keeps the compiled entry (cross_entropy over logits upcast in a compiled
// region), and torchtitan's own Llama calls SDPA with is_causal, so the
// attention runs the flash kernel at its full rate. compiled is the
// single-device kernel table the loss entry is taken from.
func fullyShardVariant(compiled model.Kernels) *Variant {
	k := model.FusedKernels()
	k.Passes[model.PassLoss] = compiled.Passes[model.PassLoss]
	k.SeparateProjections = compiled.SeparateProjections
	pr := fullyShard(model.AutocastPrecision())
	pr.Residual = pr.Activation
	return &Variant{Kernels: k, Precision: pr}
}

// fullyShard returns pr with torchtitan's FSDP2: under pipeline
// parallelism each stage's weights stay gathered and their gradients
// accumulate unsharded until the last micro-batch
// (model.Precision.PipelineUnsharded), and each unit's gradients are
// reduce-scattered from a copy in the reduce dtype that lives until the
// next unit's reduction (model.Precision.ReduceCopy).
func fullyShard(pr model.Precision) model.Precision {
	pr.PipelineUnsharded, pr.ReduceCopy = true, true
	return pr
}

// compiledAttentionRate is the compiled rows' attention speed relative to
// the flash kernel, fitted (see torchtitan).
const compiledAttentionRate = 0.35

// pytorch is eager PyTorch: Hugging Face modules under autocast with fp32
// parameters, one kernel per operation.
//
//   - norm: LlamaRMSNorm computes x², its mean, x·rsqrt and weight·x in
//     fp32, 28 bytes forward (8+4+8+8), about 52 backward, and keeps the
//     fp32 normalised x (4 bytes) for the weight's gradient;
//   - the q, k and v projections and the gate and up projections are
//     separate modules: each casts the fp32 normalised input to bf16 and
//     keeps its copy (SplitProjections);
//   - rope: q·cos, rotate_half (two slices, a negation, a concatenation),
//     ·sin, the sum in fp32 (cos and sin are fp32) and SDPA's cast back to
//     bf16: 38 bytes forward, about 50 backward; it keeps nothing of its
//     own (cos and sin need no gradient, so the products keep only them);
//   - act: silu (2+2) then the product (2+2+2), 5 bytes per element of
//     gate and up forward, about 10 backward; the product keeps silu(gate)
//     and the down projection its input (2 bytes per element of gate and
//     up beyond the program's);
//   - residual: the fp32 sum of a bf16 branch (2+4+4) both ways;
//   - loss: logits.float() (2+4), log-softmax (4+4+4), the gather; backward
//     the zero-filled gradient, the log-softmax backward (4+4+4) and the
//     cast to bf16 (4+2): about 18 bytes forward and 26 backward; it keeps
//     the fp32 log-softmax output and the model output the bf16 logits
//     (4+2), and its backward holds two fp32 gradients (8): 14 bytes per
//     logit at the loss, as the eager full-recompute rows' peak grows
//     (docs/frameworks.md);
//   - lookup: as torchtitan's;
//   - softcap (Gemma 2's logits): the division, tanh and product as three
//     bf16 kernels (2+2 each), 12 bytes per logit forward and 14 backward
//     (tanh's backward reads its output), keeping tanh's output (2).
func pytorch() Profile {
	k := model.FusedKernels()
	k.Passes[model.PassNorm] = model.PassCost{FwdBytes: 28, BwdBytes: 52, SavedBytes: 4}
	k.Passes[model.PassRope] = model.PassCost{FwdBytes: 38, BwdBytes: 50}
	k.Passes[model.PassAct] = model.PassCost{FwdBytes: 5, BwdBytes: 10, SavedBytes: 2}
	k.Passes[model.PassResidual] = model.PassCost{FwdBytes: 10, BwdBytes: 10}
	k.Passes[model.PassLoss] = model.PassCost{FwdBytes: 18, BwdBytes: 26, SavedBytes: 6, TransientBytes: 8}
	k.Passes[model.PassLookup] = model.PassCost{FwdBytes: 8, BwdBytes: 12}
	k.Passes[model.PassSoftcap] = model.PassCost{FwdBytes: 12, BwdBytes: 14, SavedBytes: 2}
	k.SplitProjections = true
	return Profile{
		Name: "pytorch",
		Description: "eager PyTorch as the Hugging Face Trainer and hand-written loops run it, measured on one H100 (docs/measured-h100.md): " +
			"one kernel per operation, separate q/k/v and gate/up projections, autocast over fp32 parameters (bf16 ones under FSDP's MixedPrecision), SDPA's flash kernel, fused AdamW",
		Kernels:   k,
		Precision: eagerPrecision(),
		// The eager rows reserve a median 6.7% above their peak allocation
		// (0.1 to 20%, docs/measured-h100.md).
		AllocatorSlackFraction: 0.07,
		// The Hugging Face Trainer and hand-written loops replicate (DDP)
		// or shard (FSDP) the model and checkpoint whole layers.
		// FSDP's CPUOffload(offload_params=True): parameters, gradients and
		// the optimizer step on the host together.
		Limits: space.Limits{Framework: "pytorch", NoA2AOverlap: true, Dispatchers: []string{space.DispatcherAllToAll}, Offloads: []string{space.OffloadParamsOptimizer}, NoDims: []space.Dim{space.TP, space.CP, space.PP, space.EP}, Zeros: []int{0}, NoInt8: true,
			Recomputes: []string{model.RecomputeNone, model.RecomputeFull}},
		Sharded: eagerShardedVariant(k),
	}
}

// eagerShardedVariant is eager PyTorch under FSDP (fsdp above 1) with
// FSDP's MixedPrecision(param_dtype=bfloat16), as PyTorch FSDP recipes run
// it: Composer's DEFAULT and PURE policies (param_dtype the autocast
// precision, reduce_dtype fp32 or bf16; mosaicml/composer@640518880
// composer/distributed/mosaic_parallelism.py:59-98, which LLM Foundry's
// MPT runs use), pytorch/examples' and llama-recipes' bfSixteen. The layers
// run on the bf16 weights each unit all-gathers, so the embedding's output,
// and with it the residual stream, is bf16 (2 bytes), as torchtitan's
// fully_shard variant has it; the elementwise passes keep the eager
// kernels' bytes.
func eagerShardedVariant(k model.Kernels) *Variant {
	pr := eagerPrecision()
	pr.Residual = pr.Activation
	return &Variant{Kernels: k, Precision: pr}
}

// eagerPrecision is autocast's precision with PyTorch DDP's buckets: the
// Hugging Face Trainer and hand-written loops wrap the model in
// DistributedDataParallel with its default gradient_as_bucket_view=False,
// which keeps a copy of every gradient in the all-reduce buckets
// (model.Precision.BucketCopy).
func eagerPrecision() model.Precision {
	pr := model.AutocastPrecision()
	pr.BucketCopy = true
	return pr
}
