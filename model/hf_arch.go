package model

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/meshplan/meshplan/internal/bounded"
	"github.com/meshplan/meshplan/internal/text"
)

// The loaders of the architectures whose layers differ along the stack
// (Gemma 2/3, gpt-oss, Llama 4), of the Llama-shaped ones with their own
// defaults (Gemma, StarCoder2, Falcon), and of a model_type the planner
// does not know.

// intList returns the integers of the list under key that lie in [0, n),
// nil when the key is absent or null; anything else is a problem.
func (c *hfConfig) intList(key string, n int) []int {
	v, ok := c.m[key]
	if !ok || v == nil {
		return nil
	}
	list, isList := v.([]any)
	if !isList {
		c.addf("field %q is %s; it must be a list of layer numbers", key, jsonText(v))
		return nil
	}
	out := make([]int, 0, len(list))
	for i, e := range list {
		num, isNum := e.(json.Number)
		k, err := strconv.Atoi(string(num))
		if !isNum || err != nil || k < 0 || k >= max(n, 1) {
			c.addf("field %q entry %d is %s; it must be a layer number from 0 to %d", key, i, jsonText(e), max(n, 1)-1)
			return nil
		}
		out = append(out, k)
	}
	return out
}

// attentionTypes returns each layer's attention from the list layer_types
// (transformers' "full_attention", "sliding_attention",
// "chunked_attention"), or from def when the config has none; nil when
// layers is out of range.
func (c *hfConfig) attentionTypes(layers int, def func(i int) Attention) []Attention {
	if layers < 1 || layers > MaxLayers {
		return nil
	}
	out := make([]Attention, layers)
	v, ok := c.m["layer_types"]
	if !ok || v == nil {
		for i := range out {
			out[i] = def(i)
		}
		return out
	}
	list, isList := v.([]any)
	if !isList || len(list) != layers {
		c.addf("field \"layer_types\" is %s; it must list one type per layer (%d)", jsonText(v), layers)
		return nil
	}
	for i, e := range list {
		t, _ := e.(string)
		switch t {
		case "full_attention":
			out[i] = AttnFull
		case "sliding_attention":
			out[i] = AttnSliding
		case "chunked_attention":
			out[i] = AttnChunked
		default:
			c.addf("field \"layer_types\" entry %d is %s; it must be full_attention, sliding_attention or chunked_attention", i, jsonText(e))
			return nil
		}
	}
	return out
}

// layerPattern turns per-layer attention variants (nil: all full) and
// experts (nil: the model's default) into the shortest repeating
// Spec.Pattern, nil when every layer is full attention and moe is nil.
func layerPattern(attn []Attention, moe []bool) []string {
	n := max(len(attn), len(moe))
	entries := make([]string, n)
	local := false
	for i := range entries {
		a := AttnFull
		if i < len(attn) {
			a = attn[i]
		}
		local = local || a != AttnFull
		e := a.String()
		if i < len(moe) {
			e += "/dense"
			if moe[i] {
				e = e[:len(e)-len("/dense")] + "/moe"
			}
		}
		entries[i] = e
	}
	if !local && moe == nil {
		return nil
	}
	return compactPattern(entries)
}

// countOf returns how many layers of attn are of variant a.
func countOf(attn []Attention, a Attention) int {
	n := 0
	for _, x := range attn {
		if x == a {
			n++
		}
	}
	return n
}

