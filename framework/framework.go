package framework

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"

	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/memory"
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/search"
	"github.com/meshplan/meshplan/space"
)

// Profile is one training framework as the planner models it: how its
// kernels run the layer program's memory-bound passes and attention core,
// how it lays out and updates the model states, and what its allocator
// loses. Every field is data; a YAML file (Parse) may set any of them.
type Profile struct {
	// Name is the profile's name ("generic", "megatron", ... or the file's).
	Name string `json:"name" yaml:"name"`
	// Description says what the profile models and where its figures come from.
	Description string `json:"description" yaml:"description"`
	// Kernels are the elementwise passes' bytes and the attention kernel.
	Kernels model.Kernels `json:"-" yaml:"-"`
	// Precision is the element sizes and the layout of the model states.
	Precision model.Precision `json:"precision" yaml:"precision"`
	// Optimizer is the optimizer step's extra passes.
	Optimizer model.Optimizer `json:"optimizer" yaml:"optimizer"`
	// AllocatorSlackFraction, when positive, replaces the chip's allocator
	// slack (profiles.Chip.AllocatorSlackFraction).
	AllocatorSlackFraction float64 `json:"allocator_slack_fraction,omitempty" yaml:"allocator_slack_fraction"`
	// Comm is how the framework runs and overlaps its collectives.
	Comm cost.Comm `json:"-" yaml:"-"`
	// TensorParallelOverlap hides tensor- and context-parallel collectives
	// under the adjacent matmuls (collective matmul, async TP).
	TensorParallelOverlap bool `json:"tensor_parallel_overlap,omitempty" yaml:"tensor_parallel_overlap"`
	// PerExpertGEMMs runs a grouped expert matmul as one GEMM per local
	// expert (cost.Options.PerExpertGEMMs).
	PerExpertGEMMs bool `json:"per_expert_gemms,omitempty" yaml:"-"`
	// Limits are the strategies the framework can express: its dimensions,
	// schedules, recompute policies by its own names and ZeRO stages.
	Limits space.Limits `json:"-" yaml:"-"`
	// FP8 is the recipe of its fp8 matmuls (precision=fp8); nil when it has
	// none, which Limits.NoFP8 says to the search.
	FP8 *model.FP8Recipe `json:"fp8,omitempty" yaml:"-"`
	// Release is the release of the framework whose rules Limits hold and
	// whose flags or keys --emit writes; zero for a profile without an
	// emitter.
	Release Release `json:"-" yaml:"-"`
	// Sharded, when not nil, replaces Kernels and Precision for the
	// strategies that shard the weights over fsdp or the sequence over cp
	// (torchtitan: FSDP2's mixed precision with bf16 parameters there,
	// torch.autocast over fp32 parameters elsewhere).
	Sharded *Variant `json:"sharded,omitempty" yaml:"-"`
}

// Release names one release of a framework by the commit its rules were
// read from.
type Release struct {
	// Name is the release as people name it (a tag, a version, or the
	// branch and date of a commit).
	Name string
	// Repo is the GitHub repository, owner/name.
	Repo string
	// Commit is the full commit the rules were read from.
	Commit string
}

// String is "owner/name@commit (name)".
func (r Release) String() string {
	return fmt.Sprintf("%s@%s (%s)", r.Repo, r.Commit, r.Name)
}

// Variant is a kernel and precision setup a framework runs under some
// strategies only (Profile.Sharded).
type Variant struct {
	// Kernels are the elementwise passes' bytes and the attention kernel.
	Kernels model.Kernels `json:"-" yaml:"-"`
	// Precision is the element sizes and the layout of the model states.
	Precision model.Precision `json:"precision" yaml:"precision"`
}

// ProgramOptions returns the layer program options of the profile.
func (p Profile) ProgramOptions() model.ProgramOptions {
	return model.ProgramOptions{Kernels: p.Kernels, Precision: p.Precision, Optimizer: p.Optimizer, WeightsOverCP: p.Limits.WeightsOverCP, SavesGathered: p.Comm.TPPlan}
}

