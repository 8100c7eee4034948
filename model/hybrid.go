package model

// Parameter and FLOP counts of hybrid stacks: layers of Mamba-2 (SSD) or
// Gated DeltaNet mixers, attention, MLPs and mixtures of experts in any
// combination (Spec.Pattern with mamba2, gdn, nomixer or nomlp entries).

// ssmDefaultChunk is the chunk length of the scan when Spec.SSM gives none:
// 256 for Mamba-2 (mamba_ssm Mamba2 chunk_size, state-spaces/mamba
// v2.2.2), 64 for Gated DeltaNet (fla chunk_gated_delta_rule, BT = 64).
func (s Spec) ssmDefaultChunk() int {
	if s.ssmMixer() == MixGDN {
		return 64
	}
	return 256
}

// ssmMixer is the kind of Spec.SSM's mixer: MixGDN when the pattern has
// gdn layers, else MixMamba2 (a model has one kind).
func (s Spec) ssmMixer() Mixer {
	for _, e := range s.Pattern {
		if t, ok := parseLayerEntry(e, s.MoE != nil); ok && (t.Mixer == MixGDN || t.Mixer == MixMamba1) {
			return t.Mixer
		}
	}
	return MixMamba2
}

// SSMInProjWidth is the in-projection's output width of a mixer: Mamba-2's
// d_in_proj = 2·d_inner + 2·ngroups·d_state + nheads (mamba_ssm
// modules/mamba2.py, z, x, B, C and dt); Gated DeltaNet's
// 2·key_dim + 2·value_dim + 2·num_v_heads (transformers
// qwen3_next in_proj_qkvz and in_proj_ba: q, k, v, z, beta and a).
func (s Spec) SSMInProjWidth(m Mixer) int64 {
	if s.SSM == nil {
		return 0
	}
	v, k, h := int64(s.SSM.ValueWidth()), int64(s.SSM.KeyWidth()), int64(s.SSM.ValueHeads)
	switch m {
	case MixGDN:
		return 2*k + 2*v + 2*h
	case MixMamba1:
		return 2 * v // x and z (mamba_ssm modules/mamba_simple.py in_proj)
	}
	return 2*v + 2*k + h
}

// SSMConvWidth is the channels of the short depthwise convolution: x, B and
// C for Mamba-2 (conv_dim = d_inner + 2·ngroups·d_state), q, k and v for
// Gated DeltaNet (conv_dim = 2·key_dim + value_dim).
func (s Spec) SSMConvWidth(m Mixer) int64 {
	if s.SSM == nil {
		return 0
	}
	v, k := int64(s.SSM.ValueWidth()), int64(s.SSM.KeyWidth())
	switch m {
	case MixGDN:
		return 2*k + v
	case MixMamba1:
		return v
	}
	return v + 2*k
}

// MixerParams is the parameters of one sequence mixer of kind m, without
// its input norm: AttentionParams for attention; for Mamba-2 the
// in-projection, the convolution (kernel·conv_dim, plus conv_dim of bias),
// dt_bias, A_log and D (nheads each), the gated RMSNorm (d_inner) and the
// out-projection (mamba_ssm modules/mamba2.py; transformers
// NemotronHMamba2Mixer); for Gated DeltaNet the in-projections, the
// convolution without bias, dt_bias and A_log (num_v_heads each), the
// gated RMSNorm over one value head (head_v_dim) and the out-projection
// (transformers Qwen3NextGatedDeltaNet).
func (s Spec) MixerParams(m Mixer) int64 {
	switch m {
	case MixAttention:
		return s.AttentionParams()
	case MixNone:
		return 0
	case MixParallel:
		return s.AttentionParams() + s.MixerParams(MixMamba2)
	case MixShared:
		return s.MixerParams(MixMamba2) + s.SharedInvocationParams()
	}
	if s.SSM == nil {
		return 0
	}
	x := s.SSM
	h, v, conv := int64(s.Hidden), int64(x.ValueWidth()), s.SSMConvWidth(m)
	in := s.SSMInProjWidth(m)
	if m == MixMamba1 {
		// transformers JambaMambaMixer: in_proj, conv (+ bias), x_proj
		// d_inner x (dt_rank + 2·d_state), dt_proj dt_rank x d_inner +
		// d_inner bias, A_log d_inner x d_state, D d_inner, out_proj, and
		// the RMSNorms of dt, B and C (dt_rank + 2·d_state).
		r, n := int64(x.DTRank), int64(x.KeyDim)
		p := h*in + int64(x.ConvKernel)*conv + v*(r+2*n) + r*v + v + v*n + v + v*h + r + 2*n
		if x.ConvBias {
			p += conv
		}
		if x.ProjBias {
			p += in + h
		}
		return p
	}
	p := h*in + int64(x.ConvKernel)*conv + v*h
	if m == MixGDN {
		return p + 2*int64(x.ValueHeads) + int64(x.ValueHeadDim)
	}
	p += 3 * int64(x.ValueHeads)
	if !x.NoGatedNorm {
		p += v
	}
	if x.ConvBias {
		p += conv
	}
	if x.ProjBias {
		p += in + h
	}
	return p
}