// gemma reads Gemma (1, 2 and 3's language model, transformers'
// GemmaConfig, Gemma2Config, Gemma3TextConfig): a gated GELU MLP (three
// matrices, counted as swiglu), RMSNorm, tied embeddings and the classes'
// defaults for the fields a published config leaves out (Gemma 3 4B's
// text_config gives neither heads nor vocab_size). Gemma 2 alternates a
// sliding window and full attention, sliding first; Gemma 3 runs
// sliding_window_pattern - 1 sliding layers to one full one.
func (c *hfConfig) gemma(typ string) Spec {
	vocab, heads, kv := 256000, 0, 0
	if typ == "gemma3" || typ == "gemma3_text" {
		vocab, heads, kv = 262208, 8, 4 // Gemma3TextConfig's defaults
	}
	s := Spec{
		Layers:         c.int(true, 0, "num_hidden_layers"),
		Hidden:         c.int(true, 0, "hidden_size"),
		Heads:          c.int(heads == 0, heads, "num_attention_heads"),
		KVHeads:        c.int(false, kv, "num_key_value_heads"),
		HeadDim:        c.int(false, 256, "head_dim"),
		FFNHidden:      c.int(true, 0, "intermediate_size"),
		FFN:            SwiGLU,
		Norm:           RMSNorm,
		Vocab:          c.int(false, vocab, "vocab_size"),
		SeqLen:         c.seqLen("max_position_embeddings"),
		TiedEmbeddings: c.bool(true, "tie_word_embeddings"),
	}
	desc := fmt.Sprintf("Hugging Face config.json, model_type %s: gated GELU MLP counted as swiglu, RMSNorm, tied embeddings", typ)
	if typ != "gemma" {
		s.Window = c.int(false, 4096, "sliding_window")
		every := 2 // Gemma 2: (i+1) odd is sliding
		if typ != "gemma2" {
			every = c.int(false, 6, "sliding_window_pattern")
			if every < 1 {
				c.addf("field \"sliding_window_pattern\" is %d; it must be at least 1", every)
				every = 1
			}
		}
		attn := c.attentionTypes(s.Layers, func(i int) Attention {
			if (i+1)%every != 0 {
				return AttnSliding
			}
			return AttnFull
		})
		s.Pattern = layerPattern(attn, nil)
		if countOf(attn, AttnSliding) == 0 {
			s.Window = 0 // no sliding layer: the window is not used
		}
		// Gemma 2 and 3 norm each block's output too (Gemma2DecoderLayer's
		// post_attention_layernorm and post_feedforward_layernorm); Gemma 2
		// soft-caps the logits (final_logit_softcapping, 30 by default) and
		// Gemma 3 norms each head of q and k (Gemma3Attention's q_norm, k_norm).
		s.PostNorms = true
		desc += fmt.Sprintf("; %d sliding-window (%d) and %d full-attention layers; sandwich norms",
			countOf(attn, AttnSliding), s.Window, countOf(attn, AttnFull))
		if typ == "gemma2" {
			// An explicit null turns the cap off (Gemma2Config takes None).
			if v, present := c.m["final_logit_softcapping"]; !present || v != nil {
				s.LogitSoftcap = c.float(30, "final_logit_softcapping")
			}
			if s.LogitSoftcap > 0 {
				desc += fmt.Sprintf("; logits soft-capped at %g", s.LogitSoftcap)
			}
		} else {
			s.QKNorm = true
			desc += "; per-head q/k norms"
		}
	}
	s.Description = desc + fmt.Sprintf("; seq %d = min(max_position_embeddings, %d)", s.SeqLen, MaxHFSeqLen)
	return s
}

