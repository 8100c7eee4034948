package runs

import (
	"strings"

	"github.com/meshplan/meshplan/model"
)

// publishedConfig returns the published architecture of a model a row
// names but whose shape columns it leaves blank (docs/published-memory.md:
// Moonlight's hidden size, experts and top-k are "not given in the
// source"; GPT-OSS-120B's row gives none), with the source it is read
// from, and false for any other name. Only public configurations of the
// named checkpoints are listed: the planner fills a blank column from the
// model the source names, never from a guess.
func publishedConfig(name string) (model.Spec, string, bool) {
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "moonlight") && strings.Contains(n, "16b"):
		return moonlight16B(), moonlightSource, true
	case strings.Contains(n, "gpt-oss-120b") || strings.Contains(n, "gpt oss 120b"):
		return gptOSS120B(), gptOSS120BSource, true
	}
	return model.Spec{}, "", false
}

// Sources of the published configurations.
const (
	moonlightSource = "moonshotai/Moonlight-16B-A3B, as Megatron-Bridge's MoonlightModelProvider16B gives it " +
		"(NVIDIA-NeMo/Megatron-Bridge@066adea0:src/megatron/bridge/models/deepseek/deepseek_provider.py)"
	gptOSS120BSource = "openai/gpt-oss-120b config.json (Hugging Face)"
)

// moonlight16B is Moonlight-16B-A3B: a DeepSeek-V3-shaped model of 27
// layers, the first dense, with multi-head latent attention without a
// query latent.
func moonlight16B() model.Spec {
	return model.Spec{
		Name: "moonlight-16b-a3b",
		// Megatron-Bridge@066adea0:src/megatron/bridge/models/deepseek/deepseek_provider.py
		// MoonlightModelProvider16B: num_layers 27, hidden_size 2048,
		// ffn_hidden_size 11264, num_attention_heads 16, vocab_size 163840,
		// untied (DeepSeekModelProvider: share_embeddings_and_output_weights False).
		Layers: 27, Hidden: 2048, Heads: 16, FFNHidden: 11264, FFN: model.SwiGLU,
		Vocab: 163840, SeqLen: 4096, Norm: model.RMSNorm,
		// Same file: num_moe_experts 64, moe_ffn_hidden_size 1408,
		// moe_shared_expert_intermediate_size 2816 (two shared experts of
		// 1408), moe_router_topk 6, moe_layer_freq [0]*1 + [1]*26,
		// moe_router_num_groups 1 (no group-limited routing).
		MoE: &model.MoE{Experts: 64, TopK: 6, ExpertFFNHidden: 1408, SharedExperts: 2, FirstDenseLayers: 1},
		// Same file: q_lora_rank None, kv_lora_rank 512, qk_head_dim 128,
		// qk_pos_emb_head_dim 64, v_head_dim 128 (DeepSeekModelProvider's).
		MLA: &model.MLA{QLoRARank: 0, KVLoRARank: 512, QKNopeHeadDim: 128, QKRopeHeadDim: 64, VHeadDim: 128},
	}
}

// gptOSS120B is gpt-oss-120b: 36 layers of 128 gated experts, attention
// alternating a 128-token sliding window and full attention, sliding first.
func gptOSS120B() model.Spec {
	return model.Spec{
		Name: "gpt-oss-120b",
		// openai/gpt-oss-120b config.json: num_hidden_layers 36, hidden_size
		// 2880, num_attention_heads 64, num_key_value_heads 8, head_dim 64,
		// vocab_size 201088, tie_word_embeddings false, rms_norm_eps.
		Layers: 36, Hidden: 2880, Heads: 64, KVHeads: 8, HeadDim: 64, FFNHidden: 2880, FFN: model.SwiGLU,
		Vocab: 201088, SeqLen: 4096, Norm: model.RMSNorm,
		// Same file: attention_bias true (q, k, v and o).
		QKVBias: true, OutBias: true,
		// Same file: num_local_experts 128, num_experts_per_tok 4,
		// intermediate_size 2880 (every layer a mixture of experts); its
		// experts carry biases (transformers' GptOssExperts
		// gate_up_proj_bias and down_proj_bias) and clamp their activation's
		// input (swiglu_limit 7.0).
		MoE: &model.MoE{Experts: 128, TopK: 4, ExpertFFNHidden: 2880, Bias: true, SwiGLULimit: 7},
		// Same file: layer_types sliding_attention, full_attention, ...;
		// sliding_window 128.
		Pattern: []string{"sliding", "full"}, Window: 128,
		// Same file: rope_scaling rope_type yarn, factor 32.
		YaRN: true,
	}
}
