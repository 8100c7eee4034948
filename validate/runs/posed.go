package runs

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/meshplan/meshplan/framework"
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// Format is the layout of a runs file, detected from its header.
type Format int

// The runs-file formats.
const (
	// FormatRuns is the original runs file (published-runs.csv and user
	// files in its columns): whole-job tokens/s, cp_or_sp, interleave_v.
	FormatRuns Format = iota
	// FormatPublished is the published-runs-2.csv layout: per-chip
	// tokens/s, cp, vp, etp, precision, MoE and MLA columns, and the
	// source's FLOP convention in words (flops_basis).
	FormatPublished
	// FormatMemory is the published-memory.csv layout: a measured per-chip
	// peak (measured_peak_gb, peak_kind) and the out-of-memory outcome (oom).
	FormatMemory
)

// String names the format as the reports do.
func (f Format) String() string {
	switch f {
	case FormatPublished:
		return "published-runs"
	case FormatMemory:
		return "published-memory"
	}
	return "runs"
}

// formatOf detects a runs file's format from its header: a memory column
// (measured_peak_gb, oom) makes it FormatMemory, a column only the
// published-runs-2 layout has makes it FormatPublished, else FormatRuns.
func formatOf(header []string) Format {
	f := FormatRuns
	for _, h := range header {
		switch strings.TrimSpace(h) {
		case "measured_peak_gb", "oom", "peak_kind":
			return FormatMemory
		case "measured_tokens_per_s_per_chip", "flops_basis", "cp", "vp", "etp", "mla",
			"moe_layer_pattern", "moe_expert_ffn", "moe_shared_experts", "precision":
			f = FormatPublished
		}
	}
	return f
}

// posed reports whether the row comes from a published-runs-2 or
// published-memory layout, whose columns are read with the conventions of
// docs/published-runs-2.md and docs/published-memory.md.
func (r Run) posed() bool { return r.Format != FormatRuns }

// frameworkProfile maps a framework as a source names it to a built-in
// profile: Megatron-Bridge, NeMo, Megatron-LM and Megatron-Core to
// megatron, MaxText to maxtext, torchtitan to torchtitan, DeepSpeed (also
// under PyTorch Lightning) to deepspeed, plain PyTorch Lightning DDP to
// pytorch, and anything else (InternEvo, ColossalAI) to the generic
// profile. A single word or a YAML file name is kept as it is.
func frameworkProfile(text string) string {
	t := strings.ToLower(strings.TrimSpace(text))
	if !strings.ContainsAny(t, " (") || strings.HasSuffix(t, ".yaml") || strings.HasSuffix(t, ".yml") {
		return strings.TrimSpace(text)
	}
	switch {
	case strings.HasPrefix(t, "megatron"), strings.HasPrefix(t, "nemo"):
		return "megatron"
	case strings.HasPrefix(t, "maxtext"):
		return "maxtext"
	case strings.HasPrefix(t, "torchtitan"):
		return "torchtitan"
	case strings.Contains(t, "deepspeed"):
		return "deepspeed"
	case strings.HasPrefix(t, "pytorch lightning ddp"), strings.HasPrefix(t, "pytorch"):
		if strings.Contains(t, "colossal") {
			return framework.Default
		}
		return "pytorch"
	}
	return framework.Default
}

// presetFor returns the preset a published model name stands for, or ""
// (docs/published-runs-2.md: the rows' shapes are the presets' shapes).
func presetFor(name string) string {
	n := strings.ToLower(name)
	llama := strings.Contains(n, "llama")
	switch {
	case strings.Contains(n, "deepseek-v3"):
		return "deepseek-v3"
	case llama && strings.Contains(n, "405b"):
		return "llama3-405b"
	case llama && strings.Contains(n, "70b") && (strings.Contains(n, "llama-3") || strings.Contains(n, "llama3") || strings.Contains(n, "llama 3")):
		return "llama3-70b"
	case llama && strings.Contains(n, "8b") && (strings.Contains(n, "llama-3") || strings.Contains(n, "llama3") || strings.Contains(n, "llama 3")):
		return "llama3-8b"
	case llama && strings.Contains(n, "7b") && (strings.Contains(n, "llama-2") || strings.Contains(n, "llama2") || strings.Contains(n, "llama 2")):
		return "llama2-7b"
	case strings.Contains(n, "gpt-3-175b") || strings.Contains(n, "gpt3-175b"):
		return "gpt3-175b"
	case strings.Contains(n, "nemotron 3 nano") || strings.Contains(n, "nemotron-3-nano"):
		return "nemotron-3-nano"
	}
	return ""
}

