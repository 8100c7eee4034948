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
// (2·2 + 2)·U for a layer of U = 12·2500² + 2·2500 parameters. What
// leaves HBM is in host memory (Breakdown.HostStatesBytes): the optimizer
// state's share, 12Ψ/64 (a quarter of it at 0.25), with the gradient
// partition under ZeRO-2, 14Ψ/64, everything from FSDP shards, 16Ψ/64, and
// all 16Ψ from one chip.
func TestOffloadStates(t *testing.T) {
	m := model.Spec{Name: "zero-7.5b", Layers: 100, Hidden: 2500, Heads: 20, FFN: model.GELU, SeqLen: 1024}
	m.Normalize()
	psi := float64(m.Counts().Total)
	unit := 12.0*2500*2500 + 2*2500 // one layer: the four projections, no biases, two norm weights
	for _, tt := range []struct {
		name       string
		s          space.Strategy
		w          space.Workload
		want, host float64
	}{
		{"zero1 optimizer", space.Strategy{Degree: space.Degrees{space.DP: 64}, Zero: 1, Offload: space.OffloadOptimizer}, space.Workload{Batch: 64, SeqLen: 1024}, 4 * psi, 12 * psi / 64},
		{"zero1 optimizer 0.25", space.Strategy{Degree: space.Degrees{space.DP: 64}, Zero: 1, Offload: space.OffloadOptimizer, OffloadFraction: 0.25}, space.Workload{Batch: 64, SeqLen: 1024}, 4*psi + 0.75*12*psi/64, 0.25 * 12 * psi / 64},
		{"zero2 optimizer", space.Strategy{Degree: space.Degrees{space.DP: 64}, Zero: 2, Offload: space.OffloadOptimizer}, space.Workload{Batch: 64, SeqLen: 1024}, 2 * psi, 14 * psi / 64},
		{"fsdp params+optimizer", space.Strategy{Degree: space.Degrees{space.FSDP: 64}, Offload: space.OffloadParamsOptimizer}, space.Workload{Batch: 64, SeqLen: 1024}, 0, 16 * psi / 64},
		{"one chip params+optimizer", space.Strategy{Offload: space.OffloadParamsOptimizer}, space.Workload{Batch: 1, SeqLen: 1024}, 6 * unit, 16 * psi},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := est(t, m, zeroPaper, tt.w, tt.s)
			got := b.ParamsBytes + b.GradsBytes + b.OptimizerBytes
			if !within(got, tt.want, 1e-9) {
				t.Errorf("model states = %.6g bytes, want %.6g", got, tt.want)
			}
			if !within(b.HostStatesBytes, tt.host, 1e-9) {
				t.Errorf("model states in host memory = %.6g bytes, want %.6g", b.HostStatesBytes, tt.host)
			}
		})
	}
}
