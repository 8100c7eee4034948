package model

import (
	"fmt"
	"strings"
)

// The loaders of hybrid models: Nemotron-H (Mamba-2, attention, MLP and
// expert layers), Qwen3-Next (Gated DeltaNet and attention, experts in
// every layer) and Jamba (Mamba and attention, experts every other layer).

// stringList returns the strings of the list under key, nil when absent.
func (c *hfConfig) stringList(key string) []string {
	v, ok := c.m[key]
	if !ok || v == nil {
		return nil
	}
	list, isList := v.([]any)
	if !isList || len(list) > MaxLayers {
		c.addf("field %q is %s; it must be a list of layer types", key, jsonText(v))
		return nil
	}
	out := make([]string, len(list))
	for i, e := range list {
		s, isStr := e.(string)
		if !isStr {
			c.addf("field %q entry %d is %s; it must be a string", key, i, jsonText(e))
			return nil
		}
		out[i] = s
	}
	return out
}

// nemotronH reads Nemotron-H (transformers' NemotronHConfig): one block
// per layer, from hybrid_override_pattern ("M" Mamba-2, "*" attention, "-"
// MLP, "E" mixture of experts) or layers_block_type (linear_attention,
// full_attention, mlp, moe). The MLPs and experts are squared-ReLU
// two-matrix MLPs (mlp_hidden_act relu2), counted as the plain gelu form;
// d_inner = mamba_num_heads·mamba_head_dim; the norms are RMSNorm.
func (c *hfConfig) nemotronH() Spec {
	s := Spec{
		Hidden:         c.int(true, 0, "hidden_size"),
		Heads:          c.int(true, 0, "num_attention_heads"),
		KVHeads:        c.optionalInt("num_key_value_heads", "num_attention_heads, multi-head attention"),
		HeadDim:        c.int(false, 0, "head_dim", "attention_head_dim"),
		Vocab:          c.int(true, 0, "vocab_size"),
		SeqLen:         c.seqLen("max_position_embeddings"),
		TiedEmbeddings: c.bool(false, "tie_word_embeddings"),
		FFNHidden:      c.int(true, 0, "intermediate_size"),
		FFN:            GELU,
		Norm:           RMSNorm,
	}
	s.OutBias = c.bool(false, "attention_bias")
	s.QKVBias = s.OutBias
	var types []string
	if p := c.str("hybrid_override_pattern"); p != "" {
		for i, ch := range p {
			t, ok := map[rune]string{'M': "linear_attention", '*': "full_attention", '-': "mlp", 'E': "moe"}[ch]
			if !ok {
				c.addf("field \"hybrid_override_pattern\" character %d is %q; it must be M, *, - or E", i, string(ch))
				return s
			}
			types = append(types, t)
		}
	} else {
		types = c.stringList("layers_block_type")
	}
	if len(types) == 0 {
		c.addf("the config has neither hybrid_override_pattern nor layers_block_type; one of them gives the layers")
		return s
	}
	if n := c.int(false, len(types), "num_hidden_layers"); n != len(types) {
		c.addf("field \"num_hidden_layers\" is %d but the layer pattern has %d layers", n, len(types))
	}
	s.Layers = len(types)
	entries := make([]string, len(types))
	experts := false
	for i, t := range types {
		switch t {
		case "linear_attention", "mamba":
			entries[i] = Mamba2Mixer + "/" + NoMLP
		case "full_attention", "attention":
			entries[i] = FullAttention + "/" + NoMLP
		case "mlp":
			entries[i] = NoMixer + "/dense"
		case "moe":
			entries[i], experts = NoMixer+"/moe", true
		default:
			c.addf("field \"layers_block_type\" entry %d is %q; it must be linear_attention, full_attention, mlp or moe", i, t)
			return s
		}
	}
	s.Pattern = compactPattern(entries)
	heads, hd := c.int(true, 0, "mamba_num_heads"), c.int(true, 0, "mamba_head_dim")
	s.SSM = &SSM{
		ValueHeads: heads, ValueHeadDim: hd,
		KeyHeads:   c.int(false, 8, "n_groups"),
		KeyDim:     c.int(false, 128, "ssm_state_size"),
		ConvKernel: c.int(false, 4, "conv_kernel"),
		Chunk:      c.int(false, 128, "chunk_size"),
		ConvBias:   c.bool(true, "use_conv_bias"),
		ProjBias:   c.bool(false, "mamba_proj_bias"),
	}
	desc := fmt.Sprintf("Hugging Face config.json, model_type nemotron_h: %d mamba2 (d_inner %d = %d heads x %d, %d groups, d_state %d, chunk %d), squared-ReLU MLPs counted as the two-matrix form, RMSNorm",
		strings.Count(strings.Join(types, ","), "linear_attention")+strings.Count(strings.Join(types, ","), "mamba"), heads*hd, heads, hd, s.SSM.KeyHeads, s.SSM.KeyDim, s.SSM.Chunk)
	if experts {
		s.MoE = &MoE{
			Experts:         c.int(true, 0, "n_routed_experts"),
			TopK:            c.int(true, 0, "num_experts_per_tok"),
			ExpertFFNHidden: c.int(true, 0, "moe_intermediate_size"),
		}
		if c.int(false, 1, "n_shared_experts") > 0 {
			// NemotronHMOE: one shared MLP of moe_shared_expert_intermediate_size.
			s.MoE.SharedExperts, s.MoE.SharedFFNHidden = 1, c.int(true, 0, "moe_shared_expert_intermediate_size")
		}
		desc += fmt.Sprintf("; %d experts (top-%d) + %d shared", s.MoE.Experts, s.MoE.TopK, s.MoE.SharedExperts)
	}
	s.MTPLayers = c.int(false, 0, "num_nextn_predict_layers")
	s.Description = desc + fmt.Sprintf("; seq %d = min(max_position_embeddings, %d)", s.SeqLen, MaxHFSeqLen)
	return s
}

