package cost

import (
	"math"
	"testing"
)

// checkPasses checks that a traced estimate's passes sum to its compute
// and exposed communication as Passes documents (the timeline's totals
// rest on it).
func checkPasses(t *testing.T, name string, e Estimate) {
	t.Helper()
	p := e.Passes
	if p == nil {
		t.Fatalf("%s: traced estimate without passes", name)
	}
	compute := p.Microbatches*(p.ForwardSeconds+p.BackwardSeconds) + p.OptimizerSeconds + p.FP8CastSeconds
	exposed := p.Microbatches*p.CriticalSeconds - p.OverlappedMicrobatches*p.HiddenA2ASeconds +
		p.WeightTrafficExposedSeconds + p.GradReduceExposedSeconds + p.ParamGatherExposedSeconds +
		p.PipelineRampSeconds + p.PipelineSendExposedSeconds + p.OffloadExposedSeconds
	a2a := p.Microbatches*(p.A2AForwardSeconds+p.A2ABackwardSeconds) - p.OverlappedMicrobatches*p.HiddenA2ASeconds
	for _, c := range []struct {
		what      string
		got, want float64
	}{
		{"compute", compute, e.ComputeSeconds},
		{"exposed communication", exposed, e.ExposedCommSeconds},
		{"exposed all-to-all", a2a, e.ExposedA2ASeconds},
	} {
		if math.Abs(c.got-c.want) > 1e-9*max(1, math.Abs(c.want)) {
			t.Errorf("%s: the passes' %s %g, the estimate's %g", name, c.what, c.got, c.want)
		}
	}
	if p.RecomputeSeconds < 0 || p.RecomputeSeconds+p.WeightGradSeconds > p.BackwardSeconds*(1+1e-12) {
		t.Errorf("%s: recompute %g and weight gradients %g of a backward pass of %g", name, p.RecomputeSeconds, p.WeightGradSeconds, p.BackwardSeconds)
	}
}
