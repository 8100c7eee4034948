package model

import (
	"math"
	"os"
	"strings"
	"testing"
)

// TestParseHFPublishedCounts loads the published config.json of each
// architecture (model/testdata/SOURCES.md) and pins its parameter counts to
// the figures its publisher gives, within 1% (3% where the figure is
// rounded), and its layer pattern.
func TestParseHFPublishedCounts(t *testing.T) {
	tests := []struct {
		file string
		// total and active are the published figures in billions (active 0:
		// dense); activeNoEmbed says the publisher counts the active
		// parameters without the input embedding (gpt-oss).
		total, active float64
		activeNoEmbed bool
		tol           float64
		pattern       string
	}{
		// Gemma arXiv:2403.08295 Table 2: 7B, 786,825,216 embedding + 7,751,248,896 non-embedding.
		{"gemma-7b", 8.538, 0, false, 0.01, "28 layers"},
		// Gemma 2 arXiv:2408.00118 Table 2: 9B, 917,962,752 embedding + 8,324,201,984 non-embedding.
		{"gemma-2-9b", 9.242, 0, false, 0.01, "42 layers: 21 sliding(4096) + 21 full"},
		// Gemma 3 arXiv:2503.19786 Table 1: 4B, 675M embedding + 3,209M non-embedding (the 417M vision encoder apart).
		{"gemma-3-4b", 3.884, 0, false, 0.01, "34 layers: 29 sliding(1024) + 5 full"},
		// Gemma 3 arXiv:2503.19786 Table 1: 27B, 1,416M embedding + 25,600M non-embedding.
		{"gemma-3-27b", 27.016, 0, false, 0.01, "62 layers: 52 sliding(1024) + 10 full"},
		// Phi-3 arXiv:2404.14219 §2: phi-3-mini, 3.8B; 3.82B on its model page.
		{"phi-3-mini-4k", 3.82, 0, false, 0.01, "32 layers: 32 sliding(2047)"},
		// gpt-oss model card arXiv:2508.10925 Table 1: 20.91B total, 3.61B active (embedding not counted active).
		{"gpt-oss-20b", 20.91, 3.61, true, 0.01, "24 layers: 12 sliding(128) + 12 full, MoE 32x top-4"},
		// gpt-oss model card arXiv:2508.10925 Table 1: 116.83B total, 5.13B active.
		{"gpt-oss-120b", 116.83, 5.13, true, 0.01, "36 layers: 18 sliding(128) + 18 full, MoE 128x top-4"},
		// Meta Llama 4 model card: Scout 109B total (with its vision encoder), 17B active; rounded.
		{"llama-4-scout", 109, 17, false, 0.03, "48 layers: 36 chunked(8192) + 12 full, MoE 16x top-1 + 1 shared"},
		// Meta Llama 4 model card: Maverick 400B total, 17B active; rounded.
		{"llama-4-maverick", 400, 17, false, 0.03, "48 layers: 36 chunked(8192) + 12 full, MoE 24 of 48, 128x top-1 + 1 shared"},
		// OLMo 2 arXiv:2501.00656, allenai/OLMo-2-1124-7B: 7.3B; rounded.
		{"olmo-2-7b", 7.3, 0, false, 0.03, "32 layers"},
		// ibm-granite/granite-3.0-8b-base model card: 8.1B; rounded.
		{"granite-3.0-8b", 8.1, 0, false, 0.03, "40 layers"},
		// StarCoder2 arXiv:2402.19173, bigcode/starcoder2-7b: 7B (7.17B on its model page); rounded.
		{"starcoder2-7b", 7.17, 0, false, 0.03, "32 layers: 32 sliding(4096)"},
		// Falcon arXiv:2311.16867, tiiuae/falcon-7b: 7B; rounded.
		{"falcon-7b", 7, 0, false, 0.03, "32 layers"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile("testdata/" + tt.file + ".config.json")
			if err != nil {
				t.Fatal(err)
			}
			s, warnings, err := ParseHFWarnings(data)
			if err != nil {
				t.Fatal(err)
			}
			if len(warnings) > 0 {
				t.Errorf("warnings for a known model_type: %q", warnings)
			}
			c := s.Counts()
			check := func(what string, got int64, want float64) {
				if e := float64(got)/(want*1e9) - 1; math.Abs(e) > tt.tol {
					t.Errorf("%s = %.4gB, published %.4gB: %+.2f%%, more than %.0f%%", what, float64(got)/1e9, want, 100*e, 100*tt.tol)
				}
			}
			check("total", c.Total, tt.total)
			if tt.active > 0 {
				active := c.Active
				if tt.activeNoEmbed {
					active -= s.EmbeddingParams()
				}
				check("active", active, tt.active)
			}
			if got := s.PatternText(); got != tt.pattern {
				t.Errorf("PatternText = %q, want %q", got, tt.pattern)
			}
			if _, err := NewProgram(s, ProgramOptions{}); err != nil {
				t.Errorf("NewProgram: %v", err)
			}
		})
	}
}

