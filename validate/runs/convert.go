package runs

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/meshplan/meshplan/framework"
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// nicPerNode and totalPerNode find a row's stated scale-out fabric.
var (
	nicPerNode   = regexp.MustCompile(`(\d+)\s*x\s*(\d+)\s*Gbps per node`)
	totalPerNode = regexp.MustCompile(`\((\d+)\s*Gbps`)
)

// source holds the conventions of one publication or framework, selected by
// a row id's prefix (docs/published-runs.md §1 and §2).
type source struct {
	// family is the architecture of the models the source trains.
	family family
	// convention is the FLOP count behind the source's MFU and TFLOP/s figures.
	convention Convention
	// perDeviceBatch says micro_batch is MaxText's per_device_batch_size
	// (no gradient accumulation) rather than a per-replica micro-batch.
	perDeviceBatch bool
	// framework is the framework profile the source's runs used.
	framework string
	// unfusedAttention says the source's framework predates FlashAttention
	// (May 2022): Megatron-LM and Megatron-DeepSpeed of 2021-2022 materialise
	// the score square and run a fused masked softmax over it [KORT §4.1].
	unfusedAttention bool
}

// family is the architecture choices a row's columns do not carry.
type family struct {
	name   string
	ffn    string // model.GELU or model.SwiGLU
	norm   string // model.LayerNorm or model.RMSNorm
	bias   bool
	tied   bool
	headIs int  // head width when it is not hidden/heads (0: hidden/heads)
	alibi  bool // ALiBi instead of a rotary embedding (model.Spec.ALiBi)
}

var (
	// Megatron GPT (Narayanan 2021, Korthikanti 2022, MT-NLG) and OPT:
	// LayerNorm, biased linear layers, a 4h GELU MLP, and the output layer
	// tied to the input embedding (Megatron's default; the published 1T and
	// 530B parameter counts only add up with one V*h matrix).
	megatronGPT = family{name: "megatron-gpt", ffn: model.GELU, norm: model.LayerNorm, bias: true, tied: true}
	// BLOOM: Megatron-DeepSpeed GPT with a tied 250k-vocabulary embedding
	// (BLOOM paper §3.2; 176.2B only adds up tied).
	// ALiBi in every layer (BLOOM paper §3.3).
	bloom = family{name: "bloom", ffn: model.GELU, norm: model.LayerNorm, bias: true, tied: true, alibi: true}
	// GPT-NeoX-20B: LayerNorm, biases, GELU, an untied output layer
	// (embed_out; 20.6B only adds up untied).
	gptNeoX = family{name: "gpt-neox", ffn: model.GELU, norm: model.LayerNorm, bias: true, tied: false}
	// MPT: LayerNorm without biases (no_bias=True), a 4d GELU MLP and a tied
	// embedding (llm-foundry's MPT config; 64.86B for MPT-70B adds up tied),
	// with ALiBi (its attn_config alibi: true).
	mpt = family{name: "mpt", ffn: model.GELU, norm: model.LayerNorm, bias: false, tied: true, alibi: true}
	// Llama (1, 2, 3; torchtitan; Mixtral): RMSNorm, SwiGLU, no biases,
	// untied output layer.
	llama = family{name: "llama", ffn: model.SwiGLU, norm: model.RMSNorm, tied: false}
	// GPT-OSS: RMSNorm, gated SiLU experts, untied output layer, biased
	// attention projections (attention_bias in its Hugging Face config).
	gptOSS = family{name: "gpt-oss", ffn: model.SwiGLU, norm: model.RMSNorm, tied: false}
	// MaxText's synthetic global_parameter_scale models: Llama-like with
	// gated SiLU, RMSNorm and untied logits, and head_dim fixed at 128 while
	// the head count scales, so heads*head_dim need not equal hidden
	// (16B: 64 heads of 128 on a 4096-wide model; docs/published-runs.md "MaxText").
	maxtext = family{name: "maxtext", ffn: model.SwiGLU, norm: model.RMSNorm, tied: false, headIs: 128}
)

// sourceNamed returns the conventions of a row-id prefix, and false for an
// unknown prefix.
func sourceNamed(prefix string) (source, bool) {
	switch prefix {
	case "nar21":
		return source{family: megatronGPT, convention: ConventionMegatronHFU, framework: "megatron", unfusedAttention: true}, true
	case "kor22":
		return source{family: megatronGPT, convention: ConventionMegatronMFU, framework: "megatron", unfusedAttention: true}, true
	case "mtnlg":
		return source{family: megatronGPT, convention: ConventionMegatronHFU, framework: "deepspeed", unfusedAttention: true}, true
	case "bloom":
		return source{family: bloom, convention: ConventionMegatronHFU, framework: "deepspeed", unfusedAttention: true}, true
	case "opt":
		return source{family: megatronGPT, convention: ConventionUnknown, framework: framework.Default, unfusedAttention: true}, true
	case "gptneox":
		return source{family: gptNeoX, convention: ConventionMegatronHFU, framework: "deepspeed", unfusedAttention: true}, true
	case "maxtext":
		return source{family: maxtext, convention: ConventionMaxText2024, framework: "maxtext", perDeviceBatch: true}, true
	case "mpt":
		return source{family: mpt, convention: Convention6NAttention, framework: "pytorch"}, true
	case "torchtitan":
		return source{family: llama, convention: Convention6NAttention, framework: "torchtitan"}, true
	case "llama1":
		return source{family: llama, convention: ConventionContract, framework: framework.Default}, true
	}
	return source{}, false
}