// parseMLA reads the mla column, q_lora/kv_lora/rope/nope/v head widths
// (DeepSeek-V3: 1536/512/64/128/128).
func parseMLA(text string) (*model.MLA, error) {
	parts := strings.Split(strings.TrimSpace(text), "/")
	if len(parts) != 5 {
		return nil, fmt.Errorf("mla %q is not q_lora/kv_lora/rope/nope/v, e.g. 1536/512/64/128/128", text)
	}
	var v [5]int
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 0 || n > 1<<20 {
			return nil, fmt.Errorf("mla %q: %q is not a width; give q_lora/kv_lora/rope/nope/v, e.g. 1536/512/64/128/128", text, p)
		}
		v[i] = n
	}
	return &model.MLA{QLoRARank: v[0], KVLoRARank: v[1], QKRopeHeadDim: v[2], QKNopeHeadDim: v[3], VHeadDim: v[4]}, nil
}

var (
	// firstDenseRe reads "first 3 layers dense" in moe_layer_pattern.
	firstDenseRe = regexp.MustCompile(`(?i)first\s+(\d+)\s+layers?\s+dense`)
	// slidingRe reads "sliding-window(128)/full" in moe_layer_pattern.
	slidingRe = regexp.MustCompile(`(?i)sliding-window\s*\(\s*(\d+)\s*\)\s*/\s*full`)
)

// layerPattern reads moe_layer_pattern: the leading dense layers ("first
// 3 layers dense ... then 58 MoE layers"; "all 48 layers MoE" has none)
// and an alternating sliding-window/full attention ("attention alternates
// sliding-window(128)/full every other layer": layer 0 sliding, window
// 128).
func layerPattern(text string) (firstDense int, pattern []string, window int, err error) {
	t := strings.ToLower(strings.TrimSpace(text))
	if m := firstDenseRe.FindStringSubmatch(t); m != nil {
		firstDense, _ = strconv.Atoi(m[1])
	} else if !strings.HasPrefix(t, "all ") {
		return 0, nil, 0, fmt.Errorf("moe_layer_pattern %q names neither \"first N layers dense\" nor \"all N layers MoE\"", text)
	}
	if m := slidingRe.FindStringSubmatch(t); m != nil {
		window, _ = strconv.Atoi(m[1])
		pattern = []string{"sliding", "full"}
	}
	return firstDense, pattern, window, nil
}

// precisionOf maps a published precision to the strategy's precision key:
// bf16 (also BF16 with fp32 weights, and fp16 AMP, the same 2-byte
// matmuls), fp8 for FP8 recipes (FP8, FP8?, FP8-CS, FP8 tensorwise,
// current scaling, hybrid; and MXFP8, Blackwell's block-scaled FP8 at the
// same tensor-core rate, whose 32-element scales the recipe does not
// price; and NVFP4, the fp8 precision under the nvfp4 recipe,
// Run.FP8RecipeName), and the format's own name for INT8 (int8), which the
// planner accepts only if its strategy parser does: the error is then the
// parser's own.
func precisionOf(text string) (string, error) {
	t := strings.ToLower(strings.TrimSpace(text))
	key := ""
	switch {
	case t == "":
		return space.PrecisionBF16, nil
	case strings.Contains(t, "mxfp8") || strings.Contains(t, "fp8-mx"):
		// Blackwell's block-scaled FP8 (OCP MX v1.0's MXFP8) runs at the
		// one FP8 tensor-core rate NVIDIA's Blackwell datasheets give for
		// FP8: posed as fp8 under the framework's recipe, as the FP8
		// current-scaling rows are.
		key = space.PrecisionFP8
	case strings.Contains(t, "nvfp4"):
		// Megatron-Core's --fp4-format e2m1 --fp4-recipe nvfp4: the
		// quantised projections of precision=fp8 under the nvfp4 recipe,
		// at the chip's fp4 rate (model.FP8Recipe.FP4).
		key = space.PrecisionFP8
	case strings.Contains(t, "int8"):
		key = "int8"
	case strings.Contains(t, "fp8") || strings.Contains(t, "float8"):
		key = space.PrecisionFP8
	case strings.HasPrefix(t, "bf16"), strings.HasPrefix(t, "fp16"):
		key = space.PrecisionBF16
	default:
		return "", fmt.Errorf("precision %q is not bf16, fp16, fp8, mxfp8, int8 or nvfp4", text)
	}
	s, err := space.Parse("precision=" + key)
	if err != nil {
		return "", fmt.Errorf("precision %s: %w", text, err)
	}
	return s.Precision, nil
}

// SourceName returns the source a row belongs to for the per-source
// breakdown and the leave-one-source-out fit: the repository or paper at
// the head of the source column ("NVIDIA-NeMo/Megatron-Bridge@067f987d:..."
// is NVIDIA-NeMo/Megatron-Bridge), else the id's prefix before "_".
func (r Run) SourceName() string {
	s := strings.TrimSpace(r.Source)
	if s == "" {
		p, _, _ := strings.Cut(r.ID, "_")
		return p
	}
	head, _, _ := strings.Cut(s, " ")
	head, _, _ = strings.Cut(head, "@")
	return strings.Trim(head, `",;:`)
}