// SearchOptions returns the options every evaluation under the profile
// uses: its layer program, memory and cost options.
func (p Profile) SearchOptions() search.Options {
	o := search.Options{
		Program: p.ProgramOptions(),
		Memory:  memory.Options{AllocatorSlackFraction: p.AllocatorSlackFraction},
		Cost:    cost.Options{Comm: p.Comm, CollectiveMatmul: p.TensorParallelOverlap, PerExpertGEMMs: p.PerExpertGEMMs},
		Limits:  p.Limits,
		FP8:     p.FP8,
	}
	o.Limits.NoFP8 = p.FP8 == nil
	o.Limits.FP4 = p.FP8 != nil && p.FP8.FP4
	if p.Sharded != nil {
		o.ShardedProgram = &model.ProgramOptions{Kernels: p.Sharded.Kernels, Precision: p.Sharded.Precision, Optimizer: p.Optimizer, WeightsOverCP: p.Limits.WeightsOverCP, SavesGathered: p.Comm.TPPlan}
	}
	return o
}

// Default is the name of the default profile.
const Default = "generic"

// builtins returns the built-in profiles, built on each call so that no
// caller can change another's.
func builtins() []Profile {
	return []Profile{generic(), megatron(), torchtitan(), pytorch(), maxtext(), deepspeed()}
}

// Names returns the built-in profiles' names.
func Names() []string {
	var out []string
	for _, p := range builtins() {
		out = append(out, p.Name)
	}
	return out
}

// Builtin returns the built-in profile with the given name
// (case-insensitive).
func Builtin(name string) (Profile, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, p := range builtins() {
		if p.Name == n {
			return p, nil
		}
	}
	names := Names()
	slices.SortFunc(names, func(a, b string) int {
		return levenshtein.ComputeDistance(n, a) - levenshtein.ComputeDistance(n, b)
	})
	return Profile{}, fmt.Errorf("framework: unknown framework %q (nearest: %s; known: %s, or a YAML file)", name, names[0], strings.Join(Names(), ", "))
}

// generic is the default: framework-neutral figures for planning at scale.
func generic() Profile {
	return Profile{
		Name: "generic",
		Description: "framework-neutral planning defaults: one fused kernel per elementwise pass, a flash attention kernel, " +
			"Megatron's mixed precision (bf16 weights, persistent fp32 gradients, fp32 master weights and Adam moments in the optimizer state), " +
			"fused AdamW with the gradient-norm pass of clipping",
		Kernels:   model.FusedKernels(),
		Precision: model.MixedPrecision(),
		Optimizer: model.Optimizer{ClipPasses: 1},
		// Adam's moments in bf16 as a pinned choice (weights=bf16-moments):
		// DeepSeek-V3's low-precision optimizer states (arXiv:2412.19437
		// §3.3.2), Megatron-Core's precision-aware optimizer.
		Limits: space.Limits{Framework: "generic", BF16Moments: true},
		FP8:    recipe(model.FP8Delayed),
	}
}

// recipe returns the known FP8 recipe of that name.
func recipe(name string) *model.FP8Recipe {
	r, ok := model.LookupFP8Recipe(name)
	if !ok {
		panic("framework: unknown built-in fp8 recipe " + name)
	}
	return &r
}