// sourceOf returns the conventions of the row's id prefix, and false when
// the prefix is not a known source.
func (r Run) sourceOf() (source, bool) {
	prefix, _, _ := strings.Cut(r.ID, "_")
	s, ok := sourceNamed(strings.ToLower(prefix))
	return s, ok
}

// FrameworkName returns the framework profile the run is predicted with:
// its "framework" column, else its source's framework (docs/published-runs.md
// §2): Megatron-LM for Narayanan 2021 and Korthikanti 2022 (DeepSpeed for
// Narayanan's ZeRO-3 baseline), DeepSpeed for MT-NLG, BLOOM and GPT-NeoX
// (DeepSpeed's pipeline engine over Megatron's layers), MaxText, torchtitan,
// eager PyTorch for MosaicML's LLM Foundry (PyTorch FSDP without
// torch.compile), and the default profile for any other row.
func (r Run) FrameworkName() string {
	if r.Framework != "" {
		if r.posed() {
			return frameworkProfile(r.Framework)
		}
		return r.Framework
	}
	s, ok := r.sourceOf()
	if !ok {
		return framework.Default
	}
	if strings.Contains(strings.ToLower(r.ZeroOrFSDP), "deepspeed") {
		return "deepspeed"
	}
	return s.framework
}

// UnfusedAttention says the row's source ran an attention core without
// FlashAttention, so validation models the materialised score square
// (model.Kernels.Attention = model.AttentionMaterialized).
func (r Run) UnfusedAttention() bool {
	s, ok := r.sourceOf()
	return ok && s.unfusedAttention
}

// hopperFlashAttention2Rate is FlashAttention-2's speed on an H100 relative
// to the flash kernel profiles.Efficiency models there
// (profiles.HopperFlashAttention2Fraction, from the FA3 paper's figures).
const hopperFlashAttention2Rate = profiles.HopperFlashAttention2Fraction

// nemoReleaseRe reads a NeMo Framework container release ("NeMo24.03.01",
// "NeMo 25.11") in a row's framework column.
var nemoReleaseRe = regexp.MustCompile(`(?i)\bnemo\s*(\d{2})\.(\d{2})`)

// torchtitanCommitRe reads the torchtitan commit a row names in its
// framework column ("torchtitan 820504e").
var torchtitanCommitRe = regexp.MustCompile(`(?i)\btorchtitan\s+([0-9a-f]{7,40})\b`)

// torchtitanFlashFirst lists the torchtitan commits named by the reference
// data that ran SDPA with PyTorch's flash backend first on Hopper: until
// pytorch/torchtitan@6a3a9da95 (2025-10-09, "Refactor attention", which put
// SDPBackend.CUDNN_ATTENTION first everywhere) torchtitan's
// ScaledDotProductAttention listed FLASH_ATTENTION, EFFICIENT_ATTENTION,
// MATH under sdpa_kernel(set_priority=True) and put cuDNN first only on
// sm100 (torchtitan/models/attention.py:195-207 at 820504e, from 3b85aa31f,
// 2025-05-14; before that plain SDPA, whose cuDNN backend PyTorch made
// opt-in after 2.5, pytorch/pytorch#138522). PyTorch's flash backend is
// FlashAttention-2 (329 against cuDNN's 631 TFLOP/s on an H100,
// pytorch/pytorch#142132, 2024-12).
var torchtitanFlashFirst = []string{
	"820504e", // 2025-06-13, the commit of torchtitan's June 2025 async-TP benchmark file
	"9dec370", // 2024-12-26, the commit of torchtitan's December 2024 Llama 3.1 benchmark file
	"e7c0cae", // 2025-06-11, the commit of Trainy's June 2025 H200 benchmark file (FLASH_ATTENTION first, torchtitan/models/attention.py:201-205)
}

// torchtitanEagerLoss lists the torchtitan commits named by the reference
// data whose compiled runs ran the loss eager: torchtitan compiled its
// loss with the model from e10cb9494 (2024-10-22), commented it out at
// e8977b007 (2024-12-18, "compiling loss function causes CUDA errors";
// train.py:136-138 at 9dec370) and compiled it again under
// training.compile from bbb1b616e (2025-04-02,
// torchtitan/components/loss.py build_cross_entropy_loss).
var torchtitanEagerLoss = []string{
	"9dec370", // 2024-12-26, the commit of torchtitan's December 2024 Llama 3.1 benchmark file
}

// EagerLoss says the row ran its cross-entropy loss in eager PyTorch
// (torchtitanEagerLoss): fp32 logits, their log-softmax kept and an fp32
// gradient, the pytorch profile's loss pass.
func (r Run) EagerLoss() bool {
	_, in := r.torchtitanCommitIn(torchtitanEagerLoss)
	return in
}

// torchtitanCommitIn reports whether the row names a torchtitan commit
// (torchtitanCommitRe) and whether it is one of commits, by the shorter
// of the two hashes as a prefix of the other.
func (r Run) torchtitanCommitIn(commits []string) (named, in bool) {
	m := torchtitanCommitRe.FindStringSubmatch(r.Framework)
	if m == nil {
		return false, false
	}
	c := strings.ToLower(m[1])
	return true, slices.ContainsFunc(commits, func(p string) bool {
		n := min(len(p), len(c))
		return c[:n] == p[:n]
	})
}

