package search

import (
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// TestShardedProgram checks that Options.ShardedProgram scores exactly the
// strategies with fsdp or cp above 1, and Program the others: each
// strategy's memory and step time equal those of a problem built with the
// program that applies to it alone.
func TestShardedProgram(t *testing.T) {
	m, err := model.Preset("llama3-8b")
	if err != nil {
		t.Fatal(err)
	}
	c, err := profiles.Parse("h100-8")
	if err != nil {
		t.Fatal(err)
	}
	w := space.Workload{Batch: 16, SeqLen: 4096}
	autocast := model.ProgramOptions{Precision: model.AutocastPrecision()}
	bf16 := autocast
	bf16.Precision.Residual = 2
	build := func(o Options) *Problem {
		p, err := NewProblem(m, c, w, space.Fix{}, o)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	mixed := build(Options{Program: autocast, ShardedProgram: &bf16})
	onlyAutocast := build(Options{Program: autocast})
	onlyBF16 := build(Options{Program: bf16})

	for _, tc := range []struct {
		strategy string
		sharded  bool
	}{
		{"dp=8,mb=1,recompute=full", false},
		{"dp=2,tp=4,mb=1", false},
		{"fsdp=8,mb=1,recompute=full", true},
		{"dp=4,cp=2,mb=1", true},
	} {
		s, err := space.Parse(tc.strategy)
		if err != nil {
			t.Fatal(err)
		}
		if s, err = s.Place(c); err != nil {
			t.Fatalf("%s: %v", tc.strategy, err)
		}
		want := onlyAutocast
		if tc.sharded {
			want = onlyBF16
		}
		got, ref := mixed.Evaluate(s, false), want.Evaluate(s, false)
		if got.Err != nil || ref.Err != nil {
			t.Fatalf("%s: %v, %v", tc.strategy, got.Err, ref.Err)
		}
		if got.Memory != ref.Memory || got.StepSeconds != ref.StepSeconds {
			t.Errorf("%s: memory %+v, step %v s; want %+v, %v s (sharded %v)", tc.strategy, got.Memory, got.StepSeconds, ref.Memory, ref.StepSeconds, tc.sharded)
		}
		if st, err := mixed.StepTime(s); err != nil || st.StepSeconds != ref.StepSeconds {
			t.Errorf("%s: StepTime %v, %v; want %v", tc.strategy, st.StepSeconds, err, ref.StepSeconds)
		}
	}

	// Full recompute keeps each layer's input, the residual stream: the
	// bf16 stream saves s·mb·h·(4-2) bytes per layer against the fp32 one,
	// 32 · 4096 · 1 · 4096 · 2 = 1.07 GB for Llama 3 8B.
	s, _ := space.Parse("fsdp=8,mb=1,recompute=full")
	s, _ = s.Place(c)
	diff := onlyAutocast.Evaluate(s, false).Memory.ActivationsBytes - mixed.Evaluate(s, false).Memory.ActivationsBytes
	if want := 32.0 * 4096 * 4096 * 2; diff < want || diff > 1.1*want {
		t.Errorf("activations shrink by %.4g bytes under the bf16 stream, want %.4g (up to 10%% more for the output layer's input)", diff, want)
	}
}
