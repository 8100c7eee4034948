package model

import (
	"math"
	"strings"
	"testing"
)

func validSpec() Spec {
	return Spec{Name: "t", Layers: 4, Hidden: 64, Heads: 8, KVHeads: 2, FFNHidden: 256, FFN: SwiGLU, Vocab: 1000, SeqLen: 128}
}

func TestValidate(t *testing.T) {
	moe := func(m MoE) func(*Spec) { return func(s *Spec) { s.MoE = &m } }
	tests := []struct {
		name   string
		edit   func(*Spec)
		errors []string // substrings, one per expected error; none means valid
	}{
		{"valid", func(*Spec) {}, nil},
		{"defaults", func(s *Spec) { *s = Spec{Layers: 2, Hidden: 64, Heads: 4, Vocab: 100} }, nil},
		{"deepseek-like head_dim", func(s *Spec) { s.HeadDim = 96 }, nil},
		{"valid moe", moe(MoE{Experts: 8, TopK: 2, ExpertFFNHidden: 128, SharedExperts: 1, FirstDenseLayers: 3, CapacityFactor: 1.25}), nil},
		{"zero layers", func(s *Spec) { s.Layers = 0 }, []string{"layers is 0; it must be between 1 and 10000"}},
		{"absurd layers", func(s *Spec) { s.Layers = 10001 }, []string{"layers is 10001"}},
		{"negative hidden", func(s *Spec) { s.Hidden = -5 }, []string{"hidden is -5"}},
		{"absurd hidden", func(s *Spec) { s.Hidden = 2000000; s.HeadDim = 64 }, []string{"hidden is 2000000"}},
		{"heads not dividing hidden", func(s *Spec) { s.Heads = 7; s.KVHeads = 7 }, []string{"hidden 64 is not a multiple of heads 7; set head_dim"}},
		{"kv not dividing heads", func(s *Spec) { s.KVHeads = 3 }, []string{"heads 8 is not a multiple of kv_heads 3; use a kv_heads that divides heads, such as 2"}},
		{"kv above heads", func(s *Spec) { s.KVHeads = 16 }, []string{"kv_heads is 16; it must be between 1 and heads (8)"}},
		{"negative head_dim", func(s *Spec) { s.HeadDim = -1 }, []string{"head_dim is -1"}},
		{"bad ffn", func(s *Spec) { s.FFN = "relu" }, []string{`ffn is "relu"; it must be "gelu"`}},
		{"bad norm", func(s *Spec) { s.Norm = "batchnorm" }, []string{`norm is "batchnorm"; it must be "rmsnorm" or "layernorm"`}},
		{"absurd vocab", func(s *Spec) { s.Vocab = 20000000 }, []string{"vocab is 20000000"}},
		{"absurd seq", func(s *Spec) { s.SeqLen = 20000000 }, []string{"seq_len is 20000000"}},
		{"negative seq", func(s *Spec) { s.SeqLen = -1 }, []string{"seq_len is -1"}},
		{"top_k above experts", moe(MoE{Experts: 8, TopK: 9, ExpertFFNHidden: 128}), []string{"moe.top_k is 9; it must be between 1 and 8"}},
		{"no experts", moe(MoE{TopK: 1, ExpertFFNHidden: 128}), []string{"moe.experts is 0"}},
		{"no expert width", moe(MoE{Experts: 8, TopK: 2}), []string{"moe.expert_ffn_hidden is 0"}},
		{"first dense = layers", moe(MoE{Experts: 8, TopK: 2, ExpertFFNHidden: 128, FirstDenseLayers: 4}), []string{"moe.first_dense_layers is 4; it must be between 0 and 3"}},
		{"capacity below 1", moe(MoE{Experts: 8, TopK: 2, ExpertFFNHidden: 128, CapacityFactor: 0.5}), []string{"moe.capacity_factor is 0.5"}},
		{"capacity absurd", moe(MoE{Experts: 8, TopK: 2, ExpertFFNHidden: 128, CapacityFactor: 1000}), []string{"moe.capacity_factor is 1000"}},
		{"capacity NaN", moe(MoE{Experts: 8, TopK: 2, ExpertFFNHidden: 128, CapacityFactor: math.NaN()}), []string{"moe.capacity_factor is NaN"}},
		{"negative shared", moe(MoE{Experts: 8, TopK: 2, ExpertFFNHidden: 128, SharedExperts: -1}), []string{"moe.shared_experts is -1"}},
		{"too many parameters", func(s *Spec) {
			*s = Spec{Layers: 10000, Hidden: 1000000, Heads: 1000, Vocab: 100, FFNHidden: 10000000}
		}, []string{"parameters, more than the 1e+15"}},
		{"several at once", func(s *Spec) { s.Layers = 0; s.Vocab = 0; s.FFN = "x" }, []string{"layers is 0", "vocab is 0", `ffn is "x"`}},
	}
	for _, tt := range tests {
		s := validSpec()
		tt.edit(&s)
		before := s
		err := s.Validate()
		if s.KVHeads != before.KVHeads || s.SeqLen != before.SeqLen {
			t.Errorf("%s: Validate modified its receiver", tt.name)
		}
		if len(tt.errors) == 0 {
			if err != nil {
				t.Errorf("%s: unexpected error %v", tt.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: no error, want %q", tt.name, tt.errors)
			continue
		}
		lines := strings.Split(err.Error(), "\n")
		if len(lines) != len(tt.errors) {
			t.Errorf("%s: %d errors %q, want %d", tt.name, len(lines), lines, len(tt.errors))
		}
		for _, want := range tt.errors {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not contain %q", tt.name, err, want)
			}
		}
		for _, l := range lines {
			if !strings.HasPrefix(l, "model: ") {
				t.Errorf("%s: error line %q lacks the model: prefix", tt.name, l)
			}
		}
	}
}
