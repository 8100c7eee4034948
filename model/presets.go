package model

import (
	"fmt"
	"sort"
	"strings"
)

// Names returns the canonical preset names, sorted. Aliases accepted by
// Preset (such as llama70b) are not listed.
func Names() []string {
	ps := presets()
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	sort.Strings(names)
	return names
}

// Presets returns every preset, normalised, in the order of Names. The
// returned Specs are fresh copies the caller may modify.
func Presets() []Spec {
	ps := presets()
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	return ps
}

// Preset returns the named preset, normalised. The name is matched
// case-insensitively, against the canonical names and their aliases, and then
// ignoring punctuation ("Llama-3-8B" finds llama3-8b). An unknown name is an
// error naming the three nearest known names.
func Preset(name string) (Spec, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	ps := presets()
	byName := make(map[string]int, len(ps))
	for i, p := range ps {
		byName[p.Name] = i
	}
	al := aliases()
	if target, ok := al[key]; ok {
		key = target
	}
	if i, ok := byName[key]; ok {
		return ps[i], nil
	}
	// Match ignoring punctuation when exactly one canonical name fits.
	ak := alnum(key)
	match := ""
	for _, n := range knownPresetNames(ps, al) {
		if alnum(n) == ak {
			target := n
			if t, ok := al[n]; ok {
				target = t
			}
			if match != "" && match != target {
				match = ""
				break
			}
			match = target
		}
	}
	if i, ok := byName[match]; ok && ak != "" {
		return ps[i], nil
	}
	near := nearest(name, knownPresetNames(ps, al), 3)
	return Spec{}, fmt.Errorf("model: unknown preset %q (nearest: %s; see plan models)", name, strings.Join(near, ", "))
}

// knownPresetNames is the canonical names and the aliases.
func knownPresetNames(ps []Spec, al map[string]string) []string {
	names := make([]string, 0, len(ps)+len(al))
	for _, p := range ps {
		names = append(names, p.Name)
	}
	for a := range al {
		names = append(names, a)
	}
	sort.Strings(names)
	return names
}

// aliases maps alternative preset names to canonical ones. Built on each call
// so that no package state can be modified.
func aliases() map[string]string {
	return map[string]string{
		"llama70b":         "llama2-70b",
		"llama1-65b":       "llama-65b",
		"mt-nlg-530b":      "gpt-530b",
		"mtnlg-530b":       "gpt-530b",
		"gpt3":             "gpt3-175b",
		"deepseek-v3-671b": "deepseek-v3",
		// Llama 3.1 and 3.3 change the rotary scaling and the context,
		// not a count.
		"llama3.1-8b":   "llama3-8b",
		"llama3.1-70b":  "llama3-70b",
		"llama3.1-405b": "llama3-405b",
		"llama3.3-70b":  "llama3-70b",
		"qwen3-30b":     "qwen3-30b-a3b",
		"qwen3-235b":    "qwen3-235b-a22b",
	}
}

// Sources cited in the preset descriptions.
const (
	srcNarayanan = "Narayanan et al. 2021, SC21, arXiv:2104.04473"
	srcMegatron  = "GELU MLP of width 4h, LayerNorm, biases, embeddings tied and padded to vocab 51200, seq 2048; learned position embeddings (seq*h) not counted"
	srcLlama2    = "Touvron et al. 2023, Llama 2, arXiv:2307.09288, and the Hugging Face config of meta-llama"
	srcLlama3    = "Llama Team 2024, The Llama 3 Herd of Models, arXiv:2407.21783, Table 3, and the Hugging Face config of meta-llama"
	srcMPT       = "MosaicML llm-foundry MPT config (d_model, n_layers, n_heads, expansion_ratio 4, vocab 50368, no_bias, tied); ALiBi, so no position embeddings"
	srcMaxText   = "MaxText synthetic model from global_parameter_scale (MaxText/configs/v5e, 2024-03): gated SiLU MLP, MHA with head_dim 128, vocab 32000, untied, RMSNorm, seq 2048"
)