// qwen3Next reads Qwen3-Next (transformers' Qwen3NextConfig): layers of
// Gated DeltaNet ("linear_attention") and gated full attention, from
// layer_types or every full_attention_interval-th layer full (default 4);
// every decoder_sparse_step-th layer not in mlp_only_layers a mixture of
// num_experts gated experts (top num_experts_per_tok) with one shared
// expert of shared_expert_intermediate_size, the others a gated MLP of
// intermediate_size; per-head q/k norms and the attention output gate.
// The shared expert's scalar gate (hidden_size weights a layer) is not
// counted.
func (c *hfConfig) qwen3Next() Spec {
	s := c.decoder()
	s.FFNHidden = c.int(true, 0, "intermediate_size")
	s.QKNorm, s.AttnGate = true, true
	if s.Layers < 1 || s.Layers > MaxLayers {
		return s
	}
	types := c.stringList("layer_types")
	if types == nil {
		every := c.int(false, 4, "full_attention_interval")
		if every < 1 {
			c.addf("field \"full_attention_interval\" is %d; it must be at least 1", every)
			return s
		}
		for i := 0; i < s.Layers; i++ {
			t := "linear_attention"
			if (i+1)%every == 0 {
				t = "full_attention"
			}
			types = append(types, t)
		}
	}
	if len(types) != s.Layers {
		c.addf("field \"layer_types\" has %d entries; it must list one type per layer (%d)", len(types), s.Layers)
		return s
	}
	step := c.int(false, 1, "decoder_sparse_step")
	dense := map[int]bool{}
	for _, l := range c.intList("mlp_only_layers", s.Layers) {
		dense[l] = true
	}
	experts := c.int(false, 0, "num_experts")
	entries := make([]string, s.Layers)
	for i, t := range types {
		switch t {
		case "linear_attention":
			entries[i] = GDNMixer
		case "full_attention":
			entries[i] = FullAttention
		default:
			c.addf("field \"layer_types\" entry %d is %q; it must be linear_attention or full_attention", i, t)
			return s
		}
		if experts > 0 && step > 0 && !dense[i] && (i+1)%step == 0 {
			entries[i] += "/moe"
		} else {
			entries[i] += "/dense"
		}
	}
	s.Pattern = compactPattern(entries)
	if experts > 0 {
		s.MoE = &MoE{Experts: experts, TopK: c.int(true, 0, "num_experts_per_tok"), ExpertFFNHidden: c.int(true, 0, "moe_intermediate_size")}
		if sh := c.int(false, 0, "shared_expert_intermediate_size"); sh > 0 {
			s.MoE.SharedExperts, s.MoE.SharedFFNHidden = 1, sh
		}
	}
	s.SSM = &SSM{
		ValueHeads:   c.int(false, 32, "linear_num_value_heads"),
		ValueHeadDim: c.int(false, 128, "linear_value_head_dim"),
		KeyHeads:     c.int(false, 16, "linear_num_key_heads"),
		KeyDim:       c.int(false, 128, "linear_key_head_dim"),
		ConvKernel:   c.int(false, 4, "linear_conv_kernel_dim"),
	}
	s.Description = fmt.Sprintf("Hugging Face config.json, model_type qwen3_next: gated DeltaNet (%d value heads, %d key heads, head dims %d/%d, conv %d) and gated full attention with q/k norms; gated MLPs counted as swiglu, RMSNorm; the shared expert's scalar gate not counted; seq %d = min(max_position_embeddings, %d)",
		s.SSM.ValueHeads, s.SSM.KeyHeads, s.SSM.KeyDim, s.SSM.ValueHeadDim, s.SSM.ConvKernel, s.SeqLen, MaxHFSeqLen)
	return s
}

