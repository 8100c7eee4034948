package profiles

import "testing"

func TestSmallestStepTimeUncertainty(t *testing.T) {
	got := SmallestStepTimeUncertainty()
	for _, tt := range []struct {
		family string
		chips  int
	}{{"nvidia-ampere", 64}, {"nvidia-hopper", 1}, {"nvidia-hopper", 256}, {"tpu-v5e", 64}} {
		u, ok := StepTimeUncertainty(tt.family, tt.chips)
		if !ok || u.Fraction < got.Fraction {
			t.Errorf("%s on %d chips: %g, %v; want a measured band of at least the smallest, %g", tt.family, tt.chips, u.Fraction, ok, got.Fraction)
		}
	}
	if got.Fraction != 0.042 || got.Basis == "" {
		t.Errorf("SmallestStepTimeUncertainty() = %+v; want the single-H100 steps' 4.2%%", got)
	}
}
