package model

import (
	"math"
	"testing"
)

// relErr is |got/want - 1|.
func relErr(got, want float64) float64 { return math.Abs(got/want - 1) }

// TestPublishedParams checks preset parameter counts against the published
// totals (and active counts for MoE models).
func TestPublishedParams(t *testing.T) {
	tests := []struct {
		name          string
		total, active float64 // published, in parameters; active 0 means dense
		tol           float64 // relative
		source        string
	}{
		{"llama3-405b", 405.8e9, 0, 0.01, "Llama 3 paper Table 3 / torchtitan; docs/formulas.md §1.1 gives 405.9B"},
		{"llama3-70b", 70.6e9, 0, 0.01, "Meta model card; docs/formulas.md §1.1 gives 70.55B"},
		{"llama3-8b", 8.03e9, 0, 0.01, "Meta model card; docs/formulas.md §1.1"},
		{"llama2-70b", 69.0e9, 0, 0.01, "published-runs.csv torchtitan row"},
		{"llama2-13b", 13.0e9, 0, 0.01, "published-runs.csv torchtitan row"},
		{"llama2-7b", 6.74e9, 0, 0.01, "Llama 2 model card (6,738,415,616)"},
		{"llama-65b", 65.2e9, 0, 0.01, "published-runs.csv llama1 row"},
		{"gpt3-175b", 174.6e9, 0, 0.01, "Narayanan 2021 Table 2 (GPT-174.6B)"},
		{"gpt-175b", 174.6e9, 0, 0.01, "Narayanan 2021 Table 2"},
		{"mixtral-8x7b", 46.7e9, 12.9e9, 0.01, "Mixtral paper (46.7B total, 12.9B active)"},
		{"mixtral-8x22b", 141e9, 39e9, 0.01, "Mistral model card (141B total, 39B active)"},
		{"deepseek-v3", 671e9, 37e9, 0.03, "DeepSeek-V3 report: 671B total, 37B activated, MTP module excluded"},
		{"gpt-neox-20b", 20.6e9, 0, 0.01, "published-runs.csv gptneox row"},
		{"bloom-176b", 176.2e9, 0, 0.01, "published-runs.csv bloom row"},
		{"opt-175b", 175e9, 0, 0.01, "published-runs.csv opt row"},
		{"mpt-13b", 12.85e9, 0, 0.01, "published-runs.csv mpt rows"},
		{"mpt-30b", 29.98e9, 0, 0.01, "published-runs.csv mpt rows"},
		{"mpt-70b", 64.86e9, 0, 0.01, "published-runs.csv mpt rows"},
		{"maxtext-16b", 15.8e9, 0, 0.01, "published-runs.csv maxtext rows"},
		{"maxtext-32b", 31.7e9, 0, 0.01, "published-runs.csv maxtext rows"},
		{"maxtext-64b", 62.8e9, 0, 0.01, "published-runs.csv maxtext rows"},
		{"maxtext-128b", 125.1e9, 0, 0.01, "published-runs.csv maxtext rows"},
	}
	for _, tt := range tests {
		s, err := Preset(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		c := s.Counts()
		if e := relErr(float64(c.Total), tt.total); e > tt.tol {
			t.Errorf("%s: total %d, published %.4g (%s): off by %.2f%%", tt.name, c.Total, tt.total, tt.source, 100*e)
		}
		active := tt.active
		if active == 0 {
			active = tt.total
		}
		if e := relErr(float64(c.Active), active); e > tt.tol {
			t.Errorf("%s: active %d, published %.4g (%s): off by %.2f%%", tt.name, c.Active, active, tt.source, 100*e)
		}
	}
}

// TestMegatronRows checks the Megatron GPT presets against the params_b
// column of published-runs.csv (Narayanan 2021 Table 1, Korthikanti 2022).
// The paper's count also includes learned position embeddings (s*h) and
// rounds to two or three digits, so the tolerance is 4%; only the 1.7B row
// (1.648B counted vs "1.7") needs more than 1.2%.
func TestMegatronRows(t *testing.T) {
	rows := []struct {
		name                  string
		layers, hidden, heads int
		paramsB               float64
	}{
		{"gpt-1.7b", 24, 2304, 24, 1.7},
		{"gpt-3.6b", 30, 3072, 32, 3.6},
		{"gpt-7.5b", 36, 4096, 32, 7.5},
		{"gpt-18b", 40, 6144, 48, 18.4},
		{"gpt-22b", 48, 6144, 64, 22.1},
		{"gpt-39b", 48, 8192, 64, 39.1},
		{"gpt-76b", 60, 10240, 80, 76.1},
		{"gpt-145b", 80, 12288, 96, 145.6},
		{"gpt-175b", 96, 12288, 96, 174.6},
		{"gpt-310b", 96, 16384, 128, 310.1},
		{"gpt-530b", 105, 20480, 128, 529.6},
		{"mt-nlg-530b", 105, 20480, 128, 530},
		{"gpt-1t", 128, 25600, 160, 1008.0},
	}
	for _, r := range rows {
		s, err := Preset(r.name)
		if err != nil {
			t.Fatal(err)
		}
		if s.Layers != r.layers || s.Hidden != r.hidden || s.Heads != r.heads || s.FFNHidden != 4*r.hidden || s.Vocab != 51200 || s.SeqLen != 2048 {
			t.Errorf("%s: shape %d/%d/%d ffn %d vocab %d seq %d, want %d/%d/%d ffn %d vocab 51200 seq 2048",
				r.name, s.Layers, s.Hidden, s.Heads, s.FFNHidden, s.Vocab, s.SeqLen, r.layers, r.hidden, r.heads, 4*r.hidden)
		}
		if e := relErr(float64(s.Counts().Total), r.paramsB*1e9); e > 0.04 {
			t.Errorf("%s: %d params, published %.1fB: off by %.2f%%", r.name, s.Counts().Total, r.paramsB, 100*e)
		}
	}
}

// TestCountsByHand pins every term of Counts on two small models.
func TestCountsByHand(t *testing.T) {
	// GPT-2 small (Radford et al. 2019; HF gpt2 has 124,439,808 parameters
	// including 1024*768 = 786,432 learned position embeddings, not counted):
	// attention 4*768^2 + 4*768 = 2,362,368; MLP 2*768*3072 + 3072 + 768 =
	// 4,722,432; norms 4*768 = 3,072; layer 7,087,872; 12 layers 85,054,464;
	// tied embedding 50257*768 = 38,597,376; final norm 1,536.
	gpt2 := Spec{Layers: 12, Hidden: 768, Heads: 12, Vocab: 50257, TiedEmbeddings: true, Norm: LayerNorm, Bias: true}
	gpt2.Normalize()
	if got, want := gpt2.Counts(), (Counts{
		Total: 123653376, Active: 123653376, Embedding: 38597376,
		NonEmbedding: 85056000, ActiveNonEmbedding: 85056000,
	}); got != want {
		t.Errorf("gpt2 counts %+v, want %+v", got, want)
	}

	// A tiny MoE: h=8, 2 heads of 4, 1 KV head, SwiGLU, 4 experts of width
	// 16, top-1, 1 shared expert of width 8, 3 layers with the first dense
	// (width 32), vocab 10, untied, RMSNorm (docs/formulas.md §1.1):
	// attention 2*8*8 + 2*8*4 = 192; norms 16; dense MLP 3*8*32 = 768;
	// router 8*4 = 32; expert 3*8*16 = 384; shared 3*8*8 = 192.
	// dense layer 976; MoE layer 192+16+32+192+4*384 = 1968 (active 816).
	// total = 976 + 2*1968 + 2*80 + 8 = 5080; active = 976 + 2*816 + 168 = 2776.
	moe := Spec{Layers: 3, Hidden: 8, Heads: 2, KVHeads: 1, FFNHidden: 32, FFN: SwiGLU, Vocab: 10,
		MoE: &MoE{Experts: 4, TopK: 1, ExpertFFNHidden: 16, SharedExperts: 1, SharedFFNHidden: 8, FirstDenseLayers: 1}}
	moe.Normalize()
	if got, want := moe.Counts(), (Counts{
		Total: 5080, Active: 2776, Embedding: 160, NonEmbedding: 4920, ActiveNonEmbedding: 2616,
	}); got != want {
		t.Errorf("tiny MoE counts %+v, want %+v", got, want)
	}
}

// TestModelFLOPsPerToken checks the contract's MFU numerator on Llama 3 70B.
func TestModelFLOPsPerToken(t *testing.T) {
	s, err := Preset("llama3-70b")
	if err != nil {
		t.Fatal(err)
	}
	// Hand computation (docs/formulas.md §1.2), L=80, h=8192, q=8192, kv=1024, F=28672, V=128256:
	//   per layer 2*h*q + 2*h*kv + 3*h*F + 2*h = 134,217,728 + 16,777,216 + 704,643,072 + 16,384 = 855,654,400
	//   Ψ_active_nonembedding = 80*855,654,400 + 8,192 (final norm) = 68,452,360,192
	//   6*Ψ = 410,714,161,152
	//   attention 12*L*q*s at s=8192: 12*80*8192*8192 = 64,424,509,440
	//   logits 6*h*V = 6*8192*128256 = 6,304,038,912
	//   sum = 481,442,709,504
	const want = 481442709504.0
	if got := s.ModelFLOPsPerToken(8192); got != want {
		t.Errorf("ModelFLOPsPerToken(8192) = %.0f, want %.0f", got, want)
	}
	// The scaling book's rule of thumb, 6*70e9 = 4.2e11 FLOPs per token
	// (docs/formulas.md §8), is the matmul part: 410.71e9 + 6.30e9 = 417.0e9, 0.7% under.
	matmul := s.ModelFLOPsPerToken(0)
	if e := relErr(matmul, 6*70e9); e > 0.01 {
		t.Errorf("matmul FLOPs per token %.4g, want 6*70e9 within 1%% (off %.2f%%)", matmul, 100*e)
	}
}
