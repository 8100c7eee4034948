package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/meshplan/meshplan/internal/text"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// MaxHFSeqLen caps the SeqLen that ParseHF derives from a config's
// max_position_embeddings: a config gives the longest sequence a model
// accepts, which is usually reached by a short long-context phase, not the
// length most of its training ran at.
const MaxHFSeqLen = 8192

// maxJSONInt bounds the integers ParseHF accepts before Validate's own
// limits apply, so that no arithmetic on them can overflow.
const maxJSONInt = 1 << 53

// hfDefaultPositions is the sequence length assumed when a config gives none.
const hfDefaultPositions = DefaultSeqLen

// HFModelTypes returns the Hugging Face model_type values ParseHF reads, sorted.
func HFModelTypes() []string {
	return []string{"bloom", "deepseek_v2", "deepseek_v3", "falcon", "falcon_h1", "gemma", "gemma2", "gemma3", "gemma3_text", "glm4_moe", "gpt2", "gpt_neox",
		"gpt_oss", "granite", "jamba", "kimi_k2", "llama", "llama4", "llama4_text", "mistral", "mixtral", "mpt", "nemotron_h", "olmo2", "olmoe", "phi3",
		"qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "qwen3_next", "starcoder2", "zamba2"}
}

// ParseHF reads a Hugging Face config.json. Supported model_type values are
// listed by HFModelTypes; a config without model_type is read as GPT-2 when
// it has n_embd and as Llama otherwise; a multimodal config (gemma3,
// llama4) is read from its text_config. A model_type of layers the planner
// does not model (state-space, linear attention, recurrent, encoder,
// encoder-decoder: unsupportedKinds), or an unknown one whose fields
// signal such layers, is an error naming the kind. Another model_type it
// does not know is read as a Llama-like decoder when the config has the
// standard fields, with warnings that ParseHFWarnings returns (ParseHF drops them). Llama-family MLPs are gated, so they
// count as SwiGLU whatever hidden_act says. SeqLen is
// min(max_position_embeddings, MaxHFSeqLen), or DefaultSeqLen when the config
// has no length. Name is _name_or_path, or empty (Load then names the model
// after its file). A missing required field, a value of the wrong type or an
// architecture the planner cannot represent is an error naming the field.
// The result is normalised and valid.
func ParseHF(data []byte) (Spec, error) {
	s, _, err := ParseHFWarnings(data)
	return s, err
}

// ParseHFWarnings is ParseHF that also returns the warnings of the read:
// one sentence per assumption made for a model_type the planner does not
// know (none for the others).
func ParseHFWarnings(data []byte) (Spec, []string, error) {
	s, warnings, problems := parseHF(data)
	if len(problems) == 0 {
		problems = s.problems()
	}
	if err := joinProblems("model: config.json: ", problems); err != nil {
		return Spec{}, nil, err
	}
	s.Normalize()
	return s, warnings, nil
}

// hfConfig reads typed fields from a decoded config.json, collecting problems.
type hfConfig struct {
	m        map[string]any
	problems []string
}

func (c *hfConfig) addf(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// value returns the first of keys present with a non-null value.
func (c *hfConfig) value(keys ...string) (key string, v any, ok bool) {
	for _, k := range keys {
		if v, ok := c.m[k]; ok && v != nil {
			return k, v, true
		}
	}
	return keys[0], nil, false
}

// int returns the integer under the first present key, or def when none is
// present; a required field that is missing is a problem.
func (c *hfConfig) int(required bool, def int, keys ...string) int {
	key, v, ok := c.value(keys...)
	if !ok {
		if required {
			quoted := make([]string, len(keys))
			for i, k := range keys {
				quoted[i] = strconv.Quote(k)
			}
			c.addf("missing required field %s", strings.Join(quoted, " or "))
		}
		return def
	}
	if n, isNum := v.(json.Number); isNum {
		if i, err := strconv.ParseInt(n.String(), 10, 64); err == nil && i >= -maxJSONInt && i <= maxJSONInt {
			return int(i)
		}
		f, err := strconv.ParseFloat(n.String(), 64)
		if err == nil && f == math.Trunc(f) && math.Abs(f) <= maxJSONInt {
			return int(f)
		}
		if err == nil && f == math.Trunc(f) {
			c.addf("field %q is %s, far too large for a model", key, n)
			return def
		}
	}
	c.addf("field %q is %s; it must be an integer", key, jsonText(v))
	return def
}

func (c *hfConfig) bool(def bool, key string) bool {
	_, v, ok := c.value(key)
	if !ok {
		return def
	}
	if b, isBool := v.(bool); isBool {
		return b
	}
	c.addf("field %q is %s; it must be true or false", key, jsonText(v))
	return def
}

// float returns the number under key, or def when it is absent or null.
func (c *hfConfig) float(def float64, key string) float64 {
	_, v, ok := c.value(key)
	if !ok {
		return def
	}
	if n, isNum := v.(json.Number); isNum {
		if f, err := strconv.ParseFloat(n.String(), 64); err == nil && !math.IsInf(f, 0) {
			return f
		}
	}
	c.addf("field %q is %s; it must be a number", key, jsonText(v))
	return def
}

func (c *hfConfig) str(key string) string {
	_, v, ok := c.value(key)
	if !ok {
		return ""
	}
	if s, isStr := v.(string); isStr {
		return s
	}
	c.addf("field %q is %s; it must be a string", key, jsonText(v))
	return ""
}

// ropeType returns rope_scaling's rope_type (or its older key type), or def
// when rope_scaling is absent or null.
func (c *hfConfig) ropeType(def string) string {
	_, v, ok := c.value("rope_scaling")
	if !ok {
		return def
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		c.addf("field \"rope_scaling\" is %s; it must be an object such as {\"rope_type\": \"yarn\"}", jsonText(v))
		return def
	}
	for _, k := range []string{"rope_type", "type"} {
		if t, isStr := m[k].(string); isStr {
			return t
		}
	}
	return def
}

// optionalInt returns the integer under key, or 0 when the key is absent
// or null (the caller's default, def in words, then applies); a value
// below 1 is a problem rather than a silent default.
func (c *hfConfig) optionalInt(key, def string) int {
	if !c.has(key) {
		return 0
	}
	n := c.int(false, 0, key)
	if n < 1 {
		c.addf("field %q is %d; it must be at least 1 (leave it out for the default, %s)", key, n, def)
	}
	return n
}

// expertFields are the fields of Hugging Face's mixture-of-experts configs
// (Mixtral, Qwen-MoE, DeepSeek).
var expertFields = []string{"num_local_experts", "n_routed_experts", "num_experts", "num_experts_per_tok",
	"moe_intermediate_size", "n_shared_experts", "shared_expert_intermediate_size"}

// unreadExperts reports the expert fields that model_type typ does not
// read, so that a config carrying some of them is neither planned as a
// dense model nor as a mixture of experts built from half its fields.
// Llama, Mistral and Qwen2/Qwen3 have no experts in transformers (their
// classes ignore such fields); Mixtral's experts are intermediate_size
// wide and it has no shared experts. A zero value is no expert and passes.
func (c *hfConfig) unreadExperts(typ string) {
	var read []string
	switch typ {
	case "mixtral":
		read = []string{"num_local_experts", "n_routed_experts", "num_experts", "num_experts_per_tok"}
	case "qwen2_moe", "qwen3_moe":
		read = []string{"num_experts", "num_local_experts", "num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size"}
	}
	for _, k := range expertFields {
		if !c.has(k) || slices.Contains(read, k) {
			continue
		}
		if n, isNum := c.m[k].(json.Number); isNum && n.String() == "0" {
			continue
		}
		switch {
		case !slices.Contains(HFModelTypes(), typ):
			c.addf("field %q is %s, but model_type %s is not one the planner knows, so its experts cannot be read (a Llama-like decoder has none); "+
				"describe the model in a YAML file with a moe section, or set the model_type whose layout it has (mixtral, qwen3_moe, deepseek_v3, glm4_moe, olmoe)", k, jsonText(c.m[k]), typ)
		case read == nil:
			c.addf("field %q is %s, but model_type %s has no experts (transformers ignores the field); set model_type to mixtral, qwen2_moe, qwen3_moe or deepseek_v3 for a mixture of experts, or remove the field", k, jsonText(c.m[k]), typ)
		default:
			c.addf("field %q is %s, which model_type %s does not read; remove it, or set the model_type whose field it is", k, jsonText(c.m[k]), typ)
		}
	}
}

// has reports whether key is present with a non-null value.
func (c *hfConfig) has(key string) bool {
	_, _, ok := c.value(key)
	return ok
}

// jsonText renders a decoded JSON value for a message, shortened.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	if len(b) > 40 {
		return string(b[:37]) + "..."
	}
	return string(b)
}