// gptOSS reads gpt-oss (transformers' GptOssConfig): every layer a
// mixture of num_local_experts gated experts of width intermediate_size
// with num_experts_per_tok a token, attention alternating a sliding window
// and full, sliding first (layer_types), untied embeddings.
func (c *hfConfig) gptOSS() Spec {
	f := c.int(true, 0, "intermediate_size")
	s := c.decoder()
	s.FFNHidden = f
	s.MoE = &MoE{
		Experts:         c.int(true, 0, "num_local_experts"),
		TopK:            c.int(true, 0, "num_experts_per_tok", "experts_per_token"),
		ExpertFFNHidden: f,
		// GptOssExperts: gate_up_proj_bias and down_proj_bias, always.
		Bias: true,
		// GptOssExperts clamps the gate to at most swiglu_limit and the
		// linear half to [-swiglu_limit, swiglu_limit] (GptOssConfig's
		// default 7.0).
		SwiGLULimit: c.float(7, "swiglu_limit"),
	}
	s.Window = c.int(false, 128, "sliding_window")
	// GptOssConfig's rope_scaling defaults to YaRN (rope_type yarn, factor 32).
	s.YaRN = c.ropeType("yarn") == "yarn"
	// GptOssAttention: biases on q, k, v and o (attention_bias, true).
	s.QKVBias = c.bool(true, "attention_bias")
	s.OutBias = s.QKVBias
	attn := c.attentionTypes(s.Layers, func(i int) Attention {
		if i%2 == 0 {
			return AttnSliding
		}
		return AttnFull
	})
	s.Pattern = layerPattern(attn, nil)
	if countOf(attn, AttnSliding) == 0 {
		s.Window = 0 // no sliding layer: the window is not used
	}
	s.Description = fmt.Sprintf("Hugging Face config.json, model_type gpt_oss: %d sliding-window (%d) and %d full-attention layers, "+
		"gated experts with biases, attention biases; the attention sinks (64 scalars a layer) are not counted; "+
		"seq %d = min(max_position_embeddings, %d)", countOf(attn, AttnSliding), s.Window, countOf(attn, AttnFull), s.SeqLen, MaxHFSeqLen)
	return s
}

// llama4 reads Llama 4's language model (transformers' Llama4TextConfig):
// mixture-of-experts layers (moe_layers, or every interleave_moe_layer_step
// layers, the last of each step) of num_local_experts routed experts and
// one shared expert, all of width intermediate_size; dense layers of width
// intermediate_size_mlp; chunked attention (attention_chunk_size) on the
// rotary layers and full attention on the others (layer_types, else
// no_rope_layers, else every no_rope_layer_interval-th layer full).
func (c *hfConfig) llama4() Spec {
	s := Spec{
		Layers:         c.int(true, 0, "num_hidden_layers"),
		Hidden:         c.int(true, 0, "hidden_size"),
		Heads:          c.int(true, 0, "num_attention_heads"),
		KVHeads:        c.optionalInt("num_key_value_heads", "num_attention_heads, multi-head attention"),
		HeadDim:        c.int(false, 128, "head_dim"),
		FFNHidden:      c.int(false, 16384, "intermediate_size_mlp"),
		FFN:            SwiGLU,
		Norm:           RMSNorm,
		Vocab:          c.int(true, 0, "vocab_size"),
		SeqLen:         c.seqLen("max_position_embeddings"),
		TiedEmbeddings: c.bool(false, "tie_word_embeddings"),
		Chunk:          c.int(false, 0, "attention_chunk_size"),
	}
	f := c.int(false, 8192, "intermediate_size")
	s.MoE = &MoE{
		Experts:         c.int(true, 0, "num_local_experts"),
		TopK:            c.int(false, 1, "num_experts_per_tok"),
		ExpertFFNHidden: f,
		SharedExperts:   1,
		SharedFFNHidden: f,
	}
	if s.Layers < 1 || s.Layers > MaxLayers {
		return s // Validate names the field
	}
	moe := make([]bool, s.Layers)
	if list := c.intList("moe_layers", s.Layers); c.has("moe_layers") {
		for _, i := range list {
			moe[i] = true
		}
	} else {
		step := c.int(false, 1, "interleave_moe_layer_step")
		if step < 1 {
			c.addf("field \"interleave_moe_layer_step\" is %d; it must be at least 1", step)
			step = 1
		}
		for i := step - 1; i < s.Layers; i += step {
			moe[i] = true
		}
	}
	rope := c.intList("no_rope_layers", 2) // 1: rotary (chunked), 0: no position encoding (full)
	if rope != nil && len(rope) != s.Layers {
		c.addf("field \"no_rope_layers\" has %d entries; it must have one per layer (%d)", len(rope), s.Layers)
		rope = nil
	}
	interval := c.int(false, 4, "no_rope_layer_interval")
	if interval < 1 {
		c.addf("field \"no_rope_layer_interval\" is %d; it must be at least 1", interval)
		interval = 1
	}
	attn := c.attentionTypes(s.Layers, func(i int) Attention {
		chunked := (i+1)%interval != 0
		if rope != nil {
			chunked = rope[i] == 1
		}
		if chunked && s.Chunk > 0 {
			return AttnChunked
		}
		return AttnFull
	})
	s.Pattern = layerPattern(attn, moe)
	if countOf(attn, AttnChunked) == 0 {
		s.Chunk = 0 // no chunked layer: the chunk is not used
	}
	s.Description = fmt.Sprintf("Hugging Face config.json, model_type llama4 (text): %d chunked-attention (%d) and %d full-attention layers, "+
		"experts with one shared expert; the q/k norms change no count; seq %d = min(max_position_embeddings, %d)",
		countOf(attn, AttnChunked), s.Chunk, countOf(attn, AttnFull), s.SeqLen, MaxHFSeqLen)
	return s
}

