package runs

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/framework"
	"github.com/meshplan/meshplan/memory"
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/search"
	"github.com/meshplan/meshplan/space"
)

// Options tune Validate. The zero value predicts every run with its own
// framework profile (Run.FrameworkName).
type Options struct {
	// Framework, when set, predicts every run with this profile instead.
	Framework *framework.Profile
	// Progress, when not nil, is called by Validate with the runs done and
	// their total after each run.
	Progress func(done, total int64)
}

// Row is one run compared with its prediction.
type Row struct {
	// ID is the run's id.
	ID string `json:"id"`
	// Framework is the framework profile the run was predicted with.
	Framework string `json:"framework"`
	// Cluster is the cluster the run was predicted on, e.g. "a100-1024" or "8xv5e-256".
	Cluster string `json:"cluster"`
	// Chip is the profiles chip name, e.g. "a100" or "v5e".
	Chip string `json:"chip"`
	// Chips is the job's chip count.
	Chips int `json:"chips"`
	// Strategy is the contract strategy string that was evaluated.
	Strategy string `json:"strategy"`
	// MeasuredTokensPerSPerChip is the published throughput, converted (see Run.Measured).
	MeasuredTokensPerSPerChip float64 `json:"measured_tokens_per_s_per_chip"`
	// PredictedTokensPerSPerChip is batch*seq / predicted step time / chips.
	PredictedTokensPerSPerChip float64 `json:"predicted_tokens_per_s_per_chip"`
	// Error is PredictedTokensPerSPerChip/MeasuredTokensPerSPerChip - 1.
	Error float64 `json:"error"`
	// PredictedStepSeconds is the predicted time of one step.
	PredictedStepSeconds float64 `json:"predicted_step_time_s"`
	// MeasuredMFU and PredictedMFU are both in the contract's FLOP
	// convention (model.ModelFLOPsPerToken over the cluster's peak), so they
	// compare like for like whatever the source reported.
	MeasuredMFU  float64 `json:"measured_mfu_contract"`
	PredictedMFU float64 `json:"predicted_mfu"`
	// MemoryGBPerChip is the predicted peak memory of the busiest chip, in 10^9 bytes.
	MemoryGBPerChip float64 `json:"memory_gb_per_chip"`
	// Fits says the memory estimate is within the chip's usable HBM. A run
	// that does not fit is still predicted.
	Fits bool `json:"fits"`
	// OOMRisk is the probability the planner gives that the run needs
	// more than the chip's usable HBM (profiles.OOMRisk).
	OOMRisk float64 `json:"oom_risk"`
	// Note lists the assumptions made for this row and how the measured
	// figure was converted.
	Note string `json:"note,omitempty"`
}

// Skip is a run that could not be predicted, with the reason.
type Skip struct {
	// ID is the run's id.
	ID string `json:"id"`
	// Reason says why, e.g. "parallel layout not published".
	Reason string `json:"reason"`
}

// Report is the outcome of Validate, in the contract's JSON form.
type Report struct {
	// Rows are the predicted runs, in input order.
	Rows []Row `json:"rows"`
	// MAPE is the mean of |Error| over Rows (a fraction; 0 without rows).
	MAPE float64 `json:"mape"`
	// Skipped are the runs that could not be predicted, in input order.
	Skipped []Skip `json:"skipped"`
	// ByFramework and ByChip break the MAPE down per framework profile and
	// per chip, in order of first appearance.
	ByFramework []Group `json:"by_framework"`
	ByChip      []Group `json:"by_chip"`
}

// Group is the error of the rows that share a framework or a chip.
type Group struct {
	// Name is the framework or chip.
	Name string `json:"name"`
	// Rows is the number of rows.
	Rows int `json:"rows"`
	// MAPE is the mean of |Error| over them.
	MAPE float64 `json:"mape"`
}

// groups returns the MAPE of rows grouped by key, in order of first appearance.
func groups(rows []Row, key func(Row) string) []Group {
	out := []Group{}
	for _, r := range rows {
		k := key(r)
		i := slices.IndexFunc(out, func(g Group) bool { return g.Name == k })
		if i < 0 {
			out = append(out, Group{Name: k})
			i = len(out) - 1
		}
		out[i].Rows++
		out[i].MAPE += math.Abs(r.Error)
	}
	for i := range out {
		out[i].MAPE /= float64(out[i].Rows)
	}
	return out
}

// maxMBCandidates bounds how many micro-batch sizes Validate tries for a
// run that does not publish its micro-batch.
const maxMBCandidates = 16

// Validate predicts every run with cost.Evaluate on its own cluster (or on
// the override, see Run.ClusterOf) and compares the prediction with the
// measured throughput. Runs that cannot be expressed or evaluated are
// skipped with the reason. When a run does not publish its micro-batch,
// Validate tries the sizes that divide the per-replica batch and keeps the
// fastest one that fits in memory (or the smallest in memory when none
// fits), as the run's authors would have tuned it; the row's note says so.
func Validate(rs []Run, override *profiles.Cluster, o Options) Report {
	rep := Report{Rows: []Row{}, Skipped: []Skip{}}
	sum := 0.0
	for i, r := range rs {
		row, err := r.validate(override, o)
		if o.Progress != nil {
			o.Progress(int64(i)+1, int64(len(rs)))
		}
		if err != nil {
			rep.Skipped = append(rep.Skipped, Skip{ID: r.ID, Reason: reason(err)})
			continue
		}
		rep.Rows = append(rep.Rows, row)
		sum += math.Abs(row.Error)
	}
	if len(rep.Rows) > 0 {
		rep.MAPE = sum / float64(len(rep.Rows))
	}
	rep.ByFramework = groups(rep.Rows, func(r Row) string { return r.Framework })
	rep.ByChip = groups(rep.Rows, func(r Row) string { return r.Chip })
	return rep
}