// FlashAttention2 says the row ran its attention on FlashAttention-2 on a
// Hopper GPU, where the planner's flash rate is a newer kernel's:
//   - NeMo Framework releases before 24.09 launched training with
//     NVTE_FUSED_ATTN=0 ("Disable cudnn FA until we've tested it more",
//     NVIDIA/NeMo-Framework-Launcher launcher_scripts/conf/config.yaml at
//     tags 24.01 to 24.07; removed by 04b8d098, 2024-08-29), so Transformer
//     Engine, which prefers cuDNN's fused attention on sm90, ran flash-attn
//     2 (NVIDIA/TransformerEngine@da30634a, the commit NeMo v1.23.0's
//     Dockerfile pins: transformer_engine/pytorch/attention.py,
//     DotProductAttention.forward);
//   - torchtitan before its cuDNN-first attention (torchtitanFlashFirst).
func (r Run) FlashAttention2() bool {
	if !r.flashAttention2Release() {
		return false
	}
	c, _, err := lookupChip(r.Chip)
	return err == nil && c.Family == "nvidia-hopper"
}

// flashAttention2Release says the row's framework release ran SDPA or
// Transformer Engine on FlashAttention-2 where a Hopper GPU could have run
// cuDNN's kernel (FlashAttention2).
func (r Run) flashAttention2Release() bool {
	if named, in := r.torchtitanCommitIn(torchtitanFlashFirst); named {
		return in
	}
	rel := r.nemoRelease()
	return rel > 0 && rel < 2409
}

// nemoRelease returns the NeMo Framework container release a row's
// framework column names as yymm (2407 for "NeMo24.07"), 0 for none.
func (r Run) nemoRelease() int {
	m := nemoReleaseRe.FindStringSubmatch(r.Framework)
	if m == nil {
		return 0
	}
	year, _ := strconv.Atoi(m[1])
	month, _ := strconv.Atoi(m[2])
	return year*100 + month
}

// BF16GradSync says the row's NeMo release ran its training examples with
// bf16 gradient buffers: NeMo-Framework-Launcher's H100 and A100 training
// scripts for GPT-3 and Llama set
// +training.model.optim.grad_sync_dtype=bf16 for Apex's distributed fused
// Adam from 24.05 to 24.12 (NVIDIA/NeMo-Framework-Launcher at tags 24.05,
// 24.07, 24.09, 24.12: examples/training/gpt/h100/*_fp8_*node.sh,
// examples/training/llama/h100/llama*.sh; none at 24.01 and 24.03), whose
// gradient buckets the layers accumulate into (NeMo's megatron_amp_O2 with
// contiguous_grad_buffer). The Nemotron, Mixtral and FSDP scripts leave it
// at fp32.
func (r Run) BF16GradSync() bool {
	rel := r.nemoRelease()
	if rel < 2405 || rel > 2412 {
		return false
	}
	if fsdp := strings.ToLower(r.ZeroOrFSDP); strings.Contains(fsdp, "fsdp") && !strings.Contains(fsdp, "no fsdp") {
		return false
	}
	name := strings.ToLower(r.ModelName)
	return strings.Contains(name, "gpt") || strings.Contains(name, "llama")
}

// flashAttention2Why names the reason a FlashAttention2 row ran it.
func (r Run) flashAttention2Why() string {
	if torchtitanCommitRe.MatchString(r.Framework) {
		return "torchtitan before its cuDNN-first attention of 2025-10-09 ran PyTorch's flash backend"
	}
	return "NeMo before 24.09 disabled cuDNN attention"
}

// AttentionRate is the speed of the row's attention kernel relative to the
// chip's flash kernel (model.Kernels.AttentionRate): hopperFlashAttention2Rate
// for a row that ran FlashAttention-2 on Hopper (FlashAttention2), else 1.
func (r Run) AttentionRate() float64 {
	if r.FlashAttention2() {
		return hopperFlashAttention2Rate
	}
	return 1
}

// familyOf picks the architecture for a row: its source's, else one guessed
// from the model name, else from the MLP width (4*hidden: GPT-style GELU;
// otherwise Llama-style SwiGLU). The second result says how it was chosen.
func (r Run) familyOf() (family, string) {
	if s, ok := r.sourceOf(); ok {
		return s.family, ""
	}
	name := strings.ToLower(r.ModelName)
	for _, k := range []struct {
		word string
		f    family
	}{
		{"gpt-oss", gptOSS}, {"internlm", llama},
		{"neox", gptNeoX}, {"bloom", bloom}, {"mpt", mpt},
		{"llama", llama}, {"mistral", llama}, {"mixtral", llama}, {"qwen", llama},
		{"gpt", megatronGPT}, {"opt", megatronGPT}, {"nlg", megatronGPT},
	} {
		if strings.Contains(name, k.word) {
			return k.f, ""
		}
	}
	if r.FFNHidden == 0 || r.FFNHidden == 4*r.Hidden {
		return megatronGPT, "architecture guessed from ffn_hidden = 4*hidden: layernorm, bias, gelu, tied"
	}
	return llama, "architecture guessed from ffn_hidden != 4*hidden: rmsnorm, swiglu, untied"
}