// conventionOfBasis reads the FLOP convention from a flops_basis text
// (docs/published-runs-2.md "FLOP conventions"): the Megatron SC21 formula with
// the 96 coefficient (recompute counted) or the 72 one (model FLOPs);
// MaxText before PR #1988; un-halved model FLOPs ("NOT causal-halved",
// "counted full"); model FLOPs with the causal attention counted at half.
func conventionOfBasis(text string) (Convention, bool) {
	t := strings.ToLower(text)
	switch {
	case t == "":
		return "", false
	case strings.Contains(t, "96 coefficient") || strings.Contains(t, "96-coefficient"):
		return ConventionMegatronHFU, true
	case strings.Contains(t, "72 coefficient") || strings.Contains(t, "72-coefficient"):
		return ConventionMegatronMFU, true
	case strings.Contains(t, "maxtext") && strings.Contains(t, "before pr #1988"):
		return ConventionMaxText2024, true
	case strings.Contains(t, "not causal") || strings.Contains(t, "counted full"):
		return ConventionContract, true
	case strings.Contains(t, "halv") || strings.Contains(t, "at half"):
		return ConventionCausal, true
	}
	return "", false
}

// numSlicesRe reads MaxText's "num_slices=2" in a row's notes.
var numSlicesRe = regexp.MustCompile(`num_slices\s*=\s*(\d+)`)

// fabricRe reads "4x100Gb RoCE per node" (InternEvo's 4 x 100 Gb/s NICs).
var fabricRe = regexp.MustCompile(`(\d+)\s*x\s*(\d+)\s*Gb\b[^;]*?per node`)

// recomputeNamed maps a published recompute text that is not none,
// selective or full: a text naming Megatron's selective modules (core_attn, mlp,
// layernorm, moe_act, mla_up_proj; "not restated (baseline used
// core_attn)") is selective; anything else (MaxText's "custom: ...
// offloaded to host") is asked
// of the strategy parser under its first word, so the error is the
// planner's own.
func recomputeNamed(text string) (string, error) {
	t := strings.ToLower(strings.TrimSpace(text))
	for _, m := range []string{"core_attn", "mlp", "layernorm", "moe_act", "mla_up_proj", "moe"} {
		if !strings.HasPrefix(t, "custom") && strings.Contains(t, m) {
			return space.RecomputeSelective, nil
		}
	}
	if name, ok := maxTextOffload(t); ok {
		return name, nil
	}
	name, _, _ := strings.Cut(t, " ")
	name = strings.TrimRight(name, ":,;")
	s, err := space.Parse("recompute=" + name)
	if err != nil {
		return "", fmt.Errorf("recompute %q: %w", text, err)
	}
	return s.Recompute, nil
}

// maxTextOffload maps the text of a MaxText `remat_policy: custom` whose
// offloaded tensors the planner has a policy for (model/remat.go: the
// layer input, with q/k/v and the output projection or not) to that
// policy's name; false for any other list, which stays the parser's to
// refuse.
func maxTextOffload(t string) (string, bool) {
	if !strings.HasPrefix(t, "custom") || !strings.Contains(t, "offloaded") {
		return "", false
	}
	list, _, _ := strings.Cut(strings.TrimPrefix(t, "custom:"), "offloaded")
	switch strings.Join(strings.Fields(list), " ") {
	case "decoder_layer_input":
		return model.RecomputeOffloadInput, true
	case "decoder_layer_input + q/k/v proj":
		return model.RecomputeOffloadInputQKV, true
	case "decoder_layer_input + q/k/v/out proj":
		return model.RecomputeOffloadInputQKVO, true
	case "decoder_layer_input + out_proj":
		return model.RecomputeOffloadInputOut, true
	case "context + mlpwo":
		return model.RecomputeOffloadContextWo, true
	}
	return "", false
}

