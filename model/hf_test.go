package model

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func loadHF(t *testing.T, path string) Spec {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseHF(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s
}

// sameShape compares everything but the name, description and sequence length.
func sameShape(a, b Spec) bool {
	a.Name, a.Description, a.SeqLen = "", "", 0
	b.Name, b.Description, b.SeqLen = "", "", 0
	if (a.MoE == nil) != (b.MoE == nil) || a.MoE != nil && *a.MoE != *b.MoE {
		return false
	}
	if (a.MLA == nil) != (b.MLA == nil) || a.MLA != nil && *a.MLA != *b.MLA {
		return false
	}
	if !slices.Equal(a.Pattern, b.Pattern) {
		return false
	}
	a.MoE, b.MoE, a.MLA, b.MLA, a.Pattern, b.Pattern = nil, nil, nil, nil, nil, nil
	return reflect.DeepEqual(a, b)
}

// TestParseHFMatchesPresets loads config.json files (the published Hugging
// Face configs, copied under testdata) and compares them with the presets.
func TestParseHFMatchesPresets(t *testing.T) {
	tests := []struct {
		file, preset, name string
		seq                int
	}{
		{"testdata/llama3-8b.config.json", "llama3-8b", "meta-llama/Meta-Llama-3-8B", 8192},
		{"testdata/mixtral-8x7b.config.json", "mixtral-8x7b", "", 8192}, // max_position_embeddings 32768 capped
		{"testdata/gpt-neox-20b.config.json", "gpt-neox-20b", "", 2048},
		{"testdata/deepseek-v3.config.json", "deepseek-v3", "", 8192}, // 163840 capped; the preset uses 4096
	}
	for _, tt := range tests {
		s := loadHF(t, tt.file)
		p, err := Preset(tt.preset)
		if err != nil {
			t.Fatal(err)
		}
		if s.Counts() != p.Counts() {
			t.Errorf("%s: counts %+v, preset %s %+v", tt.file, s.Counts(), tt.preset, p.Counts())
		}
		if !sameShape(s, p) {
			t.Errorf("%s: shape %+v differs from preset %+v", tt.file, s, p)
		}
		if s.Name != tt.name || s.SeqLen != tt.seq || s.Description == "" {
			t.Errorf("%s: name %q seq %d description %q, want name %q seq %d", tt.file, s.Name, s.SeqLen, s.Description, tt.name, tt.seq)
		}
	}
}

func TestParseHFGPT2(t *testing.T) {
	s := loadHF(t, "testdata/gpt2.config.json")
	// GPT-2 small: 124,439,808 parameters in HF, of which 1024*768 = 786,432
	// are learned position embeddings (not counted): 123,653,376.
	if got := s.Counts().Total; got != 123653376 {
		t.Errorf("gpt2 total %d, want 123653376", got)
	}
	if s.FFNHidden != 3072 || !s.TiedEmbeddings || !s.Bias || s.Norm != LayerNorm || s.FFN != GELU || s.SeqLen != 1024 {
		t.Errorf("gpt2 parsed as %+v", s)
	}
}

func TestParseHFVariants(t *testing.T) {
	tests := []struct {
		name, in string
		check    func(Spec) bool
	}{
		{"qwen2 tied with head_dim", `{"model_type":"qwen2","hidden_size":896,"num_hidden_layers":24,"num_attention_heads":14,"num_key_value_heads":2,"intermediate_size":4864,"vocab_size":151936,"max_position_embeddings":32768,"tie_word_embeddings":true}`,
			func(s Spec) bool {
				return s.TiedEmbeddings && s.HeadDim == 64 && s.KVHeads == 2 && s.SeqLen == 8192 && s.FFN == SwiGLU
			}},
		{"qwen2_moe shared expert", `{"model_type":"qwen2_moe","hidden_size":2048,"num_hidden_layers":24,"num_attention_heads":16,"num_key_value_heads":16,"intermediate_size":5632,"moe_intermediate_size":1408,"shared_expert_intermediate_size":5632,"num_experts":60,"num_experts_per_tok":4,"vocab_size":151936,"max_position_embeddings":8192,"decoder_sparse_step":1,"mlp_only_layers":[]}`,
			func(s Spec) bool {
				return s.MoE != nil && s.MoE.Experts == 60 && s.MoE.TopK == 4 && s.MoE.SharedExperts == 1 && s.MoE.SharedFFNHidden == 5632 && s.MoE.ExpertFFNHidden == 1408
			}},
		{"no model_type, llama-like", `{"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100}`,
			func(s Spec) bool {
				return s.FFN == SwiGLU && s.SeqLen == DefaultSeqLen && strings.Contains(s.Description, "read as llama")
			}},
		{"no model_type, gpt2-like", `{"n_embd":64,"n_layer":2,"n_head":4,"vocab_size":100,"n_inner":null}`,
			func(s Spec) bool { return s.FFN == GELU && s.FFNHidden == 256 && s.Bias }},
		{"float integers", `{"model_type":"llama","hidden_size":64.0,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":1.28e2,"vocab_size":100}`,
			func(s Spec) bool { return s.Hidden == 64 && s.FFNHidden == 128 }},
		{"deepseek without q compression", `{"model_type":"deepseek_v2","hidden_size":2048,"num_hidden_layers":27,"num_attention_heads":16,"intermediate_size":10944,"moe_intermediate_size":1408,"n_routed_experts":64,"n_shared_experts":2,"num_experts_per_tok":6,"first_k_dense_replace":1,"q_lora_rank":null,"kv_lora_rank":512,"qk_nope_head_dim":128,"qk_rope_head_dim":64,"v_head_dim":128,"vocab_size":102400,"max_position_embeddings":163840}`,
			func(s Spec) bool {
				// DeepSeek-V2-Lite: MLA q 2048*16*192 = 6,291,456; kv 2048*576 + 512*16*256 = 3,276,800;
				// o 16*128*2048 = 4,194,304; the kv latent's norm 512: 13,763,072.
				return s.MoE != nil && s.MoE.FirstDenseLayers == 1 && s.MLA != nil && s.MLA.QLoRARank == 0 &&
					s.MTPLayers == 0 && s.KVHeads == 16 && s.HeadDim == 192 && s.AttentionParams() == 13763072
			}},
		{"deepseek_v3 with MTP", `{"model_type":"deepseek_v3","hidden_size":64,"num_hidden_layers":3,"num_attention_heads":4,"num_key_value_heads":4,"intermediate_size":128,"vocab_size":100,"q_lora_rank":24,"kv_lora_rank":16,"qk_nope_head_dim":8,"qk_rope_head_dim":4,"v_head_dim":8,"n_routed_experts":4,"num_experts_per_tok":2,"moe_intermediate_size":16,"first_k_dense_replace":1,"num_nextn_predict_layers":2}`,
			func(s Spec) bool {
				return s.MLA != nil && *s.MLA == (MLA{QLoRARank: 24, KVLoRARank: 16, QKNopeHeadDim: 8, QKRopeHeadDim: 4, VHeadDim: 8}) &&
					s.MTPLayers == 2 && s.Counts().MTP == 2*s.MTPModuleParams(false) && s.Counts().MTP > 0
			}},
	}
	for _, tt := range tests {
		s, err := ParseHF([]byte(tt.in))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !tt.check(s) {
			t.Errorf("%s: parsed as %+v (moe %+v)", tt.name, s, s.MoE)
		}
	}
}

func TestParseHFErrors(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"missing hidden_size", `{"model_type":"llama","num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100}`,
			[]string{`model: config.json: missing required field "hidden_size"`}},
		{"missing several", `{"model_type":"mistral"}`,
			[]string{`"num_hidden_layers"`, `"hidden_size"`, `"num_attention_heads"`, `"vocab_size"`, `"intermediate_size"`}},
		{"mixtral experts", `{"model_type":"mixtral","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100}`,
			[]string{`missing required field "num_local_experts"`, `missing required field "num_experts_per_tok"`}},
		{"gpt2 fields", `{"model_type":"gpt2","n_embd":64}`, []string{`missing required field "n_layer"`, `"n_head"`, `"vocab_size"`}},
		{"deepseek mla", `{"model_type":"deepseek_v3","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100}`,
			[]string{`missing required field "kv_lora_rank"`, `"qk_nope_head_dim"`, `"v_head_dim"`}},
		{"deepseek mla numbers", `{"model_type":"deepseek_v3","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100,"kv_lora_rank":0,"qk_nope_head_dim":8,"qk_rope_head_dim":4,"v_head_dim":8,"num_nextn_predict_layers":-1}`,
			[]string{`model: config.json: mla.kv_lora_rank is 0; it must be between 1 and`, `mtp_layers is -1`}},
		{"string number", `{"model_type":"llama","hidden_size":"64","num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100}`,
			[]string{`field "hidden_size" is "64"; it must be an integer`}},
		{"fraction", `{"model_type":"llama","hidden_size":64.5,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100}`,
			[]string{`field "hidden_size" is 64.5; it must be an integer`}},
		{"huge", `{"model_type":"llama","hidden_size":1e300,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100}`,
			[]string{`field "hidden_size" is 1e300, far too large`}},
		{"bool tie", `{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100,"tie_word_embeddings":"yes"}`,
			[]string{`field "tie_word_embeddings" is "yes"; it must be true or false`}},
		{"unknown type without the standard fields", `{"model_type":"newarch"}`, []string{`missing required field "num_hidden_layers"`, `missing required field "intermediate_size"`}},
		{"invalid numbers", `{"model_type":"llama","hidden_size":64,"num_hidden_layers":0,"num_attention_heads":5,"intermediate_size":128,"vocab_size":100}`,
			[]string{"model: config.json: layers is 0", "hidden 64 is not a multiple of heads 5"}},
		{"bad positions", `{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100,"max_position_embeddings":0}`,
			[]string{`field "max_position_embeddings" is 0; it must be at least 1`}},
		{"sparse step", `{"model_type":"qwen2_moe","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"moe_intermediate_size":32,"num_experts":4,"num_experts_per_tok":1,"vocab_size":100,"decoder_sparse_step":0}`,
			[]string{`field "decoder_sparse_step" is 0; it must be at least 1`}},
		{"text_config not an object", `{"model_type":"gemma3","text_config":[1]}`, []string{`field "text_config" is [1]; it must be an object`}},
		{"layer_types of the wrong length", `{"model_type":"gpt_oss","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":32,"num_local_experts":4,"num_experts_per_tok":1,"vocab_size":100,"layer_types":["full_attention"]}`,
			[]string{`field "layer_types" is ["full_attention"]; it must list one type per layer (2)`}},
		{"bad mlp_only_layers", `{"model_type":"qwen3_moe","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"moe_intermediate_size":32,"num_experts":4,"num_experts_per_tok":1,"vocab_size":100,"mlp_only_layers":[7]}`,
			[]string{`field "mlp_only_layers" entry 0 is 7; it must be a layer number from 0 to 1`}},
		{"llama4 moe_layers every layer dense", `{"model_type":"llama4_text","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"num_local_experts":4,"vocab_size":100,"moe_layers":[]}`,
			[]string{`pattern leaves no layer with experts`}},
		{"mpt attn_config not an object", `{"model_type":"mpt","d_model":64,"n_layers":2,"n_heads":4,"attn_config":true}`, []string{`field "attn_config" is true; it must be an object`}},
		{"mpt alibi not a bool", `{"model_type":"mpt","d_model":64,"n_layers":2,"n_heads":4,"attn_config":{"alibi":"yes"}}`, []string{`attn_config: field "alibi" is "yes"; it must be true or false`}},
		{"mpt expansion ratio", `{"model_type":"mpt","d_model":64,"n_layers":2,"n_heads":4,"expansion_ratio":0}`, []string{`field "expansion_ratio" is 0; it must be above 0`}},
		{"bloom without width", `{"model_type":"bloom","n_layer":2,"n_head":4}`, []string{`missing required field "hidden_size" or "n_embed"`}},
		{"zero kv heads", `{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":0,"intermediate_size":128,"vocab_size":100}`,
			[]string{`field "num_key_value_heads" is 0; it must be at least 1 (leave it out for the default, num_attention_heads, multi-head attention)`}},
		{"zero head dim", `{"model_type":"qwen3","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"head_dim":0,"intermediate_size":128,"vocab_size":100}`,
			[]string{`field "head_dim" is 0; it must be at least 1`}},
		{"llama with half the expert fields", `{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100,"n_routed_experts":8,"num_experts_per_tok":2}`,
			[]string{`field "n_routed_experts" is 8, but model_type llama has no experts`, `field "num_experts_per_tok" is 2, but model_type llama has no experts`}},
		{"mistral with a top-k only", `{"model_type":"mistral","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100,"num_experts_per_tok":2}`,
			[]string{`field "num_experts_per_tok" is 2, but model_type mistral has no experts`}},
		{"mixtral with a DeepSeek expert width", `{"model_type":"mixtral","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100,"num_local_experts":8,"num_experts_per_tok":2,"moe_intermediate_size":32}`,
			[]string{`field "moe_intermediate_size" is 32, which model_type mixtral does not read`}},
		{"no model_type, experts without top-k", `{"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100,"num_local_experts":8}`,
			[]string{`missing required field "num_experts_per_tok"`}},
		{"not an object", `[1,2]`, []string{"model: config.json: malformed JSON"}},
		{"null", `null`, []string{"holds null"}},
		{"trailing", `{"model_type":"llama"} {}`, []string{"data follows the config object"}},
		{"truncated", `{"model_type":`, []string{"malformed JSON"}},
		{"repeated field", `{"model_type":"llama","hidden_size":64,"hidden_size":128}`,
			[]string{`model: config.json: field "hidden_size" is given 2 times; give it once (encoding/json would keep the last silently)`}},
		{"repeated nested field", `{"model_type":"gemma3","text_config":{"x":[{"a":1,"a":2}],"y":1,"y":2}}`,
			[]string{`field "text_config.x.a" is given 2 times`, `field "text_config.y" is given 2 times`}},
	}
	for _, tt := range tests {
		_, err := ParseHF([]byte(tt.in))
		if err == nil {
			t.Errorf("%s: no error, want %q", tt.name, tt.want)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", tt.name, err, w)
			}
		}
	}
}
