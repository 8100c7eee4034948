package model

// DefaultSeqLen is the training sequence length, in tokens, that Normalize
// gives a Spec whose SeqLen is zero (the GPT-3 and Megatron GPT length).
const DefaultSeqLen = 2048

// MLP forms accepted in Spec.FFN.
const (
	// GELU is a plain two-matrix MLP (up, down) with a GELU activation.
	GELU = "gelu"
	// SwiGLU is a gated three-matrix MLP (gate, up, down).
	SwiGLU = "swiglu"
)

// Normalisation layers accepted in Spec.Norm.
const (
	// RMSNorm has one weight vector of width hidden.
	RMSNorm = "rmsnorm"
	// LayerNorm has a weight and a bias vector of width hidden.
	LayerNorm = "layernorm"
)

// MoE describes the mixture-of-experts layers of a model. A nil *MoE in
// Spec means a dense model.
type MoE struct {
	// Experts is the number of routed experts per MoE layer.
	Experts int `json:"experts" yaml:"experts"`
	// TopK is the number of routed experts each token visits.
	TopK int `json:"top_k" yaml:"top_k"`
	// ExpertFFNHidden is the intermediate width of one routed expert.
	ExpertFFNHidden int `json:"expert_ffn_hidden" yaml:"expert_ffn_hidden"`
	// SharedExperts is the number of always-active shared experts per MoE layer
	// (each of width SharedFFNHidden, or ExpertFFNHidden when that is zero).
	SharedExperts int `json:"shared_experts" yaml:"shared_experts"`
	// SharedFFNHidden is the intermediate width of one shared expert; zero means ExpertFFNHidden.
	SharedFFNHidden int `json:"shared_ffn_hidden,omitempty" yaml:"shared_ffn_hidden"`
	// FirstDenseLayers is the number of leading layers that use the dense MLP
	// of width Spec.FFNHidden instead of experts (DeepSeek-V3 has 3).
	FirstDenseLayers int `json:"first_dense_layers" yaml:"first_dense_layers"`
	// CapacityFactor pads each expert's token buffer; zero means 1.0 (dropless, balanced).
	CapacityFactor float64 `json:"capacity_factor,omitempty" yaml:"capacity_factor"`
	// Groups and GroupLimit are group-limited (node-limited) routing: the
	// experts form Groups groups and each token picks its TopK experts from
	// at most GroupLimit of them (DeepSeek-V3's n_group 8 and topk_group 4,
	// one group per node, [DSV3 §2.1.2]); zero means no limit.
	Groups     int `json:"groups,omitempty" yaml:"groups"`
	GroupLimit int `json:"group_limit,omitempty" yaml:"group_limit"`
	// Imbalance is the token load of the busiest expert-parallel rank over
	// the mean, for dropless routing: its expert matmuls and its share of
	// the dispatch take that much longer, and its routed activations and
	// dispatch buffers hold that many more tokens; zero means 1 (balanced).
	// With a capacity factor above 1 the padding, not the imbalance, sets
	// the load (Load).
	Imbalance float64 `json:"imbalance,omitempty" yaml:"imbalance"`
	// Bias says the routed experts' linear layers carry bias vectors
	// (gpt-oss's gate_up_proj_bias and down_proj_bias); Spec.Bias implies
	// it. The experts' output bias costs a pass of its own
	// (PassExpertBias).
	Bias bool `json:"bias,omitempty" yaml:"bias"`
	// SwiGLULimit is the clamp of the routed experts' gated activation:
	// the gate is clamped to at most the limit and the linear half to
	// [-limit, limit] before the activation (gpt-oss's swiglu_limit, 7.0,
	// in transformers' GptOssExperts); zero means no clamp. The clamp costs
	// a pass of its own (PassActClamp).
	SwiGLULimit float64 `json:"swiglu_limit,omitempty" yaml:"swiglu_limit"`
}

// Load is the busiest expert-parallel rank's routed tokens over what the
// layer program's sizes give every rank (Program.Sizes: the mean, padded
// by the capacity factor): Imbalance under dropless routing, and 1 with a
// capacity factor above 1, where every expert's buffer is padded to the
// capacity and tokens beyond it are dropped (GShard, arXiv:2006.16668
// §2.2; Megatron-Core's moe_pad_expert_input_to_capacity). The time and
// the memory of the busiest rank both scale by it where the experts are
// split over expert-parallel ranks (one rank holding every expert holds
// the mean).
func (m *MoE) Load() float64 {
	if m == nil || m.CapacityFactor > 1 {
		return 1
	}
	return max(m.Imbalance, 1)
}