// presets builds every preset afresh, normalised.
func presets() []Spec {
	ps := []Spec{
		{
			Name:        "gpt3-175b",
			Description: "GPT-3 175B (Brown et al. 2020, arXiv:2005.14165, Table 2.1): 96 layers, d_model 12288, 96 heads, GELU MLP 4h, LayerNorm, biases, GPT-2 BPE vocab 50257 tied, seq 2048; learned position embeddings not counted",
			Layers:      96, Hidden: 12288, Heads: 96, FFNHidden: 49152, FFN: GELU,
			Vocab: 50257, SeqLen: 2048, TiedEmbeddings: true, Norm: LayerNorm, Bias: true,
		},
		megatronGPT("gpt-1.7b", 24, 2304, 24, srcNarayanan+", Table 1 (heads as recalled in published-runs.csv)"),
		megatronGPT("gpt-3.6b", 30, 3072, 32, srcNarayanan+", Table 1 (heads as recalled in published-runs.csv)"),
		megatronGPT("gpt-7.5b", 36, 4096, 32, srcNarayanan+", Table 1 (heads as recalled in published-runs.csv)"),
		megatronGPT("gpt-18b", 40, 6144, 48, srcNarayanan+", Table 1 (heads as recalled in published-runs.csv)"),
		megatronGPT("gpt-22b", 48, 6144, 64, "Korthikanti et al. 2022, arXiv:2205.05198, Table 3"),
		megatronGPT("gpt-39b", 48, 8192, 64, srcNarayanan+", Table 1 (heads as recalled in published-runs.csv)"),
		megatronGPT("gpt-76b", 60, 10240, 80, srcNarayanan+", Table 1 (heads as recalled in published-runs.csv)"),
		megatronGPT("gpt-145b", 80, 12288, 96, srcNarayanan+", Table 1 (heads as recalled in published-runs.csv)"),
		megatronGPT("gpt-175b", 96, 12288, 96, srcNarayanan+", Table 2 (the GPT-3 shape, 174.6B); also Korthikanti et al. 2022, Table 3"),
		megatronGPT("gpt-310b", 96, 16384, 128, srcNarayanan+", Table 1 (heads as recalled in published-runs.csv)"),
		megatronGPT("gpt-530b", 105, 20480, 128, srcNarayanan+", Tables 1 and 2; Korthikanti et al. 2022, Table 3; the MT-NLG 530B shape (Smith et al. 2022, arXiv:2201.11990), whose GPT-2 vocab 50257 Megatron pads to 51200"),
		megatronGPT("gpt-1t", 128, 25600, 160, srcNarayanan+", Table 1; Korthikanti et al. 2022, Table 3"),
		{
			Name:        "llama2-7b",
			Description: "Llama 2 7B (" + srcLlama2 + "): MHA, SwiGLU, RMSNorm, untied, trained at seq 4096",
			Layers:      32, Hidden: 4096, Heads: 32, KVHeads: 32, FFNHidden: 11008, FFN: SwiGLU,
			Vocab: 32000, SeqLen: 4096, Norm: RMSNorm,
		},
		{
			Name:        "llama2-13b",
			Description: "Llama 2 13B (" + srcLlama2 + "): MHA, SwiGLU, RMSNorm, untied, trained at seq 4096",
			Layers:      40, Hidden: 5120, Heads: 40, KVHeads: 40, FFNHidden: 13824, FFN: SwiGLU,
			Vocab: 32000, SeqLen: 4096, Norm: RMSNorm,
		},
		{
			Name:        "llama2-70b",
			Description: "Llama 2 70B (" + srcLlama2 + "): GQA with 8 KV heads, SwiGLU, RMSNorm, untied, trained at seq 4096",
			Layers:      80, Hidden: 8192, Heads: 64, KVHeads: 8, FFNHidden: 28672, FFN: SwiGLU,
			Vocab: 32000, SeqLen: 4096, Norm: RMSNorm,
		},
		{
			Name:        "llama-65b",
			Description: "LLaMA (1) 65B (Touvron et al. 2023, arXiv:2302.13971, Table 2): MHA, SwiGLU width 22016, RMSNorm, untied, seq 2048",
			Layers:      80, Hidden: 8192, Heads: 64, KVHeads: 64, FFNHidden: 22016, FFN: SwiGLU,
			Vocab: 32000, SeqLen: 2048, Norm: RMSNorm,
		},
		{
			Name:        "llama3-8b",
			Description: "Llama 3 8B (" + srcLlama3 + "): GQA with 8 KV heads, SwiGLU, RMSNorm, untied, seq 8192",
			Layers:      32, Hidden: 4096, Heads: 32, KVHeads: 8, FFNHidden: 14336, FFN: SwiGLU,
			Vocab: 128256, SeqLen: 8192, Norm: RMSNorm,
		},
		{
			Name:        "llama3-70b",
			Description: "Llama 3 70B (" + srcLlama3 + "): GQA with 8 KV heads, SwiGLU, RMSNorm, untied, seq 8192",
			Layers:      80, Hidden: 8192, Heads: 64, KVHeads: 8, FFNHidden: 28672, FFN: SwiGLU,
			Vocab: 128256, SeqLen: 8192, Norm: RMSNorm,
		},
		{
			Name:        "llama3-405b",
			Description: "Llama 3.1 405B (" + srcLlama3 + "): GQA with 8 KV heads, SwiGLU, RMSNorm, untied, seq 8192 (the pre-training length before long-context training)",
			Layers:      126, Hidden: 16384, Heads: 128, KVHeads: 8, FFNHidden: 53248, FFN: SwiGLU,
			Vocab: 128256, SeqLen: 8192, Norm: RMSNorm,
		},
		{
			Name:        "mixtral-8x7b",
			Description: "Mixtral 8x7B (Jiang et al. 2024, arXiv:2401.04088, and the Hugging Face config of mistralai): 8 SwiGLU experts of width 14336, top-2, GQA with 8 KV heads, untied; seq 8192 (the config allows 32768)",
			Layers:      32, Hidden: 4096, Heads: 32, KVHeads: 8, FFNHidden: 14336, FFN: SwiGLU,
			Vocab: 32000, SeqLen: 8192, Norm: RMSNorm,
			MoE: &MoE{Experts: 8, TopK: 2, ExpertFFNHidden: 14336},
		},
		{
			Name:        "mixtral-8x22b",
			Description: "Mixtral 8x22B (Mistral AI model card and Hugging Face config of mistralai): 8 SwiGLU experts of width 16384, top-2, GQA with 8 KV heads, vocab 32768, untied; seq 8192 (the config allows 65536)",
			Layers:      56, Hidden: 6144, Heads: 48, KVHeads: 8, FFNHidden: 16384, FFN: SwiGLU,
			Vocab: 32768, SeqLen: 8192, Norm: RMSNorm,
			MoE: &MoE{Experts: 8, TopK: 2, ExpertFFNHidden: 16384},
		},
		deepSeekV3(),
		mpt("mpt-7b", 32, 4096, 32),
		mpt("mpt-13b", 40, 5120, 40),
		mpt("mpt-30b", 48, 7168, 56),
		mpt("mpt-70b", 80, 8192, 64),
		{
			Name:        "gpt-neox-20b",
			Description: "GPT-NeoX-20B (Black et al. 2022, arXiv:2204.06745, and the EleutherAI Hugging Face config): GELU MLP 4h, LayerNorm, biases, vocab 50432 untied, seq 2048; rotary, parallel attention and MLP (same counts)",
			Layers:      44, Hidden: 6144, Heads: 64, FFNHidden: 24576, FFN: GELU,
			Vocab: 50432, SeqLen: 2048, Norm: LayerNorm, Bias: true,
		},
		{
			Name:        "bloom-176b",
			Description: "BLOOM 176B (BigScience 2022, arXiv:2211.05100, and the bigscience/bloom Hugging Face config): GELU MLP 4h, LayerNorm, biases, vocab 250880 tied (published-runs.csv says 250680), seq 2048; ALiBi; the embedding LayerNorm (2h) is not counted",
			Layers:      70, Hidden: 14336, Heads: 112, FFNHidden: 57344, FFN: GELU,
			Vocab: 250880, SeqLen: 2048, TiedEmbeddings: true, Norm: LayerNorm, Bias: true, ALiBi: true,
		},
		{
			Name:        "opt-175b",
			Description: "OPT-175B (Zhang et al. 2022, arXiv:2205.01068, Table 1): GELU (ReLU in the paper; same two matrices) MLP 4h, LayerNorm, biases, vocab 50272 tied, seq 2048; learned position embeddings not counted",
			Layers:      96, Hidden: 12288, Heads: 96, FFNHidden: 49152, FFN: GELU,
			Vocab: 50272, SeqLen: 2048, TiedEmbeddings: true, Norm: LayerNorm, Bias: true,
		},
		maxText("maxtext-16b", 32, 4096, 28672, 64),
		maxText("maxtext-32b", 32, 8192, 28672, 64),
		maxText("maxtext-64b", 64, 8192, 28672, 64),
		maxText("maxtext-128b", 64, 8192, 57344, 128),
	}
	ps = append(ps, hybridPresets()...)
	ps = append(ps, moePresets()...)
	for i := range ps {
		ps[i].Normalize()
	}
	return ps
}