// TestParseHFLayerKinds checks the stacks the new loaders build: the kinds
// and the runs of Llama 4 Maverick (dense and MoE alternate; every fourth
// layer full attention), Qwen's mlp_only_layers and DeepSeek's
// moe_layer_freq, which were refused before.
func TestParseHFLayerKinds(t *testing.T) {
	tests := []struct {
		name, config string
		kinds        []string
		runs         int
		moeLayers    int
	}{
		{"maverick", "", []string{"dense", "moe", "chunked dense", "chunked moe"}, 48, 24},
		{"qwen mlp_only_layers", `{"model_type":"qwen3_moe","hidden_size":64,"num_hidden_layers":6,"num_attention_heads":4,"intermediate_size":128,"moe_intermediate_size":32,"num_experts":4,"num_experts_per_tok":1,"vocab_size":100,"mlp_only_layers":[0,5]}`,
			[]string{"dense", "moe"}, 3, 4},
		{"qwen decoder_sparse_step 2", `{"model_type":"qwen2_moe","hidden_size":64,"num_hidden_layers":4,"num_attention_heads":4,"intermediate_size":128,"moe_intermediate_size":32,"num_experts":4,"num_experts_per_tok":1,"vocab_size":100,"decoder_sparse_step":2}`,
			[]string{"dense", "moe"}, 4, 2},
		{"deepseek moe_layer_freq 2", `{"model_type":"deepseek_v3","hidden_size":64,"num_hidden_layers":5,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100,"kv_lora_rank":16,"qk_nope_head_dim":8,"qk_rope_head_dim":4,"v_head_dim":8,"n_routed_experts":4,"num_experts_per_tok":2,"moe_intermediate_size":16,"first_k_dense_replace":1,"moe_layer_freq":2}`,
			[]string{"dense", "moe"}, 4, 2}, // layers 2 and 4: dense, dense, moe, dense, moe
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.config)
			if tt.config == "" {
				var err error
				if data, err = os.ReadFile("testdata/llama-4-maverick.config.json"); err != nil {
					t.Fatal(err)
				}
			}
			s, err := ParseHF(data)
			if err != nil {
				t.Fatal(err)
			}
			p := MustProgram(s, ProgramOptions{})
			var names []string
			for _, k := range p.Kinds {
				names = append(names, k.Name)
			}
			if strings.Join(names, ",") != strings.Join(tt.kinds, ",") {
				t.Errorf("kinds %q, want %q", names, tt.kinds)
			}
			if len(p.Stack) != tt.runs {
				t.Errorf("%d runs, want %d: %v", len(p.Stack), tt.runs, p.Stack)
			}
			if got := s.MoELayers(); got != tt.moeLayers {
				t.Errorf("MoELayers = %d, want %d", got, tt.moeLayers)
			}
			// Prefix counts agree with the runs.
			n := p.NumLayers()
			for from := 0; from <= n; from += 3 {
				want := make([]int, len(p.Kinds))
				at := 0
				for _, r := range p.Stack {
					for i := 0; i < r.Count; i++ {
						if at >= from && at < n {
							want[r.Kind]++
						}
						at++
					}
				}
				got := p.Layers(from, n)
				for k := range want {
					if got[k] != want[k] {
						t.Fatalf("Layers(%d, %d) = %v, want %v", from, n, got, want)
					}
				}
			}
		})
	}
}

// TestParseHFUnknownType reads a model_type the planner does not know as a
// Llama-like decoder, with a warning for every assumption, and refuses one
// without the standard fields, naming the field.
func TestParseHFUnknownType(t *testing.T) {
	s, warnings, err := ParseHFWarnings([]byte(`{"model_type":"newarch","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"intermediate_size":11008,"vocab_size":32000,"max_position_embeddings":4096}`))
	if err != nil {
		t.Fatal(err)
	}
	// 32 x (4·4096² + 3·4096·11008 + 2·4096) + 2·32000·4096 + 4096 = 6,738,415,616 (Llama 2 7B's shape).
	if got := s.Counts().Total; got != 6738415616 {
		t.Errorf("total %d, want 6738415616", got)
	}
	text := strings.Join(warnings, "\n")
	for _, want := range []string{`model_type "newarch" is not one the planner knows`, "gated MLP", "RMSNorm", "multi-head attention", "head_dim = hidden_size / num_attention_heads", "untied", "full causal attention"} {
		if !strings.Contains(text, want) {
			t.Errorf("warnings lack %q:\n%s", want, text)
		}
	}
	_, err = ParseHF([]byte(`{"model_type":"newarch","hidden_size":4096,"num_attention_heads":32,"intermediate_size":11008,"vocab_size":32000}`))
	if err == nil || !strings.Contains(err.Error(), `missing required field "num_hidden_layers"`) {
		t.Errorf("error %v, want the missing num_hidden_layers named", err)
	}
}

