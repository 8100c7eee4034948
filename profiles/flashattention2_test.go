package profiles

import "testing"

// TestFlashAttention2Fraction checks the families' FlashAttention-2
// fractions: 0.59 on Hopper, as measured on an H200, the same taken as a bound on
// Blackwell, and none (FlashAttention-2 is the flash kernel) elsewhere; a
// cluster file overrides it.
func TestFlashAttention2Fraction(t *testing.T) {
	for _, tt := range []struct {
		family string
		want   float64
	}{
		{"nvidia-hopper", 0.59},
		{"nvidia-blackwell", 0.59},
		{"nvidia-grace-blackwell", 0.59},
		{"nvidia-ampere", 0},
		{"amd-cdna3", 0},
		{"tpu-v5p", 0},
	} {
		e, ok := DefaultEfficiency(tt.family)
		if !ok || e.FlashAttention2Fraction != tt.want {
			t.Errorf("%s: %v (known %v), want %v", tt.family, e.FlashAttention2Fraction, ok, tt.want)
		}
	}
	c, err := ParseYAML([]byte("chip: h100\naxes: [{name: gpu, size: 8, tier: nvlink}]\nefficiency: {flash_attention2_fraction: 0.4}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Efficiency.FlashAttention2Fraction != 0.4 || c.Efficiency.MatmulFraction != 0.705 {
		t.Errorf("override: FA2 %v, matmul %v; want 0.4 and the family's 0.705", c.Efficiency.FlashAttention2Fraction, c.Efficiency.MatmulFraction)
	}
}

// TestALiBiRate checks the one rule both the cost model and the plan's
// note read: FlashAttention-2's fraction only for an unfused ALiBi model
// on a chip that has it.
func TestALiBiRate(t *testing.T) {
	h, _ := DefaultEfficiency("nvidia-hopper")
	a, _ := DefaultEfficiency("nvidia-ampere")
	for _, tt := range []struct {
		e            Efficiency
		alibi, fused bool
		want         float64
	}{
		{h, true, false, 0.59},
		{h, true, true, 1},
		{h, false, false, 1},
		{a, true, false, 1},
	} {
		if got := tt.e.ALiBiRate(tt.alibi, tt.fused); got != tt.want {
			t.Errorf("ALiBiRate(alibi %v, fused %v) with FA2 fraction %v = %v, want %v", tt.alibi, tt.fused, tt.e.FlashAttention2Fraction, got, tt.want)
		}
	}
}
