package model

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// biasMoESpec is a tiny all-MoE decoder: h = 8, two heads of 4, one
// key/value head, four experts of width 16 with top-2, vocabulary 10, two
// layers, its experts biased.
func biasMoESpec() Spec {
	s := Spec{Layers: 2, Hidden: 8, Heads: 2, KVHeads: 1, FFNHidden: 16, FFN: SwiGLU, Vocab: 10,
		MoE: &MoE{Experts: 4, TopK: 2, ExpertFFNHidden: 16, Bias: true}}
	s.Normalize()
	return s
}

// fwdOps returns the forward ops of p by name (the last of a name wins).
func fwdOps(p *Program) map[string]Op {
	ops := map[string]Op{}
	for _, blk := range p.Blocks {
		for _, o := range blk.Fwd {
			ops[o.Name] = o
		}
	}
	return ops
}

// TestExpertBiasPass: the experts' output bias is a pass over their bf16
// output ye (2 bytes an element) at the framework's bytes: fused into the
// GEMM (0 forward, the bias gradient's one read of 2 bytes backward: 0 and
// 1 element), or Megatron-Core's eager t + b·p, cat and cast (28 and 40
// bytes: 14 and 20 elements); none without biases. The biases are
// weights: per layer 4 experts × 2·16 (up) + 4 × 8 (down) = 160.
func TestExpertBiasPass(t *testing.T) {
	eager := Kernels{}
	eager.Passes[PassExpertBias] = PassCost{FwdBytes: 28, BwdBytes: 40}
	for _, tt := range []struct {
		name     string
		bias     bool
		k        Kernels
		fwd, bwd float64
	}{
		{"fused", true, Kernels{}, 0, 1},
		{"megatron eager", true, eager, 14, 20},
		{"no bias", false, eager, -1, -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := biasMoESpec()
			s.MoE.Bias = tt.bias
			with := MustProgram(s, ProgramOptions{Kernels: tt.k})
			o, ok := fwdOps(with)["expert_bias"]
			if !tt.bias {
				if ok {
					t.Errorf("expert_bias op without expert biases")
				}
				return
			}
			if !ok {
				t.Fatal("no expert_bias op")
			}
			if with.Tensors[o.A].Name != "ye" || o.Bytes != tt.fwd || o.BwdBytes != tt.bwd {
				t.Errorf("expert_bias over %s moves %v and %v elements, want ye, %v and %v", with.Tensors[o.A].Name, o.Bytes, o.BwdBytes, tt.fwd, tt.bwd)
			}
			s.MoE.Bias = false
			got := programWeights(with) - programWeights(MustProgram(s, ProgramOptions{Kernels: tt.k}))
			if got != 2*160 {
				t.Errorf("expert biases add %v weights, want 320", got)
			}
		})
	}
}

// TestRopeYaRNPass: a YaRN model's rotary pass is PassRopeYaRN's bytes
// over q and k, 12 of qkv's 16 columns: Megatron's eager rotary (24 and 26
// bytes, 12 and 13 bf16 elements, times 12/16: 9 and 9.75); the default
// prices it as the fused rotary kernel (4 and 4 bytes: 1.5 and 1.5); a
// model without YaRN keeps PassRope's bytes whatever rope_yarn costs.
func TestRopeYaRNPass(t *testing.T) {
	eager := Kernels{}
	eager.Passes[PassRopeYaRN] = PassCost{FwdBytes: 24, BwdBytes: 26}
	for _, tt := range []struct {
		name     string
		yarn     bool
		k        Kernels
		fwd, bwd float64
	}{
		{"yarn eager", true, eager, 9, 9.75},
		{"yarn fused", true, Kernels{}, 1.5, 1.5},
		{"plain", false, eager, 1.5, 1.5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := partsSpec()
			s.YaRN = tt.yarn
			o := fwdOps(MustProgram(s, ProgramOptions{Kernels: tt.k}))["rope"]
			if o.Bytes != tt.fwd || o.BwdBytes != tt.bwd {
				t.Errorf("rope moves %v and %v elements, want %v and %v", o.Bytes, o.BwdBytes, tt.fwd, tt.bwd)
			}
		})
	}
}