// SearchOptions returns the options run r is predicted with under o and
// the name of its framework profile: the profile's options, with a
// materialised attention core for a source that predates FlashAttention
// and a slower one for a row that ran FlashAttention-2 on Hopper
// (Run.AttentionRate).
func (r Run) SearchOptions(o Options) (search.Options, string, error) {
	f := o.Framework
	if f == nil {
		p, err := framework.Load(r.FrameworkName())
		if err != nil {
			return search.Options{}, "", fmt.Errorf("runs: %w", err)
		}
		f = &p
	}
	so := f.SearchOptions()
	if rec, ok := r.bridgeRecipe(); ok && f.Name == "megatron" {
		pr := &so.Program.Precision
		if rec.bf16Grads {
			// grad_reduce_in_fp32 False: a bf16 gradient buffer.
			pr.Grad = pr.Activation
		}
		if rec.precisionAware {
			// use_precision_aware_optimizer with bf16 main gradients and
			// Adam moments: two bf16 moments beside the fp32 master
			// weights, and Adam reads the bf16 gradients as they are.
			pr.Moments = 2 * pr.Activation
			pr.MainGradCopy = false
		}
		if rec.fusedLoss {
			// Transformer Engine's fused cross-entropy
			// (cross_entropy_loss_fusion with cross_entropy_fusion_impl
			// "te"): its forward writes the logits' gradient into the bf16
			// logits and keeps them for the backward
			// (NVIDIA/TransformerEngine transformer_engine/pytorch/cross_entropy.py,
			// CrossEntropyFunction.forward): 2 bytes a logit, no fp32 copy,
			// no gradient of its own.
			loss := &so.Program.Kernels.Passes[model.PassLoss]
			loss.SavedBytes, loss.TransientBytes = pr.Activation, 0
		}
	}
	if f.Name == "megatron" && strings.Contains(r.Source, "examples/llama/README.md") {
		// Megatron-LM's Llama FP8 table follows train_llama3_8b_h100_fp8.sh,
		// which reduces the gradients in bf16 (--grad-reduce-in-bf16: a
		// bf16 gradient buffer; NVIDIA/Megatron-LM@d98e8a64
		// examples/llama/train_llama3_8b_h100_fp8.sh).
		so.Program.Precision.Grad = so.Program.Precision.Activation
	}
	if f.Name == "megatron" && r.BF16GradSync() {
		// NeMo's training examples of the release sync and accumulate the
		// gradients in bf16 (Run.BF16GradSync).
		so.Program.Precision.Grad = so.Program.Precision.Activation
	}
	if f.Name == "megatron" && strings.Contains(strings.ToLower(r.ZeroOrFSDP), "bf16 adam moments") {
		// BF16 optimizer states as Megatron-LM's DeepSeek-V3 GB200 runs set
		// them (--use-precision-aware-optimizer --main-grads-dtype fp32
		// --main-params-dtype fp32 --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16,
		// the DeepSeek-V3 GB200 optimization write-up of NVIDIA/Megatron-LM@eb0783b6
		// under docs/discussions/deepseek-v3-gb200-optimization, item 7; the
		// flags in megatron/training/arguments.py @d98e8a64): two bf16
		// moments beside the fp32 master weights, and Adam
		// reads the fp32 main gradients as they are.
		pr := &so.Program.Precision
		pr.Moments = 2 * pr.Activation
		pr.MainGradCopy = false
	}
	if f.Name == framework.Default && r.composerMixedPrecision() {
		// Composer's FSDP with mixed_precision DEFAULT
		// (mosaicml/composer@2deccf2c composer/trainer/mosaic_fsdp_utils.py:97-100:
		// param_dtype bf16, reduce_dtype fp32): fp32 sharded parameters
		// gathered as bf16 copies every micro-batch, each unsharded bf16
		// gradient cast to fp32 before its reduce-scatter (PyTorch FSDP's
		// _post_backward_hook), and the gradients freed by zero_grad.
		pr := &so.Program.Precision
		pr.WeightCopies, pr.TransientGrads, pr.GradCast = true, true, true
	}
	if engine := r.lightningFP16Engine(); engine != "" {
		// The ColossalAI-Pytorch-lightning benchmark's DeepSpeed and
		// Gemini runs cast the Hugging Face GPT-2 to fp16 (no autocast), so
		// its GPTLMLoss (hpcaitech/ColossalAI-Pytorch-lightning@afbfdaf9
		// benchmark/gpt/model.py:138-147) runs on fp16 logits: the forward
		// holds the logits, their shifted .contiguous() copy and
		// log_softmax's output, which it keeps for the backward, and the
		// backward the output, its gradient and the input's gradient: 2
		// bytes a logit kept and 4 more transient.
		loss := &so.Program.Kernels.Passes[model.PassLoss]
		loss.SavedBytes, loss.TransientBytes = 2, 4
		if engine == "gemini" {
			so.Program.Precision.GradInWeight = true
		}
	}
	if r.lightningKeepsGrads() {
		// PyTorch Lightning 1.7 zeroes the gradients with the optimizer's
		// own optimizer.zero_grad() between training_step and backward
		// (Lightning-AI/pytorch-lightning@4fae327b8b69af8e269b062a634ab39b7388a4ac
		// (1.7.2) src/pytorch_lightning/core/module.py:1696,
		// loops/optimization/optimizer_loop.py:131-141), whose default
		// before PyTorch 2.0 is set_to_none=False (pytorch/pytorch v1.12.1
		// torch/optim/optimizer.py, Optimizer.zero_grad): the fp32
		// gradients the first backward pass makes are zeroed in place and
		// live through every later forward pass.
		so.Program.Precision.TransientGrads = false
		if so.ShardedProgram != nil {
			so.ShardedProgram.Precision.TransientGrads = false
		}
	}
	if r.UnfusedAttention() {
		so.Program.Kernels.Attention = model.AttentionMaterialized
	}
	if r.EagerLoss() && f.Name == "torchtitan" {
		// The era's eager loss (Run.EagerLoss), as the pytorch profile
		// runs it.
		eager, err := framework.Builtin("pytorch")
		if err != nil {
			return search.Options{}, "", fmt.Errorf("runs: %w", err)
		}
		loss := eager.Kernels.Passes[model.PassLoss]
		if r.TP > 1 {
			// Under tensor parallelism torchtitan runs the loss in
			// DTensor's loss_parallel (ParallelDims.loss_parallel_enabled),
			// whose backward is eager PyTorch: a zero-filled fp32
			// gradient, exp of the saved log-probabilities and their sum
			// live together before the product with the output's gradient
			// (torch/distributed/tensor/parallel/loss.py,
			// _nll_loss_and_log_softmax_backward): 12 bytes a logit where
			// ATen's fused log-softmax backward holds 8.
			loss.TransientBytes += 4
		}
		so.Program.Kernels.Passes[model.PassLoss] = loss
		if so.ShardedProgram != nil {
			so.ShardedProgram.Kernels.Passes[model.PassLoss] = loss
		}
	}
	if r.bridgeGraphedMoE() {
		// One fused grouped kernel per expert matmul and a step captured
		// as one CUDA graph (bridgeGraphedMoE).
		so.Cost.PerExpertGEMMs = false
		so.Cost.Comm.GraphedStep = true
	}
	if r.graphedLayers() {
		// The layers' attention, router and preprocessing captured, the
		// experts eager (graphedLayers, cost.Comm.GraphedLayers).
		so.Cost.Comm.GraphedLayers = true
	}
	if f.Name == "torchtitan" {
		// Every torchtitan run of the public files (2024-2025) predates
		// pytorch/torchtitan@ff0829c10 (2026-01-27), before which its
		// Llama repeated the key and value heads to the query heads before
		// SDPA, so context parallelism moved them repeated
		// (cost.Comm.CPRepeatedKV).
		so.Cost.Comm.CPRepeatedKV = true
	}
	if rate := r.AttentionRate(); rate != 1 {
		scaleAttention(&so.Program.Kernels, rate)
		if so.ShardedProgram != nil {
			scaleAttention(&so.ShardedProgram.Kernels, rate)
		}
	}
	if name := r.FP8RecipeName(); name != "" && so.FP8 != nil && so.FP8.Name != name {
		// The run's own scaling, with the framework's storage choices
		// (fp8 primary weights, fp8 dispatch) kept.
		if rec, ok := model.LookupFP8Recipe(name); ok {
			rec.Params, rec.Dispatch = so.FP8.Params, so.FP8.Dispatch
			so.FP8 = &rec
			so.Limits.FP4 = rec.FP4
		}
	}
	return so, f.Name, nil
}

// scaleAttention multiplies k's attention rate by rate, a zero rate
// standing for 1 (model.Kernels.AttentionRate).
func scaleAttention(k *model.Kernels, rate float64) {
	if k.AttentionRate == 0 {
		k.AttentionRate = 1
	}
	k.AttentionRate *= rate
}

// FP8RecipeName is the FP8 recipe the run's precision names, "" when it
// names none (plain FP8): torchao's tensorwise scaling is the torchao recipe
// (it keeps the bf16 inputs and casts them again in the backward); MXFP8
// (Megatron-Bridge's FP8-MX, Megatron-Core's --fp8-recipe mxfp8) is the mxfp8
// recipe; current scaling (Megatron-Bridge's FP8-CS, Transformer Engine's
// Float8CurrentScaling, Megatron-Core's --fp8-recipe tensorwise;
// NVIDIA/Megatron-LM@d98e8a64ddf34856e74b24714e3bedb2f5a39553:
// megatron/core/fp8_utils.py) is the tensorwise recipe, whose quantisation
// reads each input once more for its amax; NVFP4 (Megatron-Bridge's
// bf16_with_nvfp4_mixed) is the nvfp4 recipe, at the chip's fp4 rate.
func (r Run) FP8RecipeName() string {
	t := strings.ToLower(r.Precision)
	switch {
	case strings.Contains(t, "torchao"):
		return model.FP8Torchao
	case strings.Contains(t, "fp8-cs"), strings.Contains(t, "current scaling"), strings.Contains(t, "tensorwise"):
		return model.FP8Tensorwise
	case strings.Contains(t, "mxfp8"), strings.Contains(t, "fp8-mx"):
		return model.FP8MX
	case strings.Contains(t, "nvfp4"):
		return model.FP4NV
	}
	return ""
}

// bridgeRecipe is what the Megatron-Bridge recipe a row ran sets that the
// memory model reads.
type bridgeRecipe struct {
	// bf16Grads: grad_reduce_in_fp32 False, a bf16 gradient buffer.
	bf16Grads bool
	// precisionAware: use_precision_aware_optimizer with bf16 main
	// gradients and bf16 Adam moments (fp32 main parameters).
	precisionAware bool
	// fusedLoss: Transformer Engine's fused cross-entropy.
	fusedLoss bool
}

// bridgeRecipe returns the settings of the Megatron-Bridge recipe row r
// ran, and false for a row of another source or of no known recipe:
//
//   - Moonlight 16B: moonlight_16b_pretrain_8gpu_h100_bf16_config
//     (NVIDIA-NeMo/Megatron-Bridge@600d069b, the bridge revision of the
//     card's runs, src/megatron/bridge/recipes/moonlight/h100/moonlight_16b.py:209-213
//     precision-aware optimizer with bf16 main gradients and moments,
//     :228-229 fused cross-entropy in TE, :245 and :272 grad_reduce_in_fp32 False);
//   - the performance recipes (a row of the performance summary, one whose
//     notes name a perf recipe, the Llama 3 70B SFT rows of PR #3107's
//     llama3_70b_sft_32gpu_h100_fp8cs_config and the Qwen3-30B-A3B EP16
//     row of qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config): _benchmark_common
//     and _perf_precision set grad_reduce_in_fp32 False and
//     cross_entropy_fusion_impl "te"
//     (NVIDIA-NeMo/Megatron-Bridge@067f987d src/megatron/bridge/perf_recipes/_common.py:70-74, :122),
//     and GPTModelProvider's cross_entropy_loss_fusion is on
//     (src/megatron/bridge/models/gpt_provider.py:204 @7ded17da).
func (r Run) bridgeRecipe() (bridgeRecipe, bool) {
	if !strings.HasPrefix(r.SourceName(), "NVIDIA-NeMo/Megatron-Bridge") {
		return bridgeRecipe{}, false
	}
	name := strings.ToLower(r.ModelName)
	perf := bridgeRecipe{bf16Grads: true, fusedLoss: true}
	switch {
	case strings.Contains(name, "moonlight"):
		return bridgeRecipe{bf16Grads: true, precisionAware: true, fusedLoss: true}, true
	case strings.Contains(r.Source, "performance-summary"), strings.Contains(strings.ToLower(r.Notes), "perf recipe"):
		return perf, true
	case strings.Contains(name, "lora"):
		return bridgeRecipe{}, false
	case presetFor(r.ModelName) == "llama3-70b" && strings.Contains(name, "sft"):
		return perf, true
	case strings.Contains(name, "qwen3-30b-a3b") && strings.Contains(r.Source, "expert-parallel-overlap"):
		return perf, true
	}
	return bridgeRecipe{}, false
}

