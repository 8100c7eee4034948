package model

import (
	"math"
	"testing"
)

// TestSelectiveOpShares pins torchtitan's per-op selective AC on Llama 3
// 8B (q 4096, kv 1024, SwiGLU): of the fused q, k, v projection it re-runs
// wk's columns, kv/(q+2kv) = 1024/6144 = 1/6, and of the gate and up
// projection w3's half; no other op re-runs in part, nor the output
// layer's projection; a GELU MLP has no up half.
func TestSelectiveOpShares(t *testing.T) {
	l8, _ := Preset("llama3-8b")
	p, err := NewProgram(l8, ProgramOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pol := policy(t, RecomputeSelectiveOp)
	want := map[string]float64{"qkv": 1.0 / 6, "ffn_in": 0.5, "out": 0, "ffn_out": 0, "logits": 0}
	got := map[string]float64{}
	for b := range p.Blocks {
		for i := range p.Blocks[b].Fwd {
			o := &p.Blocks[b].Fwd[i]
			if _, ok := want[o.Name]; ok {
				got[o.Name] = max(got[o.Name], p.RerunShare(pol, b, o))
			}
			if p.RerunShare(policy(t, RecomputeFull), b, o) != 0 {
				t.Errorf("full re-runs a share of %s", o.Name)
			}
		}
	}
	for name, w := range want {
		if math.Abs(got[name]-w) > 1e-12 {
			t.Errorf("%s: share %v, want %v", name, got[name], w)
		}
	}
	g := gpt3Spec()
	pg, err := NewProgram(g, ProgramOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for b := range pg.Blocks {
		for i := range pg.Blocks[b].Fwd {
			o := &pg.Blocks[b].Fwd[i]
			if sh := pg.RerunShare(pol, b, o); o.Name == "ffn_in" && sh != 0 {
				t.Errorf("GELU ffn_in: share %v, want 0", sh)
			}
		}
	}
}

// TestSelectiveOpSaved pins what a Llama 3 8B layer keeps under
// selective_op, per sequence of s tokens with bf16 activations and the
// residual stream in R bytes: the layer input x (h·R), the q and v columns
// of the fused projection ((q+kv)·2, wk's re-run), the attention output o
// (q·2) and its fp32 log-sum-exp (heads·4), the output projection's output
// y that the residual add re-makes the MLP's input from (h·2), and w1's
// half of the gate and up output (F·2, w3's half re-run); the norms'
// outputs, q, k and v after the rotary embedding and the SwiGLU output are
// re-made. Without fp8 copies the same bytes hold under an fp8 recipe less
// nothing: the fp8 copies are re-quantised from the re-made inputs.
func TestSelectiveOpSaved(t *testing.T) {
	l8, _ := Preset("llama3-8b")
	const s, h, q, kv, f, heads = 8192.0, 4096.0, 4096.0, 1024.0, 14336.0, 32.0
	r, _ := LookupFP8Recipe(FP8Tensorwise)
	for _, c := range []struct {
		name string
		o    ProgramOptions
	}{{"bf16", ProgramOptions{}}, {"fp8", ProgramOptions{FP8: &r}}} {
		p, err := NewProgram(l8, c.o)
		if err != nil {
			t.Fatal(err)
		}
		res := p.Options.Precision.Residual
		want := s * (h*res + (q+kv)*2 + q*2 + heads*4 + h*2 + f*2)
		if got := savedBytes(p, 0, s, policy(t, RecomputeSelectiveOp)); math.Abs(got-want) > 1e-9*want {
			t.Errorf("%s: saved %.6g bytes, want %.6g", c.name, got, want)
		}
	}
}
