package model

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The layers the planner does not model, in one table so that support can
// be added kind by kind: a model_type of the table, or an unknown one whose
// config carries a field that signals such layers, is refused by name
// rather than planned as a Llama-like decoder of the wrong size.

// layerKind is a kind of layer the planner does not model: the model_types
// built of it and the config.json fields that signal it.
type layerKind struct {
	// kind names the layers for a message: "state-space (Mamba) layers".
	kind string
	// types are the model_types (transformers' names) that have such layers.
	types []string
	// fields are config.json fields that signal such layers in a config of
	// an unknown model_type; a name ending in "_" is a prefix.
	fields []string
}

// unsupportedKinds returns the table of the layers the planner does not
// model. To support a kind, read its model_types in parseHF and drop its
// row (or the model_types read) here.
func unsupportedKinds() []layerKind {
	return []layerKind{
		{
			kind:   "state-space (Mamba) layers mixed with attention layers",
			types:  []string{"zamba", "bamba", "granitemoehybrid"},
			fields: []string{"hybrid_override_pattern", "layers_block_type", "attn_layer_period", "attn_layer_offset", "attn_layer_indices"},
		},
		{
			kind:   "state-space (Mamba) layers",
			types:  []string{"mamba", "mamba2", "falcon_mamba"},
			fields: []string{"ssm_", "mamba_", "state_size", "d_state", "conv_kernel", "time_step_rank", "time_step_min", "time_step_max"},
		},
		{
			kind:   "linear-attention (gated DeltaNet, lightning) layers",
			types:  []string{"minimax"},
			fields: []string{"linear_"},
		},
		{
			kind:   "recurrent (RWKV, RG-LRU, xLSTM) layers",
			types:  []string{"rwkv", "rwkv5", "rwkv6", "rwkv7", "recurrent_gemma", "xlstm"},
			fields: []string{"lru_width", "block_types", "rescale_every"},
		},
		{
			kind: "bidirectional encoder layers (an encoder-only model, not a causal decoder)",
			types: []string{"bert", "roberta", "xlm-roberta", "xlm_roberta", "distilbert", "albert", "electra", "deberta",
				"deberta-v2", "deberta_v2", "modernbert", "camembert", "mpnet", "nomic_bert"},
			fields: []string{"type_vocab_size"},
		},
		{
			kind:   "encoder and decoder layers with cross-attention (an encoder-decoder model)",
			types:  []string{"t5", "mt5", "umt5", "t5gemma", "bart", "mbart", "pegasus", "marian", "led", "whisper", "prophetnet", "switch_transformers"},
			fields: []string{"is_encoder_decoder", "encoder_layers", "decoder_layers", "num_decoder_layers", "d_kv"},
		},
	}
}

// unsupported returns the problem of a config whose layers the planner
// does not model: model_type typ in the table, or, when known is false
// (typ is not a model_type the planner reads), a field of the config that
// signals such layers. It returns "" for a config the planner can read.
func (c *hfConfig) unsupported(typ string, known bool) string {
	const tail = "; the planner models decoders of attention and MLP or expert layers only, and makes no plan rather than one of the wrong size"
	for _, k := range unsupportedKinds() {
		if slices.Contains(k.types, typ) {
			return fmt.Sprintf("model_type %q has %s, which the planner does not model%s", typ, k.kind, tail)
		}
	}
	if known {
		return ""
	}
	for _, k := range unsupportedKinds() {
		if f := c.signal(k.fields); f != "" {
			what := fmt.Sprintf("model_type %q is not one the planner knows", typ)
			if typ == "" {
				what = "the config has no model_type"
			}
			return fmt.Sprintf("%s, and its field %q signals %s, which the planner does not model%s", what, f, k.kind, tail)
		}
	}
	return ""
}

// signal returns the first field of the config, in sorted order, named in
// fields (a name ending in "_" is a prefix) with a value that is not null,
// false or zero; "" when none.
func (c *hfConfig) signal(fields []string) string {
	for _, key := range sortedKeys(c.m) {
		for _, f := range fields {
			if key != f && !(strings.HasSuffix(f, "_") && strings.HasPrefix(key, f)) {
				continue
			}
			switch v := c.m[key].(type) {
			case nil:
			case bool:
				if v {
					return key
				}
			default:
				if jsonText(v) != "0" {
					return key
				}
			}
		}
	}
	return ""
}

// sortedKeys returns the keys of m in order.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
