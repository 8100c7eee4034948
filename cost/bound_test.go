package cost

import (
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// TestLowerBound checks the Bounder against the Evaluator on every valid
// strategy of small spaces (dense and MoE, GPU and TPU, every schedule,
// recompute policy and ZeRO stage), in the space's order: a bound never
// exceeds the step time, and it is the same for every placement of one
// degree tuple with the same role degrees (what a search that bounds one
// placement for all of them relies on); with the placement's DispatchBound
// added it still never exceeds the step time, and it adds something to
// every MoE strategy with expert parallelism that no schedule pairs. A
// Bounder that bounded the strategies before gives every fifth one the
// bounds a fresh Bounder gives it (what it keeps across placements).
func TestLowerBound(t *testing.T) {
	autocast := model.ProgramOptions{Precision: model.AutocastPrecision()}
	blockwise, _ := model.LookupFP8Recipe(model.FP8Blockwise)
	for _, tc := range []struct {
		model, cluster string
		batch, seq     int
		program        model.ProgramOptions
		fix            string
	}{
		{"llama3-8b", "h100-16", 64, 4096, model.ProgramOptions{}, ""},
		{"llama3-8b", "h100-16", 32, 8192, autocast, ""},
		{"mixtral-8x7b", "h100-16", 32, 4096, model.ProgramOptions{}, ""},
		{"mixtral-8x7b", "h100-16", 32, 4096, model.ProgramOptions{ExpertsWhole: true}, "etp=1"},
		// Whole experts' dispatch gathers over tp, on one of several axes.
		{"mixtral-8x7b", "v5p-16", 32, 4096, model.ProgramOptions{ExpertsWhole: true}, "etp=1"},
		{"llama2-7b", "v5p-32", 64, 4096, model.ProgramOptions{}, ""},
		{"gpt3-175b", "a100-64", 64, 2048, model.ProgramOptions{}, ""},
		// MLA, MTP and fp8 matmuls under DualPipe and the deepseek policy.
		{"deepseek-v3", "h800-16", 64, 4096, model.ProgramOptions{FP8: &blockwise}, "precision=fp8,schedule=dualpipe,recompute=deepseek"},
	} {
		t.Run(tc.model+"/"+tc.cluster, func(t *testing.T) {
			m, err := model.Preset(tc.model)
			if err != nil {
				t.Fatal(err)
			}
			c, err := profiles.Parse(tc.cluster)
			if err != nil {
				t.Fatal(err)
			}
			w := space.Workload{Batch: tc.batch, SeqLen: tc.seq}
			fix, err := space.ParseFix(tc.fix)
			if err != nil {
				t.Fatal(err)
			}
			sp, err := space.New(m, c, w, fix)
			if err != nil {
				t.Fatal(err)
			}
			cm := NewModel(program(m, tc.program))
			ev := cm.NewEvaluator(c, w, Options{SkipCollectives: true})
			bd := cm.NewBounder(c, w, Options{})
			type class struct {
				deg   space.Degrees
				roles [space.NumRoles]int
				sp    bool
				mb    int
				rec   string
				zero  int
				sched space.Schedule
				v     int
			}
			bounds := map[class]float64{}
			genes := make([]int, space.NumGenes)
			var s space.Strategy
			n, ratio, withComm := 0, 0.0, 0.0
			for i := range sp.Size() {
				if !sp.DecodeIndex(i, genes, &s) {
					continue
				}
				est, err := ev.Evaluate(s)
				if err != nil {
					t.Fatalf("Evaluate(%v): %v", s.String(), err)
				}
				lb, err := bd.LowerBound(s)
				if err != nil {
					t.Fatalf("LowerBound(%v): %v", s.String(), err)
				}
				if !(lb > 0) || lb > est.StepSeconds {
					t.Fatalf("%v: bound %.6g s, step %.6g s", s.String(), lb, est.StepSeconds)
				}
				roles, err := s.RoleDegrees(c)
				if err != nil {
					t.Fatal(err)
				}
				k := class{s.Degree, roles, s.SP, s.MB, s.Recompute, s.Zero, s.Schedule, s.V}
				if prev, ok := bounds[k]; ok && prev != lb {
					t.Fatalf("%v: bound %.17g s, another placement's %.17g s", s.String(), lb, prev)
				}
				bounds[k] = lb
				comm, err := bd.DispatchBound(s)
				if err != nil {
					t.Fatalf("DispatchBound(%v): %v", s.String(), err)
				}
				if n%5 == 0 {
					fresh := cm.NewBounder(c, w, Options{})
					flb, _ := fresh.LowerBound(s)
					fcomm, _ := fresh.DispatchBound(s)
					if flb != lb || fcomm != comm {
						t.Fatalf("%v: bounds %.17g s and %.17g s; a fresh Bounder's %.17g s and %.17g s", s.String(), lb, comm, flb, fcomm)
					}
				}
				paired := s.A2AOverlap || s.Schedule.Rules().Overlaps().Has(space.OverlapExpertA2A) // the space turns a2a_overlap on where it can
				switch {
				case comm < 0 || lb+comm > est.StepSeconds:
					t.Fatalf("%v: bound %.6g s + dispatch %.6g s, step %.6g s", s.String(), lb, comm, est.StepSeconds)
				case m.MoE == nil || paired:
					if comm != 0 {
						t.Fatalf("%v: dispatch bound %.6g s, want 0", s.String(), comm)
					}
				case s.Degree[space.EP] > 1 && !(comm > 0):
					t.Fatalf("%v: dispatch bound %.6g s under ep=%d, want more than 0", s.String(), comm, s.Degree[space.EP])
				}
				n++
				ratio += lb / est.StepSeconds
				withComm += (lb + comm) / est.StepSeconds
			}
			t.Logf("%d strategies, bound / step %.3f on average, %.3f with the dispatch", n, ratio/float64(n), withComm/float64(n))
		})
	}
}

// TestDispatchBoundTellsPlacements checks that a Bounder bounds each
// placement of one degree tuple by its own mesh: ep on the NVLink axis and
// ep across the nodes (whose dispatch and combine cross InfiniBand) get
// different dispatch bounds, a fresh Bounder's, in any order and when a
// placement comes back. (TestLowerBound's spaces give every placement of
// a shape the same dispatch bound.)
func TestDispatchBoundTellsPlacements(t *testing.T) {
	m, c := presets(t, "mixtral-8x7b", "h100-16")
	w := space.Workload{Batch: 32, SeqLen: 4096}
	cm := NewModel(program(m, model.ProgramOptions{}))
	strategies := []space.Strategy{
		parseStrategy(t, "dp=16,ep=8,mesh=dp:gpu*8.node*2;ep:gpu*8"),
		parseStrategy(t, "dp=16,ep=8,mesh=dp:gpu*8.node*2;ep:gpu*4.node*2"),
	}
	want := make([]float64, len(strategies))
	for i, s := range strategies {
		var err error
		if want[i], err = cm.NewBounder(c, w, Options{}).DispatchBound(s); err != nil {
			t.Fatalf("DispatchBound(%v): %v", s.String(), err)
		}
	}
	if want[0] == want[1] {
		t.Fatalf("ep on NVLink and across nodes: the same dispatch bound %g s", want[0])
	}
	bd := cm.NewBounder(c, w, Options{})
	for _, i := range []int{0, 1, 0, 0, 1} {
		got, err := bd.DispatchBound(strategies[i])
		if err != nil || got != want[i] {
			t.Fatalf("DispatchBound(%v) after the others = %g, %v; want %g", strategies[i].String(), got, err, want[i])
		}
	}
}
