package profiles

import (
	"math"
	"testing"
)

// TestFP8FractionGB200 holds GB200's fp8 matmul fraction to B200's scaled
// by their measured fp8 MAMF fractions: the same die held to its power runs
// 1.05 times B200's fp8 ([MLE-ACC] 3,615.6 against 3,432.5 TFLOP/s), not the
// datasheets' 5,000/4,500 = 1.11. The fractions round to two figures, as
// every default does.
func TestFP8FractionGB200(t *testing.T) {
	tests := []struct {
		family   string
		fp8      float64
		t0Second float64
	}{
		{"nvidia-hopper", 0.69, 37e-6},          // measured: gemm-fp8.csv and the H200 sweep
		{"nvidia-blackwell", 0.69, 62e-6},       // the H100's fraction, assumed
		{"nvidia-grace-blackwell", 0.65, 62e-6}, // 0.69 x 0.72312/0.76278 = 0.654 -> 0.65
		{"amd-cdna3", 0.69, 62e-6},
		{"tpu-7x", 0.69, 62e-6},
	}
	for _, tt := range tests {
		e, ok := DefaultEfficiency(tt.family)
		if !ok {
			t.Fatalf("%s: no default efficiency", tt.family)
		}
		if math.Abs(e.MatmulFP8Fraction-tt.fp8) > 1e-9 {
			t.Errorf("%s: fp8 fraction %g, want %g", tt.family, e.MatmulFP8Fraction, tt.fp8)
		}
		peak := familyFP8Peak(tt.family)
		if t0 := e.MatmulFP8HalfFLOPs / (e.MatmulFP8Fraction * peak); math.Abs(t0/tt.t0Second-1) > 0.03 {
			t.Errorf("%s: fp8 t0 %.3g s, want %.3g", tt.family, t0, tt.t0Second)
		}
	}
	b, _ := DefaultEfficiency("nvidia-blackwell")
	gb, _ := DefaultEfficiency("nvidia-grace-blackwell")
	// GB200 over B200 on a large fp8 GEMM: 0.65 x 5000 / (0.69 x 4500) = 1.047
	// (the MAMFs' 1.053; Megatron-Bridge 25.11's Llama 3 8B FP8-CS on 8 GPUs
	// measured 31,508/30,624 = 1.029 end to end).
	ratio := gb.MatmulFP8Fraction * 5000e12 / (b.MatmulFP8Fraction * 4500e12)
	if math.Abs(ratio-1.047) > 0.001 {
		t.Errorf("GB200/B200 fp8 rate %.4f, want 1.047", ratio)
	}
}