// ModelSpec returns the row's model: the "model" column's preset or file
// when given (with any shape columns overriding it), else a Spec built from
// the shape columns and the source's architecture family, normalised and
// validated.
func (r Run) ModelSpec() (model.Spec, error) {
	if r.posed() {
		return r.posedModel()
	}
	var m model.Spec
	if r.Model != "" {
		var err error
		if m, err = model.Load(r.Model); err != nil {
			return model.Spec{}, fmt.Errorf("runs: %w", err)
		}
	} else {
		f, _ := r.familyOf()
		m = model.Spec{
			Name: r.ModelName, FFN: f.ffn, Norm: f.norm, Bias: f.bias, TiedEmbeddings: f.tied,
			HeadDim: f.headIs, ALiBi: f.alibi,
		}
		if m.Name == "" {
			m.Name = r.ID
		}
	}
	r.overrideShape(&m)
	setIfGiven(&m.FFNHidden, r.FFNHidden)
	if r.MoEExperts > 0 {
		// ffn_hidden of an MoE row is the per-expert width (docs/published-runs.md §1).
		m.MoE = &model.MoE{Experts: r.MoEExperts, TopK: max(r.MoETopK, 1), ExpertFFNHidden: r.FFNHidden}
	}
	m.Normalize()
	if err := m.Validate(); err != nil {
		return model.Spec{}, fmt.Errorf("runs: %w", err)
	}
	return m, nil
}

// chipInfo maps a chip as the published rows name it to a profiles chip and
// the peak the sources use (docs/published-runs.md §1 "chip names").
type chipInfo struct {
	profile  string  // profiles chip name
	peak     float64 // dense bf16 FLOP/s per chip the sources divide by
	hbmBytes float64 // the chip's HBM when it differs from the profile's (0: the profile's)
}

// publishedChip returns the profiles chip and source peak of a chip as the
// published rows name it (chipKey form), and false for an unknown chip.
func publishedChip(key string) (chipInfo, bool) {
	switch key {
	case "a100-sxm-80gb":
		return chipInfo{"a100", 312e12, 0}, true
	case "a100-sxm-40gb":
		return chipInfo{"a100-40gb", 312e12, 0}, true
	case "h100-sxm-80gb":
		return chipInfo{"h100", 989e12, 0}, true
	case "h800":
		return chipInfo{"h800", 989e12, 0}, true
	case "h100-80gb":
		return chipInfo{"h100", 989e12, 0}, true
	case "h100-sxm-96gb-hbm2e":
		// Meta's Grand Teton H100 with 96 GB of HBM2e at a 500 W cap
		// (docs/published-runs-2.md): profiles' power-capped variant.
		return chipInfo{"h100-96gb-500w", 989e12, 0}, true
	case "b200":
		return chipInfo{"b200", 2250e12, 0}, true
	case "gb200":
		return chipInfo{"gb200", 2.5e15, 0}, true // "about 2.5 PFLOP/s", unverified ?
	case "b300":
		return chipInfo{"b300", 2250e12, 0}, true
	case "gb300":
		return chipInfo{"gb300", 2.5e15, 0}, true
	case "tpuv3":
		return chipInfo{"v3", 123e12, 0}, true
	case "tpuv4":
		return chipInfo{"v4", 275e12, 0}, true
	case "tpuv5e":
		return chipInfo{"v5e", 197e12, 0}, true
	case "tpuv5p":
		return chipInfo{"v5p", 459e12, 0}, true
	case "tpuv6e":
		return chipInfo{"v6e", 918e12, 0}, true
	}
	return chipInfo{}, false
}

// chipKey reduces a published chip name to its table key:
// "A100-SXM-80GB (1600Gbps RoCE)" -> "a100-sxm-80gb".
func chipKey(chip string) string {
	k := strings.ToLower(strings.TrimSpace(chip))
	if i := strings.IndexAny(k, " ("); i >= 0 {
		k = k[:i]
	}
	return k
}

// lookupChip returns the profiles chip and the source peak for a published
// chip name, or for a profiles chip name ("a100", "v5e") in a user file.
func lookupChip(chip string) (profiles.Chip, float64, error) {
	name, peak := "", 0.0
	if ci, ok := publishedChip(chipKey(chip)); ok {
		name, peak = ci.profile, ci.peak
	} else {
		name = chipKey(chip)
	}
	c, err := profiles.LookupChip(name)
	if err != nil {
		return profiles.Chip{}, 0, fmt.Errorf("runs: no cluster profile for chip %q: %v", chip, err)
	}
	if peak == 0 {
		peak = c.PeakBF16FLOPs
	}
	return c, peak, nil
}

// slicesRe finds "8x v5e-256" in a TPU row's notes: 8 slices of v5e-256.
var slicesRe = regexp.MustCompile(`(?i)\b(\d+)x\s*(v[0-9a-z]+)-(\d+)\b`)