// TestGptOSSFeatures: gpt-oss's config reads as biased experts and YaRN
// (GptOssConfig's default rope_scaling), unless rope_scaling names
// another rotary type; the YAML form takes moe.bias and yarn.
func TestGptOSSFeatures(t *testing.T) {
	const base = `{"model_type":"gpt_oss","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":1,"head_dim":16,` +
		`"intermediate_size":32,"num_local_experts":4,"num_experts_per_tok":2,"vocab_size":100`
	for _, tt := range []struct {
		name, extra string
		yarn        bool
		problem     string
	}{
		{"default", ``, true, ""},
		{"yarn", `,"rope_scaling":{"rope_type":"yarn","factor":32.0}`, true, ""},
		{"older key", `,"rope_scaling":{"type":"yarn"}`, true, ""},
		{"linear", `,"rope_scaling":{"rope_type":"linear","factor":2.0}`, false, ""},
		{"not an object", `,"rope_scaling":"yarn"`, true, `field "rope_scaling" is "yarn"; it must be an object`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseHF([]byte(base + tt.extra + "}"))
			if tt.problem != "" {
				if err == nil || !strings.Contains(err.Error(), tt.problem) {
					t.Fatalf("error %v, want %q", err, tt.problem)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.YaRN != tt.yarn || s.MoE == nil || !s.MoE.Bias {
				t.Errorf("YaRN %v, MoE %+v; want YaRN %v and biased experts", s.YaRN, s.MoE, tt.yarn)
			}
		})
	}
	s, err := ParseYAML([]byte("layers: 2\nhidden: 8\nheads: 2\nkv_heads: 1\nvocab: 10\nyarn: true\n" +
		"moe: {experts: 4, top_k: 2, expert_ffn_hidden: 16, bias: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !s.YaRN || !s.MoE.Bias {
		t.Errorf("parsed YaRN %v, MoE %+v", s.YaRN, s.MoE)
	}
}

// TestActClampPass: a model whose experts clamp their activation's input
// (MoE.SwiGLULimit) has an expert_clamp pass over he, the bf16 [E,C,2Fe]
// activation input, at the framework's bytes: Megatron-Core's eager
// clamps and cat (8 and 15 bytes: 4 and 7.5 elements, keeping a 2-byte
// clamped copy: a kept tensor of scale 2), or a fused activation that
// clamps as it reads (0 and 0, nothing kept); none without a limit.
// Without recomputation the clamped copy is kept; under moe_act it is
// re-made with the activation, whose input he stays kept.
func TestActClampPass(t *testing.T) {
	eager := Kernels{}
	eager.Passes[PassActClamp] = PassCost{FwdBytes: 8, BwdBytes: 15, SavedBytes: 2}
	for _, tt := range []struct {
		name       string
		limit      float64
		k          Kernels
		fwd, bwd   float64
		keptScale  float64 // 0: no kept copy
		wantClampd bool
	}{
		{"megatron eager", 7, eager, 4, 7.5, 2, true},
		{"fused", 7, Kernels{}, 0, 0, 0, true},
		{"no limit", 0, eager, 0, 0, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := biasMoESpec()
			s.MoE.SwiGLULimit = tt.limit
			p := MustProgram(s, ProgramOptions{Kernels: tt.k})
			o, ok := fwdOps(p)["expert_clamp"]
			if ok != tt.wantClampd {
				t.Fatalf("expert_clamp op present %v, want %v", ok, tt.wantClampd)
			}
			if !ok {
				return
			}
			if p.Tensors[o.A].Name != "he" || o.C != o.A || o.Bytes != tt.fwd || o.BwdBytes != tt.bwd {
				t.Errorf("expert_clamp over %s -> %s moves %v and %v elements, want he in place, %v and %v",
					p.Tensors[o.A].Name, p.Tensors[o.C].Name, o.Bytes, o.BwdBytes, tt.fwd, tt.bwd)
			}
			kept := slices.IndexFunc(p.Tensors, func(x Tensor) bool { return x.Name == "expert_clamp_kept" })
			if (kept >= 0) != (tt.keptScale > 0) || kept >= 0 && p.Tensors[kept].Scale != tt.keptScale {
				t.Fatalf("clamped copy index %d, want scale %v", kept, tt.keptScale)
			}
			if kept < 0 {
				return
			}
			moe := slices.IndexFunc(p.Kinds, func(k LayerKind) bool { return k.Name == "moe" })
			saved := func(pol Policy) (he, copy bool) {
				for _, x := range p.Saved(p.Kinds[moe].Blocks, pol) {
					he = he || p.Tensors[x].Name == "he"
					copy = copy || x == kept
				}
				return he, copy
			}
			if he, c := saved(Policy{}); !he || !c {
				t.Errorf("no recompute: he kept %v, clamped copy kept %v; want both", he, c)
			}
			if he, c := saved(policy(t, "moe_act")); !he || c {
				t.Errorf("moe_act: he kept %v, clamped copy kept %v; want he only", he, c)
			}
		})
	}
}

// TestSwiGLULimitRead: gpt-oss's config reads swiglu_limit (GptOssConfig's
// default 7.0 when absent), the YAML form moe.swiglu_limit; a negative
// limit is refused.
func TestSwiGLULimitRead(t *testing.T) {
	const base = `{"model_type":"gpt_oss","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":1,"head_dim":16,` +
		`"intermediate_size":32,"num_local_experts":4,"num_experts_per_tok":2,"vocab_size":100`
	for _, tt := range []struct {
		extra string
		want  float64
	}{{``, 7}, {`,"swiglu_limit":5.5`, 5.5}} {
		s, err := ParseHF([]byte(base + tt.extra + "}"))
		if err != nil {
			t.Fatal(err)
		}
		if s.MoE.SwiGLULimit != tt.want {
			t.Errorf("%q: swiglu_limit %v, want %v", tt.extra, s.MoE.SwiGLULimit, tt.want)
		}
	}
	const yaml = "layers: 2\nhidden: 8\nheads: 2\nkv_heads: 1\nvocab: 10\nmoe: {experts: 4, top_k: 2, expert_ffn_hidden: 16, swiglu_limit: %s}\n"
	s, err := ParseYAML([]byte(fmt.Sprintf(yaml, "7")))
	if err != nil || s.MoE.SwiGLULimit != 7 {
		t.Errorf("YAML swiglu_limit 7: %+v, %v", s.MoE, err)
	}
	if _, err := ParseYAML([]byte(fmt.Sprintf(yaml, "-1"))); err == nil || !strings.Contains(err.Error(), "moe.swiglu_limit is -1") {
		t.Errorf("YAML swiglu_limit -1: error %v, want moe.swiglu_limit is -1", err)
	}
}
