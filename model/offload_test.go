package model

import (
	"math"
	"testing"
)

// TestOffloadLists pins what MaxText's custom offload policies keep and
// where, for a small Llama-style layer by hand: s = 1024 tokens, h = 512,
// 8 query heads and 2 key/value heads of 64, bf16. The layer input is
// 2·s·h = 1,048,576 bytes; the fused q, k, v projection's output
// 2·s·(8+2+2)·64 = 1,572,864; the output projection's 2·s·h = 1,048,576.
// Everything else re-runs, so the offloaded bytes are all the layer keeps.
func TestOffloadLists(t *testing.T) {
	spec := Spec{Name: "small", Layers: 2, Hidden: 512, Heads: 8, KVHeads: 2, FFNHidden: 1536, FFN: SwiGLU, Vocab: 1000, SeqLen: 1024}
	spec.Normalize()
	p, err := NewProgram(spec, ProgramOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const s = 1024.0
	in, qkv, out := 2*s*512, 2*s*12*64, 2*s*512
	tests := []struct {
		policy    string
		offloaded float64 // bytes in host memory per layer
	}{
		{RecomputeOffloadInput, in},
		{RecomputeOffloadInputQKV, in + qkv},
		{RecomputeOffloadInputQKVO, in + qkv + out},
	}
	sz := p.Sizes(1, s)
	for _, tt := range tests {
		pol := policy(t, tt.policy)
		blocks := p.Kinds[0].Blocks
		saved := p.Saved(blocks, pol)
		off := 0.0
		for _, x := range p.Offloaded(blocks, pol, saved) {
			off += p.FullBytes(x, &sz)
		}
		if math.Abs(off-tt.offloaded) > 1e-9*tt.offloaded {
			t.Errorf("%s: offloaded %.0f bytes, want %.0f", tt.policy, off, tt.offloaded)
		}
		if kept := savedBytes(p, 0, s, pol); kept < off || kept > off*1.01 {
			t.Errorf("%s: saves %.0f bytes, want the %.0f offloaded and at most 1%% more (the kernel's statistics)", tt.policy, kept, off)
		}
	}
}