// MLA describes multi-head latent attention (DeepSeek-V2, arXiv:2405.04434
// §2.1): queries and keys/values are projected down to small latents and up
// again to the heads; a decoupled rotary key of QKRopeHeadDim is shared by
// all heads. A nil *MLA in Spec means multi-head or grouped-query attention.
type MLA struct {
	// QLoRARank is the width of the query latent; 0 means no query
	// compression: the queries are projected from the hidden state directly
	// (DeepSeek-V2-Lite).
	QLoRARank int `json:"q_lora_rank" yaml:"q_lora_rank"`
	// KVLoRARank is the width of the key/value latent.
	KVLoRARank int `json:"kv_lora_rank" yaml:"kv_lora_rank"`
	// QKNopeHeadDim is the per-head width of the query and key parts
	// without rotary embedding.
	QKNopeHeadDim int `json:"qk_nope_head_dim" yaml:"qk_nope_head_dim"`
	// QKRopeHeadDim is the per-head width of the rotary part of the queries
	// and of the rotary key that all heads share.
	QKRopeHeadDim int `json:"qk_rope_head_dim" yaml:"qk_rope_head_dim"`
	// VHeadDim is the per-head width of the values.
	VHeadDim int `json:"v_head_dim" yaml:"v_head_dim"`
}

// QKHeadDim is the per-head width of queries and keys, QKNopeHeadDim + QKRopeHeadDim.
func (m MLA) QKHeadDim() int { return m.QKNopeHeadDim + m.QKRopeHeadDim }