// parseHF decodes a config.json into a Spec without validating its
// numbers, with the warnings of a model_type read as Llama-like.
func parseHF(data []byte) (Spec, []string, []string) {
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, []byte("\ufeff"))))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return Spec{}, nil, []string{"malformed JSON: " + text.Squash(strings.TrimPrefix(err.Error(), "json: ")) + "; a Hugging Face config.json is one JSON object"}
	}
	if m == nil {
		return Spec{}, nil, []string{"the file holds null, not a JSON object with fields such as hidden_size"}
	}
	if _, err := dec.Token(); err != io.EOF {
		return Spec{}, nil, []string{"malformed JSON: data follows the config object; a config.json holds one object"}
	}
	if dups := jsonDuplicates(data); len(dups) > 0 {
		return Spec{}, nil, dups
	}
	c := &hfConfig{m: m}
	typ := strings.ToLower(c.str("model_type"))
	name := c.str("_name_or_path")
	if len(c.problems) > 0 {
		return Spec{}, nil, c.problems
	}
	// A multimodal config (Gemma 3, Llama 4) nests the language model's
	// fields under text_config: plan that.
	if tc, ok := m["text_config"]; ok && tc != nil && !c.has("hidden_size") {
		t, isMap := tc.(map[string]any)
		if !isMap {
			return Spec{}, nil, []string{fmt.Sprintf("field \"text_config\" is %s; it must be an object with the language model's fields", jsonText(tc))}
		}
		c = &hfConfig{m: t}
		if sub := strings.ToLower(c.str("model_type")); sub != "" {
			typ = sub
		} else if typ != "" {
			typ += "_text"
		}
		if len(c.problems) > 0 {
			return Spec{}, nil, c.problems
		}
	}
	if p := c.unsupported(typ, slices.Contains(HFModelTypes(), typ)); p != "" {
		return Spec{}, nil, []string{p}
	}
	inferred := typ == ""
	if inferred {
		typ = "llama"
		switch {
		case c.has("n_embd"):
			typ = "gpt2"
		case c.has("num_local_experts") || c.has("n_routed_experts") || c.has("num_experts"):
			typ = "mixtral" // Mixtral's fields: a Llama-shaped config with experts
		}
	}
	var s Spec
	var warnings []string
	switch typ {
	case "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "phi3", "olmo2", "granite":
		s = c.llama(typ)
	case "gpt2":
		s = c.gpt2()
	case "gpt_neox":
		s = c.gptNeoX()
	case "deepseek_v2", "deepseek_v3", "kimi_k2":
		s = c.deepSeek(typ)
	case "glm4_moe":
		s = c.glm4MoE()
	case "olmoe":
		s = c.olmoe()
	case "gemma", "gemma2", "gemma3", "gemma3_text":
		s = c.gemma(typ)
	case "gpt_oss":
		s = c.gptOSS()
	case "llama4", "llama4_text":
		s = c.llama4()
	case "starcoder2":
		s = c.starCoder2()
	case "falcon":
		s = c.falcon()
	case "bloom":
		s = c.bloom()
	case "mpt":
		s = c.mpt()
	case "nemotron_h":
		s = c.nemotronH()
	case "qwen3_next":
		s = c.qwen3Next()
	case "falcon_h1":
		s = c.falconH1()
	case "jamba":
		s = c.jamba()
	case "zamba2":
		s = c.zamba2()
	default:
		s, warnings = c.unknown(typ)
	}
	if len(c.problems) > 0 {
		return Spec{}, nil, c.problems
	}
	s.Name = name
	if inferred {
		s.Description += "; model_type missing, read as " + typ
	}
	return s, warnings, c.problems
}