// bridgeA2AOverlap reports whether the Megatron-Bridge performance-summary
// row r ran with overlap_moe_expert_parallel_comm (space.Strategy.A2AOverlap),
// as the release's performance configs set it (NVIDIA-NeMo/Megatron-Bridge,
// scripts/performance):
//
//   - 25.09 (v0.1.0rc3, run_script.py:62-90): DeepSeek-V3 on H100 only
//     (A2A_1F1B for "h100"); the Qwen3 recipes leave it off;
//   - 25.11 (v0.2.0, configs/*/workload_base_configs.py): Qwen3-30B-A3B on
//     H100 and Qwen3-235B-A22B on H100 and B200; DeepSeek-V3 on H100 only,
//     off on B200 and GB200; GPT-OSS leaves it off;
//   - 26.04.01 (v0.4.0 to v0.4.2): Qwen3-235B-A22B on H100
//     (QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_*_V1, kept by the V2 the
//     table's batch of 8192 runs), GPT-OSS-120B on GB200
//     (GPT_OSS_120B_PRETRAIN_CONFIG_GB200_BF16_V2, the table's batch of
//     1280) and DeepSeek-V3 on B200: the table's pp 8, vp 2, ep 32 is
//     DEEPSEEK_V3_PRETRAIN_CONFIG_B200_FP8_MX_V2 of v0.4.2
//     (configs/deepseek/deepseek_workload_base_configs.py:203-214,
//     moe_a2a_overlap=True with DeepEP), v0.4.0's and v0.4.1's B200 V2
//     being pp 16, ep 8; off on GB200;
//   - 26.02 (v0.3.0): Qwen3-30B-A3B and Qwen3-235B-A22B on H100; 26.02.01
//     (v0.3.1): Qwen3-235B-A22B on H100; 26.04 (v0.4.0): that, and
//     GPT-OSS-120B on GB200 (gpt_oss_workload_base_configs.py:106);
//   - 26.06 and 26.06.01 (v0.5.0, v0.5.1): DeepSeek-V3, GPT-OSS-120B and
//     both Qwen3 on GB200 and GB300, and Qwen3-30B-A3B on B300 in 26.06
//     (the MXFP8 configs, with full-iteration CUDA graphs:
//     gpt_oss_workload_base_configs.py:201-220 at v0.5.0);
//   - 26.02 (v0.3.0): Qwen3-235B-A22B on B300
//     (qwen3_workload_base_configs.py:128), whose layout (pp 8, vp 4) the
//     26.02.01 row keeps though v0.3.1's config drops vp and the overlap.
func (r Run) bridgeA2AOverlap() bool {
	release, key, ok := r.bridgePerfRow()
	if !ok {
		return false
	}
	on := map[string][]string{
		"25.09 NeMo Container":    {"dsv3/h100"},
		"25.11 NeMo Container":    {"qwen3-30b/h100", "qwen3-235b/h100", "qwen3-235b/b200", "dsv3/h100"},
		"26.04.01 NeMo Container": {"qwen3-235b/h100", "gpt-oss/gb200", "dsv3/b200"},
		"26.02 NeMo Container":    {"qwen3-30b/h100", "qwen3-235b/h100", "qwen3-235b/b300"},
		"26.02.01 NeMo Container": {"qwen3-235b/h100", "qwen3-235b/b300"},
		"26.04 NeMo Container":    {"qwen3-235b/h100", "gpt-oss/gb200"},
		"26.06 NeMo Container": {"dsv3/gb200", "gpt-oss/gb200", "qwen3-30b/gb200", "qwen3-235b/gb200",
			"dsv3/gb300", "gpt-oss/gb300", "qwen3-30b/gb300", "qwen3-30b/b300", "qwen3-235b/gb300"},
		"26.06.01 NeMo Container": {"dsv3/gb200", "gpt-oss/gb200", "qwen3-30b/gb200", "qwen3-235b/gb200",
			"dsv3/gb300", "gpt-oss/gb300", "qwen3-30b/gb300", "qwen3-235b/gb300"},
	}
	return slices.Contains(on[release], key)
}

// bridgeGraphedMoE reports whether the Megatron-Bridge performance-summary
// row r ran its MoE layers under a fused grouped MLP and a step captured
// as one CUDA graph: the 26.06 and 26.06.01 MXFP8 configs of DeepSeek-V3,
// GPT-OSS-120B and both Qwen3 on GB200 and GB300 (and Qwen3-30B-A3B on
// B300 in 26.06) set cutedsl_fused_grouped_mlp
// True (one CuTe DSL kernel for a layer's local experts instead of a GEMM
// per expert) and cuda_graph_impl "full_iteration", with the EP overlap
// (NVIDIA-NeMo/Megatron-Bridge v0.5.0 and v0.5.1,
// scripts/performance/configs: deepseek/deepseek_workload_base_configs.py
// DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_FP8_MX_V1, gpt_oss/
// gpt_oss_workload_base_configs.py GPT_OSS_120B_PRETRAIN_CONFIG_GB200_FP8_MX_V2,
// qwen/qwen3_workload_base_configs.py QWEN3_235B_A22B_PRETRAIN_CONFIG_GB200_FP8_MX_V2
// and QWEN3_30B_A3B_PRETRAIN_CONFIG_GB200_FP8_MX_V1); no earlier
// release's MoE config sets either (v0.4.2 and before).
func (r Run) bridgeGraphedMoE() bool {
	release, key, ok := r.bridgePerfRow()
	if !ok || r.FP8RecipeName() != model.FP8MX {
		return false
	}
	if release != "26.06 NeMo Container" && release != "26.06.01 NeMo Container" {
		return false
	}
	graphed := []string{"dsv3/gb200", "gpt-oss/gb200", "qwen3-30b/gb200", "qwen3-235b/gb200",
		"dsv3/gb300", "gpt-oss/gb300", "qwen3-30b/gb300", "qwen3-235b/gb300"}
	if release == "26.06 NeMo Container" {
		graphed = append(graphed, "qwen3-30b/b300")
	}
	return slices.Contains(graphed, key)
}

