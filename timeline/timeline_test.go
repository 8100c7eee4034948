package timeline

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/space"
)

// passes are one micro-batch's passes on a rank: forward 1 s, backward 2 s
// (recompute 0.25 s, weight gradients 0.5 s), critical communication 0.4 s
// (forward 0.15, weight gradients 0.05, MoE dispatch and combine 0.05
// forward and 0.1 backward), optimizer 0.3 s and fp8 casts 0.02 s; the
// pipeline ramp 0.04 s and each send 0.01 s, half of it exposed.
func passes(m, c, pp float64) *cost.Passes {
	p := &cost.Passes{Microbatches: m, Chunks: c, ForwardSeconds: 1, BackwardSeconds: 2, RecomputeSeconds: 0.25, WeightGradSeconds: 0.5,
		CriticalSeconds: 0.4, CriticalForwardSeconds: 0.15, CriticalWeightGradSeconds: 0.05, A2AForwardSeconds: 0.05, A2ABackwardSeconds: 0.1,
		OptimizerSeconds: 0.3, FP8CastSeconds: 0.02}
	if pp > 1 {
		p.PipelineRampSeconds = 0.04
		p.PipelineSends = 2 * m * c
		p.PipelineSendSeconds = 0.01
		p.PipelineSendExposedSeconds = 0.005 * p.PipelineSends
	}
	return p
}

// pairs adds DualPipe's overlapped pairs: each hides min(0.05, 0.5·2) +
// min(0.1, 0.5·1) = 0.15 s of all-to-all.
func pairs(p *cost.Passes, o float64) *cost.Passes {
	p.HiddenA2ASeconds, p.OverlappedMicrobatches = 0.15, o
	return p
}