// seqLen is min(positions, MaxHFSeqLen) from the first present key.
func (c *hfConfig) seqLen(keys ...string) int {
	key, _, _ := c.value(keys...)
	n := c.int(false, hfDefaultPositions, keys...)
	if n < 1 {
		c.addf("field %q is %d; it must be at least 1", key, n)
	}
	if n > MaxHFSeqLen {
		return MaxHFSeqLen
	}
	return n
}

// decoder reads the fields that Llama-shaped configs (transformers'
// LlamaConfig and its descendants) name alike: layers, width, heads, key/value
// heads and head width (absent: Normalize's defaults), vocabulary, positions
// and tied embeddings (absent: untied); the MLP is gated and the norm RMSNorm.
func (c *hfConfig) decoder() Spec {
	return Spec{
		Layers:         c.int(true, 0, "num_hidden_layers"),
		Hidden:         c.int(true, 0, "hidden_size"),
		Heads:          c.int(true, 0, "num_attention_heads"),
		KVHeads:        c.optionalInt("num_key_value_heads", "num_attention_heads, multi-head attention"),
		HeadDim:        c.optionalInt("head_dim", "hidden_size / num_attention_heads"),
		Vocab:          c.int(true, 0, "vocab_size"),
		SeqLen:         c.seqLen("max_position_embeddings"),
		TiedEmbeddings: c.bool(false, "tie_word_embeddings"),
		FFN:            SwiGLU,
		Norm:           RMSNorm,
	}
}