// starCoder2 reads StarCoder2 (transformers' Starcoder2Config): a plain
// GELU MLP, LayerNorm, biases (use_bias), grouped-query attention, tied
// embeddings, and a sliding window in every layer when sliding_window is set.
func (c *hfConfig) starCoder2() Spec {
	s := Spec{
		Layers:         c.int(true, 0, "num_hidden_layers"),
		Hidden:         c.int(true, 0, "hidden_size"),
		Heads:          c.int(true, 0, "num_attention_heads"),
		KVHeads:        c.optionalInt("num_key_value_heads", "num_attention_heads, multi-head attention"),
		FFNHidden:      c.int(true, 0, "intermediate_size"),
		FFN:            GELU,
		Norm:           LayerNorm,
		Bias:           c.bool(true, "use_bias"),
		Vocab:          c.int(true, 0, "vocab_size"),
		SeqLen:         c.seqLen("max_position_embeddings"),
		TiedEmbeddings: c.bool(true, "tie_word_embeddings"),
	}
	desc := "Hugging Face config.json, model_type starcoder2: GELU MLP, LayerNorm, biases"
	if w := c.int(false, 0, "sliding_window"); w > 0 {
		s.Window, s.Pattern = w, []string{SlidingAttention}
		desc += fmt.Sprintf("; sliding window %d in every layer", w)
	}
	s.Description = desc + fmt.Sprintf("; seq %d = min(max_position_embeddings, %d)", s.SeqLen, MaxHFSeqLen)
	return s
}

// falcon reads Falcon (transformers' FalconConfig, and the older RW field
// names n_layer and n_head): a plain GELU MLP of ffn_hidden_size (4h by
// default), LayerNorm, no linear biases unless bias, tied embeddings;
// multi-query attention (one key/value head) unless
// new_decoder_architecture gives num_kv_heads. Attention and MLP run in
// parallel off one norm (parallel_attn): the same ops, costed in sequence.
func (c *hfConfig) falcon() Spec {
	h := c.int(true, 0, "hidden_size")
	s := Spec{
		Layers:         c.int(true, 0, "num_hidden_layers", "n_layer"),
		Hidden:         h,
		Heads:          c.int(true, 0, "num_attention_heads", "n_head"),
		FFNHidden:      c.int(false, 4*h, "ffn_hidden_size"),
		FFN:            GELU,
		Norm:           LayerNorm,
		Bias:           c.bool(false, "bias"),
		Vocab:          c.int(false, 65024, "vocab_size"),
		SeqLen:         c.seqLen("max_position_embeddings"),
		TiedEmbeddings: c.bool(true, "tie_word_embeddings"),
	}
	switch {
	case c.bool(false, "new_decoder_architecture"):
		s.KVHeads = c.int(false, s.Heads, "num_kv_heads")
	case c.bool(true, "multi_query"):
		s.KVHeads = 1
	default:
		s.KVHeads = s.Heads
	}
	// Falcon-RW's ALiBi (FalconConfig.alibi): no rotary embedding.
	s.ALiBi = c.bool(false, "alibi")
	s.Description = fmt.Sprintf("Hugging Face config.json, model_type falcon: GELU MLP, LayerNorm, %d key/value heads%s; "+
		"parallel attention and MLP costed in sequence; seq %d = min(max_position_embeddings, %d)", s.KVHeads, alibiNote(s.ALiBi), s.SeqLen, MaxHFSeqLen)
	return s
}

