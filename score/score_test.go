package score

import (
	"testing"

	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// programs returns the options of a framework whose mixed precision changes
// with sharding: autocast, and a bf16 residual stream for the sharded
// strategies.
func programs() (autocast, bf16 model.ProgramOptions) {
	autocast = model.ProgramOptions{Precision: model.AutocastPrecision()}
	bf16 = autocast
	bf16.Precision.Residual = 2
	return autocast, bf16
}

// newTestModels returns the models of preset name, with the sharded program of
// programs when sharded is set.
func newTestModels(t *testing.T, name string, sharded bool) *Models {
	t.Helper()
	m, err := model.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	autocast, bf16 := programs()
	var sp *model.ProgramOptions
	if sharded {
		sp = &bf16
	}
	ms, err := New(m, autocast, sp, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// TestVariant checks that the variant picked for a strategy is the one
// whose program has the strategy's options: the sharded program for fsdp
// or cp above 1 (when there is one), fp8 projections for precision=fp8,
// whole experts for etp=1 with tp above 1 on a mixture-of-experts model;
// and that a variant is built once.
func TestVariant(t *testing.T) {
	_, bf16 := programs()
	for _, tc := range []struct {
		model    string
		sharded  bool // the models have a sharded program
		strategy string
		want     Key
	}{
		{"mixtral-8x7b", true, "dp=8", Key{}},
		{"mixtral-8x7b", true, "fsdp=8", Key{Sharded: true}},
		{"mixtral-8x7b", true, "dp=4,cp=2", Key{Sharded: true}},
		{"mixtral-8x7b", false, "fsdp=8", Key{}},
		{"mixtral-8x7b", true, "dp=8,precision=fp8", Key{FP8: true}},
		{"mixtral-8x7b", true, "dp=4,tp=2,etp=1", Key{Whole: true}},
		{"mixtral-8x7b", true, "dp=4,tp=2,etp=2", Key{}},
		{"mixtral-8x7b", true, "dp=8,etp=1", Key{}}, // tp=1: nothing to keep whole
		{"mixtral-8x7b", true, "fsdp=4,tp=2,etp=1", Key{Sharded: true, Whole: true}},
		{"mixtral-8x7b", true, "fsdp=4,tp=2,etp=1,precision=fp8", Key{Sharded: true, FP8: true, Whole: true}},
		{"mixtral-8x7b", false, "fsdp=4,tp=2,etp=1,precision=fp8", Key{FP8: true, Whole: true}},
		{"llama3-8b", true, "dp=4,tp=2,etp=1", Key{}}, // dense: no whole experts
		{"llama3-8b", true, "fsdp=8,precision=fp8", Key{Sharded: true, FP8: true}},
	} {
		t.Run(tc.model+"/"+tc.strategy, func(t *testing.T) {
			ms := newTestModels(t, tc.model, tc.sharded)
			s, err := space.Parse(tc.strategy)
			if err != nil {
				t.Fatal(err)
			}
			key, prog, err := ms.Variant(&s)
			if err != nil {
				t.Fatal(err)
			}
			if key != tc.want {
				t.Errorf("key %+v, want %+v", key, tc.want)
			}
			o := prog.Options
			if got := o.Precision.Residual == bf16.Precision.Residual; got != tc.want.Sharded {
				t.Errorf("residual stream of %g bytes: sharded program %v, want %v", o.Precision.Residual, got, tc.want.Sharded)
			}
			if got := o.FP8 != nil; got != tc.want.FP8 {
				t.Errorf("fp8 recipe %v, want fp8 %v", o.FP8, tc.want.FP8)
			}
			if o.ExpertsWhole != tc.want.Whole {
				t.Errorf("ExpertsWhole %v, want %v", o.ExpertsWhole, tc.want.Whole)
			}
			if tc.want == (Key{}) && prog != ms.Program() {
				t.Errorf("the model's own strategies got another program than Program()")
			}
			if _, again, _ := ms.Variant(&s); again != prog {
				t.Errorf("the variant was built twice")
			}
		})
	}
}

// TestWorker checks that a Worker, which keeps an evaluator per variant,
// prices strategies of every variant, interleaved, exactly as the Scorer
// does, that the variants' prices differ (so that a worker pricing with
// another variant's evaluator fails it), and that its lower bound is
// positive and below the step time.
func TestWorker(t *testing.T) {
	ms := newTestModels(t, "mixtral-8x7b", true)
	c, err := profiles.Parse("h100-64")
	if err != nil {
		t.Fatal(err)
	}
	sc := ms.Scorer(c, space.Workload{Batch: 256, SeqLen: 4096}, cost.Options{})
	strategies := []string{
		"dp=8,tp=8,etp=2,ep=8,mb=1,recompute=full",
		"dp=8,tp=8,etp=2,ep=8,mb=1,recompute=full,precision=fp8",
		"fsdp=8,tp=8,etp=2,ep=8,mb=1,recompute=full",
		"fsdp=8,tp=8,etp=1,ep=8,mb=1,recompute=full",
		"dp=8,tp=8,etp=1,ep=8,mb=1,recompute=full,precision=fp8",
		"fsdp=8,tp=8,etp=1,ep=8,mb=1,recompute=full,precision=fp8",
	}
	placed := make([]space.Strategy, len(strategies))
	for i, str := range strategies {
		s, err := space.Parse(str)
		if err != nil {
			t.Fatal(err)
		}
		if placed[i], err = s.Place(c); err != nil {
			t.Fatalf("%s: %v", str, err)
		}
	}
	w := sc.Worker()
	steps := map[float64]string{}
	for pass := range 2 {
		for i := range placed {
			s := &placed[i]
			wantMem, err := sc.Memory(s)
			if err != nil {
				t.Fatalf("%s: %v", s, err)
			}
			want, err := sc.Time(s, false)
			if err != nil {
				t.Fatalf("%s: %v", s, err)
			}
			if got, err := w.Memory(s); err != nil || got != wantMem {
				t.Errorf("pass %d, %s: worker memory %+v (%v), want %+v", pass, s, got, err, wantMem)
			}
			got, err := w.PlacedTime(s, -1)
			if err != nil || got.StepSeconds != want.StepSeconds {
				t.Errorf("pass %d, %s: worker step %v s (%v), want %v s", pass, s, got, err, want.StepSeconds)
			}
			if got, err := w.Time(s, false); err != nil || got.StepSeconds != want.StepSeconds {
				t.Errorf("pass %d, %s: worker Time %v s (%v), want %v s", pass, s, got.StepSeconds, err, want.StepSeconds)
			}
			if lb := w.LowerBound(s); !(lb > 0 && lb <= want.StepSeconds) {
				t.Errorf("pass %d, %s: lower bound %v s, step %v s", pass, s, lb, want.StepSeconds)
			}
			if prev, ok := steps[want.StepSeconds]; ok && prev != s.String() {
				t.Errorf("%s and %s have the same step time %v s: the test cannot tell their variants apart", prev, s, want.StepSeconds)
			}
			steps[want.StepSeconds] = s.String()
		}
	}
	if len(w.pools) != len(strategies) {
		t.Errorf("%d pools for %d variants", len(w.pools), len(strategies))
	}
}