// llama reads the Llama family: llama, mistral, mixtral, qwen2(_moe), qwen3(_moe).
func (c *hfConfig) llama(typ string) Spec {
	s := c.decoder()
	desc := fmt.Sprintf("Hugging Face config.json, model_type %s: gated MLP counted as swiglu, RMSNorm", typ)
	c.unreadExperts(typ)
	switch typ {
	case "mixtral":
		// Mixtral: every layer has num_local_experts experts of width intermediate_size.
		f := c.int(true, 0, "intermediate_size")
		s.FFNHidden = f
		s.MoE = &MoE{
			Experts:         c.int(true, 0, "num_local_experts", "n_routed_experts", "num_experts"),
			TopK:            c.int(true, 0, "num_experts_per_tok"),
			ExpertFFNHidden: f,
		}
	case "qwen2_moe", "qwen3_moe":
		s.FFNHidden = c.int(false, 0, "intermediate_size")
		s.MoE = &MoE{
			Experts:         c.int(true, 0, "num_experts", "num_local_experts"),
			TopK:            c.int(true, 0, "num_experts_per_tok"),
			ExpertFFNHidden: c.int(true, 0, "moe_intermediate_size"),
		}
		if f := c.int(false, 0, "shared_expert_intermediate_size"); f > 0 {
			s.MoE.SharedExperts, s.MoE.SharedFFNHidden = 1, f
			desc += "; the shared-expert gate (h per layer) is not counted"
		}
		// Experts every decoder_sparse_step layers (layer i when (i+1) is a
		// multiple of it), but not in mlp_only_layers (transformers'
		// Qwen2MoeDecoderLayer).
		step := c.int(false, 1, "decoder_sparse_step")
		if step < 1 {
			c.addf("field \"decoder_sparse_step\" is %d; it must be at least 1", step)
			step = 1
		}
		dense := c.intList("mlp_only_layers", s.Layers)
		if step != 1 || len(dense) > 0 {
			moe := make([]bool, max(s.Layers, 0))
			for i := range moe {
				moe[i] = (i+1)%step == 0 && !slices.Contains(dense, i)
			}
			s.Pattern = layerPattern(nil, moe)
			desc += "; dense layers from decoder_sparse_step and mlp_only_layers"
		}
	default:
		s.FFNHidden = c.int(true, 0, "intermediate_size")
	}
	switch typ {
	case "mistral", "phi3":
		// Mistral 7B v0.1 and Phi-3 attend within sliding_window tokens in
		// every layer (transformers' MistralAttention, Phi3Attention).
		if w := c.int(false, 0, "sliding_window"); w > 0 {
			s.Window, s.Pattern = w, []string{SlidingAttention}
			desc += fmt.Sprintf("; sliding window %d in every layer", w)
		}
	case "olmo2":
		// OLMo 2 norms the whole q and k projections (q+kv weights per
		// layer); counted as per-head norms (2·head_dim), a difference
		// under 0.01% of the parameters.
		s.QKNorm = true
		desc += "; q/k norms"
	case "granite":
		desc += "; the embedding, residual, attention and logit multipliers change no count"
	}
	switch {
	case strings.HasPrefix(typ, "qwen2"):
		// transformers' Qwen2Attention: biases on q, k and v, none on o.
		s.QKVBias = true
		desc += "; q, k, v biases"
	case c.bool(false, "attention_bias"):
		s.QKVBias, s.OutBias = true, true
		desc += "; attention biases (q, k, v, o)"
	}
	if strings.HasPrefix(typ, "qwen3") {
		s.QKNorm = true
		desc += "; per-head q/k norms"
	}
	s.Description = desc + fmt.Sprintf("; seq %d = min(max_position_embeddings, %d)", s.SeqLen, MaxHFSeqLen)
	return s
}