// megatronGPT is a Megatron-LM GPT benchmark model (docs/formulas.md §1.1 [NARA]).
func megatronGPT(name string, layers, hidden, heads int, source string) Spec {
	return Spec{
		Name:        name,
		Description: fmt.Sprintf("Megatron-LM GPT, %d layers, hidden %d, %d heads (%s): %s", layers, hidden, heads, source, srcMegatron),
		Layers:      layers, Hidden: hidden, Heads: heads, FFNHidden: 4 * hidden, FFN: GELU,
		Vocab: 51200, SeqLen: 2048, TiedEmbeddings: true, Norm: LayerNorm, Bias: true,
	}
}

// mpt is a MosaicML MPT model: no biases, LayerNorm without bias (counted as
// LayerNorm, h extra per norm), tied embeddings.
func mpt(name string, layers, hidden, heads int) Spec {
	return Spec{
		Name:        name,
		Description: fmt.Sprintf("MPT, %d layers, d_model %d, %d heads (%s); seq 2048", layers, hidden, heads, srcMPT),
		Layers:      layers, Hidden: hidden, Heads: heads, FFNHidden: 4 * hidden, FFN: GELU,
		Vocab: 50368, SeqLen: 2048, TiedEmbeddings: true, Norm: LayerNorm, ALiBi: true,
	}
}

