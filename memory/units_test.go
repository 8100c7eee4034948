package memory

import (
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// TestTensorUnits works the FSDP buffer by hand for a small SwiGLU model
// (h = 1024, 8 heads of 128, F = 4096, vocab 1000) on 8 chips with fsdp=8:
// two gathered bf16 units and one unit of fp32 gradients, 8 bytes per
// parameter of the unit. A layer gathers q, k, v (3h² = 3,145,728), the
// output projection (h² = 1,048,576), the fused gate and up projection
// (2hF = 8,388,608), the down projection (hF = 4,194,304) and two norms
// (2h): 16,779,264 parameters, 134,234,112 bytes. Gathering one tensor at
// a time (XLA, Precision.TensorUnits) the unit is the largest tensor, the
// gate and up projection: 67,108,864 bytes.
func TestTensorUnits(t *testing.T) {
	m := model.Spec{Name: "small", Layers: 2, Hidden: 1024, Heads: 8, KVHeads: 8, FFNHidden: 4096, FFN: model.SwiGLU, Vocab: 1000, SeqLen: 1024}
	m.Normalize()
	c := profiles.Cluster{Name: "v5p-16", Chip: profiles.Chip{Name: "v5p", PeakBF16FLOPs: 459e12, HBMBytes: 95e9},
		Axes: []profiles.Axis{{Name: "x", Size: 8, Tier: profiles.ICI}}}
	w := space.Workload{Batch: 8, SeqLen: 1024}
	s := strat(space.Strategy{Degree: space.Degrees{space.FSDP: 8}})
	tests := []struct {
		name  string
		units bool
		want  float64
	}{
		{"layer units", false, 8 * 16779264},
		{"tensor units", true, 8 * 8388608},
	}
	for _, tt := range tests {
		pr := model.MixedPrecision()
		pr.TensorUnits = tt.units
		p, err := model.NewProgram(m, model.ProgramOptions{Precision: pr})
		if err != nil {
			t.Fatal(err)
		}
		parts, err := NewModel(p).Parts(c, w, s)
		if err != nil {
			t.Fatal(err)
		}
		got := -1.0
		for _, pt := range parts {
			if pt.Name == "FSDP gathered weights and gradients" {
				got = pt.Bytes
			}
		}
		if !within(got, tt.want, 1e-9) {
			t.Errorf("%s: FSDP buffer %.0f bytes, want %.0f", tt.name, got, tt.want)
		}
	}
}
