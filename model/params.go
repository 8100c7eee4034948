package model

// Counts are a model's parameter counts. Embedding parameters are the input
// embedding plus the output projection when it is untied.
type Counts struct {
	Total              int64 `json:"params"`
	Active             int64 `json:"active_params"`
	Embedding          int64 `json:"embedding_params"`
	NonEmbedding       int64 `json:"non_embedding_params"`
	ActiveNonEmbedding int64 `json:"active_non_embedding_params"`
	// MTP and ActiveMTP are the multi-token-prediction modules' own
	// parameters, all and those a token visits. They are not in the other
	// counts (DeepSeek-V3 reports 671B and 37B without them) and share the
	// embedding and the output head.
	MTP       int64 `json:"mtp_params,omitempty"`
	ActiveMTP int64 `json:"active_mtp_params,omitempty"`
}

// Normalize fills the documented defaults of zero optional fields.
func (s *Spec) Normalize() {
	if s.KVHeads == 0 {
		s.KVHeads = s.Heads
	}
	if s.HeadDim == 0 && s.MLA != nil {
		s.HeadDim = s.MLA.QKHeadDim()
	}
	if s.HeadDim == 0 && s.Heads > 0 {
		s.HeadDim = s.Hidden / s.Heads
	}
	if s.FFNHidden == 0 {
		s.FFNHidden = 4 * s.Hidden
	}
	if s.FFN == "" {
		s.FFN = GELU
	}
	if s.Norm == "" {
		s.Norm = RMSNorm
	}
	if s.SeqLen == 0 {
		s.SeqLen = DefaultSeqLen
	}
	if m := s.SSM; m != nil && m.Chunk == 0 {
		m.Chunk = s.ssmDefaultChunk()
	}
	if s.MoE != nil {
		if s.MoE.CapacityFactor == 0 {
			s.MoE.CapacityFactor = 1
		}
		if s.MoE.Imbalance == 0 {
			s.MoE.Imbalance = 1
		}
		if s.MoE.SharedFFNHidden == 0 {
			s.MoE.SharedFFNHidden = s.MoE.ExpertFFNHidden
		}
	}
}

// QDim is the query projection width, heads*head_dim.
func (s Spec) QDim() int { return s.Heads * s.HeadDim }

// KVDim is the key (or value) projection width, kv_heads*head_dim.
func (s Spec) KVDim() int { return s.KVHeads * s.HeadDim }

// MoELayers is the number of layers whose MLP is a mixture of experts
// (LayerTypeAt).
func (s Spec) MoELayers() int {
	if s.MoE == nil {
		return 0
	}
	if len(s.Pattern) == 0 {
		return max(s.Layers-s.MoE.FirstDenseLayers, 0)
	}
	n := 0
	for i := 0; i < s.Layers; i++ {
		if s.LayerTypeAt(i).MoE {
			n++
		}
	}
	return n
}

// DenseLayers is the number of layers with a dense MLP.
func (s Spec) DenseLayers() int { return s.Layers - s.MoELayers() }

// mlpMatrices is 3 for gated MLPs and 2 for plain ones (docs/formulas.md §1.1).
func (s Spec) mlpMatrices() int64 {
	if s.FFN == SwiGLU {
		return 3
	}
	return 2
}

// AttentionParams is one layer's attention weights: 2*h*q + 2*h*kv, plus
// biases q + 2kv + h when Bias is set (docs/formulas.md §1.1, [SB-TF][MEG-MEM]),
// q + 2kv with QKVBias and h with OutBias, and 2*head_dim with QKNorm (one
// RMSNorm weight per head dimension for the queries and one for the keys,
// transformers' Qwen3Attention); with MLA, its projections and the norms of
// its two latents (see mlaParams).
func (s Spec) AttentionParams() int64 {
	if m := s.MLA; m != nil {
		return mlaParams(int64(s.Hidden), int64(s.Heads), *m) + s.normWidth()*int64(m.QLoRARank+m.KVLoRARank)
	}
	h, q, kv := int64(s.Hidden), int64(s.QDim()), int64(s.KVDim())
	p := 2*h*q + 2*h*kv
	if s.Bias || s.QKVBias {
		p += q + 2*kv
	}
	if s.Bias || s.OutBias {
		p += h
	}
	if s.QKNorm {
		p += 2 * int64(s.HeadDim)
	}
	if s.AttnGate {
		p += h * q // q_proj writes the query and its gate (Qwen3NextAttention)
	}
	return p
}