// alibiNote is a description's mention of ALiBi, empty without it.
func alibiNote(alibi bool) string {
	if alibi {
		return ", ALiBi"
	}
	return ""
}

// bloom reads BLOOM (transformers' BloomConfig): hidden_size (or its
// older n_embed), n_layer, n_head, a GELU MLP of 4h, LayerNorm, biases,
// tied embeddings and ALiBi in every layer (BloomAttention has no rotary
// embedding); the config has no context length, so seq is DefaultSeqLen
// (BLOOM trained on 2048).
func (c *hfConfig) bloom() Spec {
	h := c.int(true, 0, "hidden_size", "n_embed")
	s := Spec{
		Layers:         c.int(true, 0, "n_layer", "num_hidden_layers"),
		Hidden:         h,
		Heads:          c.int(true, 0, "n_head", "num_attention_heads"),
		FFNHidden:      4 * h,
		FFN:            GELU,
		Norm:           LayerNorm,
		Bias:           true,
		Vocab:          c.int(false, 250880, "vocab_size"),
		SeqLen:         c.seqLen("seq_length"),
		TiedEmbeddings: c.bool(true, "tie_word_embeddings"),
		ALiBi:          true,
	}
	s.Description = fmt.Sprintf("Hugging Face config.json, model_type bloom: GELU MLP 4h, LayerNorm, biases, tied, ALiBi; "+
		"the embedding LayerNorm is not counted; seq %d", s.SeqLen)
	return s
}

// mpt reads MPT (transformers' MptConfig and MosaicML's llm-foundry
// config): d_model, n_layers, n_heads, an MLP of expansion_ratio·d_model
// (GELU), LayerNorm, no biases unless no_bias is false, the output layer
// tied to the embedding (MptForCausalLM), and ALiBi unless
// attn_config.alibi is false (then learned position embeddings, not
// counted); attn_config.kv_n_heads gives grouped-query attention.
func (c *hfConfig) mpt() Spec {
	h := c.int(true, 0, "d_model")
	ratio := c.float(4, "expansion_ratio")
	if !(ratio > 0 && ratio <= 64) {
		c.addf("field \"expansion_ratio\" is %v; it must be above 0 and at most 64 (MPT's 4)", ratio)
		ratio = 4
	}
	s := Spec{
		Layers:         c.int(true, 0, "n_layers"),
		Hidden:         h,
		Heads:          c.int(true, 0, "n_heads"),
		FFNHidden:      int(math.Round(ratio * float64(h))),
		FFN:            GELU,
		Norm:           LayerNorm,
		Bias:           !c.bool(true, "no_bias"),
		Vocab:          c.int(false, 50368, "vocab_size"),
		SeqLen:         c.seqLen("max_seq_len"),
		TiedEmbeddings: true,
		ALiBi:          true,
	}
	if _, v, ok := c.value("attn_config"); ok {
		m, isMap := v.(map[string]any)
		if !isMap {
			c.addf("field \"attn_config\" is %s; it must be an object such as {\"alibi\": true}", jsonText(v))
			return s
		}
		a := &hfConfig{m: m}
		s.ALiBi = a.bool(true, "alibi")
		s.KVHeads = a.int(false, 0, "kv_n_heads")
		for _, p := range a.problems {
			c.addf("attn_config: %s", p)
		}
	}
	s.Description = fmt.Sprintf("Hugging Face config.json, model_type mpt: GELU MLP %gh, LayerNorm, tied%s; seq %d = min(max_seq_len, %d)",
		ratio, alibiNote(s.ALiBi), s.SeqLen, MaxHFSeqLen)
	return s
}