// maxText is a MaxText synthetic dense model (published-runs.csv, maxtext rows).
func maxText(name string, layers, hidden, ffn, heads int) Spec {
	return Spec{
		Name:        name,
		Description: fmt.Sprintf("MaxText synthetic %s, %d layers, emb %d, mlp %d, %d heads (%s)", strings.TrimPrefix(name, "maxtext-"), layers, hidden, ffn, heads, srcMaxText),
		Layers:      layers, Hidden: hidden, Heads: heads, KVHeads: heads, HeadDim: 128, FFNHidden: ffn, FFN: SwiGLU,
		Vocab: 32000, SeqLen: 2048, Norm: RMSNorm,
	}
}

// deepSeekV3 is DeepSeek-V3 with its multi-head latent attention and its
// multi-token-prediction module (arXiv:2412.19437 §2.1-2.2 and §4.2, and
// its Hugging Face config).
func deepSeekV3() Spec {
	return Spec{
		Name: "deepseek-v3",
		Description: "DeepSeek-V3 (DeepSeek-AI 2024, arXiv:2412.19437, and its Hugging Face config): 61 layers, first 3 dense (SwiGLU 18432), " +
			"then 256 routed experts of width 2048, top-8 from at most 4 of 8 groups (node-limited routing), plus 1 shared expert; multi-head latent attention with 128 heads, " +
			"q_lora_rank 1536, kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128; one multi-token-prediction module " +
			"(its 11.6B own parameters apart from the 671B, as the report counts); seq 4096 (the pre-training length)",
		Layers: 61, Hidden: 7168, Heads: 128, FFNHidden: 18432, FFN: SwiGLU,
		Vocab: 129280, SeqLen: 4096, Norm: RMSNorm,
		MoE:       &MoE{Experts: 256, TopK: 8, ExpertFFNHidden: 2048, SharedExperts: 1, FirstDenseLayers: 3, Groups: 8, GroupLimit: 4},
		MLA:       &MLA{QLoRARank: 1536, KVLoRARank: 512, QKNopeHeadDim: 128, QKRopeHeadDim: 64, VHeadDim: 128},
		MTPLayers: 1,
	}
}