// bridgeDispatcher returns the MoE token dispatcher
// (space.Strategy.Dispatcher) the release's performance config runs the
// Megatron-Bridge performance-summary row r with, "" for any other row
// (NVIDIA-NeMo/Megatron-Bridge, scripts/performance; a flex backend takes
// effect only where the perf script calls apply_flex_dispatcher_backend,
// src/megatron/bridge/training/flex_dispatcher_backend.py at v0.4.2, else
// the model providers' moe_token_dispatcher_type "alltoall"):
//
//   - 25.09 (v0.1.0rc3, run_script.py:56-61): DeepEP for DeepSeek-V3 on
//     H100 (off with the B200 and GB200 token drop); the Qwen3 YAMLs keep
//     the provider's alltoall (src/megatron/bridge/models/qwen/qwen_provider.py:374);
//   - 25.11 (v0.2.0, configs/*/workload_base_configs.py): DeepEP for
//     DeepSeek-V3 on H100 (deepseek:86), HybridEP for it on GB200
//     (deepseek:52) and for both Qwen3 on GB200 (qwen3:77-89, 177-197);
//     alltoall for the rest (no backend set; GPT-OSS sets none);
//   - 26.04.01 (v0.4.2): DeepEP for DeepSeek-V3 on B200
//     (deepseek/deepseek_workload_base_configs.py:205-217), HybridEP for
//     it on GB200 (:79), for Qwen3-30B-A3B on H100 and B200 and
//     Qwen3-235B-A22B on GB200 (qwen/qwen3_llm_pretrain.py:91, 273, 299
//     set "flex"; qwen/qwen3_workload_base_configs.py:90, 398, 424-433
//     name hybridep); alltoall for Qwen3-235B-A22B on H100 and B200
//     (qwen3_llm_pretrain.py:143, 169) and GPT-OSS (only its B300 V2 sets
//     a backend, gpt_oss/gpt_oss_workload_base_configs.py:113);
//   - 26.02 (v0.3.0): HybridEP for DeepSeek-V3 on GB200 and B200, for
//     Qwen3-30B-A3B and Qwen3-235B-A22B on GB200, DeepEP for Qwen3-30B-A3B
//     on H100; 26.02.01 (v0.3.1): HybridEP for both Qwen3 on GB200,
//     Qwen3-30B-A3B on B200 and H100, and DeepSeek-V3 (its recipe sets
//     moe_token_dispatcher_type "alltoall" and backend "hybridep", then
//     calls apply_flex_dispatcher_backend at its end, which makes it flex
//     on any GPU of compute capability 8 to 10: src/megatron/bridge/
//     recipes/deepseek/deepseek_v3.py:104-106, 196 and
//     training/flex_dispatcher_backend.py at v0.3.1); 26.04 (v0.4.0):
//     HybridEP for DeepSeek-V3, GPT-OSS-120B on GB200 and B200
//     (gpt_oss_workload_base_configs.py:105-122) and the Qwen3 of
//     26.04.01; 26.06 and 26.06.01 (v0.5.0, v0.5.1): HybridEP for every
//     MoE row on GB200 and Qwen3-30B-A3B on H100;
//   - GB300 and B300 (26.02 to 26.06.01): HybridEP for DeepSeek-V3 and
//     Qwen3-30B-A3B on both, Qwen3-235B-A22B on GB300 and, from 26.04.01,
//     on B300, GPT-OSS-120B on GB300 from 26.06 and on B300 from 26.02.01
//     (the first config with that row's ep 8 is v0.4.0's, which names
//     hybridep); alltoall for the rest (GPT-OSS sets no backend before
//     then, and qwen3_llm_pretrain.py sets "alltoall" for Qwen3-235B-A22B
//     on B300 at v0.3.1 and v0.4.0). Where a row's layout is not its
//     tag's config, the first config with that layout is taken.
func (r Run) bridgeDispatcher() string {
	release, key, ok := r.bridgePerfRow()
	if !ok {
		return ""
	}
	flex := map[string]map[string]string{
		"25.09 NeMo Container": {"dsv3/h100": space.DispatcherDeepEP},
		"25.11 NeMo Container": {"dsv3/h100": space.DispatcherDeepEP, "dsv3/gb200": space.DispatcherHybridEP,
			"qwen3-30b/gb200": space.DispatcherHybridEP, "qwen3-235b/gb200": space.DispatcherHybridEP},
		"26.04.01 NeMo Container": {"dsv3/b200": space.DispatcherDeepEP, "dsv3/gb200": space.DispatcherHybridEP,
			"qwen3-30b/h100": space.DispatcherHybridEP, "qwen3-30b/b200": space.DispatcherHybridEP, "qwen3-235b/gb200": space.DispatcherHybridEP},
		"26.02 NeMo Container": {"dsv3/gb200": space.DispatcherHybridEP, "dsv3/b200": space.DispatcherHybridEP,
			"qwen3-30b/gb200": space.DispatcherHybridEP, "qwen3-30b/h100": space.DispatcherDeepEP, "qwen3-235b/gb200": space.DispatcherHybridEP},
		"26.02.01 NeMo Container": {"dsv3/gb200": space.DispatcherHybridEP, "dsv3/b200": space.DispatcherHybridEP, "dsv3/h100": space.DispatcherHybridEP,
			"qwen3-30b/gb200": space.DispatcherHybridEP, "qwen3-30b/b200": space.DispatcherHybridEP,
			"qwen3-30b/h100": space.DispatcherHybridEP, "qwen3-235b/gb200": space.DispatcherHybridEP},
		"26.04 NeMo Container": {"dsv3/b200": space.DispatcherHybridEP, "dsv3/gb200": space.DispatcherHybridEP,
			"gpt-oss/gb200": space.DispatcherHybridEP, "gpt-oss/b200": space.DispatcherHybridEP, "qwen3-30b/gb200": space.DispatcherHybridEP,
			"qwen3-30b/h100": space.DispatcherHybridEP, "qwen3-30b/b200": space.DispatcherHybridEP, "qwen3-235b/gb200": space.DispatcherHybridEP},
		"26.06 NeMo Container": {"dsv3/gb200": space.DispatcherHybridEP, "gpt-oss/gb200": space.DispatcherHybridEP,
			"qwen3-30b/gb200": space.DispatcherHybridEP, "qwen3-30b/h100": space.DispatcherHybridEP, "qwen3-235b/gb200": space.DispatcherHybridEP},
		"26.06.01 NeMo Container": {"dsv3/gb200": space.DispatcherHybridEP, "gpt-oss/gb200": space.DispatcherHybridEP,
			"qwen3-30b/gb200": space.DispatcherHybridEP, "qwen3-235b/gb200": space.DispatcherHybridEP},
	}
	if d, ok := flex[release][key]; ok {
		return d
	}
	if strings.HasPrefix(key, "nano/") {
		// Nemotron 3 Nano's recipe runs the flex dispatcher
		// (recipes/nemotronh/nemotron_3_nano.py:104-106 at v0.4.2) and its
		// performance configs name HybridEP on every chip from 26.02.01
		// (nemotron_3_nano_workload_base_configs.py:23-32 at v0.3.1,
		// nemotron_3_workload_base_configs.py:31-40 at v0.4.0 to v0.5.1).
		return space.DispatcherHybridEP
	}
	if ultraHybridEP(release, key) {
		return space.DispatcherHybridEP
	}
	return space.DispatcherAllToAll
}

// ultraHybridEP reports whether the GB300 or B300 MoE row of release
// (bridgeReleases) and model/gpu key ran HybridEP (bridgeDispatcher; every
// one of these rows is of 26.02 or later).
func ultraHybridEP(release, key string) bool {
	switch key {
	case "dsv3/gb300", "dsv3/b300", "qwen3-30b/gb300", "qwen3-30b/b300", "qwen3-235b/gb300":
		return true
	case "qwen3-235b/b300":
		return release == "26.04.01 NeMo Container"
	case "gpt-oss/gb300":
		return release == "26.06 NeMo Container" || release == "26.06.01 NeMo Container"
	case "gpt-oss/b300":
		return release != "26.02 NeMo Container"
	}
	return false
}

// graphedLayers reports whether Megatron-Core row r ran each layer but its
// routed experts as captured CUDA graphs (--cuda-graph-impl
// transformer_engine with a --cuda-graph-scope of attn, moe_router and
// moe_preprocess; Megatron-Core's per-layer graphs before it, which
// capture a token-dropping layer whole): a Megatron-Bridge
// performance-summary row whose release's
// config sets them (bridgeGraphedLayers), or a row whose notes say
// "partial CUDA graphs", the attention captured with the router and the
// preprocessing (the DeepSeek-V3 GB200 guide's final row, --cuda-graph-scope
// attn moe_router moe_preprocess, NVIDIA/Megatron-LM@eb0783b6
// docs/discussions/deepseek-v3-gb200-optimization §2.3; the Megatron-Core
// MoE Model Zoo's GB200 and GB300 rows).
func (r Run) graphedLayers() bool {
	if !strings.Contains(r.Framework, "Megatron") {
		return false
	}
	if r.bridgePerfSummary() {
		return r.bridgeGraphedLayers()
	}
	return strings.Contains(strings.ToLower(r.Notes), "partial cuda graphs")
}

// bridgeGraphedLayers reports whether the performance config of the
// release of Megatron-Bridge MoE row r captures each layer but its
// routed experts in CUDA graphs: its attention with the router and the
// dispatch preprocessing (cuda_graph_impl "transformer_engine" with a
// cuda_graph_scope of attn, moe_router and moe_preprocess, Nemotron 3
// Nano's with mamba too), or 25.09's per-layer graphs (cuda_graphs, which
// sets Megatron-Core's enable_cuda_graph: the local graph of the whole
// layer, scripts/performance/utils/helpers.py:114-120 at v0.1.0rc3). A
// scope of the router and the preprocessing alone leaves the attention's
// kernels to the host, which still paces the layer; it is not counted.
// Read at every tag (NVIDIA-NeMo/Megatron-Bridge, scripts/performance,
// configs/*/workload_base_configs.py):
//
//   - 25.09 (v0.1.0rc3): Qwen3-30B-A3B on GB200 and B200, Qwen3-235B-A22B
//     on GB200, DeepSeek-V3 on B200 (the qwen3 YAMLs :81, :99, :80);
//   - 25.11 (v0.2.0): DeepSeek-V3 on GB300 (:36-37), GPT-OSS-120B on
//     GB300, Qwen3-235B-A22B in BF16 on GB200 (:78-79); DeepSeek-V3 on
//     GB200, Qwen3-30B-A3B and Qwen3-235B-A22B on GB300 graph the router
//     and preprocessing only;
//   - 26.02 to 26.04.01 (v0.3.0 to v0.4.2): DeepSeek-V3 on GB200 (:82-83),
//     and on B300 and B200 in 26.04.01 (:187-188, :211-212), GPT-OSS-120B
//     on GB300 and B300 (:49-50, :66-67), Qwen3-235B-A22B on GB300 and
//     GB200, Qwen3-30B-A3B on B200 from 26.02.01 (its other Blackwell
//     configs the router and preprocessing only), Nemotron 3 Nano from
//     26.02.01 on GB300, GB200 and B300, and on B200 from 26.04.01 (its
//     H100 config graphs the Mamba layers only);
//   - 26.06 and 26.06.01 (v0.5.0, v0.5.1): DeepSeek-V3 and GPT-OSS-120B on
//     B300 (:229-230, :138-139), GPT-OSS-120B in BF16 on GB300 (:121-122),
//     Nemotron 3 Nano on every Blackwell; the rest of their Blackwell MoE
//     configs capture the whole step (bridgeGraphedMoE).
func (r Run) bridgeGraphedLayers() bool {
	release, key, ok := r.bridgePerfRow()
	if !ok {
		return false
	}
	if gpu, nano := strings.CutPrefix(key, "nano/"); nano {
		from := "26.02.01 NeMo Container"
		switch gpu {
		case "h100":
			return false
		case "b200":
			from = "26.04.01 NeMo Container"
		}
		return slices.Index(bridgeReleases, release) >= slices.Index(bridgeReleases, from)
	}
	bf16 := r.FP8RecipeName() == ""
	switch release {
	case "25.09 NeMo Container":
		return key == "qwen3-30b/gb200" || key == "qwen3-30b/b200" || key == "qwen3-235b/gb200" || key == "dsv3/b200"
	case "25.11 NeMo Container":
		return key == "dsv3/gb300" || key == "gpt-oss/gb300" || key == "qwen3-235b/gb200" && bf16
	case "26.02 NeMo Container", "26.02.01 NeMo Container", "26.04 NeMo Container", "26.04.01 NeMo Container":
		switch key {
		case "dsv3/gb200", "gpt-oss/gb300", "gpt-oss/b300", "qwen3-235b/gb300", "qwen3-235b/gb200":
			return true
		case "dsv3/b300", "dsv3/b200":
			return release == "26.04.01 NeMo Container"
		case "qwen3-30b/b200":
			return release != "26.02 NeMo Container"
		}
	case "26.06 NeMo Container", "26.06.01 NeMo Container":
		switch key {
		case "dsv3/b300", "gpt-oss/b300":
			return true
		case "gpt-oss/gb300":
			return bf16
		}
	}
	return false
}