// ClusterName returns the cluster name for the row's chip and chip count:
// "CHIP-N" for GPUs (N counts GPUs), and for TPUs the slice name in the
// chip's own units ("v5e-256" counts chips, "v5p-256" TensorCores) with a
// "Kx" prefix when the notes say the job spans K slices ("8x v5e-256").
func (r Run) ClusterName() (string, error) {
	if r.Cluster != "" {
		return r.Cluster, nil
	}
	if r.Chip == "" || r.Chips == 0 {
		return "", errors.New("runs: the source does not give the chip or the chip count")
	}
	c, _, err := lookupChip(r.Chip)
	if err != nil {
		return "", err
	}
	cores := max(c.TensorCoresPerChip, 1)
	if !strings.HasPrefix(c.Family, "tpu") {
		return fmt.Sprintf("%s-%d", c.Name, r.Chips), nil
	}
	if m := numSlicesRe.FindStringSubmatch(r.Notes); m != nil && r.posed() {
		// MaxText's num_slices=K: K slices of chips/K chips each.
		k, _ := strconv.Atoi(m[1])
		if k > 1 && r.Chips%k == 0 {
			return fmt.Sprintf("%dx%s-%d", k, c.Name, r.Chips*cores/k), nil
		}
	}
	if m := slicesRe.FindStringSubmatch(r.Notes); m != nil {
		k, _ := strconv.Atoi(m[1])
		size, _ := strconv.Atoi(m[3])
		if k >= 1 && size > 0 && k*size == r.Chips*cores {
			if k == 1 {
				return fmt.Sprintf("%s-%d", c.Name, size), nil
			}
			return fmt.Sprintf("%dx%s-%d", k, c.Name, size), nil
		}
	}
	return fmt.Sprintf("%s-%d", c.Name, r.Chips*cores), nil
}

// ClusterOf returns the row's cluster. With a non-nil override (a fitted
// profile from --cluster), rows on the override's chip use it: as it is when
// the chip counts agree, else the row's own cluster with the override's
// chip, efficiency and per-tier link figures; rows on another chip are an
// error.
func (r Run) ClusterOf(override *profiles.Cluster) (profiles.Cluster, error) {
	c, err := r.clusterOf(override)
	if err != nil {
		return c, err
	}
	if ci, ok := publishedChip(chipKey(r.Chip)); ok && ci.hbmBytes > 0 && r.Cluster == "" {
		c.Chip.HBMBytes = ci.hbmBytes
	}
	return c, nil
}

// clusterOf is ClusterOf before the published chip's own HBM.
func (r Run) clusterOf(override *profiles.Cluster) (profiles.Cluster, error) {
	name, err := r.ClusterName()
	if err != nil {
		return profiles.Cluster{}, err
	}
	c, err := profiles.Load(name)
	if err != nil {
		return profiles.Cluster{}, fmt.Errorf("runs: %w", err)
	}
	if r.Chips > 0 && c.Chips() != r.Chips {
		return profiles.Cluster{}, fmt.Errorf("runs: cluster %s has %d chips but the run used %d", name, c.Chips(), r.Chips)
	}
	if override == nil {
		return r.withNetwork(c), nil
	}
	if override.Chip.Name != c.Chip.Name {
		return profiles.Cluster{}, fmt.Errorf("runs: the run is on %s, not on the --cluster chip %s", c.Chip.Name, override.Chip.Name)
	}
	if override.Chips() == c.Chips() {
		return *override, nil
	}
	c.Chip = override.Chip
	c.Efficiency = override.Efficiency
	for i, a := range c.Axes {
		for _, o := range override.Axes {
			if o.Tier == a.Tier {
				c.Axes[i].BandwidthBytesPerS = o.BandwidthBytesPerS
				c.Axes[i].LatencySeconds = o.LatencySeconds
				c.Axes[i].Efficiency = o.Efficiency
				break
			}
		}
	}
	return r.withNetwork(c), nil
}

// withNetwork sets the scale-out bandwidth per GPU of c's network axis from
// the fabric the row states, where it states one: "4x100Gbps per node"
// (BLOOM's Omni-Path) or "(1600Gbps RoCE)" in the chip column (MosaicML),
// divided among the node's GPUs (docs/hardware.md §2.2: 400 Gb/s = 50 GB/s).
// Rows that state none keep the catalogue's NIC per GPU.
func (r Run) withNetwork(c profiles.Cluster) profiles.Cluster {
	text := r.Chip + " " + r.Notes
	var gbitPerNode float64
	if m := nicPerNode.FindStringSubmatch(text); m != nil {
		n, _ := strconv.ParseFloat(m[1], 64)
		g, _ := strconv.ParseFloat(m[2], 64)
		gbitPerNode = n * g
	} else if m := totalPerNode.FindStringSubmatch(text); m != nil {
		gbitPerNode, _ = strconv.ParseFloat(m[1], 64)
	} else if m := fabricRe.FindStringSubmatch(text); m != nil && r.posed() {
		n, _ := strconv.ParseFloat(m[1], 64)
		g, _ := strconv.ParseFloat(m[2], 64)
		gbitPerNode = n * g
	}
	if gbitPerNode <= 0 {
		return c
	}
	gpusPerNode := 1
	for _, a := range c.Axes {
		if a.Tier == profiles.NVLink {
			gpusPerNode *= a.Size
		}
	}
	axes := slices.Clone(c.Axes)
	for i, a := range axes {
		if a.Tier == profiles.InfiniBand || a.Tier == profiles.Ethernet {
			axes[i].BandwidthBytesPerS = gbitPerNode * 1e9 / 8 / float64(gpusPerNode)
		}
	}
	c.Axes = axes
	return c
}

// Workload returns the global batch in sequences and the sequence length:
// global_batch_seqs, else global_batch_tokens / seq_len, which must be whole.
// seqLen is the model's when the row gives none.
func (r Run) Workload(seqLen int) (space.Workload, error) {
	if r.SeqLen > 0 {
		seqLen = r.SeqLen
	} else if r.posed() {
		// A preset's own length is not the run's.
		return space.Workload{}, errors.New("runs: the source does not give the sequence length (seq_len is blank)")
	}
	if seqLen <= 0 {
		return space.Workload{}, errors.New("runs: the sequence length is not given")
	}
	w := space.Workload{Batch: r.GlobalBatchSeqs, SeqLen: seqLen}
	if w.Batch == 0 {
		switch {
		case r.GlobalBatchTokens == 0:
			return space.Workload{}, errors.New("runs: the global batch is not given")
		case r.GlobalBatchTokens%seqLen != 0:
			return space.Workload{}, fmt.Errorf("runs: global batch of %d tokens is not a whole number of %d-token sequences", r.GlobalBatchTokens, seqLen)
		}
		w.Batch = r.GlobalBatchTokens / seqLen
	}
	return w, nil
}