// falconH1 reads Falcon-H1 (transformers' FalconH1Config): every layer
// attention and a Mamba-2 mixer side by side on one normed input, then a
// gated MLP; d_inner is mamba_d_ssm (expand·hidden when null), the head
// width mamba_d_head ("auto": d_inner/mamba_n_heads); the gated norm only
// with mamba_rms_norm. The µP multipliers change no count.
func (c *hfConfig) falconH1() Spec {
	s := c.decoder()
	s.FFNHidden = c.int(true, 0, "intermediate_size")
	s.QKVBias = c.bool(false, "attention_bias")
	s.OutBias = s.QKVBias
	s.Bias = c.bool(false, "mlp_bias") && s.QKVBias
	inner := c.int(false, c.int(false, 2, "mamba_expand")*s.Hidden, "mamba_d_ssm")
	heads := c.int(true, 0, "mamba_n_heads")
	head := 0
	if v, _ := c.m["mamba_d_head"].(string); v == "auto" || c.m["mamba_d_head"] == nil {
		if heads > 0 {
			head = inner / heads
		}
	} else {
		head = c.int(true, 0, "mamba_d_head")
	}
	if heads > 0 && head*heads != inner {
		c.addf("mamba_n_heads %d x mamba_d_head %d is not mamba_d_ssm %d", heads, head, inner)
	}
	s.Pattern = []string{ParallelMixer + "/dense"}
	s.SSM = &SSM{
		ValueHeads: heads, ValueHeadDim: head,
		KeyHeads:    c.int(false, 1, "mamba_n_groups"),
		KeyDim:      c.int(false, 256, "mamba_d_state"),
		ConvKernel:  c.int(false, 4, "mamba_d_conv"),
		Chunk:       c.int(false, 256, "mamba_chunk_size"),
		ConvBias:    c.bool(true, "mamba_conv_bias"),
		ProjBias:    c.bool(false, "mamba_proj_bias"),
		NoGatedNorm: !c.bool(false, "mamba_rms_norm"),
	}
	s.Description = fmt.Sprintf("Hugging Face config.json, model_type falcon_h1: every layer attention and Mamba-2 (d_inner %d = %d heads x %d, %d groups, d_state %d) in parallel on one normed input, gated MLP counted as swiglu, RMSNorm; seq %d = min(max_position_embeddings, %d)",
		inner, heads, head, s.SSM.KeyHeads, s.SSM.KeyDim, s.SeqLen, MaxHFSeqLen)
	return s
}

