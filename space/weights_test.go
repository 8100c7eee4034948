package space

import (
	"strings"
	"testing"
)

// TestWeightsKey parses, prints and checks the weights key: bf16 is
// printed, fp32 (the default) is not, and a framework without bf16
// weights refuses them by name.
func TestWeightsKey(t *testing.T) {
	for _, tc := range []struct {
		in, spec string
		bf16     bool
	}{
		{"fsdp=8", "fsdp=8", false},
		{"fsdp=8,weights=fp32", "fsdp=8", false},
		{"fsdp=8,weights=BF16", "fsdp=8,weights=bf16", true},
		{"fsdp=8,weights=bf16-moments", "fsdp=8,weights=bf16-moments", false},
	} {
		s, err := Parse(tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if got := s.String(); got != tc.spec || s.BF16Weights() != tc.bf16 {
			t.Errorf("%s: spec %q, bf16 %v; want %q, %v", tc.in, got, s.BF16Weights(), tc.spec, tc.bf16)
		}
	}
	if _, err := Parse("weights=fp8"); err == nil || !strings.Contains(err.Error(), "weights") {
		t.Errorf("weights=fp8: error %v, want one naming weights", err)
	}
	s, _ := Parse("fsdp=8,weights=bf16")
	if err := (Limits{Framework: "megatron"}).Check(s, 32); err == nil || !strings.Contains(err.Error(), "cannot express weights=bf16") {
		t.Errorf("megatron: error %v, want a refusal of weights=bf16", err)
	}
	if err := (Limits{Framework: "maxtext", BF16Weights: true}).Check(s, 32); err != nil {
		t.Errorf("maxtext: %v", err)
	}
	// bf16 Adam moments: the precision-aware optimizer's frameworks run
	// them, the others refuse them by name.
	m, _ := Parse("dp=8,weights=bf16-moments")
	if !m.BF16Moments() || m.BF16Weights() {
		t.Errorf("weights=bf16-moments: BF16Moments %v, BF16Weights %v", m.BF16Moments(), m.BF16Weights())
	}
	if err := (Limits{Framework: "torchtitan"}).Check(m, 32); err == nil || !strings.Contains(err.Error(), "cannot express weights=bf16-moments") {
		t.Errorf("torchtitan: error %v, want a refusal of weights=bf16-moments", err)
	}
	if err := (Limits{Framework: "megatron", BF16Moments: true}).Check(m, 32); err != nil {
		t.Errorf("megatron: %v", err)
	}
}