// Layout returns the row's strategy for a job of chips chips and workload w,
// with notes on the assumptions it made. The "strategy" column, when given,
// is parsed as it stands. Otherwise:
//
//   - dp (which counts ZeRO/FSDP groups) is split by zero_or_fsdp: "none..."
//     keeps plain dp; "ZeRO-1"/"ZeRO-2" set zero on dp; "FSDP..." and
//     "ZeRO-3" make all of dp fsdp; MaxText's "FSDP ici=K x DCN
//     data-parallel=N" gives fsdp=K and dp=N; an unknown DeepSpeed stage
//     ("ZeRO stage ?") is taken as ZeRO-1, the highest stage DeepSpeed's
//     pipeline engine supports;
//   - cp_or_sp "SP" is sp with cp=1, an integer N is cp=N without sp, blank
//     is the contract default (sp when tp>1);
//   - mb is micro_batch, except for MaxText, where per_device_batch_size
//     with no gradient accumulation means one micro-batch of
//     batch/(dp*fsdp) sequences per replica; a blank micro_batch gives mb=1
//     (Validate then picks the fastest mb that fits);
//   - interleave_v > 1 selects the interleaved schedule with v chunks, blank
//     or 1 is 1F1B;
//   - recompute text starting with "full" (or remat_policy=full) is full,
//     "selective" is selective ("selective (op)" or "(per-op SAC)",
//     torchtitan's per-op policy, selective_op), "none" is none, and a MaxText remat_policy
//     is the catalogue's policy of that name (minimal_offloaded).
func (r Run) Layout(chips int, w space.Workload) (space.Strategy, []string, error) {
	if r.Strategy != "" {
		s, err := space.Parse(r.Strategy)
		if err != nil {
			return space.Strategy{}, nil, fmt.Errorf("runs: %w", err)
		}
		return s, nil, nil
	}
	if !r.layoutPublished() {
		return space.Strategy{}, nil, errLayout
	}
	var notes []string
	s := space.Defaults()
	s.Degree[space.TP], s.Degree[space.PP], s.Degree[space.EP] = max(r.TP, 1), max(r.PP, 1), max(r.EP, 1)
	if ep, ok := r.bridgeExpertParallel(); ok {
		s.Degree[space.EP] = ep
		notes = append(notes, fmt.Sprintf("ep=%d: the release's performance config (the table says %d)", ep, r.EP))
	}

	switch v := strings.TrimSpace(r.CPOrSP); {
	case v == "" && r.CP > 0:
		s.Degree[space.CP] = r.CP
		s.SP = s.Degree[space.TP] > 1
	case v == "":
		s.SP = s.Degree[space.TP] > 1
	case strings.EqualFold(v, "sp"):
		s.SP = true
	default:
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return space.Strategy{}, nil, fmt.Errorf("runs: cp_or_sp %q is neither a context-parallel degree nor SP", v)
		}
		s.Degree[space.CP] = n
	}

	dp := r.DP
	if dp == 0 {
		inner := s.Degree[space.TP] * s.Degree[space.PP] * s.Degree[space.CP]
		if chips%inner != 0 {
			return space.Strategy{}, nil, fmt.Errorf("runs: tp*pp*cp = %d does not divide the %d chips", inner, chips)
		}
		dp = chips / inner
		notes = append(notes, fmt.Sprintf("dp=%d derived from the chip count", dp))
	}
	if got := dp * s.Degree[space.TP] * s.Degree[space.PP] * s.Degree[space.CP]; got != chips {
		return space.Strategy{}, nil, fmt.Errorf("runs: tp*pp*dp*cp = %d but the run used %d chips", got, chips)
	}
	var err error
	var note string
	if s.Degree[space.DP], s.Degree[space.FSDP], s.Zero, note, err = splitDP(r.ZeroOrFSDP, dp); err != nil {
		return space.Strategy{}, nil, err
	}
	if note != "" {
		notes = append(notes, note)
	}
	if s.Offload, note = hostOffload(r.ZeroOrFSDP); note != "" {
		notes = append(notes, note)
	}

	replicas := s.Degree[space.DP] * s.Degree[space.FSDP]
	if w.Batch%replicas != 0 {
		return space.Strategy{}, nil, fmt.Errorf("runs: global batch %d does not divide by %d data-parallel replicas", w.Batch, replicas)
	}
	src, _ := r.sourceOf()
	switch {
	case src.perDeviceBatch || (r.posed() && r.FrameworkName() == "maxtext"):
		// MaxText: per_device_batch_size * chips = global batch, one step,
		// no gradient accumulation: each replica's whole share is one micro-batch.
		if r.MicroBatch > 0 && r.MicroBatch*chips != w.Batch {
			return space.Strategy{}, nil, fmt.Errorf("runs: per_device_batch_size %d times %d chips is not the global batch %d", r.MicroBatch, chips, w.Batch)
		}
		s.MB = w.Batch / replicas
	case r.MicroBatch > 0:
		if (w.Batch/replicas)%r.MicroBatch != 0 {
			return space.Strategy{}, nil, fmt.Errorf("runs: micro-batch %d does not divide the %d sequences of each data-parallel replica", r.MicroBatch, w.Batch/replicas)
		}
		s.MB = r.MicroBatch
	default:
		s.MB = 1
	}

	if s.Degree[space.PP] > 1 && r.InterleaveV > 1 {
		s.Schedule, s.V = space.Interleaved, r.InterleaveV
	}
	if l, ok := r.pipelineLayout(); ok {
		if sp, ok := l.split(); ok {
			s.Split = sp
			notes = append(notes, fmt.Sprintf("%s: the pipeline layout %s", sp, r.layoutText()))
		}
	}

	name, ok := moduleList(r.Recompute)
	if ok && r.posed() {
		s.Recompute = name
	} else if s.Recompute, note, err = recomputePolicy(r.Recompute); err != nil {
		if !r.posed() {
			return space.Strategy{}, nil, err
		}
		if s.Recompute, err = recomputeNamed(r.Recompute); err != nil {
			return space.Strategy{}, nil, err
		}
	}
	if r.posed() {
		if s.Precision, err = precisionOf(r.Precision); err != nil {
			return space.Strategy{}, nil, err
		}
		s.ETP = r.ETP
	}
	if note != "" {
		notes = append(notes, note)
	}
	return s, notes, nil
}