// jamba reads Jamba (transformers' JambaConfig): layer i attention when i
// mod attn_layer_period is attn_layer_offset, else a Mamba (selective
// scan) layer of d_inner = mamba_expand·hidden, d_state mamba_d_state and
// dt_rank mamba_dt_rank ("auto": ceil(hidden/16)); its MLP a mixture of
// num_experts gated experts when i mod expert_layer_period is
// expert_layer_offset, else a gated MLP; both of intermediate_size.
func (c *hfConfig) jamba() Spec {
	s := c.decoder()
	s.FFNHidden = c.int(true, 0, "intermediate_size")
	if s.Layers < 1 || s.Layers > MaxLayers {
		return s
	}
	ap, ao := c.int(false, 8, "attn_layer_period"), c.int(false, 4, "attn_layer_offset")
	ep, eo := c.int(false, 2, "expert_layer_period"), c.int(false, 1, "expert_layer_offset")
	if ap < 1 || ao < 0 || ao >= ap || ep < 1 || eo < 0 || eo >= ep {
		c.addf("attn_layer_period %d, attn_layer_offset %d, expert_layer_period %d, expert_layer_offset %d: each offset must be below its period", ap, ao, ep, eo)
		return s
	}
	experts := c.int(false, 16, "num_experts")
	entries := make([]string, s.Layers)
	for i := range entries {
		e := Mamba1Mixer
		if i%ap == ao {
			e = FullAttention
		}
		if experts > 1 && i%ep == eo {
			e += "/moe"
		} else {
			e += "/dense"
		}
		entries[i] = e
	}
	s.Pattern = compactPattern(entries)
	if experts > 1 {
		s.MoE = &MoE{Experts: experts, TopK: c.int(false, 2, "num_experts_per_tok"), ExpertFFNHidden: s.FFNHidden}
	}
	inner := c.int(false, 2, "mamba_expand") * s.Hidden
	rank := (s.Hidden + 15) / 16
	if v, isStr := c.m["mamba_dt_rank"].(string); !isStr || v != "auto" {
		rank = c.int(false, rank, "mamba_dt_rank")
	}
	s.SSM = &SSM{
		ValueHeads: inner, ValueHeadDim: 1, KeyHeads: 1,
		KeyDim:     c.int(false, 16, "mamba_d_state"),
		ConvKernel: c.int(false, 4, "mamba_d_conv"),
		DTRank:     rank,
		ConvBias:   c.bool(true, "mamba_conv_bias"),
		ProjBias:   c.bool(false, "mamba_proj_bias"),
	}
	s.Description = fmt.Sprintf("Hugging Face config.json, model_type jamba: attention every %d layers from %d, Mamba (selective scan, d_inner %d, d_state %d, dt_rank %d) elsewhere; %d gated experts (top-%d) every %d layers from %d, gated MLPs counted as swiglu, RMSNorm; seq %d = min(max_position_embeddings, %d)",
		ap, ao, inner, s.SSM.KeyDim, rank, experts, c.int(false, 2, "num_experts_per_tok"), ep, eo, s.SeqLen, MaxHFSeqLen)
	return s
}

// zamba2Types is Zamba2Config's default layers_block_type (54 layers, the
// 2.7B model's): "mamba" layers with a "hybrid" one every sixth
// (transformers configuration_zamba2.py, layers_block_type is None).
func zamba2Types() []string {
	var t []string
	add := func(kind string, n int) {
		for i := 0; i < n; i++ {
			t = append(t, kind)
		}
	}
	add("mamba", 1)
	for i := 0; i < 7; i++ {
		add("mamba", 5)
		add("hybrid", 1)
	}
	add("mamba", 4)
	add("hybrid", 1)
	add("mamba", 3)
	add("hybrid", 1)
	add("mamba", 2)
	return t
}