// TestLocalWork pins the band of local attention by hand: a window of
// 128 over 8,192 tokens computes 128·8192 - 128²/2 = 1,040,384 of the
// 67,108,864 scores; chunks of 8,192 over 8,192 are causal; chunks of 1,000
// over 2,500: 2·1000²/2 + 500²/2 = 1,125,000 of 6,250,000.
func TestLocalWork(t *testing.T) {
	tests := []struct {
		a               Attention
		span, seq, want float64
	}{
		{AttnFull, 0, 8192, 0.5},
		{AttnSliding, 128, 8192, 1040384.0 / 67108864},
		{AttnSliding, 8192, 8192, 0.5},
		{AttnSliding, 10000, 8192, 0.5},
		{AttnChunked, 8192, 8192, 0.5},
		{AttnChunked, 1000, 2500, 1125000.0 / 6250000},
	}
	for _, tt := range tests {
		if got := LocalWork(tt.a, tt.span, tt.seq); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("LocalWork(%v, %g, %g) = %g, want %g", tt.a, tt.span, tt.seq, got, tt.want)
		}
	}
	// CPShare: a window of 128 over 8,192 tokens on 4 chips needs 128 of the
	// 6,144 keys of the other shards; chunks of 2,048 on shards of 2,048 none.
	if got, want := CPShare(AttnSliding, 128, 8192, 4), 128.0/6144; math.Abs(got-want) > 1e-12 {
		t.Errorf("CPShare sliding = %g, want %g", got, want)
	}
	if got := CPShare(AttnChunked, 2048, 8192, 4); got != 0 {
		t.Errorf("CPShare chunked = %g, want 0", got)
	}
	if got := CPShare(AttnFull, 0, 8192, 4); got != 1 {
		t.Errorf("CPShare full = %g, want 1", got)
	}
}

// TestPatternProblems checks a model file's pattern, window and chunk.
func TestPatternProblems(t *testing.T) {
	tests := []struct {
		yaml, want string
	}{
		{"layers: 2\nhidden: 64\nheads: 4\nvocab: 100\npattern: [sliding, full]\n", "window is not set"},
		{"layers: 2\nhidden: 64\nheads: 4\nvocab: 100\npattern: [chunked]\n", "chunk is not set"},
		{"layers: 2\nhidden: 64\nheads: 4\nvocab: 100\nwindow: 8\npattern: [slidng]\n", `pattern[0] is "slidng"`},
		{"layers: 2\nhidden: 64\nheads: 4\nvocab: 100\npattern: [moe]\n", "has no moe section"},
		{"layers: 2\nhidden: 64\nheads: 4\nvocab: 100\nwindow: 8\npattern: [sliding, full, full]\n", "pattern has 3 entries"},
		{"layers: 2\nhidden: 64\nheads: 4\nvocab: 100\nwindow: -1\n", "window is -1"},
		{"layers: 2\nhidden: 64\nheads: 4\nvocab: 100\npattern: {a: 1}\n", `key "pattern" at line 5 is a mapping`},
		{"layers: 2\nhidden: 64\nheads: 4\nvocab: 100\nwindow: 8\n", "window is 8, but no layer of pattern is sliding, so it would be ignored"},
		{"layers: 2\nhidden: 64\nheads: 4\nvocab: 100\nwindow: 8\npattern: [full]\n", "window is 8, but no layer of pattern is sliding"},
		{"layers: 2\nhidden: 64\nheads: 4\nvocab: 100\nchunk: 8\n", "chunk is 8, but no layer of pattern is chunked"},
	}
	for _, tt := range tests {
		_, err := ParseYAML([]byte(tt.yaml))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.yaml, err, tt.want)
		}
	}
	s, err := ParseYAML([]byte("layers: 4\nhidden: 64\nheads: 4\nvocab: 100\nwindow: 16\npattern: [sliding/dense, full/moe]\nmoe: {experts: 4, top_k: 1, expert_ffn_hidden: 32}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.PatternText(), "4 layers: 2 sliding(16) + 2 full, MoE 2 of 4, 4x top-1"; got != want {
		t.Errorf("PatternText = %q, want %q", got, want)
	}
}
