package cost

import (
	"testing"

	"github.com/meshplan/meshplan/space"
)

// TestMatmulTails: on one H100, Llama 3 8B's step of one 8,192-token
// sequence runs per layer four weight matmuls forward (the fused q, k, v
// projection, the output projection, the fused gate and up projection and
// the down projection) and eight backward (input and weight gradients),
// 32 x 12 = 384 calls, and the output layer three (the embedding's lookup
// and its gradient are no matmul): 387 calls, each with the H100's per-call
// tail t₀ = MatmulHalfFLOPs/(MatmulFraction·peak), every one compute-bound.
// The tails are a part of the matmuls' time, and under full recompute the
// re-run forward adds its 4 x 32 + 0 calls (the output layer is not re-run).
// With the layers captured as CUDA graphs (Comm.GraphedLayers) or the step
// one graph (Comm.GraphedStep) every call pays the back-to-back tail, 7 µs
// in bf16 (streamTailSeconds), and the matmuls are shorter by the
// difference.
func TestMatmulTails(t *testing.T) {
	m, c := presets(t, "llama3-8b", "h100-1")
	w := space.Workload{Batch: 1, SeqLen: 8192}
	eff := c.Efficiency
	t0 := eff.MatmulHalfFLOPs / (eff.MatmulFraction * c.Chip.PeakBF16FLOPs)
	for _, tc := range []struct {
		spec  string
		calls float64
	}{
		{"recompute=none", 387},
		{"recompute=full", 387 + 4*32},
	} {
		est := placedEstimate(t, m, c, w, parseStrategy(t, tc.spec))
		if want := tc.calls * t0; !near(est.MatmulTailSeconds, want, 1e-9) {
			t.Errorf("%s: tails %.6g s, want %.0f calls x %.4g s = %.6g s", tc.spec, est.MatmulTailSeconds, tc.calls, t0, want)
		}
		if est.MatmulTailSeconds >= est.MatmulSeconds {
			t.Errorf("%s: tails %.4g s not a part of the matmuls' %.4g s", tc.spec, est.MatmulTailSeconds, est.MatmulSeconds)
		}
		placed, err := parseStrategy(t, tc.spec).Place(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, comm := range []Comm{{GraphedLayers: true}, {GraphedStep: true}} {
			g, err := evaluate(m, c, w, placed, Options{Comm: comm})
			if err != nil {
				t.Fatal(err)
			}
			if want := tc.calls * 7e-6; !near(g.MatmulTailSeconds, want, 1e-9) {
				t.Errorf("%s %+v: tails %.6g s, want %.0f calls x 7 µs = %.6g s", tc.spec, comm, g.MatmulTailSeconds, tc.calls, want)
			}
			if got, want := est.MatmulSeconds-g.MatmulSeconds, tc.calls*(t0-7e-6); !near(got, want, 1e-6) {
				t.Errorf("%s %+v: matmuls %.6g s shorter, want %.6g s", tc.spec, comm, got, want)
			}
		}
	}
}