// mlaParams is the projection parameter count of one multi-head latent
// attention layer of width h with n heads (DeepSeek-V2 arXiv:2405.04434
// §2.1.2-2.1.3; Megatron-LM num_floating_point_operations' MLA terms):
// queries h*r_q + r_q*n*(d_nope+d_rope), or h*n*(d_nope+d_rope) when r_q is 0;
// keys and values h*r_kv + r_kv*n*(d_nope+d_v); the shared rotary key
// h*d_rope; the output n*d_v*h.
func mlaParams(h, n int64, m MLA) int64 {
	qk, rq, rkv := int64(m.QKHeadDim()), int64(m.QLoRARank), int64(m.KVLoRARank)
	q := h * n * qk
	if rq > 0 {
		q = h*rq + rq*n*qk
	}
	kv := h*rkv + rkv*n*int64(m.QKNopeHeadDim+m.VHeadDim)
	return q + kv + h*int64(m.QKRopeHeadDim) + n*int64(m.VHeadDim)*h
}

// normWidth is the parameters of a normalisation layer per element of its
// input: 1 for RMSNorm (a weight), 2 for LayerNorm (a weight and a bias).
func (s Spec) normWidth() int64 {
	if s.Norm == LayerNorm {
		return 2
	}
	return 1
}

// MLPParams is the parameter count of one MLP of intermediate width f:
// 3*h*f gated, 2*h*f plain, plus biases f + h when Bias is set (docs/formulas.md §1.1).
func (s Spec) MLPParams(f int) int64 {
	p := s.mlpMatrices() * int64(s.Hidden) * int64(f)
	if s.Bias {
		p += s.mlpBiasParams(f)
	}
	return p
}

// mlpBiasParams is the biases of one MLP of intermediate width f: f + h,
// and f more for the gated form's second input projection.
func (s Spec) mlpBiasParams(f int) int64 {
	b := int64(f) + int64(s.Hidden)
	if s.FFN == SwiGLU {
		b += int64(f)
	}
	return b
}

// NormParams is one layer's normalisation weights: 2*h for RMSNorm, 4*h for
// LayerNorm (two norms per layer, docs/formulas.md §1.1).
func (s Spec) NormParams() int64 {
	n := 2 * s.normWidth() * int64(s.Hidden)
	if s.PostNorms {
		n *= 2 // a norm on each block's output too (Gemma 2's sandwich)
	}
	return n
}

// RouterParams is one MoE layer's router: h*E (docs/formulas.md §1.1 [MEG-MEM]).
func (s Spec) RouterParams() int64 {
	if s.MoE == nil {
		return 0
	}
	return int64(s.Hidden) * int64(s.MoE.Experts)
}

// ExpertParams is one routed expert's weights, with its biases under
// MoE.Bias or Spec.Bias.
func (s Spec) ExpertParams() int64 {
	if s.MoE == nil {
		return 0
	}
	p := s.MLPParams(s.MoE.ExpertFFNHidden)
	if s.MoE.Bias && !s.Bias {
		// The experts' own biases (MoE.Bias: gpt-oss's gate_up_proj_bias
		// and down_proj_bias), which MLPParams counts only under Spec.Bias.
		p += s.mlpBiasParams(s.MoE.ExpertFFNHidden)
	}
	return p
}

// SharedExpertParams is the weights of all shared experts of one MoE layer.
func (s Spec) SharedExpertParams() int64 {
	if s.MoE == nil {
		return 0
	}
	return int64(s.MoE.SharedExperts) * s.MLPParams(s.MoE.SharedFFNHidden)
}

// DenseLayerParams is one dense layer: attention + MLP + norms.
func (s Spec) DenseLayerParams() int64 {
	return s.AttentionParams() + s.MLPParams(s.FFNHidden) + s.NormParams()
}

// MoELayerParams is one MoE layer with all experts, or with the TopK routed
// experts a token visits when active is true (docs/formulas.md §1.1 [MEG-MEM]).
func (s Spec) MoELayerParams(active bool) int64 {
	if s.MoE == nil {
		return 0
	}
	n := int64(s.MoE.Experts)
	if active {
		n = int64(s.MoE.TopK)
	}
	return s.AttentionParams() + s.NormParams() + s.RouterParams() + s.SharedExpertParams() + n*s.ExpertParams()
}

// EmbeddingParams is the input embedding, V*h.
func (s Spec) EmbeddingParams() int64 { return int64(s.Vocab) * int64(s.Hidden) }

// OutputParams is the output projection, V*h, or 0 when tied to the embedding.
func (s Spec) OutputParams() int64 {
	if s.TiedEmbeddings {
		return 0
	}
	return s.EmbeddingParams()
}