// megatron is Megatron-Core with Transformer Engine. It has no FSDP (its
// distributed optimizer is ZeRO-1/2 over data parallelism), runs 1F1B and
// interleaved pipelines, uneven stages and chunks included
// (--decoder-first-pipeline-num-layers and --decoder-last-pipeline-num-layers,
// --pipeline-model-parallel-layout [MEG-UNEVEN]) (mainline Megatron-Core
// has no zero-bubble or DualPipe schedule: NVIDIA/Megatron-LM#1399 asks
// for them, #5254 ported DualPipe unwired and was closed), and recomputes
// selectively (the core attention) or fully (--emit megatron's rules).
func megatron() Profile {
	p := generic()
	p.Name = "megatron"
	p.Description = "Megatron-Core with Transformer Engine: fused norms, activations and cross-entropy, flash attention, " +
		"bf16 parameters with fp32 main gradients (gradient-accumulation fusion) and the distributed optimizer's fp32 master weights and moments, " +
		"clipping's norm pass fused with the optimizer's scaling"
	// Transformer Engine's delayed per-tensor scaling (--fp8-recipe
	// delayed; blockwise in a YAML profile for DeepSeek-V3's recipe) with
	// fp8 primary weights, as Megatron-LM's own FP8 example and
	// Megatron-Bridge's FP8 delayed and current-scaling recipes run it
	// (--fp8-param-gather: Megatron-LM examples/llama/train_llama3_8b_h100_fp8.sh
	// @d98e8a64; Megatron-Bridge mixed_precision.py fp8_param_gather=True).
	p.FP8 = recipe(model.FP8Delayed)
	// Grouped expert matmuls (--moe-grouped-gemm) through Transformer
	// Engine's GroupedLinear: one cuBLAS GEMM per local expert
	// (megatron/core/transformer/moe/experts.py TEGroupedMLP).
	p.PerExpertGEMMs = true
	// The routed experts' SwiGLU weighs its output by the routing
	// probabilities (weighted_bias_swiglu_impl, TE's activation times
	// permuted_probs) and the dispatcher unpermutes without them, so the
	// combine keeps no copy of the experts' outputs
	// (megatron/core/transformer/moe/experts.py:943-970,
	// moe/token_dispatcher.py:346-352, 891-899 @d98e8a64).
	p.Kernels.WeightedExperts = true
	// ALiBi's slopes go to Transformer Engine's DotProductAttention
	// (core_attention_bias_type "alibi"), which cuDNN's fused attention
	// takes as a post-scale bias (NVIDIA/TransformerEngine#608, 2024-01).
	p.Kernels.ALiBiFused = true
	// The interleaved schedule reduces each model chunk's gradients once
	// its last backward pass is done and gathers each chunk's parameters
	// before its first forward pass (cost.Comm.ChunkSync).
	p.Comm.ChunkSync = true
	// The experts' output bias (add_bias_linear with grouped GEMMs):
	// TEGroupedMLP builds linear_fc2 with skip_bias_add and adds the bias
	// after the GEMM in eager PyTorch, per local expert t + b·p with the
	// fp32 routing probability p, then torch.cat and a cast back to bf16
	// (_apply_bias, NVIDIA/Megatron-LM@0d7e02bd26d3eb347ad8d1bef625002babfa6df7
	// (core_v0.15.0) and @d98e8a64 megatron/core/transformer/moe/experts.py).
	// Per element of the bf16 output: forward b·p writes fp32 (4), the add
	// reads t and b·p and writes fp32 (2+4+4), the cat reads and writes it
	// (4+4), the cast reads it and writes bf16 (4+2): 28 bytes; backward the
	// cast's gradient to fp32 (2+4), t's gradient back to bf16 (4+2), the
	// bias's and the probability's gradients each a product and a sum
	// (4+4+4, twice) and split's gradient gathered into one tensor (2+2):
	// 40 bytes. The up-projection's bias rides in the GEMM (skip_bias_add
	// false) and its gradient in cuBLAS's epilogue.
	p.Kernels.Passes[model.PassExpertBias] = model.PassCost{FwdBytes: 28, BwdBytes: 40}
	// YaRN's rotary embedding runs eager: Megatron-Bridge turns
	// apply_rope_fusion off for any position_embedding_type but "rope"
	// (validate_rope_fusion_compatibility, NVIDIA-NeMo/Megatron-Bridge@717c62de
	// (v0.2.0) and @c8101293 (v0.4.2) src/megatron/bridge/utils/fusions.py),
	// so Megatron-Core's _apply_rotary_pos_emb_bshd runs (@0d7e02bd and
	// @d98e8a64 megatron/core/models/common/embeddings/rope_utils.py). Per
	// bf16 element of q and k: forward -x2 over half (1+1 halves: 2),
	// cat(-x2, x1) (2+2), t·cos and rot·sin (2+2 each), their sum (2+2+2),
	// cat(t, t_pass) (2+2): 24 bytes; backward g·cos and g·sin (2+2 each),
	// -g over half (2), chunk's gradient gathered (2+2), the two paths summed
	// (2+2+2), the head slice's zero-filled gradient (2+2+2): 26 bytes.
	p.Kernels.Passes[model.PassRopeYaRN] = model.PassCost{FwdBytes: 24, BwdBytes: 26}
	// The clamp of the experts' gated activation (gpt-oss's
	// activation_func_clamp_value 7.0) runs eager before the compiled
	// activation: weighted_bias_quick_geglu_impl chunks its input, clamps
	// each half and cats them (NVIDIA/Megatron-LM@0d8e0714cd29c01e164fe6de9f532182bdffa942,
	// the core_v0.15.0 branch Megatron-Bridge v0.2.0 pins, and @2edffadb528ea07e261b0c02cdc42a7bb9c3197a,
	// which v0.4.2 pins, megatron/core/fusions/fused_bias_geglu.py:424-432).
	// Per bf16 element of the input: forward each half's clamp reads and
	// writes it (2+2) and the cat reads and writes the whole (2+2): 8
	// bytes; backward each clamp's gradient is where(mask, g, 0) over
	// comparisons written as bool tensors (pytorch/pytorch@002ca6715ba1ab4d2369262b487eeb30bf249911
	// torch/csrc/autograd/FunctionsManual.cpp clamp_backward): the gate's
	// self <= max (2+1) and where (1+2+2), 8 bytes a gate element, the
	// linear half's two comparisons (2+1 each), logical_and_ (1+1+1) and
	// where (5), 14 bytes; the mean over the halves, 11, and chunk's
	// gradient gathered by cat (2+2): 15 bytes. The compiled activation
	// keeps the clamped copy while the clamp keeps its input: 2 bytes
	// kept.
	p.Kernels.Passes[model.PassActClamp] = model.PassCost{FwdBytes: 8, BwdBytes: 15, SavedBytes: 2}
	// The cross-entropy's backward makes the fp32 gradient of the logits in
	// place in the fp32 buffer it saved: the vocabulary-parallel loss saves
	// its softmax and subtracts the targets and scales it in place
	// (NVIDIA/Megatron-LM@d98e8a64 megatron/core/tensor_parallel/
	// cross_entropy.py:83-116, 186-210), and Transformer Engine's fused
	// loss (cross_entropy_fusion_impl "te", Megatron-Bridge's performance
	// recipes) saves the fp32 gradient itself and scales it in place
	// (NVIDIA/TransformerEngine@d0067d0d transformer_engine/pytorch/
	// cross_entropy.py, triton/cross_entropy.py cross_entropy_backward). So
	// the loss's backward adds only the bf16 copy the output layer's
	// backward reads (the fp32 cast's, or autograd's cast to the logits'
	// dtype): 2 bytes a logit, not a second fp32 gradient.
	p.Kernels.Passes[model.PassLoss] = model.PassCost{FwdBytes: 4, BwdBytes: 4, SavedBytes: 4, TransientBytes: 2}
	// Its rules, as read from NVIDIA/Megatron-LM@d98e8a64ddf34856e74b24714e3bedb2f5a39553
	// (results/emit_megatron.go cites each): CUDA only; ranks in the order
	// tp-cp-ep-dp-pp from the innermost (megatron/training/initialize.py:395,
	// megatron/core/parallel_state.py:617); the distributed optimizer shards
	// the optimizer state only and keeps a full-size gradient buffer
	// (megatron/core/distributed/param_and_grad_buffer.py:1190-1192), so
	// ZeRO 0 or 1; no "deepseek" policy: --recompute-modules moe_act touches
	// MoE experts only and needs --moe-grouped-gemm
	// (megatron/core/transformer/transformer_config.py:1964-1967), so a
	// dense SwiGLU output cannot be re-made alone; the expert grid lays
	// etp, ep, edp over the tp, cp, dp ranks (parallel_state.py's
	// expert RankGenerator); fsdp is Megatron-FSDP (--use-megatron-fsdp,
	// optim_grads_params) over the whole data-parallel group
	// (megatron/training/arguments.py:1118-1170).
	p.FP8.Params = true
	// Its optimizers cast a bf16 gradient buffer's shard to fp32 for Adam
	// (model.Precision.MainGradCopy; a no-op with the default fp32 buffer).
	p.Precision.MainGradCopy = true
	// Its distributed optimizer shards over the dp x cp group
	// (model.Precision.ShardOverCP;
	// megatron/core/distributed/distributed_data_parallel.py:148-149, 289 @d98e8a64).
	p.Precision.ShardOverCP = true
	p.Release = Release{Name: "main of 2026-08-22", Repo: "NVIDIA/Megatron-LM", Commit: "d98e8a64ddf34856e74b24714e3bedb2f5a39553"}
	// --use-precision-aware-optimizer --exp-avg-dtype bf16
	// --exp-avg-sq-dtype bf16 (weights=bf16-moments; megatron/training/arguments.py @d98e8a64).
	p.Limits = space.Limits{Framework: p.Name, FSDPAlone: true, NoInt8: true, BF16Moments: true,
		Schedules:  []space.Schedule{space.OneFOneB, space.Interleaved},
		Recomputes: []string{model.RecomputeNone, model.RecomputeSelective, model.RecomputeFull},
		// --recompute-granularity selective --recompute-modules LIST
		// (transformer_config.py:560-563 @d98e8a64).
		RecomputeModules: true,
		// The lists the search tries on a model with experts, those that
		// Megatron-Bridge's MoE performance recipes set, in the planner's
		// module order (model.IsModuleList), each where the model has its
		// modules (space.Limits.SearchedModuleLists):
		// NVIDIA-NeMo/Megatron-Bridge@fd5c4737f6870910e65b65c23da82f73d65af29f
		// (26.04-alpha.rc2) scripts/performance/configs/deepseek/deepseek_workload_base_configs.py:53,65,81,155,243
		// (mla_up_proj; moe_act; mlp; mla_up_proj, mlp; mla_up_proj,
		// layernorm, moe_act), configs/kimi/kimi_workload_base_configs.py:38,89,
		// configs/gpt_oss/gpt_oss_workload_base_configs.py:58 (layernorm,
		// moe_act), configs/nemotronh/nemotron_3_workload_base_configs.py:84,90
		// (moe, layernorm; moe, layernorm, core_attn, moe_act).
		ModuleLists: []string{"mla_up_proj", "moe_act", "mlp", "mlp+mla_up_proj", "layernorm+moe_act+mla_up_proj",
			"layernorm+moe_act", "layernorm+moe", "core_attn+layernorm+moe_act+moe"},
		// The token dispatcher is the recipe's choice too (alltoall, or
		// flex with the deepep or hybridep backend: transformer_config.py:891-898
		// @d98e8a64), but the search leaves it at the plain all-to-all
		// unless a profile file sets search_dispatchers: DeepEP's
		// internode pricing (one copy per destination node) has no
		// measured all-to-all against DeepEP pair behind it, and searched
		// it picks DeepEP for the Qwen3-235B H100 recipes that ran the
		// all-to-all, +42-47% over their published throughput
		// (docs/published-runs-2.md). --fix dispatcher= still poses any.
		SearchDispatchers: false,
		// --optimizer-cpu-offload with --optimizer-offload-fraction; no
		// parameter offload (megatron/core/optimizer/optimizer_config.py:347-350 @d98e8a64).
		Offloads: []string{space.OffloadOptimizer}, OffloadFraction: true,
		// --cpu-offloading-num-layers N: the first N layers' saved
		// activations in host memory through Transformer Engine's CPU
		// offload (megatron/core/transformer/transformer_block.py:303-318,
		// transformer_config.py:1883-1897 @d98e8a64), as Megatron-Bridge's
		// Llama 3 and 3.1 FSDP recipes on GB200, GB300 and B200 set it
		// (cpu_offloading_num_layers, v0.2.0 scripts/performance/configs/
		// llama3/workload_base_configs.py:69-112).
		ActOffload: true,
		Zeros:      []int{0, 1},
		GPUOnly:    true, Instead: "--framework maxtext (or --emit maxtext)",
		// Megatron-FSDP's shard group is the data-parallel group, so fsdp
		// takes dp's place in both orders (FSDPAlone: never both).
		RankOrder:   []space.Dim{space.TP, space.CP, space.FSDP, space.DP, space.PP},
		ExpertOrder: []space.Dim{space.TP, space.CP, space.FSDP, space.DP}}
	return p
}