// SharedBlockParams is the parameters of one shared transformer block
// (Spec.Shared), counted once however often it runs (transformers
// Zamba2AttentionDecoderLayer): the input norm over the concatenation of
// the hidden state and the embeddings (2·hidden), q from 2·hidden to
// heads·head_dim and k and v to kv_heads·head_dim (Zamba2Attention), o
// back to hidden, the norm before the MLP (hidden) and the gated MLP
// (Zamba2MLP gate_up_proj and down_proj). 0 without shared blocks.
func (s Spec) SharedBlockParams() int64 {
	if s.Shared == nil {
		return 0
	}
	h, q, kv := int64(s.Hidden), int64(s.QDim()), int64(s.KVDim())
	// modeling_zamba2.py Zamba2Attention: q_proj, k_proj, v_proj from attention_hidden_size = 2·hidden, o_proj to hidden.
	attn := 2*h*(q+2*kv) + q*h
	// Zamba2AttentionDecoderLayer: input_layernorm over 2·hidden, pre_ff_layernorm over hidden.
	return attn + 3*s.normWidth()*h + s.MLPParams(s.FFNHidden)
}

// SharedInvocationParams is the parameters each invocation of a shared
// block has of its own: the hidden x hidden linear projection of the
// block's output (transformers Zamba2Model linear_layers), the LoRA
// adapter on the MLP's gate and up projection, hidden x rank + rank x
// (2·ffn gated, ffn plain) (Zamba2MLP gate_up_proj_adapter_list), and with
// AttnAdapters one on each of q, k and v, 2·hidden x rank + rank x
// 2·hidden (Zamba2Attention linear_q/k/v_adapter_list).
func (s Spec) SharedInvocationParams() int64 {
	x := s.Shared
	if x == nil {
		return 0
	}
	h, r := int64(s.Hidden), int64(x.AdapterRank)
	// modeling_zamba2.py Zamba2MLP: nn.Linear(hidden, rank), nn.Linear(rank, 2·intermediate).
	p := h*h + h*r + r*s.mlpUpWidth()
	if x.AttnAdapters {
		// Zamba2Attention: three adapters of nn.Linear(2·hidden, rank), nn.Linear(rank, 2·hidden).
		p += 3 * (2*h*r + r*2*h)
	}
	return p
}

// mlpUpWidth is the output width of the MLP's fused gate and up
// projection: 2·ffn gated, ffn plain.
func (s Spec) mlpUpWidth() int64 {
	if s.FFN == SwiGLU {
		return 2 * int64(s.FFNHidden)
	}
	return int64(s.FFNHidden)
}

// SharedInvocations is the number of shared+mamba2 layers of the stack.
func (s Spec) SharedInvocations() int {
	n := 0
	for i := 0; i < s.Layers; i++ {
		if s.LayerTypeAt(i).Mixer == MixShared {
			n++
		}
	}
	return n
}

// sharedBlocksUsed is the number of distinct shared blocks the stack
// invokes: Spec.Shared.Blocks, or fewer when there are fewer invocations.
func (s Spec) sharedBlocksUsed() int {
	if s.Shared == nil {
		return 0
	}
	return min(s.Shared.Blocks, s.SharedInvocations())
}

// layerParams is the parameters of one layer of type t: its mixer and MLP
// with their input norms (a post-norm each with PostNorms); active counts
// the routed experts a token visits instead of all of them.
func (s Spec) layerParams(t LayerType, active bool) int64 {
	nw := s.normWidth() * int64(s.Hidden)
	if s.PostNorms {
		nw *= 2
	}
	var p int64
	if t.Mixer != MixNone {
		p += s.MixerParams(t.Mixer) + nw
	}
	switch {
	case t.NoMLP:
	case t.MoE:
		n := int64(s.MoE.Experts)
		if active {
			n = int64(s.MoE.TopK)
		}
		p += nw + s.RouterParams() + s.SharedExpertParams() + n*s.ExpertParams()
	default:
		p += nw + s.MLPParams(s.FFNHidden)
	}
	return p
}