// posedModel is ModelSpec for a published-runs-2 or published-memory row:
// the preset its name stands for (presetFor), else the published
// configuration of the model it names (publishedConfig), else a Spec of its
// architecture family, with the shape columns over it; moe_expert_ffn is
// the routed experts' width (ffn_hidden the dense layers'; without it
// ffn_hidden is the experts' width, as in the older files),
// moe_shared_experts the shared experts, moe_layer_pattern the leading
// dense layers and a sliding-window pattern, mla the latent attention.
func (r Run) posedModel() (model.Spec, error) {
	var m model.Spec
	name := r.Model
	if name == "" {
		name = presetFor(r.ModelName)
	}
	if name != "" {
		var err error
		if m, err = model.Load(name); err != nil {
			return model.Spec{}, fmt.Errorf("runs: %w", err)
		}
		if strings.Contains(strings.ToLower(r.Notes), "w/o mtp") {
			m.MTPLayers = 0
		}
		if l, ok := r.pipelineLayout(); ok && !l.mtp {
			// A layout without an "m" trains no multi-token-prediction
			// module: Megatron-Core asserts that the layout's modules are
			// mtp_num_layers (megatron/core/transformer/
			// pipeline_parallel_layer_layout.py:108-110 at
			// NVIDIA/Megatron-LM@eb0783b6).
			m.MTPLayers = 0
		}
		if r.FrameworkName() == "maxtext" {
			// MaxText trains no multi-token-prediction module unless its
			// config sets one: mtp_num_layers is 0 in base.yml, and neither
			// deepseek3-671b.yml nor the v5p recipe sets it
			// (AI-Hypercomputer/maxtext@3eb77db3 src/MaxText/configs/base.yml:156,
			// benchmarks/maxtext_v5p_model_configs.py:287-334).
			m.MTPLayers = 0
		}
	} else if pub, _, ok := publishedConfig(r.ModelName); ok {
		// The source names a public model; its blank columns are the
		// published configuration's.
		m = pub
		m.Name = r.ModelName
	} else {
		f, _ := r.familyOf()
		m = model.Spec{Name: r.ModelName, FFN: f.ffn, Norm: f.norm, Bias: f.bias, TiedEmbeddings: f.tied, HeadDim: f.headIs, ALiBi: f.alibi}
		if m.Name == "" {
			m.Name = r.ID
		}
		lower := strings.ToLower(r.ModelName)
		// Qwen3 normalises q and k per head; GPT-OSS biases its attention
		// projections (their Hugging Face configs).
		m.QKNorm = strings.Contains(lower, "qwen3")
		if f.name == gptOSS.name {
			m.QKVBias, m.OutBias = true, true
			m.YaRN = true // rope_scaling rope_type yarn
			if r.MoEExperts > 0 {
				// and its experts, whose activation clamps its input
				// (GptOssExperts, swiglu_limit 7.0).
				m.MoE = &model.MoE{Bias: true, SwiGLULimit: 7}
			}
		}
	}
	r.overrideShape(&m)
	if r.MLA != "" {
		mla, err := parseMLA(r.MLA)
		if err != nil {
			return model.Spec{}, fmt.Errorf("runs: %w", err)
		}
		m.MLA = mla
		m.KVHeads, m.HeadDim = m.Heads, mla.QKHeadDim()
	}
	expertFFN := r.MoEExpertFFN
	if expertFFN > 0 || r.MoEExperts == 0 {
		setIfGiven(&m.FFNHidden, r.FFNHidden)
	} else {
		expertFFN = r.FFNHidden
	}
	if r.MoEExperts > 0 {
		moe := model.MoE{}
		if m.MoE != nil {
			moe = *m.MoE
		}
		moe.Experts = r.MoEExperts
		moe.TopK = max(r.MoETopK, moe.TopK, 1)
		if r.MoETopK > 0 {
			moe.TopK = r.MoETopK
		}
		setIfGiven(&moe.ExpertFFNHidden, expertFFN)
		setIfGiven(&moe.SharedExperts, r.MoESharedExperts)
		if r.MoELayerPattern != "" {
			first, pattern, window, err := layerPattern(r.MoELayerPattern)
			if err != nil {
				return model.Spec{}, fmt.Errorf("runs: %w", err)
			}
			moe.FirstDenseLayers = first
			if pattern != nil {
				m.Pattern, m.Window = pattern, window
			}
		}
		m.MoE = &moe
		if m.FFNHidden == 0 && moe.FirstDenseLayers == 0 {
			// An all-MoE model has no dense MLP; its width is never used.
			m.FFNHidden = moe.ExpertFFNHidden
		}
	}
	if blank := blankShape(m); len(blank) > 0 {
		return model.Spec{}, fmt.Errorf("runs: the source does not give the model's %s (blank, and %q is not a published configuration the planner knows)", strings.Join(blank, ", "), r.ModelName)
	}
	m.Normalize()
	if err := m.Validate(); err != nil {
		return model.Spec{}, fmt.Errorf("runs: %w", err)
	}
	return m, nil
}

// blankShape names the shape columns a posed model still lacks after its
// preset, its published configuration and its own columns.
func blankShape(m model.Spec) []string {
	var blank []string
	for _, f := range []struct {
		name string
		v    int
	}{{"layers", m.Layers}, {"hidden", m.Hidden}, {"heads", m.Heads}, {"ffn_hidden", m.FFNHidden}, {"vocab", m.Vocab}} {
		if f.v == 0 {
			blank = append(blank, f.name)
		}
	}
	return blank
}
