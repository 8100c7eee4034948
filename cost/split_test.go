package cost

import (
	"math"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// TestSplitEvenExplicit: an explicit split that gives every stage the
// layers the default split gives it costs the same, bit for bit, through
// Evaluate and through an Evaluator that meets the two in turn (the
// stages planned again when only the split changes).
func TestSplitEvenExplicit(t *testing.T) {
	c := gpuCluster("h100-32", chipH100, 32, 450e9, 50e9)
	m := llama3("8b") // 32 layers
	w := space.Workload{Batch: 64, SeqLen: 4096}
	p := program(m, model.ProgramOptions{})
	for _, tc := range []struct{ even, explicit string }{
		{"dp=2,tp=4,pp=4", "dp=2,tp=4,pp=4,first=8,last=8"},
		{"dp=2,tp=4,pp=4,schedule=interleaved,v=2", "dp=2,tp=4,pp=4,first=8,schedule=interleaved,v=2"},
		{"dp=2,tp=4,pp=4,schedule=interleaved,v=3", "dp=2,tp=4,pp=4,last=8,schedule=interleaved,v=3"}, // uneven chunks 2, 3, 3
	} {
		a, b := parseStrategy(t, tc.even), parseStrategy(t, tc.explicit)
		ea, err := Evaluate(p, c, w, a, Options{})
		if err != nil {
			t.Fatal(err)
		}
		eb, err := Evaluate(p, c, w, b, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if ea.StepSeconds != eb.StepSeconds || ea.BubbleSeconds != eb.BubbleSeconds || ea.ComputeSeconds != eb.ComputeSeconds {
			t.Errorf("%s: step %v, %s: %v; want equal", tc.even, ea.StepSeconds, tc.explicit, eb.StepSeconds)
		}
		ev := NewModel(p).NewEvaluator(c, w, Options{SkipCollectives: true})
		for _, s := range []space.Strategy{a, b, a} {
			got, err := ev.Evaluate(s)
			if err != nil {
				t.Fatal(err)
			}
			if got.StepSeconds != ea.StepSeconds {
				t.Errorf("Evaluator on %s: step %v, want %v", s, got.StepSeconds, ea.StepSeconds)
			}
		}
	}
}

// TestSplitBusiestStage: the busiest stage sets the step. 32 layers on
// pp=4 (one chip a stage, no communication on the critical path): with
// first=2,last=2 the middle stages hold 14 layers, with first=5,last=5
// 11, each busier than an end stage with its embedding or output layer
// (about 2.4 layers' worth for Llama 3 8B's 128K vocabulary). 1F1B's
// bubble, (p-1) passes of the busiest stage, and its compute less the
// optimizer, M passes of it, then stand at 14/11; and an Evaluator that
// meets one split after the other gives each its own.
func TestSplitBusiestStage(t *testing.T) {
	c := gpuCluster("h100-4", chipH100, 4, 450e9, 50e9)
	m := llama3("8b")
	w := space.Workload{Batch: 8, SeqLen: 4096}
	p := program(m, model.ProgramOptions{})
	heavy, light := parseStrategy(t, "pp=4,first=2,last=2"), parseStrategy(t, "pp=4,first=5,last=5")
	ev := NewModel(p).NewEvaluator(c, w, Options{})
	eh, err := ev.Evaluate(heavy)
	if err != nil {
		t.Fatal(err)
	}
	el, err := ev.Evaluate(light)
	if err != nil {
		t.Fatal(err)
	}
	const want = 14.0 / 11.0
	if r := eh.BubbleSeconds / el.BubbleSeconds; math.Abs(r-want) > 1e-9 {
		t.Errorf("bubble %v s / %v s = %v, want 14/11 = %v", eh.BubbleSeconds, el.BubbleSeconds, r, want)
	}
	if r := (eh.ComputeSeconds - eh.OptimizerSeconds) / (el.ComputeSeconds - el.OptimizerSeconds); math.Abs(r-want) > 1e-9 {
		t.Errorf("compute less optimizer %v / %v = %v, want 14/11 = %v", eh.ComputeSeconds-eh.OptimizerSeconds, el.ComputeSeconds-el.OptimizerSeconds, r, want)
	}
	// 1F1B's bubble is (p-1)/M of the busiest stage's passes: 3/8.
	if r := eh.BubbleSeconds / (eh.ComputeSeconds - eh.OptimizerSeconds); math.Abs(r-3.0/8.0) > 1e-9 {
		t.Errorf("bubble / passes = %v, want 3/8", r)
	}
	if eh.StepSeconds <= el.StepSeconds {
		t.Errorf("step %v s with 14-layer stages, %v s with 11: the busiest stage should set it", eh.StepSeconds, el.StepSeconds)
	}
}
