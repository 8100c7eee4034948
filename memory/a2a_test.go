package memory

import (
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// TestA2AOverlapInFlight: Megatron-Core's EP overlap holds one layer of the
// rank's beyond the schedule's micro-batches in flight, by hand: 1/32 of a
// micro-batch of 32 layers, 1/6 of 4 + 2 layers of two kinds; nothing
// without the overlap, with a single micro-batch (no pair) or no layers.
func TestA2AOverlapInFlight(t *testing.T) {
	for _, tt := range []struct {
		a2a    bool
		m      int
		counts []int
		want   float64
	}{
		{true, 8, []int{32}, 1.0 / 32},
		{true, 2, []int{4, 2}, 1.0 / 6},
		{false, 8, []int{32}, 0},
		{true, 1, []int{32}, 0},
		{true, 8, []int{0, 0}, 0},
	} {
		if got := a2aOverlapInFlight(tt.a2a, tt.m, tt.counts); got != tt.want {
			t.Errorf("a2aOverlapInFlight(%t, %d, %v) = %g, want %g", tt.a2a, tt.m, tt.counts, got, tt.want)
		}
	}
}

// TestA2AOverlapActivations: Mixtral 8x7B (32 layers) on 8 H100s with ep=8
// and 8 micro-batches: with a2a_overlap the rank holds 1 + 1/32
// micro-batches of activations (and of the embedding's saved mask among
// the buffers, a kilobyte), and nothing else moves; the Estimator agrees
// with the Model.
func TestA2AOverlapActivations(t *testing.T) {
	c := h100(8)
	w := space.Workload{Batch: 64, SeqLen: 4096}
	mm := NewModel(model.MustProgram(mixtral(), model.ProgramOptions{}))
	est := mm.NewEstimator(c, w)
	run := func(a2a bool) Breakdown {
		t.Helper()
		return estimateBoth(t, mm, est, c, w, space.Strategy{Degree: space.Degrees{space.DP: 8, space.EP: 8}, Zero: 1, A2AOverlap: a2a})
	}
	off, on := run(false), run(true)
	if want := off.ActivationsBytes * 33 / 32; !within(on.ActivationsBytes, want, 1e-12) {
		t.Errorf("activations %.6g -> %.6g bytes, want %.6g", off.ActivationsBytes, on.ActivationsBytes, want)
	}
	if on.ParamsBytes != off.ParamsBytes || on.GradsBytes != off.GradsBytes || on.OptimizerBytes != off.OptimizerBytes ||
		on.BuffersBytes < off.BuffersBytes || !within(on.BuffersBytes, off.BuffersBytes, 1e-5) {
		t.Errorf("a2a_overlap moved more than the activations: %+v -> %+v", off, on)
	}
}