// unknown reads a config of a model_type the planner does not know as a
// Llama-like decoder from the standard fields (hidden_size,
// num_hidden_layers, num_attention_heads, intermediate_size, vocab_size),
// and returns a warning for every assumption it makes.
func (c *hfConfig) unknown(typ string) (Spec, []string) {
	typ = bounded.Cut(text.Squash(typ), 60) // a name for the messages, however long the field
	w := []string{fmt.Sprintf("model_type %q is not one the planner knows (%s); it is read as a Llama-like decoder from the standard fields",
		typ, strings.Join(HFModelTypes(), ", "))}
	w = append(w, "assumed: a gated MLP of three matrices (gate, up, down) of width intermediate_size, as Llama's")
	w = append(w, "assumed: RMSNorm before attention and MLP, no biases, rotary positions (no position-embedding parameters)")
	if !c.has("num_key_value_heads") {
		w = append(w, "assumed: multi-head attention (num_key_value_heads is absent: as many key/value heads as num_attention_heads)")
	}
	if !c.has("head_dim") {
		w = append(w, "assumed: head_dim = hidden_size / num_attention_heads (head_dim is absent)")
	}
	if !c.has("tie_word_embeddings") {
		w = append(w, "assumed: an output layer of its own (tie_word_embeddings is absent: untied embeddings)")
	}
	if c.has("sliding_window") || c.has("layer_types") || c.has("attention_chunk_size") {
		w = append(w, "assumed: every layer full causal attention (sliding_window, layer_types or attention_chunk_size are not read for this model_type)")
	} else {
		w = append(w, "assumed: every layer full causal attention")
	}
	if !c.has("max_position_embeddings") {
		w = append(w, fmt.Sprintf("assumed: sequences of %d tokens (max_position_embeddings is absent)", hfDefaultPositions))
	}
	if ig := c.ignoredFields(typ); ig != "" {
		w = append(w, ig)
	}
	s := c.decoder()
	s.FFNHidden = c.int(true, 0, "intermediate_size")
	c.unreadExperts(typ)
	s.Description = fmt.Sprintf("Hugging Face config.json, model_type %s (unknown): read as a Llama-like decoder (gated MLP, RMSNorm, no biases, full attention); seq %d = min(max_position_embeddings, %d)",
		typ, s.SeqLen, MaxHFSeqLen)
	return s, w
}