// notedMoE returns the MoE all-to-all overlap and token dispatcher a
// Megatron-Core row's notes state it ran with ("EP overlap on", "flex
// dispatcher + HybridEP", "alltoall dispatcher"), false and "" where they
// state neither (the performance-summary rows are posed from their
// recipes instead: bridgeA2AOverlap, bridgeDispatcher).
func (r Run) notedMoE() (overlap bool, dispatcher string) {
	if _, _, perf := r.bridgePerfRow(); perf || !strings.Contains(r.Framework, "Megatron") {
		return false, ""
	}
	n := strings.ToLower(r.Notes)
	overlap = strings.Contains(n, "ep overlap on")
	switch {
	case strings.Contains(n, "hybridep"):
		dispatcher = space.DispatcherHybridEP
	case strings.Contains(n, "deepep"):
		dispatcher = space.DispatcherDeepEP
	case strings.Contains(n, "alltoall dispatcher"):
		dispatcher = space.DispatcherAllToAll
	}
	return overlap, dispatcher
}

// bridgePerfSummary reports whether r is a row of a Megatron-Bridge
// performance summary (a "NeMo Container" section), whose layout and
// settings come from that release's performance configs.
func (r Run) bridgePerfSummary() bool {
	return strings.HasPrefix(r.SourceName(), "NVIDIA-NeMo/Megatron-Bridge") && strings.Contains(r.Source, "NeMo Container")
}

// bridgePerfRow returns the release ("25.11 NeMo Container") and the
// model/gpu key ("dsv3/b200") of a Megatron-Bridge performance-summary MoE
// row r, false for any other row.
func (r Run) bridgePerfRow() (release, key string, ok bool) {
	if !r.bridgePerfSummary() {
		return "", "", false
	}
	name, chip := strings.ToLower(r.ModelName), strings.ToLower(r.Chip)
	var model string
	switch {
	case strings.Contains(name, "deepseek"):
		model = "dsv3"
	case strings.Contains(name, "qwen3-30b"):
		model = "qwen3-30b"
	case strings.Contains(name, "qwen3-235b"):
		model = "qwen3-235b"
	case strings.Contains(name, "gpt-oss"):
		model = "gpt-oss"
	case strings.Contains(name, "nemotron 3 nano"):
		model = "nano"
	default:
		return "", "", false
	}
	gpu := ""
	for _, g := range []string{"gb300", "gb200", "b300", "b200", "h100"} { // each GB part before its B twin, whose name it contains
		if strings.HasPrefix(chip, g) {
			gpu = g
			break
		}
	}
	for _, rel := range bridgeReleases {
		if strings.Contains(r.Source, rel) {
			return rel, model + "/" + gpu, true
		}
	}
	if strings.Contains(r.Source, bridgeRelease2608) {
		// 26.08's recipes run these rows as 26.06.01's configs did
		// (bridgeRelease2608).
		return "26.06.01 NeMo Container", model + "/" + gpu, true
	}
	return "", "", false
}

// bridgeRelease2608 is the 26.08 section of the performance summary of
// NVIDIA-NeMo/Megatron-Bridge v0.6.0, whose
// MoE rows (DeepSeek-V3, GPT-OSS-120B, both Qwen3 and Nemotron 3 Nano on
// GB300 and GB200) are posed with 26.06.01's settings: v0.6.0 moved each
// row's config into a recipe function of its own
// (src/megatron/bridge/perf_recipes/<family>/<gpu>/), and for these rows
// its layout, batch, recomputation, dispatcher, EP overlap, CUDA graphs,
// fused grouped MLP and FP8 attention are v0.5.1's; only the manual
// garbage collection's interval changed.
const bridgeRelease2608 = "26.08 NeMo Container"

// bridgeReleases are the Megatron-Bridge performance-summary releases
// whose performance configs bridgeRecompute, bridgeA2AOverlap and
// bridgeDispatcher pose, each a section of Megatron-Bridge's performance
// summary archive (NVIDIA-NeMo/Megatron-Bridge@067f987d).
// Their tags: 25.09 v0.1.0rc3, 25.11 v0.2.0, 26.02 v0.3.0, 26.02.01
// v0.3.1, 26.04 v0.4.0, 26.04.01 v0.4.2, 26.06 v0.5.0, 26.06.01 v0.5.1 (the
// tag of the section's date whose configs have the table's layouts:
// every row of 26.02 and 26.04, all but three of 26.02.01 on H100, B200
// and GB200).
var bridgeReleases = []string{"25.09 NeMo Container", "25.11 NeMo Container", "26.02 NeMo Container",
	"26.02.01 NeMo Container", "26.04 NeMo Container", "26.04.01 NeMo Container", "26.06 NeMo Container",
	"26.06.01 NeMo Container"}

// bridgeRecompute returns the recompute policy (space.Strategy.Recompute:
// none, or Megatron-Core's --recompute-modules as a model.IsModuleList
// policy) the release's performance config runs the Megatron-Bridge MoE
// row r with, and false where no config of the release has the row's
// layout (the 25.11 DeepSeek-V3 on GB200 row, and 25.11's GPT-OSS rows on
// GB200 and H100, whose micro-batch, and on GB200 sequence and batch, are
// not their config's) or the row is not one (NVIDIA-NeMo/Megatron-Bridge,
// scripts/performance):
//
//   - Qwen3, every release: none (set_qwen3_common_configs sets
//     recompute_granularity None: configs/qwen/qwen3_llm_pretrain.py:36
//     at v0.4.2, configs/qwen3/qwen3_llm_pretrain.py:53 at v0.2.0; the
//     qwen3 YAMLs' recompute_granularity null at v0.1.0rc3);
//   - 25.09 (v0.1.0rc3, run_script.py:95-98): DeepSeek-V3 mla_up_proj and
//     mlp on H100, and moe_act too on GB200;
//   - 25.11 (v0.2.0, configs/deepseek/workload_base_configs.py:63-71):
//     DeepSeek-V3 on B200 (pp 16, ep 8) mla_up_proj; GPT-OSS-120B on
//     B200 (ep 64, bridgeExpertParallel) layernorm and moe_act
//     (configs/gpt_oss/workload_base_configs.py:50-55);
//   - 26.04.01 (v0.4.2, configs/deepseek/deepseek_workload_base_configs.py):
//     DeepSeek-V3 on GB200 (pp 4, vp 4, ep 64: GB200_V1 and its V2,
//     lines 72-84, 161-164) mlp, on B200 (B200_FP8_MX_V2, lines 203-214)
//     mla_up_proj and mlp; GPT-OSS-120B (configs/gpt_oss/
//     gpt_oss_workload_base_configs.py, the V2 of the table's batch of
//     1280 keeps its V1's list) layernorm and moe_act;
//   - 26.02, 26.02.01 (v0.3.0, v0.3.1) and 26.04 (v0.4.0),
//     configs/deepseek/deepseek_workload_base_configs.py and
//     configs/gpt_oss/gpt_oss_workload_base_configs.py: DeepSeek-V3
//     mla_up_proj (GB200 :81, B200 :111 at v0.3.0), on GB200 in 26.04 mlp;
//     GPT-OSS-120B layernorm and moe_act (:58, :75, :82 at v0.3.0);
//   - 26.06 and 26.06.01 (v0.5.0, v0.5.1): DeepSeek-V3 on GB200
//     mla_up_proj (:104); GPT-OSS-120B MXFP8 on GB200 none
//     (GPT_OSS_120B_PRETRAIN_CONFIG_GB200_FP8_MX_V2, recompute_modules=[],
//     :220);
//   - GB300 and B300 (ultraRecompute): DeepSeek-V3 mla_up_proj, but none
//     on GB300 from 26.06 (DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_FP8_MX_V1,
//     recompute_modules=[], deepseek_workload_base_configs.py:75 at
//     v0.5.0); GPT-OSS-120B none (its recipe sets no recomputation:
//     src/megatron/bridge/recipes/gpt_oss/gpt_oss.py:228-229 at v0.4.2,
//     and its GB300 and B300 configs add none).
func (r Run) bridgeRecompute() (string, bool) {
	release, key, ok := r.bridgePerfRow()
	if !ok {
		return "", false
	}
	if strings.HasPrefix(key, "qwen3-") {
		return space.RecomputeNone, true
	}
	if gpu, nano := strings.CutPrefix(key, "nano/"); nano {
		// Nemotron 3 Nano's configs recompute on H100 only: the whole MoE
		// layer and the norms in BF16, the core attention and the expert
		// activation too in FP8 (NVIDIA-NeMo/Megatron-Bridge v0.3.1
		// scripts/performance/configs/nemotronh/nemotron_3_nano_workload_base_configs.py:78-87,
		// the same lines of nemotron_3_workload_base_configs.py at v0.4.0 to
		// v0.5.1); its recipe sets none (recipes/nemotronh/nemotron_3_nano.py:132-134).
		switch {
		case gpu != "h100":
			return space.RecomputeNone, true
		case !strings.Contains(strings.ToLower(r.Precision), "fp8"):
			pol, ok := model.LookupPolicy("moe+layernorm")
			return pol.Name, ok
		}
		pol, ok := model.LookupPolicy("moe+layernorm+core_attn+moe_act")
		return pol.Name, ok
	}
	lists := map[string]map[string]string{
		"25.09 NeMo Container":    {"dsv3/h100": "mla_up_proj+mlp", "dsv3/gb200": "mla_up_proj+mlp+moe_act"},
		"25.11 NeMo Container":    {"dsv3/b200": "mla_up_proj", "gpt-oss/b200": "layernorm+moe_act"},
		"26.04.01 NeMo Container": {"dsv3/gb200": "mlp", "dsv3/b200": "mla_up_proj+mlp", "gpt-oss/h100": "layernorm+moe_act", "gpt-oss/gb200": "layernorm+moe_act", "gpt-oss/b200": "layernorm+moe_act"},
		"26.02 NeMo Container":    {"dsv3/gb200": "mla_up_proj", "dsv3/b200": "mla_up_proj", "gpt-oss/h100": "layernorm+moe_act", "gpt-oss/gb200": "layernorm+moe_act", "gpt-oss/b200": "layernorm+moe_act"},
		"26.02.01 NeMo Container": {"dsv3/gb200": "mla_up_proj", "dsv3/b200": "mla_up_proj", "gpt-oss/h100": "layernorm+moe_act", "gpt-oss/gb200": "layernorm+moe_act", "gpt-oss/b200": "layernorm+moe_act"},
		"26.04 NeMo Container":    {"dsv3/gb200": "mlp", "dsv3/b200": "mla_up_proj", "gpt-oss/h100": "layernorm+moe_act", "gpt-oss/gb200": "layernorm+moe_act", "gpt-oss/b200": "layernorm+moe_act"},
		"26.06 NeMo Container":    {"dsv3/gb200": "mla_up_proj", "gpt-oss/gb200": space.RecomputeNone},
		"26.06.01 NeMo Container": {"dsv3/gb200": "mla_up_proj", "gpt-oss/gb200": space.RecomputeNone},
	}
	list, ok := lists[release][key]
	if !ok {
		list, ok = ultraRecompute(release, key)
	}
	if !ok {
		return "", false
	}
	if list == space.RecomputeNone {
		return space.RecomputeNone, true
	}
	pol, ok := model.LookupPolicy(list)
	if !ok {
		return "", false
	}
	return pol.Name, true
}

