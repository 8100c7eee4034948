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

// TestFP4Defaults holds the NVFP4 matmul defaults: the fp8 fraction times
// the best fp4 GEMM's fraction over the fp8 MAMF's on B200 (cuBLAS at
// 8192³, 5,239 of 9,000 TFLOP/s, against 3,432.5 of 4,500 [MLE-ACC]):
// 0.69 x 0.5821/0.7628 = 0.527 -> 0.53 on B200, 0.65 x 0.5821/0.7628 =
// 0.496 -> 0.5 on GB200, with fp8's 62 us tail; no fp4 elsewhere. A large
// fp4 GEMM then runs 0.53 x 9,000 / (0.69 x 4,500) = 1.54 times an fp8 one
// on B200, not the datasheets' 2.
func TestFP4Defaults(t *testing.T) {
	for _, tt := range []struct {
		family   string
		fraction float64
		half     float64
	}{
		{"nvidia-blackwell", 0.53, 3.0e11},      // 0.53 x 9e15 x 62e-6 = 2.96e11
		{"nvidia-grace-blackwell", 0.5, 3.1e11}, // 0.5 x 10e15 x 62e-6 = 3.1e11
		{"nvidia-hopper", 0, 0},
		{"tpu-7x", 0, 0},
	} {
		e, ok := DefaultEfficiency(tt.family)
		if !ok {
			t.Fatalf("%s: no default efficiency", tt.family)
		}
		if e.MatmulFP4Fraction != tt.fraction || e.MatmulFP4HalfFLOPs != tt.half {
			t.Errorf("%s: fp4 fraction %g, half %g; want %g, %g", tt.family, e.MatmulFP4Fraction, e.MatmulFP4HalfFLOPs, tt.fraction, tt.half)
		}
	}
	b, _ := DefaultEfficiency("nvidia-blackwell")
	// 1 TFLOP: (1e12 + 3e11)/(0.53 x 9e15) = 272.5 us.
	if got, want := b.MatmulFP4Seconds(1e12, 9000e12), 1.3e12/(0.53*9000e12); math.Abs(got/want-1) > 1e-12 {
		t.Errorf("fp4 matmul of 1 TFLOP: %.4g s, want %.4g", got, want)
	}
	if got := b.MatmulFP4Seconds(0, 9000e12); got != 0 {
		t.Errorf("fp4 matmul of 0 FLOPs: %g s, want 0", got)
	}
	if r := b.MatmulFP4Fraction * 9000 / (b.MatmulFP8Fraction * 4500); math.Abs(r-1.536) > 0.001 {
		t.Errorf("B200 fp4/fp8 large-GEMM rate %.4f, want 1.536", r)
	}
}

// TestBlackwellAttentionSplit holds Blackwell's flash attention split into
// matmuls and exponentials: 0.2 ps a score forward (5 tera-exponentials/s)
// and 0.336 ps backward (the H100's 0.47/0.28), the matmul fractions set so
// that a head_dim-128 kernel keeps attentionRelative of the matmul fraction
// (B200 0.48 of 2,250 TFLOP/s: 512/(0.48 x 2.25e15) = 0.474 ps a score
// forward = 512/(0.83 x 2.25e15) + 0.2 ps to within the rounding), and a
// head_dim-64 kernel is slower than before (256/(0.48 x 2.25e15) = 0.237
// ps against 0.337).
func TestBlackwellAttentionSplit(t *testing.T) {
	for _, tt := range []struct {
		family       string
		peak         float64
		fwd, bwd     float64
		before       float64 // the former fraction, attentionRelative x the matmul fraction
		scoreF, scoB float64
	}{
		{"nvidia-blackwell", 2250e12, 0.83, 0.67, 0.48, 2e-13, 3.4e-13},
		{"nvidia-grace-blackwell", 2500e12, 0.8, 0.64, 0.45, 2e-13, 3.4e-13},
	} {
		e, _ := DefaultEfficiency(tt.family)
		if e.AttentionFwdFraction != tt.fwd || e.AttentionBwdFraction != tt.bwd || e.AttentionFwdScoreSeconds != tt.scoreF || e.AttentionBwdScoreSeconds != tt.scoB {
			t.Errorf("%s: fractions %g/%g, score %g/%g; want %g/%g, %g/%g", tt.family, e.AttentionFwdFraction, e.AttentionBwdFraction,
				e.AttentionFwdScoreSeconds, e.AttentionBwdScoreSeconds, tt.fwd, tt.bwd, tt.scoreF, tt.scoB)
		}
		const scores = 1e9
		for _, c := range []struct {
			backward bool
			perScore float64 // FLOPs a score at head_dim 128
		}{{false, 4 * 128}, {true, 10 * 128}} {
			got := e.AttentionSeconds(c.backward, c.perScore*scores, scores, 0, tt.peak)
			want := c.perScore * scores / (tt.before * tt.peak)
			if math.Abs(got/want-1) > 0.03 {
				t.Errorf("%s backward=%v: head_dim 128 %.4g s, want the former %.4g within 3%%", tt.family, c.backward, got, want)
			}
		}
		if got, old := e.AttentionSeconds(false, 256*scores, scores, 0, tt.peak), 256*scores/(tt.before*tt.peak); got < 1.3*old {
			t.Errorf("%s: head_dim 64 forward %.4g s, want at least 1.3 times the former %.4g (exp-bound)", tt.family, got, old)
		}
	}
}