// gpt2 reads a GPT-2 config: GELU MLP, LayerNorm, biases, tied embeddings.
func (c *hfConfig) gpt2() Spec {
	h := c.int(true, 0, "n_embd")
	s := Spec{
		Layers:         c.int(true, 0, "n_layer"),
		Hidden:         h,
		Heads:          c.int(true, 0, "n_head"),
		FFNHidden:      c.int(false, 4*h, "n_inner"), // GPT-2: n_inner defaults to 4*n_embd
		FFN:            GELU,
		Vocab:          c.int(true, 0, "vocab_size"),
		SeqLen:         c.seqLen("n_positions", "n_ctx"),
		TiedEmbeddings: c.bool(true, "tie_word_embeddings"),
		Norm:           LayerNorm,
		Bias:           true,
	}
	s.Description = fmt.Sprintf("Hugging Face config.json, model_type gpt2: GELU MLP, LayerNorm, biases; learned position embeddings not counted; seq %d = min(n_positions, %d)", s.SeqLen, MaxHFSeqLen)
	return s
}

// gptNeoX reads a GPT-NeoX config: GELU MLP, LayerNorm, biases, untied by default.
func (c *hfConfig) gptNeoX() Spec {
	s := Spec{
		Layers:         c.int(true, 0, "num_hidden_layers"),
		Hidden:         c.int(true, 0, "hidden_size"),
		Heads:          c.int(true, 0, "num_attention_heads"),
		FFNHidden:      c.int(true, 0, "intermediate_size"),
		FFN:            GELU,
		Vocab:          c.int(true, 0, "vocab_size"),
		SeqLen:         c.seqLen("max_position_embeddings"),
		TiedEmbeddings: c.bool(false, "tie_word_embeddings"),
		Norm:           LayerNorm,
		Bias:           true,
	}
	s.Description = fmt.Sprintf("Hugging Face config.json, model_type gpt_neox: GELU MLP, LayerNorm, biases; seq %d = min(max_position_embeddings, %d)", s.SeqLen, MaxHFSeqLen)
	return s
}