// FinalNormParams is the norm after the last layer: h (RMSNorm) or 2h (LayerNorm).
func (s Spec) FinalNormParams() int64 { return s.normWidth() * int64(s.Hidden) }

// MTPModuleParams is one multi-token-prediction module's own parameters
// (DeepSeek-V3 arXiv:2412.19437 §2.2; Megatron-Core's
// MultiTokenPredictionLayer): the norms of the hidden state and of the
// shifted tokens' embedding and the module's final norm (3h for RMSNorm),
// the projection M from 2h to h (2h²) and one transformer layer of the
// stack's last kind (MoE when the model has MoE layers), with all its
// experts or, when active is true, the TopK a token visits. The embedding
// and the output head are the main model's.
func (s Spec) MTPModuleParams(active bool) int64 {
	h := int64(s.Hidden)
	p := 3*s.normWidth()*h + 2*h*h
	if s.MoELayers() > 0 {
		return p + s.MoELayerParams(active)
	}
	return p + s.DenseLayerParams()
}

// Counts returns the parameter counts (docs/formulas.md §1.1):
// Ψ = L_d*P_layer + L_moe*P_moe_layer + V*h (+V*h untied) + final norm;
// the multi-token-prediction modules apart (MTPLayers*MTPModuleParams).
func (s Spec) Counts() Counts {
	if s.Hybrid() {
		return s.hybridCounts()
	}
	dense := int64(s.DenseLayers()) * s.DenseLayerParams()
	moeAll := int64(s.MoELayers()) * s.MoELayerParams(false)
	moeActive := int64(s.MoELayers()) * s.MoELayerParams(true)
	emb := s.EmbeddingParams() + s.OutputParams()
	nonEmb := dense + moeAll + s.FinalNormParams()
	activeNonEmb := dense + moeActive + s.FinalNormParams()
	return Counts{
		Total:              nonEmb + emb,
		Active:             activeNonEmb + emb,
		Embedding:          emb,
		NonEmbedding:       nonEmb,
		ActiveNonEmbedding: activeNonEmb,
		MTP:                int64(s.MTPLayers) * s.MTPModuleParams(false),
		ActiveMTP:          int64(s.MTPLayers) * s.MTPModuleParams(true),
	}
}

// ModelFLOPsPerToken is the contract's MFU numerator per token for sequences
// of seqLen tokens, without recomputation (docs/formulas.md §1.2-1.3):
// 6*Ψ_active_nonembedding + 12*L*q*s (attention scores, full square, PaLM
// App. B) + 6*h*V (output layer, [MEG-FLOP]). With MLA, q is CoreWidth. A
// sliding-window or chunked layer counts 12*q*min(span, s) (LocalKeys). The
// multi-token-prediction modules are model FLOPs of training too, counted
// as Megatron-LM's num_floating_point_operations counts them: their
// parameters (6*Ψ_mtp_active), one more layer's attention scores and one
// more output layer each.
func (s Spec) ModelFLOPsPerToken(seqLen int) float64 {
	if s.Hybrid() {
		return s.hybridFLOPsPerToken(seqLen)
	}
	c := s.Counts()
	seq := float64(seqLen)
	keys := float64(s.Layers) * seq
	if len(s.Pattern) > 0 {
		keys = 0
		for i := 0; i < s.Layers; i++ {
			a := s.LayerTypeAt(i).Attention
			keys += LocalKeys(a, float64(s.Span(a)), seq)
		}
	}
	if s.MTPLayers > 0 {
		// Each module runs one more layer of the stack's last kind.
		a := s.LayerTypeAt(s.Layers - 1).Attention
		keys += float64(s.MTPLayers) * LocalKeys(a, float64(s.Span(a)), seq)
	}
	return 6*float64(c.ActiveNonEmbedding+c.ActiveMTP) +
		12*keys*s.CoreWidth() +
		6*float64(s.Hidden)*float64(s.Vocab)*float64(1+s.MTPLayers)
}

// CoreWidth is the width per token of the attention core's two products
// for the FLOP count, so that 12*CoreWidth*s is one layer's attention score
// FLOPs per token (full square): q = heads*head_dim, or with MLA
// heads*(qk_head_dim + v_head_dim)/2, QKᵀ at the query-key width and the
// attention over V at the value width (Megatron-LM's MLA core term,
// without its halving for the causal mask).
func (s Spec) CoreWidth() float64 {
	if m := s.MLA; m != nil {
		return float64(s.Heads) * float64(m.QKHeadDim()+m.VHeadDim) / 2
	}
	return float64(s.QDim())
}