// Spec is a decoder-only transformer: the contract's model form. Zero
// optional fields take the defaults documented on each field once a loader
// has called Normalize.
type Spec struct {
	// Name identifies the model (preset name or the file's name field).
	Name string `json:"name" yaml:"name"`
	// Description says where the figures come from and what is approximated.
	Description string `json:"description,omitempty" yaml:"description"`
	// Layers is the number of transformer blocks.
	Layers int `json:"layers" yaml:"layers"`
	// Hidden is the model width h (d_model).
	Hidden int `json:"hidden" yaml:"hidden"`
	// Heads is the number of query heads.
	Heads int `json:"heads" yaml:"heads"`
	// KVHeads is the number of key/value heads; default Heads (MHA), smaller
	// for GQA/MQA; with MLA it must be Heads.
	KVHeads int `json:"kv_heads" yaml:"kv_heads"`
	// HeadDim is the width of one head; default Hidden/Heads. With MLA it is
	// the query-key width MLA.QKHeadDim() (the default).
	HeadDim int `json:"head_dim" yaml:"head_dim"`
	// FFNHidden is the dense MLP intermediate width; default 4*Hidden.
	FFNHidden int `json:"ffn_hidden" yaml:"ffn_hidden"`
	// FFN is GELU or SwiGLU; default GELU.
	FFN string `json:"ffn" yaml:"ffn"`
	// Vocab is the vocabulary size.
	Vocab int `json:"vocab" yaml:"vocab"`
	// SeqLen is the default training sequence length in tokens; default
	// DefaultSeqLen. A command's --seq flag overrides it.
	SeqLen int `json:"seq_len" yaml:"seq_len"`
	// TiedEmbeddings shares the input embedding with the output projection.
	TiedEmbeddings bool `json:"tied_embeddings" yaml:"tied_embeddings"`
	// Norm is RMSNorm or LayerNorm; default RMSNorm.
	Norm string `json:"norm,omitempty" yaml:"norm"`
	// Bias says the linear layers carry bias vectors (GPT-2/3, Megatron GPT).
	Bias bool `json:"bias,omitempty" yaml:"bias"`
	// QKVBias says the query, key and value projections carry biases when
	// the other linear layers do not (Qwen2; Llama's and gpt-oss's
	// attention_bias, with OutBias).
	QKVBias bool `json:"qkv_bias,omitempty" yaml:"qkv_bias"`
	// OutBias says the attention output projection carries a bias when the
	// other linear layers do not (Llama's and gpt-oss's attention_bias).
	OutBias bool `json:"out_bias,omitempty" yaml:"out_bias"`
	// QKNorm adds an RMSNorm over each head of the queries and of the keys
	// before the rotary embedding (Qwen3, Gemma 3, OLMo 2): head_dim
	// weights each, and a norm pass over q and k.
	QKNorm bool `json:"qk_norm,omitempty" yaml:"qk_norm"`
	// AttnGate multiplies the attention output by a sigmoid gate that the
	// query projection also writes (Qwen3-Next's gated attention,
	// transformers Qwen3NextAttention: q_proj is 2·heads·head_dim wide):
	// h·heads·head_dim more weights and a gate pass over the output.
	AttnGate bool `json:"attn_gate,omitempty" yaml:"attn_gate"`
	// PostNorms adds a norm on the output of every attention and MLP block
	// before its residual add, besides the norm on its input (Gemma 2 and
	// 3's sandwich norms): h more weights and a norm pass each.
	PostNorms bool `json:"post_norms,omitempty" yaml:"post_norms"`
	// LogitSoftcap, when above zero, caps the logits as c·tanh(logits/c)
	// before the loss (Gemma 2's final_logit_softcapping, 30): an
	// elementwise pass over the logits whose bytes are the framework's
	// (fused into the loss kernel, or three eager kernels).
	LogitSoftcap float64 `json:"logit_softcap,omitempty" yaml:"logit_softcap"`
	// YaRN says the rotary embedding is YaRN's (Peng et al.
	// arXiv:2309.00071; rope_scaling with rope_type yarn in a Hugging Face
	// config): its attention factor scales the rotary cos and sin, which a
	// framework's fused rotary kernel may not take, so its rotary pass is
	// PassRopeYaRN.
	YaRN bool `json:"yarn,omitempty" yaml:"yarn"`
	// ALiBi says the attention adds linear biases to its scores instead of
	// rotating queries and keys (Press et al. 2022, arXiv:2108.12409; MPT,
	// BLOOM): there is no rotary pass, and the bias is applied inside the
	// attention kernel, which only some kernels take (Kernels.ALiBiFused,
	// profiles.Efficiency.FlashAttention2Fraction).
	ALiBi bool `json:"alibi,omitempty" yaml:"alibi"`
	// MoE is nil for a dense model.
	MoE *MoE `json:"moe,omitempty" yaml:"moe"`
	// MLA is nil for multi-head or grouped-query attention.
	MLA *MLA `json:"mla,omitempty" yaml:"mla"`
	// MTPLayers is the number of multi-token-prediction modules
	// (DeepSeek-V3, arXiv:2412.19437 §2.2; Hugging Face's
	// num_nextn_predict_layers): each runs one more transformer layer of the
	// model's last kind and the shared output head during training. They
	// are not counted in Counts' Total and Active (see Counts.MTP).
	MTPLayers int `json:"mtp_layers,omitempty" yaml:"mtp_layers"`
	// Window is the sliding window of the pattern's sliding layers, in
	// tokens: a query attends to the Window latest tokens, itself included.
	Window int `json:"window,omitempty" yaml:"window,omitempty"`
	// Chunk is the attention chunk of the pattern's chunked layers, in
	// tokens: a query attends to the earlier tokens of its own chunk.
	Chunk int `json:"chunk,omitempty" yaml:"chunk,omitempty"`
	// Pattern is the stack's layer types, repeated from the first layer
	// (layer i is Pattern[i mod len(Pattern)]): an attention variant (full,
	// sliding, chunked), an MLP (dense, moe) or both joined by "/"
	// (sliding/dense); a missing attention is full and a missing MLP the
	// model's. Empty means every layer full attention, with experts after
	// MoE.FirstDenseLayers when the model has them (see LayerTypeAt).
	Pattern []string `json:"pattern,omitempty" yaml:"pattern,omitempty"`
	// SSM describes the sequence mixer of the pattern's mamba2 or gdn
	// layers (state-space or linear-attention layers); nil without them.
	SSM *SSM `json:"ssm,omitempty" yaml:"ssm,omitempty"`
	// Shared describes the shared transformer blocks of the pattern's
	// shared+mamba2 layers (Zamba2); nil without them.
	Shared *SharedBlocks `json:"shared,omitempty" yaml:"shared,omitempty"`
}