// errLayout is the reason for a row without any layout column.
var errLayout = errors.New("runs: parallel layout not published")

// layoutPublished reports whether the row gives a strategy or any of tp, pp,
// dp and zero_or_fsdp.
func (r Run) layoutPublished() bool {
	return r.Strategy != "" || r.TP > 0 || r.PP > 0 || r.DP > 0 || r.ZeroOrFSDP != ""
}

// maxtextMeshRe reads MaxText's "FSDP ici=256 x DCN data-parallel=8".
var maxtextMeshRe = regexp.MustCompile(`(?i)ici\s*=\s*(\d+)\s*x\s*dcn\s+data-parallel\s*=\s*(\d+)`)

// splitDP splits the published dp (which counts ZeRO/FSDP groups) into the
// contract's dp, fsdp and zero stage according to zero_or_fsdp.
func splitDP(text string, dp int) (dpOut, fsdp, zero int, note string, err error) {
	t := strings.ToLower(strings.TrimSpace(text))
	switch {
	case t == "" || strings.HasPrefix(t, "none"):
		return dp, 1, 0, "", nil
	case strings.HasPrefix(t, "no fsdp"):
		// Megatron-Bridge's "FSDP=0, DDP" (docs/published-runs-2.md).
		return dp, 1, 0, "", nil
	case strings.Contains(t, "gemini"):
		// ColossalAI Gemini shards parameters, gradients and optimizer
		// states like ZeRO-3 (docs/published-memory.md).
		return 1, dp, 0, "", nil
	case strings.HasPrefix(t, "distributed optimizer"):
		// Megatron's --use-distributed-optimizer is ZeRO-1.
		return dp, 1, 1, "", nil
	case maxtextMeshRe.MatchString(t):
		m := maxtextMeshRe.FindStringSubmatch(t)
		ici, _ := strconv.Atoi(m[1])
		dcn, _ := strconv.Atoi(m[2])
		if ici*dcn != dp {
			return 0, 0, 0, "", fmt.Errorf("runs: zero_or_fsdp %q gives fsdp*dp = %d but dp is %d", text, ici*dcn, dp)
		}
		return dcn, ici, 0, "", nil
	case strings.Contains(t, "zero-3") || strings.Contains(t, "zero 3") || strings.Contains(t, "fsdp"):
		return 1, dp, 0, "", nil
	case strings.Contains(t, "zero-2") || strings.Contains(t, "zero 2"):
		return dp, 1, 2, "", nil
	case strings.Contains(t, "zero-1") || strings.Contains(t, "zero 1"):
		return dp, 1, 1, "", nil
	case strings.Contains(t, "zero") && strings.Contains(t, "?"):
		return dp, 1, 1, "ZeRO stage not published: ZeRO-1 assumed (DeepSpeed's pipeline engine supports at most stage 1)", nil
	}
	return 0, 0, 0, "", fmt.Errorf("runs: zero_or_fsdp %q is not none, ZeRO-1/2/3 or FSDP", text)
}

// moduleList reads a published "selective: mlp + core_attn" as the
// policy of Megatron-Core's --recompute-modules list it names
// (model.IsModuleList), in the policy's own spelling; "selective:
// core_attn" alone, Megatron-Core's default list
// (transformer_config.py:1940-1941 @d98e8a64), is selective. False when
// the text is not such a list.
func moduleList(text string) (string, bool) {
	t := strings.ToLower(strings.TrimSpace(text))
	rest, ok := strings.CutPrefix(t, "selective:")
	if !ok {
		return "", false
	}
	mods := strings.FieldsFunc(rest, func(c rune) bool { return c == '+' || c == ',' || c == ' ' })
	if len(mods) == 0 {
		return "", false
	}
	pol, ok := model.LookupPolicy(strings.Join(mods, "+"))
	if !ok || !model.IsModuleList(pol.Name) {
		return "", false
	}
	if pol.Name == model.ModuleCoreAttn {
		return space.RecomputeSelective, true
	}
	return pol.Name, true
}

