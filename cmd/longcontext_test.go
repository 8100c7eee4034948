package cmd

import (
	"encoding/json"
	"math"
	"testing"
)

// TestLongContextHybridScaling explains a hybrid (Nemotron-H 8B: 24 Mamba-2,
// 24 MLP and 4 attention layers) and a same-size attention model (Llama 3
// 8B: 32 attention and 32 MLP layers) at 8K and at 128K tokens a sequence,
// the same 16.8M tokens a step and the same strategy, and checks that the
// hybrid's compute per token grows far less (docs/layers.md, "Long
// context"). Compute, not the step: at 8K the fixed cp=16 exposes
// communication that says nothing of the layers.
//
// The expected ratios come from the FLOP formulas, per token of training
// (3 passes), h = 4096 and the attention core's width 4096 in both:
//
//   - weights: 6 per parameter (docs/formulas.md §1.2), the output layer
//     counted, the input embedding not. Llama 3 8B: 32 x (2·4096² +
//     2·4096·1024 + 3·4096·14336 + 2·4096) + 4096 + 4096·128256 =
//     7,504,924,672, 45.03 GFLOP. Nemotron-H 8B: 7,027,110,912 without the
//     embeddings (TestMamba2MixerParams) + 4096·131072 = 7,563,981,824,
//     45.38 GFLOP.
//   - causal attention core: QKᵀ and PV, 2·h FLOPs each per key, s/2 keys
//     on average: 6·s·h per layer (docs/formulas.md §1.2, Megatron's causal
//     convention). Llama at 8192: 32·6·8192·4096 = 6.44 GFLOP, at 131072
//     16 x that, 103.08; Nemotron-H's 4 layers 0.81 and 12.88.
//   - Mamba-2 scans: 3 x 5,373,952 per layer (TestSSMScanFLOPs), the same
//     per token at any length past the chunk: 24 layers 0.39 GFLOP.
//
// Llama: (45.03 + 103.08) / (45.03 + 6.44) = 2.878; Nemotron-H: (45.38 +
// 12.88 + 0.39) / (45.38 + 0.81 + 0.39) = 1.259. The planner's ratio lies
// above the FLOP ratio, by less than 35%: the flash backward re-makes the
// scores (5 matmuls against the forward's 2, docs/formulas.md §1.2) and the
// attention kernels run below the matmul rate.
func TestLongContextHybridScaling(t *testing.T) {
	clearEnv(t)
	type times struct {
		ComputeS   float64 `json:"compute_s"`
		AttentionS float64 `json:"attention_s"`
		ScanS      float64 `json:"scan_s"`
	}
	explain := func(model, seq string) times {
		t.Helper()
		stdout, stderr, code := run(t, "explain", "--model", model, "--cluster", "v5p-256", "--seq", seq,
			"--batch-tokens", "16777216", "--strategy", "dp=8,zero=2,cp=16", "--format", "json")
		if code != ExitOK {
			t.Fatalf("%s at %s: exit %d: %s", model, seq, code, stderr)
		}
		var r struct {
			Time times `json:"time"`
		}
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatalf("%s at %s: %v", model, seq, err)
		}
		return r.Time
	}
	tests := []struct {
		model         string
		wantFLOPRatio float64 // compute per token, 128K over 8K, by the FLOP formulas above
		scans         bool
	}{
		{"nemotron-h-8b", (45.38 + 12.88 + 0.39) / (45.38 + 0.81 + 0.39), true},
		{"llama3-8b", (45.03 + 103.08) / (45.03 + 6.44), false},
	}
	growth := map[string]float64{}
	for _, tt := range tests {
		short, long := explain(tt.model, "8192"), explain(tt.model, "131072")
		// The attention core per token is linear in the sequence: 16 x.
		if r := long.AttentionS / short.AttentionS; math.Abs(r/16-1) > 0.04 {
			t.Errorf("%s: attention kernels %.3g s at 8K, %.3g s at 128K: %.2fx, want 16x", tt.model, short.AttentionS, long.AttentionS, r)
		}
		// The scans per token do not grow with the sequence.
		if tt.scans {
			if r := long.ScanS / short.ScanS; math.Abs(r-1) > 0.05 {
				t.Errorf("%s: scans %.3g s at 8K, %.3g s at 128K: %.2fx, want 1x", tt.model, short.ScanS, long.ScanS, r)
			}
		} else if short.ScanS != 0 || long.ScanS != 0 {
			t.Errorf("%s: scans %g s and %g s, want none", tt.model, short.ScanS, long.ScanS)
		}
		r := long.ComputeS / short.ComputeS
		if r < tt.wantFLOPRatio || r > 1.35*tt.wantFLOPRatio {
			t.Errorf("%s: compute %.3g s at 8K, %.3g s at 128K: %.3fx, want between the FLOP ratio %.3fx and 1.35 x it",
				tt.model, short.ComputeS, long.ComputeS, r, tt.wantFLOPRatio)
		}
		growth[tt.model] = r - 1
	}
	// The hybrid's growth is under a quarter of the attention model's
	// (FLOP formulas: 0.259 against 1.878, 14%).
	if g, a := growth["nemotron-h-8b"], growth["llama3-8b"]; !(g < 0.25*a) {
		t.Errorf("compute growth from 8K to 128K: nemotron-h-8b %.3f, llama3-8b %.3f, want the hybrid's under a quarter", g, a)
	}
}