// SharedBlocks describes Zamba2's shared transformer blocks
// (transformers Zamba2AttentionDecoderLayer): Blocks distinct blocks, each
// an attention over the concatenation of the hidden state and the input
// embeddings (2·hidden wide, head_dim = Spec.HeadDim, output back to
// hidden) and a gated MLP of Spec.FFNHidden, invoked round-robin by the
// pattern's shared+mamba2 layers before their Mamba-2 mixer. Each
// invocation has its own hidden x hidden linear projection of the block's
// output and its own LoRA adapters of rank AdapterRank on the MLP's gate
// and up projection (and on q, k and v with AttnAdapters). A block's
// weights are parameters once, however often it runs.
type SharedBlocks struct {
	// Blocks is the number of distinct shared blocks (num_mem_blocks).
	Blocks int `json:"blocks" yaml:"blocks"`
	// AdapterRank is the rank of the per-invocation adapters (adapter_rank).
	AdapterRank int `json:"adapter_rank" yaml:"adapter_rank"`
	// AttnAdapters says q, k and v have per-invocation adapters too
	// (use_shared_attention_adapter).
	AttnAdapters bool `json:"attn_adapters,omitempty" yaml:"attn_adapters,omitempty"`
}

// SSM describes a chunked linear-recurrence mixer: a Mamba-2 (SSD) layer
// (Dao & Gu 2024, arXiv:2405.21060 §6-7; mamba_ssm's Mamba2 module) or a
// Gated DeltaNet layer (Yang et al. 2024, arXiv:2412.06464; transformers'
// Qwen3NextGatedDeltaNet). Both keep a recurrent state of
// ValueHeads·ValueHeadDim·KeyDim per sequence and compute it in chunks of
// Chunk tokens: a masked Q×Q product within each chunk, a state pass
// between chunks.
type SSM struct {
	// ValueHeads is the number of heads of x (Mamba-2's nheads =
	// d_inner/headdim; Gated DeltaNet's linear_num_value_heads).
	ValueHeads int `json:"value_heads" yaml:"value_heads"`
	// ValueHeadDim is the width of one value head (Mamba-2's headdim;
	// linear_value_head_dim).
	ValueHeadDim int `json:"value_head_dim" yaml:"value_head_dim"`
	// KeyHeads is the number of B/C groups (Mamba-2's ngroups) or key heads
	// (linear_num_key_heads).
	KeyHeads int `json:"key_heads" yaml:"key_heads"`
	// KeyDim is the width of one group or key head: Mamba-2's d_state,
	// Gated DeltaNet's linear_key_head_dim.
	KeyDim int `json:"key_dim" yaml:"key_dim"`
	// ConvKernel is the short depthwise convolution's width (4).
	ConvKernel int `json:"conv_kernel" yaml:"conv_kernel"`
	// Chunk is the scan's chunk length Q in tokens; default 256 for
	// Mamba-2 (mamba_ssm's chunk_size), 64 for Gated DeltaNet (fla's
	// chunk_gated_delta_rule BT).
	Chunk int `json:"chunk,omitempty" yaml:"chunk,omitempty"`
	// ConvBias says the convolution has a bias (Mamba-2's use_conv_bias).
	ConvBias bool `json:"conv_bias,omitempty" yaml:"conv_bias,omitempty"`
	// ProjBias says the in- and out-projections have biases (use_bias).
	ProjBias bool `json:"proj_bias,omitempty" yaml:"proj_bias,omitempty"`
	// NoGatedNorm says the Mamba-2 mixer has no gated RMSNorm before its
	// out-projection (a Falcon-H1 config with mamba_rms_norm false:
	// y·silu(z) alone).
	NoGatedNorm bool `json:"no_gated_norm,omitempty" yaml:"no_gated_norm,omitempty"`
	// DTRank is a Mamba (mamba1) layer's dt projection rank (Jamba's
	// mamba_dt_rank, ceil(hidden/16) when "auto"); such a layer has
	// ValueHeads = d_inner, ValueHeadDim 1, KeyHeads 1 and KeyDim d_state.
	DTRank int `json:"dt_rank,omitempty" yaml:"dt_rank,omitempty"`
}

// ValueWidth is ValueHeads·ValueHeadDim (Mamba-2's d_inner).
func (m SSM) ValueWidth() int { return m.ValueHeads * m.ValueHeadDim }

// KeyWidth is KeyHeads·KeyDim (Mamba-2's ngroups·d_state).
func (m SSM) KeyWidth() int { return m.KeyHeads * m.KeyDim }