// deepSeek reads DeepSeek-V2/V3: multi-head latent attention (q_lora_rank
// null or 0 when the queries are not compressed, as in DeepSeek-V2-Lite),
// the first first_k_dense_replace layers dense, the rest routed plus shared
// experts, and num_nextn_predict_layers multi-token-prediction modules.
// num_key_value_heads is not read: with MLA every head has its own keys.
func (c *hfConfig) deepSeek(typ string) Spec {
	s := Spec{
		Layers:         c.int(true, 0, "num_hidden_layers"),
		Hidden:         c.int(true, 0, "hidden_size"),
		Heads:          c.int(true, 0, "num_attention_heads"),
		FFNHidden:      c.int(true, 0, "intermediate_size"),
		FFN:            SwiGLU,
		Vocab:          c.int(true, 0, "vocab_size"),
		SeqLen:         c.seqLen("max_position_embeddings"),
		TiedEmbeddings: c.bool(false, "tie_word_embeddings"),
		Norm:           RMSNorm,
		MLA: &MLA{
			QLoRARank:     c.int(false, 0, "q_lora_rank"),
			KVLoRARank:    c.int(true, 0, "kv_lora_rank"),
			QKNopeHeadDim: c.int(true, 0, "qk_nope_head_dim"),
			QKRopeHeadDim: c.int(true, 0, "qk_rope_head_dim"),
			VHeadDim:      c.int(true, 0, "v_head_dim"),
		},
		MTPLayers: c.int(false, 0, "num_nextn_predict_layers"),
	}
	if n := c.int(false, 0, "n_routed_experts"); n > 0 {
		// Experts in layer i >= first_k_dense_replace when i is a multiple
		// of moe_layer_freq (transformers' DeepseekV2DecoderLayer).
		if f := c.int(false, 1, "moe_layer_freq"); f > 1 {
			moe := make([]bool, f)
			moe[0] = true
			s.Pattern = layerPattern(nil, moe)
		} else if f < 1 {
			c.addf("field \"moe_layer_freq\" is %d; it must be at least 1", f)
		}
		s.MoE = &MoE{
			Experts:          n,
			TopK:             c.int(true, 0, "num_experts_per_tok"),
			ExpertFFNHidden:  c.int(true, 0, "moe_intermediate_size"),
			SharedExperts:    c.int(false, 0, "n_shared_experts"),
			FirstDenseLayers: c.int(false, 0, "first_k_dense_replace"),
		}
		// Group-limited routing (DeepSeek-V2's group_limited_greedy,
		// DeepSeek-V3's noaux_tc): n_group groups, topk_group per token.
		if g := c.int(false, 0, "n_group"); g > 1 {
			s.MoE.Groups, s.MoE.GroupLimit = g, c.int(false, g, "topk_group")
		}
	}
	m := s.MLA
	s.Description = fmt.Sprintf("Hugging Face config.json, model_type %s: multi-head latent attention with %d heads, "+
		"q_lora_rank %d, kv_lora_rank %d, qk_nope_head_dim %d, qk_rope_head_dim %d, v_head_dim %d; "+
		"%d multi-token-prediction modules (their parameters apart from the total); "+
		"seq %d = min(max_position_embeddings, %d)",
		typ, s.Heads, m.QLoRARank, m.KVLoRARank, m.QKNopeHeadDim, m.QKRopeHeadDim, m.VHeadDim, s.MTPLayers, s.SeqLen, MaxHFSeqLen)
	return s
}

// jsonDuplicates returns one problem for each field given more than once in
// an object of the JSON document data, which decodes: encoding/json keeps
// the last copy silently, where the YAML form refuses a repeated key.
func jsonDuplicates(data []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, []byte("\ufeff"))))
	type object struct {
		path  string
		count map[string]int
		order []string
		key   bool // the next string token is a field name
		last  string
	}
	var stack []*object
	var problems []string
	fieldPath := func(o *object, k string) string {
		if o.path == "" {
			return k
		}
		return o.path + "." + k
	}
	// valuePath is the path of the value that opens in o: its field's in
	// an object, the array's own in an array.
	valuePath := func(o *object) string {
		switch {
		case o == nil:
			return ""
		case o.count == nil:
			return o.path
		default:
			return fieldPath(o, o.last)
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return problems
		}
		var top *object
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, &object{path: valuePath(top), count: map[string]int{}, key: true})
				continue
			case '}':
				for _, k := range top.order {
					if n := top.count[k]; n > 1 {
						problems = append(problems, fmt.Sprintf("field %q is given %d times; give it once (encoding/json would keep the last silently)", text.Squash(fieldPath(top, k)), n))
					}
				}
				stack = stack[:len(stack)-1]
			case '[':
				stack = append(stack, &object{path: valuePath(top)})
				continue
			case ']':
				stack = stack[:len(stack)-1]
			}
		case string:
			if top != nil && top.count != nil && top.key {
				if top.count[t] == 0 {
					top.order = append(top.order, t)
				}
				top.count[t]++
				top.last = t
				top.key = false
				continue
			}
		}
		if len(stack) > 0 && stack[len(stack)-1].count != nil {
			stack[len(stack)-1].key = true
		}
	}
}