// ultraRecompute returns the recompute list (bridgeRecompute's spelling)
// of the DeepSeek-V3 and GPT-OSS-120B rows on GB300 and B300 of release
// (26.02 to 26.06.01), false for any other key.
func ultraRecompute(release, key string) (string, bool) {
	switch key {
	case "dsv3/gb300":
		if release == "26.06 NeMo Container" || release == "26.06.01 NeMo Container" {
			return space.RecomputeNone, true
		}
		return "mla_up_proj", true
	case "dsv3/b300":
		return "mla_up_proj", true
	case "gpt-oss/gb300", "gpt-oss/b300":
		return space.RecomputeNone, true
	}
	return "", false
}

// bridgeExpertParallel returns the expert-parallel degree the release's
// performance config runs the Megatron-Bridge performance-summary row r
// with where the table's EP column names another, and false for every
// other row. One row: GPT-OSS-120B on 64 B200 in 25.11, whose table says
// ep 8 where the release's config says 64
// (NVIDIA-NeMo/Megatron-Bridge v0.2.0, tagged 2025-11-26,
// scripts/performance/configs/gpt_oss/workload_base_configs.py:50-55,
// GPT_OSS_120B_B200_BF16_BASE_CONFIG), and whose 8,213 tokens/s a GPU is
// the later tables' ep 64 figure: 26.02 runs the same job at ep 64 at
// 8,047 and 26.02.01 at ep 8 at 13,722 (the performance summary archive
// of NVIDIA-NeMo/Megatron-Bridge@067f987d, "26.02 NeMo Container" and
// "26.02.01", GPT OSS 120B).
// Every other column of the row (micro-batch 4, 2 micro-batches a step)
// is the config's.
func (r Run) bridgeExpertParallel() (int, bool) {
	release, key, ok := r.bridgePerfRow()
	if !ok || release != "25.11 NeMo Container" || key != "gpt-oss/b200" || r.EP != 8 {
		return 0, false
	}
	return 64, true
}

// bridgeDenseRecompute returns the recompute policy of a Megatron-Bridge
// performance-summary Llama row r whose release's performance config has
// the row's layout (tp, pp, vp, cp, no FSDP) and neither recomputes
// (recompute_num_layers and recompute_modules unset, so
// set_workload_base_configs leaves recompute_granularity None) nor
// offloads activations (cpu_offloading_num_layers unset), and false for
// any other row (NVIDIA-NeMo/Megatron-Bridge, scripts/performance;
// utils/overrides.py _set_recompute_overrides at v0.3.0; the llama3 and
// llama31 recipes, src/megatron/bridge/recipes/llama/llama3.py, set no
// recomputation):
//
//   - 25.11, Llama 3.1 405B on GB200 (256 GPUs, tp 4, pp 16, vp 4, batch
//     1536): LLAMA31_405B_PRETRAIN_CONFIG_GB200_FP8_CS_V2, which drops its
//     V1's FSDP and CPU offloading (v0.3.0
//     configs/llama/llama31_workload_base_configs.py:262-272);
//   - 25.11, Llama 3.1 405B on B200 (tp 4, pp 8, cp 2, vp 8):
//     LLAMA31_405B_B200_FP8_CS_BASE_CONFIG (v0.2.0
//     configs/llama31/workload_base_configs.py);
//   - 25.11, Llama 3 8B on GB200 and B200 (mb 2, full-iteration CUDA
//     graphs): LLAMA3_8B_{GB200,B200}_FP8_CS_BASE_CONFIG (v0.2.0
//     configs/llama3/workload_base_configs.py);
//   - 26.04.01, Llama 3 70B on GB200 (tp 2, pp 4, vp 5, batch 256):
//     LLAMA3_70B_PRETRAIN_CONFIG_GB200_FP8_MX_V2 (v0.4.2
//     configs/llama/llama3_workload_base_configs.py:249-254).
//
// The FSDP rows on GB200 (Llama 3 70B in 25.11, 405B in 25.09) offload
// the activations of 40 and 92 layers to the Grace host instead
// (cpu_offloading_num_layers), which no strategy expresses: they keep the
// fastest policy that fits.
func (r Run) bridgeDenseRecompute() (string, bool) {
	if !r.bridgePerfSummary() {
		return "", false
	}
	if fsdp := strings.ToLower(r.ZeroOrFSDP); strings.Contains(fsdp, "fsdp") && !strings.Contains(fsdp, "no fsdp") {
		return "", false
	}
	type layout struct {
		release, model, chip string
		tp, pp, cp, vp       int
	}
	recipes := []layout{
		{"25.11 NeMo Container", "llama-3.1-405b", "gb200", 4, 16, 1, 4},
		{"25.11 NeMo Container", "llama-3.1-405b", "b200", 4, 8, 2, 8},
		{"25.11 NeMo Container", "llama-3/3.1-8b", "gb200", 1, 1, 1, 0},
		{"25.11 NeMo Container", "llama-3/3.1-8b", "b200", 1, 1, 1, 0},
		{"26.04.01 NeMo Container", "llama-3/3.1-70b", "gb200", 2, 4, 1, 5},
	}
	name, chip := strings.ToLower(r.ModelName), strings.ToLower(r.Chip)
	for _, l := range recipes {
		if strings.Contains(r.Source, l.release) && name == l.model && chip == l.chip &&
			r.TP == l.tp && r.PP == l.pp && max(r.CP, 1) == l.cp && r.InterleaveV == l.vp {
			return space.RecomputeNone, true
		}
	}
	return "", false
}

// bridgeActOffload returns the cpu_offloading_num_layers of the
// Megatron-Bridge performance config a Megatron-FSDP row of the Llama 3
// and 3.1 tables ran (space.Strategy.ActOffload), false for any other row.
// The FSDP configs keep the activations of their first layers in host
// memory instead of recomputing them:
//
//   - 25.09 (v0.1.0rc3 scripts/performance/configs/llama3/llama3_70b_llm_pretrain.yaml:133-146,
//     configs/llama31/llama31_405b_llm_pretrain.yaml:111-123): Llama 3 70B
//     on GB200 40 layers in fp8, 20 in bf16; Llama 3.1 405B on GB200 (tp 2)
//     95;
//   - 25.11 to 26.04.01 (v0.2.0 configs/llama3/workload_base_configs.py:35-112,
//     configs/llama31/workload_base_configs.py:27-87; v0.3.0 to v0.4.2
//     configs/llama/llama3_workload_base_configs.py:53-161 and
//     llama31_workload_base_configs.py:34-94): Llama 3 70B on GB200 40 in
//     fp8 and 20 in bf16, on GB300 20 and 30, on B200 5 in fp8; Llama 3.1
//     405B on GB200 92 in fp8, on GB300 10 in fp8 and 40 in bf16.
func (r Run) bridgeActOffload() (int, bool) {
	if !r.bridgePerfSummary() {
		return 0, false
	}
	if fsdp := strings.ToLower(r.ZeroOrFSDP); !strings.Contains(fsdp, "fsdp") || strings.Contains(fsdp, "no fsdp") {
		return 0, false
	}
	name, chip := strings.ToLower(r.ModelName), strings.ToLower(r.Chip)
	fp8 := strings.Contains(strings.ToLower(r.Precision), "fp8")
	early := strings.Contains(r.Source, "25.09 NeMo Container")
	type recipe struct {
		model, chip string
		fp8         bool
		layers      int
	}
	recipes := []recipe{
		{"70b", "gb200", true, 40}, {"70b", "gb200", false, 20},
		{"70b", "gb300", true, 20}, {"70b", "gb300", false, 30},
		{"70b", "b200", true, 5},
		{"405b", "gb200", true, 92}, {"405b", "gb300", true, 10}, {"405b", "gb300", false, 40},
	}
	for _, rc := range recipes {
		if strings.Contains(name, rc.model) && strings.HasPrefix(chip, rc.chip) && fp8 == rc.fp8 {
			if early && rc.model == "405b" {
				return 95, true // v0.1.0rc3's fp8_ds and fp8_cs
			}
			return rc.layers, true
		}
	}
	return 0, false
}