// hostOffload reads the host offload a zero_or_fsdp text names
// (space.Strategy.Offload), with a note, or "" without one: DeepSpeed's
// "parameter + optimizer CPU offload" (ZeRO-Infinity's offload_param and
// offload_optimizer) and ColossalAI Gemini's placement_policy cpu or auto
// (parameter chunks and optimizer state placed in host memory; auto moves
// optimizer state back to the chip into gpu_margin_mem_ratio of the HBM
// the first step leaves free, which the prediction does not: its peak is
// the floor of what auto holds) are params+optimizer; an optimizer-only
// offload is optimizer.
func hostOffload(text string) (string, string) {
	t := strings.ToLower(text)
	switch {
	case strings.Contains(t, "gemini") && strings.Contains(t, "placement_policy=auto"):
		return space.OffloadParamsOptimizer, "Gemini auto placement posed as params+optimizer offload: auto keeps optimizer state on the chip up to gpu_margin_mem_ratio of the HBM left free, which the prediction does not count"
	case strings.Contains(t, "gemini") && strings.Contains(t, "placement_policy=cpu"):
		return space.OffloadParamsOptimizer, ""
	case !strings.Contains(t, "offload"):
		return "", ""
	case strings.Contains(t, "param"):
		return space.OffloadParamsOptimizer, ""
	case strings.Contains(t, "optimizer"):
		return space.OffloadOptimizer, ""
	}
	return "", ""
}

// recomputePolicy maps the published recompute text to a contract policy.
func recomputePolicy(text string) (policy, note string, err error) {
	t := strings.ToLower(strings.TrimSpace(text))
	t = strings.TrimPrefix(t, "remat_policy=")
	switch {
	case t == "" || strings.HasPrefix(t, "none"):
		return space.RecomputeNone, "", nil
	case strings.HasPrefix(t, "full"):
		return space.RecomputeFull, "", nil
	case strings.HasPrefix(t, "selective") && (strings.Contains(t, "per-op") || strings.Contains(t, "(op)")):
		// torchtitan's selective_ac_option "op" (model.RecomputeSelectiveOp).
		return model.RecomputeSelectiveOp, "", nil
	case strings.HasPrefix(t, "selective"):
		return space.RecomputeSelective, "", nil
	}
	// MaxText's remat policies by their own names (model/remat.go): minimal
	// saves every projection's output, minimal_offloaded keeps them in host
	// memory instead of HBM.
	name, _, _ := strings.Cut(t, " ")
	if _, ok := model.LookupPolicy(name); ok {
		return name, "", nil
	}
	return "", "", fmt.Errorf("runs: recompute %q is not none, selective or full", text)
}

// Plan converts the row into the planner's inputs: the model, the cluster
// (see ClusterOf for the optional override), the workload and the strategy.
// A row the contract cannot express returns an error whose text is the
// reason, e.g. "runs: parallel layout not published".
func (r Run) Plan(override *profiles.Cluster) (model.Spec, profiles.Cluster, space.Workload, space.Strategy, error) {
	m, c, w, s, _, err := r.plan(override)
	return m, c, w, s, err
}

// plan is Plan with the layout's notes.
func (r Run) plan(override *profiles.Cluster) (model.Spec, profiles.Cluster, space.Workload, space.Strategy, []string, error) {
	fail := func(err error) (model.Spec, profiles.Cluster, space.Workload, space.Strategy, []string, error) {
		return model.Spec{}, profiles.Cluster{}, space.Workload{}, space.Strategy{}, nil, err
	}
	if !r.layoutPublished() {
		return fail(errLayout)
	}
	m, err := r.ModelSpec()
	if err != nil {
		return fail(err)
	}
	c, err := r.ClusterOf(override)
	if err != nil {
		return fail(err)
	}
	w, err := r.Workload(m.SeqLen)
	if err != nil {
		return fail(err)
	}
	s, notes, err := r.Layout(c.Chips(), w)
	if err != nil {
		return fail(err)
	}
	if _, src, ok := publishedConfig(r.ModelName); ok && r.posed() && r.Model == "" && presetFor(r.ModelName) == "" {
		notes = append(notes, "architecture from "+src)
	} else if p := presetFor(r.ModelName); r.posed() && r.Model == "" && p != "" && r.Hidden == 0 {
		// A row without its shape columns takes the preset whole: no
		// architecture is guessed.
		notes = append(notes, "architecture of the "+p+" preset")
	} else if _, how := r.familyOf(); how != "" && r.Model == "" {
		notes = append(notes, how)
	}
	return m, c, w, s, notes, nil
}

// overrideShape sets the shape columns the row gives (layers, hidden,
// heads, kv_heads, head_dim, vocab, seq_len; blank or 0 keeps m's) on m.
func (r Run) overrideShape(m *model.Spec) {
	setIfGiven(&m.Layers, r.Layers)
	setIfGiven(&m.Hidden, r.Hidden)
	setIfGiven(&m.Heads, r.Heads)
	setIfGiven(&m.KVHeads, r.KVHeads)
	setIfGiven(&m.HeadDim, r.HeadDim)
	setIfGiven(&m.Vocab, r.Vocab)
	setIfGiven(&m.SeqLen, r.SeqLen)
}

// setIfGiven sets *dst to a column's value v when the row gives one (v > 0).
func setIfGiven(dst *int, v int) {
	if v > 0 {
		*dst = v
	}
}