func TestTotalsPerSchedule(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sched    space.Schedule
		pp, m, v int
		p        *cost.Passes
		// The estimate, by hand: compute = M·3 + 0.32; exposed = M·0.4 −
		// O·0.15 + ramp 0.04 + 0.005 per send; a2a = M·0.15 − O·0.15;
		// the bubble from space.Rules.Bubble with T_F = 1.15, T_B = 1.7,
		// T_W = 0.55 (uniform: F+B+crit = 3.4), T_FB = 3.25.
		compute, exposed, a2a, bubble, step float64
		// The events: forward, backward and weight-gradient chunks and
		// overlapped pairs.
		f, b, w, fb int
	}{
		// (pp-1)·3.4 = 3.4; exposed 1.6 + 0.04 + 8·0.005.
		{"1f1b", space.OneFOneB, 2, 4, 1, passes(4, 1, 2), 12.32, 1.68, 0.6, 3.4, 17.4, 4, 4, 0, 0},
		// 3·3.4.
		{"gpipe", space.GPipe, 4, 4, 1, passes(4, 1, 4), 12.32, 1.68, 0.6, 10.2, 24.2, 4, 4, 0, 0},
		// (pp-1)/v·3.4; 16 sends.
		{"interleaved", space.Interleaved, 2, 4, 2, passes(4, 2, 2), 12.32, 1.72, 0.6, 1.7, 15.74, 8, 8, 0, 0},
		// 3·(1.15 + 1.7 − 0.55).
		{"zb-h1", space.ZBH1, 4, 4, 1, passes(4, 1, 4), 12.32, 1.68, 0.6, 6.9, 20.9, 4, 4, 4, 0},
		// (pp-1)/2·(1.15 + 1.7 − 0.55); 12 sends.
		{"zb-v", space.ZBV, 2, 3, 1, passes(3, 2, 2), 9.32, 1.3, 0.45, 1.15, 11.77, 6, 6, 6, 0},
		// O = 8 − 6 + 1 = 3; (pp/2-1)·(3.25 + 1.7 − 2·0.55).
		{"dualpipe", space.DualPipe, 4, 8, 1, pairs(passes(8, 1, 4), 3), 24.32, 2.87, 0.75, 3.85, 31.04, 5, 5, 5, 3},
		// O = 8 − 6 + 0.5 = 2.5, 5 chunk pairs; (pp-1)/2·3.85; 32 sends.
		{"dualpipev", space.DualPipeV, 4, 8, 1, pairs(passes(8, 2, 4), 2.5), 24.32, 3.025, 0.825, 5.775, 33.12, 11, 11, 11, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			est := cost.Estimate{ComputeSeconds: tc.compute, ExposedCommSeconds: tc.exposed, ExposedA2ASeconds: tc.a2a,
				BubbleSeconds: tc.bubble, StepSeconds: tc.step, Passes: tc.p}
			s := space.Defaults()
			s.Degree[space.PP], s.Schedule, s.V = tc.pp, tc.sched, tc.v
			tl, err := Build(est, s, space.Workload{Batch: tc.m, SeqLen: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(tl.Ranks) != tc.pp {
				t.Errorf("ranks %v, want all %d", tl.Ranks, tc.pp)
			}
			for _, r := range tl.Ranks {
				got := tl.TotalsOf(r)
				want := Totals{ComputeSeconds: tc.compute, ExposedCommSeconds: tc.exposed, ExposedA2ASeconds: tc.a2a, BubbleSeconds: tc.bubble, StepSeconds: tc.step}
				if !near(got.ComputeSeconds, want.ComputeSeconds) || !near(got.ExposedCommSeconds, want.ExposedCommSeconds) ||
					!near(got.ExposedA2ASeconds, want.ExposedA2ASeconds) || !near(got.BubbleSeconds, want.BubbleSeconds) || !near(got.StepSeconds, want.StepSeconds) {
					t.Errorf("rank %d: totals %+v, want %+v", r, got, want)
				}
				counts := map[string]int{}
				for _, e := range tl.Events {
					if e.Rank == r && e.Stream == StreamCompute {
						counts[e.Cat] += max(e.Repeat, 1)
					}
				}
				// A folded steady state holds its forwards, backwards and
				// weight gradients.
				counts[CatForward] += counts[CatSteady]
				counts[CatBackward] += counts[CatSteady]
				if tc.w > 0 {
					counts[CatWeightGrad] += counts[CatSteady]
				}
				if counts[CatForward] != tc.f || counts[CatBackward] != tc.b || counts[CatWeightGrad] != tc.w || counts[CatPair] != tc.fb {
					t.Errorf("rank %d: F %d B %d W %d F&B %d, want %d %d %d %d", r, counts[CatForward], counts[CatBackward],
						counts[CatWeightGrad], counts[CatPair], tc.f, tc.b, tc.w, tc.fb)
				}
			}
			var buf bytes.Buffer
			if err := tl.WriteTrace(&buf, tc.name); err != nil {
				t.Fatal(err)
			}
			meta, err := CheckTrace(buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if !near(meta.StepSeconds, tc.step) || !near(meta.BubbleSeconds, tc.bubble) {
				t.Errorf("otherData step %g bubble %g, want %g %g", meta.StepSeconds, meta.BubbleSeconds, tc.step, tc.bubble)
			}
		})
	}
}

// TestWithoutPipeline: one rank, FSDP's weight traffic (1 s, 0.3 exposed),
// the gradient reduction (0.5 s, 0.1 exposed) and the ZeRO gather (0.2 s,
// 0.05 exposed): exposed 2·0.4 + 0.3 + 0.1 + 0.05.
func TestWithoutPipeline(t *testing.T) {
	p := passes(2, 1, 1)
	p.WeightTrafficSeconds, p.WeightTrafficExposedSeconds = 1, 0.3
	p.GradReduceSeconds, p.GradReduceExposedSeconds = 0.5, 0.1
	p.ParamGatherSeconds, p.ParamGatherExposedSeconds = 0.2, 0.05
	est := cost.Estimate{ComputeSeconds: 6.32, ExposedCommSeconds: 1.25, ExposedA2ASeconds: 0.3, StepSeconds: 7.57, Passes: p}
	tl, err := Build(est, space.Defaults(), space.Workload{Batch: 2, SeqLen: 1})
	if err != nil {
		t.Fatal(err)
	}
	got := tl.TotalsOf(0)
	if !near(got.ComputeSeconds, 6.32) || !near(got.ExposedCommSeconds, 1.25) || got.BubbleSeconds != 0 || !near(got.StepSeconds, 7.57) {
		t.Errorf("totals %+v", got)
	}
	var buf bytes.Buffer
	if err := tl.WriteTrace(&buf, "fsdp"); err != nil {
		t.Fatal(err)
	}
	if _, err := CheckTrace(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
}

// TestFolding: 16 stages and 4,096 micro-batches draw 5 ranks and fold the
// steady state, keeping the totals (M·3.4 + 0.32 + ramp + sends + 15·3.4).
func TestFolding(t *testing.T) {
	const m = 4096
	p := passes(m, 1, 16)
	compute := m*3 + 0.32
	exposed := m*0.4 + 0.04 + 2*m*0.005
	bubble := 15 * 3.4
	est := cost.Estimate{ComputeSeconds: compute, ExposedCommSeconds: exposed, BubbleSeconds: bubble, StepSeconds: compute + exposed + bubble, Passes: p}
	s := space.Defaults()
	s.Degree[space.PP] = 16
	tl, err := Build(est, s, space.Workload{Batch: m, SeqLen: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 3, 7, 11, 15}; !equalInts(tl.Ranks, want) {
		t.Errorf("ranks %v, want %v", tl.Ranks, want)
	}
	if !strings.Contains(tl.Folding, "5 of 16 pipeline ranks") || !strings.Contains(tl.Folding, "xN") {
		t.Errorf("folding %q", tl.Folding)
	}
	for _, r := range tl.Ranks {
		got := tl.TotalsOf(r)
		if !near(got.ComputeSeconds, compute) || !near(got.ExposedCommSeconds, exposed) || !near(got.BubbleSeconds, bubble) {
			t.Errorf("rank %d: totals %+v", r, got)
		}
	}
	var buf bytes.Buffer
	if err := tl.WriteTrace(&buf, "folded"); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > 1<<20 {
		t.Errorf("trace of %d bytes, want under 1 MiB", buf.Len())
	}
	if _, err := CheckTrace(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
}

func TestCheckTraceRejects(t *testing.T) {
	for _, tc := range []struct{ name, json, want string }{
		{"no events", `{"displayTimeUnit":"ms"}`, "no traceEvents"},
		{"unit", `{"traceEvents":[],"displayTimeUnit":"s"}`, "displayTimeUnit"},
		{"negative", `{"traceEvents":[{"name":"a","ph":"X","ts":0,"dur":-1,"pid":0,"tid":1}],"displayTimeUnit":"ms","otherData":{"step_s":1}}`, "dur -1"},
		{"pid", `{"traceEvents":[{"name":"a","ph":"X","ts":0,"dur":1,"pid":"0","tid":1}],"displayTimeUnit":"ms","otherData":{"step_s":1}}`, "pid"},
		{"past the step", `{"traceEvents":[{"name":"a","ph":"X","ts":0,"dur":2e6,"pid":0,"tid":1}],"displayTimeUnit":"ms","otherData":{"step_s":1}}`, "after the step"},
		{"overlap", `{"traceEvents":[{"name":"a","ph":"X","ts":0,"dur":10,"pid":0,"tid":1},{"name":"b","ph":"X","ts":5,"dur":1,"pid":0,"tid":1}],"displayTimeUnit":"ms","otherData":{"step_s":1}}`, "starts before"},
		{"metadata", `{"traceEvents":[{"name":"thread_name","ph":"M","pid":0,"tid":1,"args":{}}],"displayTimeUnit":"ms"}`, "name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CheckTrace([]byte(tc.json))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}

func TestBuildNeedsPasses(t *testing.T) {
	if _, err := Build(cost.Estimate{}, space.Defaults(), space.Workload{Batch: 1, SeqLen: 1}); err == nil {
		t.Error("no error for an estimate without passes")
	}
}

// near reports whether a and b agree to 1e-9 of their size.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