// gb200DeepSeekRecompute returns the --recompute-modules of a row of
// Megatron-LM's DeepSeek-V3 GB200 optimization history, whose recompute
// column says only "selective", "" for any other row: the baseline
// recomputes the dense layers' MLP and MLA's up-projections
// (--recompute-modules mlp up_proj), the final runs mlp and moe_act
// (the write-up of NVIDIA/Megatron-LM@eb0783b6 under
// docs/discussions/deepseek-v3-gb200-optimization, section 1 and section
// 2.2.2). The row's notes say which it is.
func (r Run) gb200DeepSeekRecompute() string {
	if !strings.Contains(r.Source, "deepseek-v3-gb200-optimization") || strings.TrimSpace(strings.ToLower(r.Recompute)) != space.RecomputeSelective {
		return ""
	}
	switch notes := strings.ToLower(strings.TrimSpace(r.Notes)); {
	case strings.HasPrefix(notes, "baseline:"):
		return model.ModuleMLP + "+" + model.ModuleMLAUpProj
	case strings.HasPrefix(notes, "final:"):
		return model.ModuleMLP + "+" + model.ModuleMoEAct
	}
	return ""
}

// lightningFP16Engine returns "deepspeed" or "gemini" for a row of the
// ColossalAI-Pytorch-lightning benchmark run by an engine that casts the
// model to fp16 (DeepSpeed's fp16 mode, ColossalAI Gemini's fp16 chunks;
// benchmark/gpt/train.py @afbfdaf9 sets precision 16 for both), and ""
// for any other row (Lightning DDP runs native AMP).
func (r Run) lightningFP16Engine() string {
	if !strings.HasPrefix(r.SourceName(), "hpcaitech/ColossalAI-Pytorch-lightning") {
		return ""
	}
	t := strings.ToLower(r.ZeroOrFSDP)
	switch {
	case strings.Contains(t, "gemini"):
		return "gemini"
	case strings.Contains(t, "deepspeed"):
		return "deepspeed"
	}
	return ""
}

// composerMixedPrecision reports whether row r ran MosaicML Composer's
// FSDP with its DEFAULT mixed precision (bf16 parameters, fp32 gradient
// reduction), as LLM Foundry's benchmark tables say in their "MP Mode"
// column (the zero_or_fsdp column of testdata/llm-foundry-h100.csv).
func (r Run) composerMixedPrecision() bool {
	return strings.HasPrefix(r.SourceName(), "mosaicml/llm-foundry") &&
		strings.Contains(strings.ToLower(r.ZeroOrFSDP), "mixed_precision default")
}

// lightningKeepsGrads reports whether row r ran PyTorch Lightning's own
// optimizer loop over a PyTorch optimizer on PyTorch before 2.0, whose
// zero_grad keeps the gradients (zeroed, not freed): the
// ColossalAI-Pytorch-lightning benchmark's rows (2022, Lightning 1.7)
// that no engine of its own (DeepSpeed, ColossalAI Gemini) runs.
func (r Run) lightningKeepsGrads() bool {
	return strings.HasPrefix(r.SourceName(), "hpcaitech/ColossalAI-Pytorch-lightning") && r.lightningFP16Engine() == ""
}

// reason turns an error into a skip reason: the sentence without this
// package's prefix.
func reason(err error) string {
	return strings.TrimPrefix(strings.ReplaceAll(err.Error(), "\n", "; "), "runs: ")
}

// evaluation is one strategy's prediction.
type evaluation struct {
	s   space.Strategy
	est cost.Estimate
	mem memory.Breakdown
	fit bool
}

// validate predicts one run.
func (r Run) validate(override *profiles.Cluster, vo Options) (Row, error) {
	var meas Measurement
	p, err := r.predict(override, vo, func(m model.Spec, c profiles.Cluster, w space.Workload) error {
		var err error
		meas, err = r.Measured(m, c.Chips(), w.Batch, w.SeqLen)
		return err
	})
	if err != nil {
		return Row{}, err
	}
	notes := append(p.notes, "measured = "+meas.From)
	m, c, w, best := p.m, p.c, p.w, p.best

	chips := float64(c.Chips())
	tokens := float64(w.Tokens())
	pred := tokens / best.est.StepSeconds / chips
	peak := c.Chip.PeakBF16FLOPs
	fpt := m.ModelFLOPsPerToken(w.SeqLen)
	return Row{
		ID:                         r.ID,
		Framework:                  p.fw,
		Cluster:                    c.Name,
		Chip:                       c.Chip.Name,
		Chips:                      c.Chips(),
		Strategy:                   best.s.String(),
		MeasuredTokensPerSPerChip:  meas.TokensPerSPerChip,
		PredictedTokensPerSPerChip: pred,
		Error:                      pred/meas.TokensPerSPerChip - 1,
		PredictedStepSeconds:       best.est.StepSeconds,
		MeasuredMFU:                meas.TokensPerSPerChip * fpt / peak,
		PredictedMFU:               pred * fpt / peak,
		MemoryGBPerChip:            best.mem.TotalBytes() / 1e9,
		Fits:                       best.fit,
		OOMRisk:                    profiles.OOMRisk(best.mem.TotalBytes(), p.usable, c.Chips(), p.fw),
		Note:                       strings.Join(notes, "; "),
	}, nil
}

// prediction is one run's best evaluation and what it was made from.
type prediction struct {
	m      model.Spec
	c      profiles.Cluster
	w      space.Workload
	fw     string
	best   evaluation
	usable float64 // usable HBM per chip, bytes
	notes  []string
}

