package model

import (
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