// deepspeed is DeepSpeed's ZeRO and pipeline engines as the 2021-2022 runs
// of docs/published-runs.md ran them (Narayanan et al.'s ZeRO-3 baseline,
// MT-NLG, BLOOM's Megatron-DeepSpeed): Megatron's fused kernels,
// Megatron's mixed precision, clipping that reads the gradients for their
// norm and scales them in place (three passes), and ZeRO-3 parameters
// fetched synchronously (no prefetch), one collective per parameter tensor,
// over NCCL's flat ring ([ZERO] §7, the stage-3 fetch of DeepSpeed 0.3-0.5;
// docs/frameworks.md). Newer DeepSpeed prefetches and buckets (set
// overlap.weights and per_tensor_collectives in a YAML profile).
func deepspeed() Profile {
	none := 0.0
	return Profile{
		Name: "deepspeed",
		Description: "DeepSpeed ZeRO and pipeline engines as run in 2021-2022: Megatron's fused kernels and mixed precision, " +
			"ZeRO-3 parameters fetched synchronously per parameter tensor over a flat ring, clipping in three passes",
		Kernels:   model.FusedKernels(),
		Precision: model.MixedPrecision(),
		Optimizer: model.Optimizer{ClipPasses: 3},
		Comm:      cost.Comm{WeightOverlap: &none, Flat: true, PerTensor: true},
		Release:   Release{Name: "0.19.6", Repo: "deepspeedai/DeepSpeed", Commit: "edaa7221267243c7be7fb49c5d5f5c4fb97b4641"},
		// A DeepSpeed config (--emit deepspeed) expresses data parallelism
		// and ZeRO stages 0-3; its activation_checkpointing section only
		// configures deepspeed.checkpointing.checkpoint(), which recomputes
		// nothing unless the model code calls it
		// (deepspeedai/DeepSpeed@edaa7221267243c7be7fb49c5d5f5c4fb97b4641:deepspeed/runtime/activation_checkpointing/checkpointing.py:1058, 1162: checkpoint and configure, called by the model code),
		// so a config alone runs no recompute; tensor,
		// pipeline, context and expert parallelism live in the model code
		// (use the megatron profile for Megatron-DeepSpeed layouts).
		// DeepSpeed has no TPU accelerator
		// (deepspeedai/DeepSpeed@edaa7221267243c7be7fb49c5d5f5c4fb97b4641:accelerator/real_accelerator.py:23),
		// and fsdp next to dp becomes MiCS (mics_shard_size), which shards
		// every model state inside the fsdp group and replicates it across
		// groups (runtime/zero/mics.py:391): ZeRO over dp is lost there.
		// ZeRO-Offload (offload_optimizer) and ZeRO-Infinity's parameter
		// offload (offload_param, stage 3), each whole.
		Limits: space.Limits{Framework: "deepspeed", NoA2AOverlap: true, Dispatchers: []string{space.DispatcherAllToAll}, Offloads: []string{space.OffloadOptimizer, space.OffloadParamsOptimizer}, NoDims: []space.Dim{space.TP, space.CP, space.PP, space.EP}, NoInt8: true,
			Recomputes: []string{model.RecomputeNone},
			GPUOnly:    true, Instead: "--framework maxtext (or --emit maxtext)", NoZeroWithFSDP: true},
	}
}

