package cost

import (
	"math"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// TestALiBiAttentionRate checks the attention of an ALiBi model: on a
// Hopper cluster a framework without ALiBi in a fused kernel runs
// FlashAttention-2, 1/0.59 of the flash kernel's time
// (profiles.HopperFlashAttention2Fraction); with ALiBiFused (Transformer
// Engine), on an A100 (FlashAttention-2 is the flash kernel) and for a
// rotary model the attention time does not change.
func TestALiBiAttentionRate(t *testing.T) {
	w := space.Workload{Batch: 8, SeqLen: 8192}
	s := parseStrategy(t, "fsdp=8")
	tests := []struct {
		model, cluster string
		fused          bool
		want           float64 // attention seconds over the same with ALiBi off
	}{
		{"mpt-7b", "h100-8", false, 1 / 0.59},
		{"mpt-7b", "h100-8", true, 1},
		{"mpt-7b", "a100-8", false, 1},
		{"mpt-7b", "b200-8", false, 1 / 0.59},
	}
	for _, tt := range tests {
		m, c := presets(t, tt.model, tt.cluster)
		rotary := m
		rotary.ALiBi = false
		k := model.FusedKernels()
		k.ALiBiFused = tt.fused
		o := model.ProgramOptions{Kernels: k}
		with, err := Evaluate(program(m, o), c, w, s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		without, err := Evaluate(program(rotary, o), c, w, s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := with.AttentionSeconds / without.AttentionSeconds; math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s on %s (fused %v): attention %.4g s over %.4g s = %.4f, want %.4f",
				tt.model, tt.cluster, tt.fused, with.AttentionSeconds, without.AttentionSeconds, got, tt.want)
		}
	}
}