// predict converts run r and evaluates its strategy (or, without a
// published micro-batch, the best of its micro-batch sizes). check, when
// not nil, runs once the run is converted (validate reads the measured
// figure there) and its error stops the prediction.
func (r Run) predict(override *profiles.Cluster, vo Options, check func(model.Spec, profiles.Cluster, space.Workload) error) (prediction, error) {
	o, fw, err := r.SearchOptions(vo)
	if err != nil {
		return prediction{}, err
	}
	m, c, w, s, notes, err := r.plan(override)
	if err != nil {
		// Say too when the measured figure could not be used either.
		if mm, merr := r.ModelSpec(); merr == nil && check != nil {
			if _, merr = r.Measured(mm, r.Chips, 0, max(r.SeqLen, mm.SeqLen)); merr != nil && !errors.Is(err, errLayout) {
				err = fmt.Errorf("%w; %s", err, reason(merr))
			}
		}
		return prediction{}, err
	}
	if check != nil {
		if err := check(m, c, w); err != nil {
			return prediction{}, err
		}
	}
	if r.Strategy == "" && o.Limits.RequireSP && s.Degree[space.TP] > 1 && !s.SP {
		// The framework's tensor parallelism always shards the activations
		// between layers (MaxText's activation_embed -> tensor rule,
		// torchtitan's sequence parallelism), whatever the row's cp_or_sp says.
		s.SP = true
		notes = append(notes, "sp: "+fw+"'s tensor parallelism shards the activations between layers")
	}
	if mods := r.gb200DeepSeekRecompute(); r.Strategy == "" && mods != "" {
		s.Recompute = mods
		notes = append(notes, "recompute="+mods+": the run's --recompute-modules")
	}
	candidates := []space.Strategy{s}
	if r.Strategy == "" && r.MicroBatch == 0 {
		candidates = mbCandidates(s, w)
	}
	if r.Strategy == "" && r.bridgeA2AOverlap() {
		// The release's recipe overlaps the MoE all-to-all with another
		// micro-batch's compute (bridgeA2AOverlap); a candidate Megatron-Core
		// would refuse with it (recompute=full) fails to evaluate below.
		for i := range candidates {
			candidates[i].A2AOverlap = true
		}
		notes = append(notes, "a2a_overlap: the release's performance recipe sets overlap_moe_expert_parallel_comm")
	}
	if over, d := r.notedMoE(); r.Strategy == "" && (over || d != "") {
		// The row's own notes state the MoE settings it ran (notedMoE).
		for i := range candidates {
			candidates[i].A2AOverlap = candidates[i].A2AOverlap || over
			if d != "" {
				candidates[i].Dispatcher = d
			}
		}
		if over {
			notes = append(notes, "a2a_overlap: the run's notes say EP overlap on")
		}
		if d != "" {
			notes = append(notes, "dispatcher="+d+": the run's notes")
		}
	}
	if d := r.bridgeDispatcher(); r.Strategy == "" && d != "" {
		// The release's recipe names the MoE token dispatcher
		// (bridgeDispatcher): the flex ones send a token once per node.
		for i := range candidates {
			candidates[i].Dispatcher = d
		}
		notes = append(notes, "dispatcher="+d+": the release's performance recipe")
	}
	zeroTried := false
	if r.Strategy == "" && r.posed() && s.Zero == 0 && s.Degree[space.DP] > 1 && zeroUnstated(r.ZeroOrFSDP) {
		// Whether the optimizer states are sharded (Megatron's distributed
		// optimizer) is not published: try both, as the mb above.
		for _, c := range candidates {
			c.Zero = 1
			candidates = append(candidates, c)
		}
		zeroTried = true
	}
	recomputeTried := 0
	recipe, fromRecipe := "", false
	if r.Strategy == "" && r.recomputeUnstated() && s.Recompute == space.RecomputeNone {
		recipe, fromRecipe = r.bridgeRecompute()
		if !fromRecipe {
			recipe, fromRecipe = r.bridgeDenseRecompute()
		}
		if n, ok := r.bridgeActOffload(); !fromRecipe && ok && o.Limits.ActOffload {
			// The FSDP recipe offloads its first layers' activations
			// instead of recomputing them (Megatron-Core refuses both).
			recipe, fromRecipe = space.RecomputeNone, true
			for i := range candidates {
				candidates[i].ActOffload = n
			}
			notes = append(notes, fmt.Sprintf("act_offload=%d: the release's performance recipe (cpu_offloading_num_layers)", n))
		}
	}
	if fromRecipe {
		// The release's performance config names the recomputation
		// (bridgeRecompute): pose it, rather than the fastest that fits.
		for i := range candidates {
			candidates[i].Recompute = recipe
		}
		notes = append(notes, "recompute="+recomputeName(recipe)+": the release's performance recipe")
	} else if r.Strategy == "" && r.recomputeUnstated() && s.Recompute == space.RecomputeNone {
		// The recomputation is not published: try each policy the
		// framework searches, as the mb and zero above, and keep the
		// fastest that fits, as the run's owners tuned it to fit.
		base := len(candidates)
		for _, pol := range o.Limits.SearchedRecomputes() {
			if pol == space.RecomputeNone {
				continue
			}
			for _, c := range candidates[:base] {
				c.Recompute = pol
				candidates = append(candidates, c)
			}
			recomputeTried++
		}
	}
	if r.UnfusedAttention() {
		notes = append(notes, "attention without FlashAttention (the source predates it)")
	}
	if r.bridgeGraphedMoE() {
		notes = append(notes, "the recipe's fused grouped MLP and full-iteration CUDA graph")
	}
	if r.graphedLayers() {
		notes = append(notes, "partial CUDA graphs: GEMM calls at their back-to-back tail")
	}
	if r.EagerLoss() && fw == "torchtitan" {
		notes = append(notes, "an eager cross-entropy loss (torchtitan did not compile its loss from 2024-12-18 to 2025-04-02)")
	}
	if fw == "torchtitan" && s.Degree[space.CP] > 1 {
		notes = append(notes, "cp: PyTorch's compiled ring attention, the keys and values all-gathered repeated to the query heads, their gradients back in fp32")
	}
	if r.composerMixedPrecision() && fw == framework.Default {
		notes = append(notes, "Composer's FSDP mixed precision DEFAULT: bf16 weight copies, gradients cast to fp32 for their reduction")
	}
	if r.FlashAttention2() {
		notes = append(notes, fmt.Sprintf("attention on FlashAttention-2 at %.2f of the H100's flash rate (%s)", hopperFlashAttention2Rate, r.flashAttention2Why()))
	}
	if o.FP8 != nil && o.FP8.FP4 && s.FP8() {
		notes = append(notes, "precision=fp8 under the nvfp4 recipe: the projections at the chip's fp4 rate")
	}
	p, err := search.NewProblem(m, c, w, space.Fix{}, o)
	if err != nil {
		return prediction{}, fmt.Errorf("runs: %w", err)
	}
	var best *evaluation
	var firstErr error
	for _, cand := range candidates {
		e, err := evaluate(p, cand)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if best == nil || better(e, *best) {
			best = &e
		}
	}
	if best == nil {
		return prediction{}, firstErr
	}
	if !best.fit && r.Strategy == "" && o.Limits.BF16Weights && !s.BF16Weights() {
		// Nothing fits with fp32 weights, yet the run ran: the framework
		// keeps bf16 weights (MaxText's weight_dtype), which a row's
		// columns do not say, so the retry the planner makes when nothing
		// fits (planner.Request.BF16WeightsFix) is made here too.
		var bf *evaluation
		for _, cand := range candidates {
			cand.Weights = space.WeightsBF16
			if e, err := evaluate(p, cand); err == nil && (bf == nil || better(e, *bf)) {
				bf = &e
			}
		}
		if bf != nil && bf.fit {
			best = bf
			notes = append(notes, "nothing fits with fp32 weights: weights=bf16 (the framework's bf16 parameters, gradients and moments)")
		}
	}
	if len(candidates) > 1 && !zeroTried {
		notes = append(notes, fmt.Sprintf("micro-batch not published: mb=%d chosen (fastest that fits of %d tried)", best.s.MB, len(candidates)))
	}
	if zeroTried {
		if len(candidates) > 2 {
			notes = append(notes, fmt.Sprintf("micro-batch not published: mb=%d chosen", best.s.MB))
		}
		notes = append(notes, fmt.Sprintf("optimizer sharding not published: zero=%d chosen (fastest that fits of %d tried)", best.s.Zero, len(candidates)))
	}
	if recomputeTried > 0 {
		notes = append(notes, fmt.Sprintf("recomputation not published: recompute=%s chosen (fastest that fits of %d policies)", recomputeName(best.s.Recompute), recomputeTried+1))
	}
	if !best.fit {
		notes = append(notes, fmt.Sprintf("does not fit: needs %.1f GB of %.1f GB usable per chip",
			best.mem.TotalBytes()/1e9, p.UsableBytes()/1e9))
	}
	return prediction{m: m, c: c, w: w, fw: fw, best: *best, usable: p.UsableBytes(), notes: notes}, nil
}

// better says e beats b: fitting beats not fitting; among fitting
// strategies the faster wins, among others the smaller in memory.
func better(e, b evaluation) bool {
	if e.fit != b.fit {
		return e.fit
	}
	if e.fit {
		return e.est.StepSeconds < b.est.StepSeconds
	}
	return e.mem.TotalBytes() < b.mem.TotalBytes()
}

// mbCandidates returns s with every micro-batch size that divides the
// per-replica batch, smallest first, at most maxMBCandidates of them.
func mbCandidates(s space.Strategy, w space.Workload) []space.Strategy {
	per := w.Batch / max(s.Replicas(), 1)
	var out []space.Strategy
	for mb := 1; mb <= per && len(out) < maxMBCandidates; mb++ {
		if per%mb == 0 {
			c := s
			c.MB = mb
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		out = append(out, s)
	}
	return out
}

// evaluate validates, places and predicts one strategy on p, as plan
// and explain do.
func evaluate(p *search.Problem, s space.Strategy) (evaluation, error) {
	if err := s.Validate(p.Model(), p.Cluster(), p.Workload()); err != nil {
		return evaluation{}, fmt.Errorf("runs: strategy %s: %w", s, err)
	}
	// Placed as the run's framework lays out its ranks (Megatron: tp, cp,
	// dp, pp from the innermost), the mesh the published run had, and
	// refused where the framework could not run it so (a Megatron-Core
	// expert grid the planner cannot carve: Limits.CheckPlacement), rather
	// than priced on a layout the run did not have.
	placed, err := p.Options().Limits.Place(s, p.Cluster())
	if err != nil {
		return evaluation{}, fmt.Errorf("runs: strategy %s: %w", s, err)
	}
	if err := p.Options().Limits.CheckPlacement(placed, p.Cluster()); err != nil {
		return evaluation{}, fmt.Errorf("runs: strategy %s: %w", placed, err)
	}
	c := p.Evaluate(placed, false)
	if c.Err != nil {
		return evaluation{}, fmt.Errorf("runs: %w", c.Err)
	}
	return evaluation{s: placed, est: c.Time, mem: c.Memory, fit: c.Fits}, nil
}

// zeroUnstated reports whether a published zero_or_fsdp text leaves the
// optimizer-state sharding open: blank, or "not stated" (Megatron-Bridge's
// "no FSDP (FSDP=0, DDP; distributed-optimizer use not stated)").
func zeroUnstated(text string) bool {
	t := strings.ToLower(strings.TrimSpace(text))
	return t == "" || strings.Contains(t, "not stated")
}

// recomputeName is a policy's name, "none" for the empty one.
func recomputeName(p string) string {
	if p == "" {
		return space.RecomputeNone
	}
	return p
}

// recomputeUnstated reports whether r's recomputation is blank because its
// source's table has no column for it, rather than because none ran:
// Megatron-Bridge's performance summary (per system, model, precision,
// batch and parallel degrees) and NeMo's performance tables
// (docs/published-runs-2.md: "No tokens/s, MBS, VP or recompute is given").
// A blank elsewhere (a training script without recompute flags, as
// Megatron-LM's examples/llama) is none.
func (r Run) recomputeUnstated() bool {
	if !r.posed() || strings.TrimSpace(r.Recompute) != "" {
		return false
	}
	src := r.SourceName()
	return (strings.HasPrefix(src, "NVIDIA-NeMo/Megatron-Bridge") && strings.Contains(r.Source, "performance-summary")) ||
		(strings.HasPrefix(src, "NVIDIA/NeMo") && strings.Contains(r.Source, "performance"))
}