// maxtext is MaxText on JAX/XLA: XLA fuses each elementwise chain into its
// neighbours (FusedKernels), the attention runs the flash-style splash
// kernel, parameters are fp32 (the master copy) cast to bf16 for the
// matmuls, gradients and Adam moments fp32, and XLA's static buffer
// assignment frees gradients as the update consumes them and loses nothing
// to fragmentation; clipping reads the gradients once for their norm and
// the update scales them (MaxText's gradient_clipping_threshold, default 1).
func maxtext() Profile {
	pr := model.MixedPrecision()
	pr.WeightCopies, pr.TransientGrads = true, true
	// XLA gathers each weight tensor at its use, not a layer at once.
	pr.TensorUnits = true
	k := model.FusedKernels()
	// The loss: the output dot writes bf16 logits (dtype bfloat16,
	// logits_dot_in_fp32 false), cast to fp32 (cast_logits_to_fp32 true)
	// (AI-Hypercomputer/maxtext@e591f30cbbf217ed67ef71263ec0538239f9c3b8:src/maxtext/configs/base.yml:192-193,
	// src/maxtext/layers/decoders.py:830-846). The cross-entropy's custom
	// VJP names exp(logits - max) as its residual and the fp32 logits only
	// for their dtype (src/maxtext/utils/max_utils.py:659-703); both are
	// elementwise in the bf16 logits, which XLA fuses into their consumers
	// (the sum-exp reduction forward, the gradient fusion backward) instead
	// of writing them out. So the bf16 dot output (2 bytes) is what lives
	// from the loss's forward to its backward, with a per-token max and
	// sum, and the backward fusion writes the bf16 gradient (2 bytes, the
	// fp32 cast's transpose in the same fusion). Traffic as FusedKernels:
	// two reads forward, a read and a write backward. The tpu-recipes runs
	// bear it out: Llama 3.1 70B at 4 sequences per v6e (v6e-128) holds
	// 4.2G logits per chip and fits, which it could not at 6 bytes each
	// (docs/published-runs-2.md).
	k.Passes[model.PassLoss] = model.PassCost{FwdBytes: 4, BwdBytes: 4, SavedBytes: 2, TransientBytes: 2}
	return Profile{
		Name: "maxtext",
		Description: "MaxText on JAX/XLA: fused elementwise kernels, splash (flash) attention, fp32 parameters cast to bf16 for the matmuls, " +
			"fp32 gradients and moments, static buffer assignment, clipping's norm pass",
		Kernels:   k,
		Precision: pr,
		Optimizer: model.Optimizer{ClipPasses: 1},
		// MaxText shards optimizer state through fsdp, not ZeRO over dp; its
		// pipeline runs all forward passes first (GPipe) or circular
		// (interleaved); its remat policies by their own names (--emit
		// maxtext's rules, [MT-REMAT]); its tensor parallelism shards the
		// residual stream's embedding dimension between layers (base.yml's
		// logical rule activation_embed -> tensor), which costs and saves
		// what sequence parallelism does, so tp runs with sp.
		// FP8 on GPUs through flax's fp8 dot_general with delayed scaling.
		FP8:     recipe(model.FP8Delayed),
		Release: Release{Name: "main of 2026-08-22", Repo: "AI-Hypercomputer/maxtext", Commit: "e591f30cbbf217ed67ef71263ec0538239f9c3b8"},
		// Read from AI-Hypercomputer/maxtext@e591f30cbbf217ed67ef71263ec0538239f9c3b8:
		// remat_policy "none" becomes None and every layer is still wrapped
		// in nn.remat (src/maxtext/configs/pyconfig.py:274,
		// layers/decoders.py:346-350, 541-566): full rematerialisation, so
		// the profile has no "none"; the pipeline needs the layers to divide
		// over stages x repeats (configs/types.py:3598-3621); the expert
		// axis is its own mesh axis, carved here out of fsdp. Its logical
		// rules shard the dense weights' embed dimension over fsdp x
		// context x expert and the experts' over fsdp x context
		// (src/maxtext/configs/base.yml:587-588, 605-606): the planner
		// shards a dense model's weights over fsdp x cp
		// (model.ProgramOptions.WeightsOverCP), the experts over its fsdp,
		// which holds the expert chips, so ep comes out of fsdp only and
		// cp stays 1 for a mixture of experts.
		// weight_dtype: bfloat16 keeps the parameters in bf16, the Adam
		// first moment with them (mu_dtype empty follows weight_dtype,
		// src/maxtext/configs/types.py:3296-3298) and the second moment
		// too (optax's scale_by_adam makes nu like the parameters), and
		// their gradients (train.py:534-537 casts only fp32 ones).
		// optimizer_memory_host_offload and parameter_memory_host_offload
		// (MaxText's configs/types.py) move state to the host. Its MoE
		// dispatch is jax.lax.ragged_all_to_all, without per-node
		// deduplication (src/maxtext/layers/moe.py:1805 at the commit above).
		Limits: space.Limits{Framework: "maxtext", NoA2AOverlap: true, Dispatchers: []string{space.DispatcherAllToAll}, Offloads: []string{space.OffloadOptimizer, space.OffloadParamsOptimizer}, Zeros: []int{0}, RequireSP: true, NoSplit: true, BF16Weights: true,
			WeightsOverCP: true, ExpertsFromFSDP: true, StageMicrobatches: true,
			Schedules: []space.Schedule{space.GPipe, space.Interleaved}, EqualStages: true, ExpertsPerTier: true,
			Recomputes: []string{model.RecomputeMinimal, model.RecomputeSaveDotExceptMLPWi,
				model.RecomputeSaveDotExceptMLP, model.RecomputeSaveQKVProj, model.RecomputeQKVProjOffloaded,
				model.RecomputeMinimalOffloaded, model.RecomputeOffloadInput, model.RecomputeOffloadInputQKV,
				model.RecomputeOffloadInputQKVO, model.RecomputeOffloadInputOut, model.RecomputeOffloadContextWo, model.RecomputeFull}},
	}
}
