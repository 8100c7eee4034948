package cost

import (
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// TestA2AOverlap: Mixtral 8x7B on 8 H100s with ep=8 and 8 micro-batches a
// step. With a2a_overlap each forward but the first runs beside the
// previous micro-batch's backward (space.A2AOverlapMicrobatches: 7 pairs),
// and each pair hides min(a2aF, of·bc) + min(a2aB, of·fc) of the MoE
// dispatch and combine, as DualPipe's pairs do; the exposed all-to-all
// drops by 7 times that and nothing else moves.
func TestA2AOverlap(t *testing.T) {
	m, _ := model.Preset("mixtral-8x7b")
	c, err := profiles.Parse("h100-8")
	if err != nil {
		t.Fatal(err)
	}
	w := space.Workload{Batch: 64, SeqLen: 4096}
	cm := NewModel(program(m, model.ProgramOptions{}))
	run := func(spec string) Estimate {
		t.Helper()
		s := parseStrategy(t, spec)
		placed, err := s.Place(c)
		if err != nil {
			t.Fatal(err)
		}
		est, err := cm.Evaluate(c, w, placed, Options{Trace: true})
		if err != nil {
			t.Fatal(err)
		}
		return est
	}
	off, on := run("dp=8,zero=1,ep=8"), run("dp=8,zero=1,ep=8,a2a_overlap=true")
	p := on.Passes
	if p.OverlappedMicrobatches != 7 {
		t.Fatalf("%g overlapped micro-batches, want 7", p.OverlappedMicrobatches)
	}
	of := c.Efficiency.OverlapFraction
	hidden := min(p.A2AForwardSeconds, of*p.BackwardSeconds) + min(p.A2ABackwardSeconds, of*p.ForwardSeconds)
	if hidden <= 0 || !near(p.HiddenA2ASeconds, hidden, 1e-9) {
		t.Errorf("a pair hides %.6g s, want %.6g s", p.HiddenA2ASeconds, hidden)
	}
	if got := off.ExposedA2ASeconds - on.ExposedA2ASeconds; !near(got, 7*hidden, 1e-9) {
		t.Errorf("the overlap hides %.6g s of all-to-all, want 7 x %.6g s", got, hidden)
	}
	if !near(off.ComputeSeconds, on.ComputeSeconds, 1e-12) || !near(off.StepSeconds-on.StepSeconds, 7*hidden, 1e-9) {
		t.Errorf("step %.6g s -> %.6g s, compute %.6g s -> %.6g s: only the exposed all-to-all should move", off.StepSeconds, on.StepSeconds, off.ComputeSeconds, on.ComputeSeconds)
	}
}
