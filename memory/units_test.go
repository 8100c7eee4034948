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
		if got := smallFSDPBuffer(t, model.ProgramOptions{Precision: pr}, s); !within(got, tt.want, 1e-9) {
			t.Errorf("%s: FSDP buffer %.0f bytes, want %.0f", tt.name, got, tt.want)
		}
	}
}

// smallFSDPBuffer returns the FSDP buffer term of TestTensorUnits' model
// (h = 1024, 8 heads of 128, F = 4096, vocab 1000, 2 layers) under o with
// strategy s on 8 chips, for a global batch of 8 sequences of 1,024
// tokens; -1 when the breakdown has none.
func smallFSDPBuffer(t *testing.T, o model.ProgramOptions, s space.Strategy) float64 {
	t.Helper()
	m := model.Spec{Name: "small", Layers: 2, Hidden: 1024, Heads: 8, KVHeads: 8, FFNHidden: 4096, FFN: model.SwiGLU, Vocab: 1000, SeqLen: 1024}
	m.Normalize()
	c := profiles.Cluster{Name: "v5p-16", Chip: profiles.Chip{Name: "v5p", PeakBF16FLOPs: 459e12, HBMBytes: 95e9},
		Axes: []profiles.Axis{{Name: "x", Size: 8, Tier: profiles.ICI}}}
	p, err := model.NewProgram(m, o)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := NewModel(p).Parts(c, space.Workload{Batch: 8, SeqLen: 1024}, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, pt := range parts {
		if pt.Name == "FSDP gathered weights and gradients" {
			return pt.Bytes
		}
	}
	return -1
}

// TestPipelineUnsharded works the FSDP buffer by hand for TestTensorUnits'
// model (a layer gathers 16,779,264 parameters, the embedding 1,024,000)
// in mixed precision (2-byte weights, 4-byte gradients):
//   - fsdp=4, pp=2: two gathered units and one unit's gradients, 8 bytes
//     a parameter of one layer, 134,234,112 bytes;
//   - the same under model.Precision.PipelineUnsharded (torchtitan's FSDP2
//     under pipeline parallelism): the first stage, busiest with its two
//     micro-batches in flight, keeps its layer and the embedding gathered
//     and their unsharded gradients, 6 bytes a parameter of 17,803,264,
//     and a layer's fresh 2-byte gradient: 140,378,112 bytes;
//   - cp=8 with the weights sharded over cp (model.ProgramOptions.WeightsOverCP,
//     torchtitan's FSDP mesh dp_shard x cp) and no fsdp: FSDP gathers the
//     whole layer over cp, as fsdp=4 does over fsdp: 134,234,112 bytes.
func TestPipelineUnsharded(t *testing.T) {
	const layer, embed = 16779264.0, 1024000.0
	tests := []struct {
		name       string
		unsharded  bool
		overCP     bool
		s          space.Strategy
		wantBuffer float64
	}{
		{"fsdp pp", false, false, space.Strategy{Degree: space.Degrees{space.FSDP: 4, space.PP: 2}}, (2*2 + 4) * layer},
		{"fsdp pp unsharded", true, false, space.Strategy{Degree: space.Degrees{space.FSDP: 4, space.PP: 2}}, (2+4)*(layer+embed) + 2*layer},
		{"fsdp alone unsharded", true, false, space.Strategy{Degree: space.Degrees{space.FSDP: 8}}, (2*2 + 4) * layer},
		{"cp over weights", false, true, space.Strategy{Degree: space.Degrees{space.CP: 8}}, (2*2 + 4) * layer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr := model.MixedPrecision()
			pr.PipelineUnsharded = tt.unsharded
			got := smallFSDPBuffer(t, model.ProgramOptions{Precision: pr, WeightsOverCP: tt.overCP}, strat(tt.s))
			if !within(got, tt.wantBuffer, 1e-9) {
				t.Errorf("FSDP buffer %.0f bytes, want %.0f", got, tt.wantBuffer)
			}
		})
	}
}
