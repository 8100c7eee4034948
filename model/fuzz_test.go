package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkParsed is what every successful parse must satisfy: valid, normalised,
// and counts that are positive.
func checkParsed(t *testing.T, s Spec) {
	t.Helper()
	if err := s.Validate(); err != nil {
		t.Fatalf("parsed spec fails Validate: %v\n%+v", err, s)
	}
	if s.KVHeads == 0 || s.HeadDim == 0 || s.FFNHidden == 0 || s.SeqLen == 0 || s.FFN == "" || s.Norm == "" {
		t.Fatalf("parsed spec not normalised: %+v", s)
	}
	c := s.Counts()
	if c.Total <= 0 || c.Active <= 0 || c.Active > c.Total || c.NonEmbedding <= 0 {
		t.Fatalf("parsed spec has counts %+v", c)
	}
	if f := s.ModelFLOPsPerToken(s.SeqLen); !(f > 0) {
		t.Fatalf("parsed spec has %g FLOPs per token", f)
	}
	if c.MTP < 0 || c.MTP > 0 && s.MTPLayers == 0 {
		t.Fatalf("parsed spec has %d MTP parameters for %d modules", c.MTP, s.MTPLayers)
	}
	if _, err := NewProgram(s, ProgramOptions{}); err != nil {
		t.Fatalf("parsed spec has no layer program: %v", err)
	}
}

func addSeeds(f *testing.F, pattern string) {
	files, _ := filepath.Glob(filepath.Join("testdata", pattern))
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
}

func FuzzParseYAML(f *testing.F) {
	addSeeds(f, "*.yaml")
	f.Add([]byte("layers: 2\nhidden: 64\nheads: 4\nvocab: 100\nmoe:\n  experts: 4\n  top_k: 1\n  expert_ffn_hidden: 8\n  capacity_factor: 1.5\n"))
	f.Add([]byte("a: &x {layers: 1}\nmoe: *x\n"))
	f.Add([]byte("layers: 1e18\nhidden: -0\nheads: .inf\n"))
	f.Add([]byte("layers: 2\nhidden: 64\nheads: 4\nvocab: 100\nqkv_bias: true\nout_bias: true\nqk_norm: true\npost_norms: true\nlogit_softcap: .nan\n"))
	f.Add([]byte("layers: 3\nhidden: 64\nheads: 4\nvocab: 100\nwindow: 8\nchunk: 4\npattern: [sliding/dense, chunked/moe, full]\nmoe: {experts: 4, top_k: 1, expert_ffn_hidden: 8}\n"))
	f.Add([]byte("layers: 2\nhidden: 64\nheads: 4\nvocab: 100\nffn: gelu\nalibi: true\nyarn: true\n"))
	f.Add([]byte("layers: 2\nhidden: 64\nheads: 4\nvocab: 100\nmtp_layers: 1\nmla:\n  q_lora_rank: 8\n  kv_lora_rank: 8\n  qk_nope_head_dim: 0\n  qk_rope_head_dim: 8\n  v_head_dim: 4\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseYAML(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "model: ") {
				t.Fatalf("error without the model: prefix: %v", err)
			}
			return
		}
		checkParsed(t, s)
	})
}

func FuzzParseHF(f *testing.F) {
	addSeeds(f, "*.json")
	f.Add([]byte(`{"model_type":"qwen2_moe","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"moe_intermediate_size":32,"shared_expert_intermediate_size":16,"num_experts":4,"num_experts_per_tok":1,"vocab_size":100}`))
	f.Add([]byte(`{"model_type":"deepseek_v3","hidden_size":64,"num_hidden_layers":3,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100,"kv_lora_rank":16,"qk_nope_head_dim":8,"qk_rope_head_dim":4,"v_head_dim":8,"n_routed_experts":4,"num_experts_per_tok":2,"moe_intermediate_size":16,"first_k_dense_replace":1}`))
	f.Add([]byte(`{"model_type":"gemma3","text_config":{"hidden_size":64,"num_hidden_layers":7,"intermediate_size":32,"sliding_window":8,"sliding_window_pattern":3}}`))
	f.Add([]byte(`{"model_type":"llama4_text","hidden_size":64,"num_hidden_layers":4,"num_attention_heads":4,"num_local_experts":4,"vocab_size":100,"interleave_moe_layer_step":2,"attention_chunk_size":16,"no_rope_layers":[1,1,1,0]}`))
	f.Add([]byte(`{"model_type":"qwen3_moe","hidden_size":64,"num_hidden_layers":3,"num_attention_heads":4,"intermediate_size":128,"moe_intermediate_size":32,"num_experts":4,"num_experts_per_tok":1,"vocab_size":100,"mlp_only_layers":[1],"decoder_sparse_step":1}`))
	f.Add([]byte(`{"model_type":"newarch","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100}`))
	f.Add([]byte(`{"model_type":"falcon","n_embd":64,"n_layer":2,"n_head":4,"multi_query":true}`))
	f.Add([]byte(`{"model_type":"mpt","d_model":64,"n_layers":2,"n_heads":4,"expansion_ratio":2.5,"attn_config":{"alibi":true,"kv_n_heads":2}}`))
	f.Add([]byte(`{"model_type":"bloom","n_embed":64,"n_layer":2,"n_head":4,"vocab_size":100}`))
	f.Add([]byte(`{"model_type":"gemma2","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":32,"final_logit_softcapping":"thirty"}`))
	f.Add([]byte(`{"model_type":"qwen2","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":32,"vocab_size":100,"attention_bias":1}`))
	f.Add([]byte(`{"model_type":"deepseek_v2","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":3,"intermediate_size":128,"vocab_size":100,"q_lora_rank":null,"kv_lora_rank":16,"qk_nope_head_dim":0,"qk_rope_head_dim":4,"v_head_dim":8,"num_nextn_predict_layers":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseHF(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "model: config.json: ") {
				t.Fatalf("error without the model: config.json: prefix: %v", err)
			}
			return
		}
		checkParsed(t, s)
	})
}
