package model

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestModulePolicyBytes pins what a Llama 3 70B layer with fp8 projections
// keeps under Megatron-Core's --recompute-modules lists, per sequence of s
// tokens: selective (core_attn) keeps s·(6h + 3q + 4kv + 5F)
// (TestFP8Saved); the mlp module re-runs the dense MLP from the residual
// stream, so of the MLP's x2 (2h), xn2 in fp8 (h), the SwiGLU input (4F)
// and its fp8 output (F) only x2 is kept: s·(5h + 3q + 4kv). layernorm
// re-runs nothing there (both norms are fused into linear layers).
func TestModulePolicyBytes(t *testing.T) {
	l70, _ := Preset("llama3-70b")
	r, _ := LookupFP8Recipe(FP8Delayed) // Megatron-Core's recipe
	p, err := NewProgram(l70, ProgramOptions{FP8: &r})
	if err != nil {
		t.Fatal(err)
	}
	const s, h, q, kv, f = 8192.0, 8192.0, 8192.0, 1024.0, 28672.0
	selective := s * (6*h + 3*q + 4*kv + 5*f)
	for _, c := range []struct {
		name string
		want float64
	}{
		{"core_attn", selective},
		{"core_attn+mlp", s * (5*h + 3*q + 4*kv)},
		{"mlp+core_attn", s * (5*h + 3*q + 4*kv)},
		{"mlp", savedBytes(p, 0, s, policy(t, RecomputeNone)) - s*(3*h+5*f) + s*2*h},
	} {
		got := savedBytes(p, 0, s, policy(t, c.name))
		if math.Abs(got-c.want) > 1e-9*c.want {
			t.Errorf("%s: saved %.6g bytes, want %.6g", c.name, got, c.want)
		}
	}
	for name, want := range map[string]string{
		"layernorm":           RecomputeNone,
		"core_attn+layernorm": "core_attn",
		"moe_act+mlp":         "mlp",
		"selective":           "selective",
	} {
		if got := EffectivePolicyName(p, name); got != want {
			t.Errorf("EffectivePolicyName(%q) = %q, want %q", name, got, want)
		}
	}
	if IsModuleList("core_attn+bogus") || IsModuleList("") || !IsModuleList("moe+layernorm") {
		t.Error("IsModuleList accepts a list with an unknown module, or refuses a known one")
	}
}

// TestModulePolicyMoE checks the MoE and MLA modules on DeepSeek-V3's
// layers (bf16): moe_act keeps the experts' activation input and drops its
// output; layernorm drops the norm outputs of MLA's input norm and of the
// norm before the experts and keeps their inputs; moe keeps only the
// norm's output before the experts; mla_up_proj drops q, k and v and keeps
// the latents the up-projections read.
func TestModulePolicyMoE(t *testing.T) {
	ds, _ := Preset("deepseek-v3")
	p, err := NewProgram(ds, ProgramOptions{})
	if err != nil {
		t.Fatal(err)
	}
	moe := slices.IndexFunc(p.Kinds, func(k LayerKind) bool { return k.Name == "moe" })
	if moe < 0 {
		t.Fatal("no moe layer kind")
	}
	names := func(pol string) []string {
		var out []string
		for _, x := range p.Saved(p.Kinds[moe].Blocks, policy(t, pol)) {
			out = append(out, p.Tensors[x].Name)
		}
		return out
	}
	for _, c := range []struct {
		pol        string
		keep, drop []string
	}{
		{"moe_act", []string{"he", "xe"}, []string{"ae"}},
		{"layernorm", []string{"x", "x2", "cq", "ckv"}, []string{"xn", "xn2"}},
		{"moe", []string{"xn2", "x2"}, []string{"xe", "he", "ae", "router_probs", "yk", "hs", "as"}},
		{"mla_up_proj", []string{"cqn", "ckvn", "o"}, []string{"q", "k", "v"}},
		{"shared_experts", []string{"xn2", "he"}, []string{"hs", "as"}},
	} {
		got := names(c.pol)
		for _, k := range c.keep {
			if !slices.Contains(got, k) {
				t.Errorf("%s: %s not kept (kept %v)", c.pol, k, got)
			}
		}
		for _, d := range c.drop {
			if slices.Contains(got, d) {
				t.Errorf("%s: %s kept (kept %v)", c.pol, d, got)
			}
		}
	}
}

func TestCheckModules(t *testing.T) {
	dense := Spec{Name: "dense"}
	moe := Spec{Name: "moe", MoE: &MoE{Experts: 8, TopK: 2}}
	shared := Spec{Name: "shared", MoE: &MoE{Experts: 8, TopK: 2, SharedExperts: 1}, MLA: &MLA{QLoRARank: 1536}}
	tests := []struct {
		policy string
		m      *Spec
		bad    string // "" for nil
	}{
		{"core_attn+mlp", &dense, ""},
		{"full", &dense, ""},
		{"moe", &dense, "moe re-runs expert layers"},
		{"layernorm+moe_act", &dense, "moe_act re-runs expert layers"},
		{"moe_act", &moe, ""},
		{"shared_experts", &moe, "shared experts"},
		{"mla_up_proj", &moe, "multi-latent attention"},
		{"mla_up_proj+shared_experts", &shared, ""},
	}
	for _, tt := range tests {
		err := CheckModules(tt.policy, tt.m)
		if (err == nil) != (tt.bad == "") || err != nil && !strings.Contains(err.Error(), tt.bad) {
			t.Errorf("CheckModules(%q, %s) = %v, want %q", tt.policy, tt.m.Name, err, tt.bad)
		}
	}
}

// TestApplicableModules checks that a model's module lists name only the
// modules it has: mla_up_proj's ops (rope, q_proj) are in every rotary
// attention block, yet only a multi-latent-attention model has the module.
func TestApplicableModules(t *testing.T) {
	for _, tt := range []struct {
		preset string
		mla    bool
	}{{"llama3-70b", false}, {"deepseek-v3", true}} {
		s, _ := Preset(tt.preset)
		p, err := NewProgram(s, ProgramOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(applicableModules(p), ModuleMLAUpProj); got != tt.mla {
			t.Errorf("%s: mla_up_proj applicable %v, want %v (modules %v)", tt.preset, got, tt.mla, applicableModules(p))
		}
	}
}
