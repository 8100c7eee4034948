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

// TestBF16Moments: bf16 Adam moments beside fp32 master weights and
// gradients keep 4 + 4 + 2·2 bytes per parameter (DeepSeek-V3 §3.3.2),
// the optimizer state 4 + 4 = 8 instead of 12; the fused AdamW step reads
// the fp32 gradient (4), reads and writes the master weight and the
// moments (2·(4 + 4)), writes the bf16 copy the matmuls read (2) and the
// clipping norm reads the gradient (4): 26 bytes instead of 34. A
// Megatron-style bf16 gradient buffer's fp32 copy for Adam is not made
// (the precision-aware optimizer reads the gradients as they are).
func TestBF16Moments(t *testing.T) {
	megatron := MixedPrecision()
	megatron.Grad, megatron.MainGradCopy = 2, true
	for _, tc := range []struct {
		name                               string
		p                                  Precision
		master, grad, moments, state, step float64
	}{
		{"generic fp32 moments", MixedPrecision(), 4, 4, 8, 12, 4 + 2*(4+8) + 2 + 4},
		{"generic bf16 moments", MixedPrecision().BF16Moments(), 4, 4, 4, 8, 4 + 2*(4+4) + 2 + 4},
		{"megatron bf16 buffer, bf16 moments", megatron.BF16Moments(), 4, 2, 4, 8, 2 + 2*(4+4) + 2 + 2},
	} {
		p := tc.p
		if p.Master != tc.master || p.Grad != tc.grad || p.Moments != tc.moments || p.OptimizerBytes() != tc.state ||
			p.StepBytes(Optimizer{ClipPasses: 1}) != tc.step || p.MainGradCopy {
			t.Errorf("%s: master %g grad %g moments %g state %g step %g main-grad copy %v; want %g %g %g %g %g false", tc.name,
				p.Master, p.Grad, p.Moments, p.OptimizerBytes(), p.StepBytes(Optimizer{ClipPasses: 1}), p.MainGradCopy,
				tc.master, tc.grad, tc.moments, tc.state, tc.step)
		}
	}
}