// glm4MoE reads GLM-4.5 and GLM-4.5-Air (transformers' Glm4MoeConfig):
// grouped-query attention with q, k, v biases (attention_bias) and, with
// use_qk_norm, per-head q/k norms; the first first_k_dense_replace layers
// dense of width intermediate_size, the others n_routed_experts experts of
// width moe_intermediate_size, num_experts_per_tok a token, and
// n_shared_experts shared ones; num_nextn_predict_layers
// multi-token-prediction modules. Absent expert counts take the class's
// defaults (one dense layer, one shared expert).
func (c *hfConfig) glm4MoE() Spec {
	s := c.decoder()
	s.FFNHidden = c.int(true, 0, "intermediate_size")
	s.MoE = &MoE{
		Experts:          c.int(true, 0, "n_routed_experts"),
		TopK:             c.int(true, 0, "num_experts_per_tok"),
		ExpertFFNHidden:  c.int(true, 0, "moe_intermediate_size"),
		SharedExperts:    c.int(false, 1, "n_shared_experts"),
		FirstDenseLayers: c.int(false, 1, "first_k_dense_replace"),
	}
	if g := c.int(false, 0, "n_group"); g > 1 {
		s.MoE.Groups, s.MoE.GroupLimit = g, c.int(false, g, "topk_group")
	}
	// Glm4MoeAttention: biases on q, k and v (attention_bias), none on o.
	s.QKVBias = c.bool(false, "attention_bias")
	s.QKNorm = c.bool(false, "use_qk_norm")
	s.MTPLayers = c.int(false, 0, "num_nextn_predict_layers")
	desc := fmt.Sprintf("Hugging Face config.json, model_type glm4_moe: gated MLP counted as swiglu, RMSNorm; %d dense layers, then %d experts (top-%d) and %d shared",
		s.MoE.FirstDenseLayers, s.MoE.Experts, s.MoE.TopK, s.MoE.SharedExperts)
	if s.QKVBias {
		desc += "; q, k, v biases"
	}
	if s.QKNorm {
		desc += "; per-head q/k norms"
	}
	s.Description = desc + fmt.Sprintf("; %d multi-token-prediction modules (their parameters apart from the total); the partial rotary factor changes no count; seq %d = min(max_position_embeddings, %d)",
		s.MTPLayers, s.SeqLen, MaxHFSeqLen)
	return s
}

// olmoe reads OLMoE (transformers' OlmoeConfig): every layer a mixture of
// num_experts gated experts of width intermediate_size, num_experts_per_tok
// a token, no shared expert; q and k normed over their whole projections,
// counted as per-head norms as for OLMo 2 (a difference under 0.01% of
// the parameters).
func (c *hfConfig) olmoe() Spec {
	s := c.decoder()
	f := c.int(true, 0, "intermediate_size")
	s.FFNHidden = f
	s.MoE = &MoE{
		Experts:         c.int(true, 0, "num_experts"),
		TopK:            c.int(true, 0, "num_experts_per_tok"),
		ExpertFFNHidden: f,
	}
	s.QKNorm = true
	desc := "Hugging Face config.json, model_type olmoe: gated experts counted as swiglu, RMSNorm, q/k norms"
	if c.bool(false, "attention_bias") {
		s.QKVBias, s.OutBias = true, true
		desc += "; attention biases (q, k, v, o)"
	}
	s.Description = desc + fmt.Sprintf("; seq %d = min(max_position_embeddings, %d)", s.SeqLen, MaxHFSeqLen)
	return s
}

// unknownReads are the fields that unknown reads; every other field of the
// config is named in its warnings as ignored.
func unknownReads() []string {
	return []string{"model_type", "_name_or_path", "num_hidden_layers", "hidden_size", "num_attention_heads",
		"num_key_value_heads", "head_dim", "intermediate_size", "vocab_size", "max_position_embeddings", "tie_word_embeddings"}
}

// maxIgnoredNames is how many ignored fields a warning names.
const maxIgnoredNames = 40

// ignoredFields is the warning that names the fields of the config that
// unknown does not read, "" when there are none.
func (c *hfConfig) ignoredFields(typ string) string {
	var ignored []string
	for _, k := range sortedKeys(c.m) {
		if !slices.Contains(unknownReads(), k) {
			ignored = append(ignored, strconv.Quote(bounded.Cut(text.Squash(k), 60)))
		}
	}
	if len(ignored) == 0 {
		return ""
	}
	list := strings.Join(ignored[:min(len(ignored), maxIgnoredNames)], ", ")
	if len(ignored) > maxIgnoredNames {
		list += fmt.Sprintf(" and %d more", len(ignored)-maxIgnoredNames)
	}
	return fmt.Sprintf("ignored: %d fields that a Llama-like decoder does not have or that change no count, not read for model_type %q: %s", len(ignored), typ, list)
}
