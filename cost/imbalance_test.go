package cost

import (
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// TestImbalanceExpertMatmuls checks moe.imbalance (model.MoE.Load) against
// values worked by hand: Mixtral 8x7B (32 layers, 8 experts, top 2) on one
// node of 8 H100 with dp=8, batch 64 of 4,096 tokens, 8 micro-batches. With
// ep=8 each chip holds one expert, which receives 8·4096·2/8 = 8,192
// tokens a micro-batch: its gate-and-up matmul is 2·8192·4096·28672 =
// 1.924 TFLOP and its down projection 0.962 TFLOP, each run forward, for
// the input gradient and for the weight gradient, at
// t(f) = (f + MatmulHalfFLOPs)/(MatmulFraction·sustained·peak). The busiest
// rank at imbalance 1.5 runs half as long again: 0.5·32·8·3·(t(1.924e12) +
// t(0.962e12)) more matmul seconds. Without expert parallelism (ep=1) one
// chip runs every expert's tokens, and the imbalance moves nothing; nor
// does it under a capacity factor above 1, whose padding sets the load.
func TestImbalanceExpertMatmuls(t *testing.T) {
	c, err := profiles.Parse("h100-8")
	if err != nil {
		t.Fatal(err)
	}
	w := space.Workload{Batch: 64, SeqLen: 4096}
	eff := c.Efficiency
	tm := func(f float64) float64 {
		return (f + eff.MatmulHalfFLOPs) / (eff.MatmulFraction * eff.SustainedFraction * c.Chip.PeakBF16FLOPs)
	}
	up, down := 2*8192*4096*28672.0, 2*8192*14336*4096.0
	for _, tc := range []struct {
		spec     string
		capacity float64
		extraS   float64
	}{
		{"dp=8,zero=1,ep=8", 1, 0.5 * 32 * 8 * 3 * (tm(up) + tm(down))},
		{"dp=8,zero=1", 1, 0},
		{"dp=8,zero=1,ep=8", 1.25, 0},
	} {
		s := parseStrategy(t, tc.spec)
		placed, err := s.Place(c)
		if err != nil {
			t.Fatal(err)
		}
		matmul := func(imbalance float64) float64 {
			t.Helper()
			m, _ := model.Preset("mixtral-8x7b")
			moe := *m.MoE
			moe.Imbalance, moe.CapacityFactor = imbalance, tc.capacity
			m.MoE = &moe
			est, err := NewModel(program(m, model.ProgramOptions{})).Evaluate(c, w, placed, Options{})
			if err != nil {
				t.Fatal(err)
			}
			return est.MatmulSeconds
		}
		if got := matmul(1.5) - matmul(1); !near(got, tc.extraS, 1e-9) && !(tc.extraS == 0 && got == 0) {
			t.Errorf("%s, capacity factor %g: imbalance 1.5 adds %.6g s of matmul, want %.6g s", tc.spec, tc.capacity, got, tc.extraS)
		}
	}
}