// hybridCounts is Counts for a hybrid stack, summed layer by layer.
func (s Spec) hybridCounts() Counts {
	var all, act int64
	for i := 0; i < s.Layers; i++ {
		t := s.LayerTypeAt(i)
		all += s.layerParams(t, false)
		act += s.layerParams(t, true)
	}
	emb := s.EmbeddingParams() + s.OutputParams()
	all += s.FinalNormParams()
	act += s.FinalNormParams()
	// Each shared block once, however many layers invoke it.
	shared := int64(s.sharedBlocksUsed()) * s.SharedBlockParams()
	all += shared
	act += shared
	c := Counts{Total: all + emb, Active: act + emb, Embedding: emb, NonEmbedding: all, ActiveNonEmbedding: act}
	if s.MTPLayers > 0 {
		t := s.LayerTypeAt(s.Layers - 1)
		h := int64(s.Hidden)
		mod := 3*s.normWidth()*h + 2*h*h
		c.MTP = int64(s.MTPLayers) * (mod + s.layerParams(t, false))
		c.ActiveMTP = int64(s.MTPLayers) * (mod + s.layerParams(t, true))
	}
	return c
}

// SSMScanFLOPsPerToken is the forward FLOPs per token of the chunked scan
// of one mixer of kind m at sequence length seq, beyond its projections:
// SSD's intra-chunk C·Bᵀ over the causal half of each Q×Q block
// (ngroups·d_state wide) and its product with x (nheads·headdim wide), the
// chunk states Bᵀ·x and their read-out C·state (nheads·headdim·d_state
// each) (arXiv:2405.21060 §7, Listing 1: 2·(Q/2)·(G·N + H·P) +
// 4·H·P·N per token). Gated DeltaNet adds, within each chunk, k·kᵀ (for
// the WY form's triangular solve) and the products forming w and u
// (arXiv:2412.06464 §3; fla chunk_gated_delta_rule): about twice SSD's
// intra-chunk work. With seq < Q a chunk is the whole sequence.
func (s Spec) SSMScanFLOPsPerToken(m Mixer, seq float64) float64 {
	x := s.SSM
	if x == nil || (m != MixMamba2 && m != MixGDN && m != MixMamba1) {
		return 0
	}
	hp, gn, n := float64(x.ValueWidth()), float64(x.KeyWidth()), float64(x.KeyDim)
	if m == MixMamba1 {
		// The selective scan: 9 FLOPs per channel and state a token
		// (discretise A and B, update the state, read it out by C; the
		// count of Gu & Dao 2023 arXiv:2312.00752 §3.3 "O(BLDN)", with the
		// constant an assumption).
		return 9 * hp * n
	}
	q := min(float64(x.Chunk), seq)
	intra := 2 * (q / 2) * (gn + hp)
	if m == MixGDN {
		intra *= 2
	}
	return intra + 4*hp*n
}

// hybridFLOPsPerToken is ModelFLOPsPerToken for a hybrid stack: 6 times
// the active parameters, 12·seq·width per full attention layer (the local
// ones over their span), and 3 times the scan's forward FLOPs per
// state-space or linear-attention layer (forward and the twice-as-costly
// backward, the same convention as the attention core's).
func (s Spec) hybridFLOPsPerToken(seqLen int) float64 {
	c := s.Counts()
	seq := float64(seqLen)
	core := 0.0
	n := s.Layers + s.MTPLayers
	for i := 0; i < n; i++ {
		t := s.LayerTypeAt(min(i, s.Layers-1))
		switch t.Mixer {
		case MixAttention:
			core += 12 * LocalKeys(t.Attention, float64(s.Span(t.Attention)), seq) * s.CoreWidth()
		case MixMamba2, MixGDN, MixMamba1:
			core += 3 * s.SSMScanFLOPsPerToken(t.Mixer, seq)
		case MixParallel, MixShared:
			core += 12*seq*s.CoreWidth() + 3*s.SSMScanFLOPsPerToken(MixMamba2, seq)
		}
	}
	// A shared block's weights count once in the parameters but compute
	// at every invocation: 6 FLOPs per weight per token for the others.
	again := float64(s.SharedInvocations()-s.sharedBlocksUsed()) * float64(s.SharedBlockParams())
	return 6*float64(c.ActiveNonEmbedding+c.ActiveMTP) + 6*again + core + 6*float64(s.Hidden)*float64(s.Vocab)*float64(1+s.MTPLayers)
}
