package memory

import (
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// TestOffloadStates pins the model states host offload leaves in HBM for
// the ZeRO paper's 7.5B model (Ψ parameters, 2 + 2 + 12 bytes each, 64
// chips; TestModelStatesZeRO): optimizer offload under ZeRO-1 keeps the
// weights and the full gradient buffer, 4Ψ (a quarter offloaded: plus
// 0.75·12Ψ/64); under ZeRO-2 the gradient partition goes with the
// optimizer state, 2Ψ; parameters and optimizer offloaded from FSDP
// shards leave no state (the gathered units are buffers); one chip
// without sharding holds two gathered layers and one layer's gradients,
// (2·2 + 2)·U for a layer of U = 12·2500² + 2·2500 parameters.
func TestOffloadStates(t *testing.T) {
	m := model.Spec{Name: "zero-7.5b", Layers: 100, Hidden: 2500, Heads: 20, FFN: model.GELU, SeqLen: 1024}
	m.Normalize()
	psi := float64(m.Counts().Total)
	unit := 12.0*2500*2500 + 2*2500 // one layer: the four projections, no biases, two norm weights
	for _, tt := range []struct {
		name string
		s    space.Strategy
		w    space.Workload
		want float64
	}{
		{"zero1 optimizer", space.Strategy{Degree: space.Degrees{space.DP: 64}, Zero: 1, Offload: space.OffloadOptimizer}, space.Workload{Batch: 64, SeqLen: 1024}, 4 * psi},
		{"zero1 optimizer 0.25", space.Strategy{Degree: space.Degrees{space.DP: 64}, Zero: 1, Offload: space.OffloadOptimizer, OffloadFraction: 0.25}, space.Workload{Batch: 64, SeqLen: 1024}, 4*psi + 0.75*12*psi/64},
		{"zero2 optimizer", space.Strategy{Degree: space.Degrees{space.DP: 64}, Zero: 2, Offload: space.OffloadOptimizer}, space.Workload{Batch: 64, SeqLen: 1024}, 2 * psi},
		{"fsdp params+optimizer", space.Strategy{Degree: space.Degrees{space.FSDP: 64}, Offload: space.OffloadParamsOptimizer}, space.Workload{Batch: 64, SeqLen: 1024}, 0},
		{"one chip params+optimizer", space.Strategy{Offload: space.OffloadParamsOptimizer}, space.Workload{Batch: 1, SeqLen: 1024}, 6 * unit},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := est(t, m, zeroPaper, tt.w, tt.s)
			got := b.ParamsBytes + b.GradsBytes + b.OptimizerBytes
			if !within(got, tt.want, 1e-9) {
				t.Errorf("model states = %.6g bytes, want %.6g", got, tt.want)
			}
		})
	}
}
