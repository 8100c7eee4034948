package model

import "testing"

// TestBF16Weights: bf16 weights keep 2 + 2 + 4 bytes per parameter
// (parameter, gradient, two bf16 moments), make no cast copy, and the
// fused AdamW step reads the parameter, gradient and moments and writes
// the parameter and moments back: 2 + 2·(2 + 4) = 14 bytes, plus the
// clipping norm's read of the gradient, 2.
func TestBF16Weights(t *testing.T) {
	mixed := MixedPrecision()
	mixed.WeightCopies, mixed.TransientGrads = true, true
	for _, tc := range []struct {
		name          string
		p             Precision
		params, grads float64
		moments, step float64
		casts         bool
	}{
		{"maxtext fp32", mixed, 4, 4, 8, 4 + 2*(4+8) + 4, true},
		{"maxtext bf16", mixed.BF16Weights(), 2, 2, 4, 2 + 2*(2+4) + 2, false},
		{"megatron bf16", MixedPrecision().BF16Weights(), 2, 2, 4, 2 + 2*(2+4) + 2, false},
	} {
		if tc.p.Master != tc.params || tc.p.Grad != tc.grads || tc.p.Moments != tc.moments ||
			tc.p.StepBytes(Optimizer{ClipPasses: 1}) != tc.step || tc.p.Casts() != tc.casts {
			t.Errorf("%s: master %g grad %g moments %g step %g casts %v; want %g %g %g %g %v", tc.name,
				tc.p.Master, tc.p.Grad, tc.p.Moments, tc.p.StepBytes(Optimizer{ClipPasses: 1}), tc.p.Casts(),
				tc.params, tc.grads, tc.moments, tc.step, tc.casts)
		}
	}
}