// zamba2 reads Zamba2 (transformers' Zamba2Config): every layer a Mamba-2
// layer (d_inner = mamba_expand·hidden, n_mamba_heads heads, mamba_ngroups
// groups, d_state mamba_d_state, the conv's bias always, the gated norm);
// the layers layers_block_type marks "hybrid" first invoke one of
// num_mem_blocks shared transformer blocks, round-robin (attention from
// 2·hidden with head_dim 2·hidden/heads, a gated MLP of intermediate_size,
// 4·hidden when null), each invocation with its own hidden x hidden linear
// and LoRA adapters of adapter_rank (the MLP's always, q/k/v's with
// use_shared_attention_adapter). Embeddings are tied unless
// tie_word_embeddings says otherwise (PretrainedConfig's default);
// add_bias_linear's MLP biases are not counted.
func (c *hfConfig) zamba2() Spec {
	s := Spec{
		Layers:         c.int(true, 0, "num_hidden_layers"),
		Hidden:         c.int(true, 0, "hidden_size"),
		Heads:          c.int(false, 32, "num_attention_heads"),
		Vocab:          c.int(false, 32000, "vocab_size"),
		SeqLen:         c.seqLen("max_position_embeddings"),
		TiedEmbeddings: c.bool(true, "tie_word_embeddings"),
		FFN:            SwiGLU,
		Norm:           RMSNorm,
	}
	s.KVHeads = c.int(false, s.Heads, "num_key_value_heads")
	s.FFNHidden = c.int(false, 4*s.Hidden, "intermediate_size")
	if s.Layers < 1 || s.Layers > MaxLayers || s.Hidden < 1 || s.Heads < 1 {
		return s
	}
	// configuration_zamba2.py: attention_head_dim = 2·hidden_size / num_attention_heads.
	s.HeadDim = 2 * s.Hidden / s.Heads
	types := c.stringList("layers_block_type")
	if types == nil {
		types = zamba2Types()
	}
	if len(types) != s.Layers {
		c.addf("field \"layers_block_type\" has %d entries; it must list one type per layer (%d)", len(types), s.Layers)
		return s
	}
	hybrid := 0
	for i, t := range types {
		switch t {
		case "mamba":
		case "hybrid":
			hybrid++
		default:
			c.addf("field \"layers_block_type\" entry %d is %q; it must be mamba or hybrid", i, t)
			return s
		}
	}
	s.Pattern = zamba2Pattern(types)
	inner := c.int(false, 2, "mamba_expand") * s.Hidden
	heads := c.int(false, 8, "n_mamba_heads")
	head := 0
	if heads > 0 {
		head = inner / heads
	}
	if heads <= 0 || head*heads != inner {
		c.addf("n_mamba_heads %d does not divide d_inner %d (mamba_expand x hidden_size)", heads, inner)
		return s
	}
	s.SSM = &SSM{
		ValueHeads: heads, ValueHeadDim: head,
		KeyHeads:   c.int(false, 1, "mamba_ngroups"),
		KeyDim:     c.int(false, 64, "mamba_d_state"),
		ConvKernel: c.int(false, 4, "mamba_d_conv"),
		Chunk:      c.int(false, 256, "chunk_size"),
		// modeling_zamba2.py Zamba2MambaMixer: nn.Conv1d(..., bias=True) whatever use_conv_bias says.
		ConvBias: true,
		ProjBias: c.bool(false, "add_bias_linear"),
	}
	s.Shared = &SharedBlocks{
		Blocks:       c.int(false, 1, "num_mem_blocks"),
		AdapterRank:  c.int(false, 128, "adapter_rank"),
		AttnAdapters: c.bool(false, "use_shared_attention_adapter"),
	}
	s.Description = fmt.Sprintf("Hugging Face config.json, model_type zamba2: %d mamba2 layers (d_inner %d = %d heads x %d, %d groups, d_state %d), %d of them after one of %d shared attention+MLP blocks (attention over 2 x hidden, head_dim %d; weights counted once) with a linear and rank-%d adapters per invocation; gated MLP counted as swiglu, RMSNorm; seq %d = min(max_position_embeddings, %d)",
		s.Layers, inner, heads, head, s.SSM.KeyHeads, s.SSM.KeyDim, hybrid, s.Shared.Blocks, s.HeadDim, s.Shared.AdapterRank, s.SeqLen, MaxHFSeqLen)
	return s
}
