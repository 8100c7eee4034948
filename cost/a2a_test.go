package cost

import (
	"strings"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// TestA2AOverlap: Mixtral 8x7B on 8 H100s with ep=8 and 8 micro-batches a
// step. With a2a_overlap each forward but the first runs beside the
// previous micro-batch's backward (space.A2AOverlapMicrobatches: 7 pairs),
// and each pair hides, phase by phase, the backward's combine under the
// forward's attention, the forward's dispatch under the experts' input
// gradients, the backward's dispatch under their weight gradients and the
// forward's experts, and the forward's combine under the backward's
// attention, each up to OverlapFraction of its compute and (1 - 32/132) of
// its all-to-all (NCCL's 32 channels on 132 SMs); the exposed all-to-all
// drops by 7 times that and nothing else moves. The step runs as one CUDA
// graph (Comm.GraphedStep): eagerly, ep 8 within one node's NVLink hides
// nothing (TestA2AOverlapScaleOut).
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
		est, err := cm.Evaluate(c, w, placed, Options{Trace: true, Comm: Comm{GraphedStep: true}})
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
	if p.A2ASMShare != 32.0/132 {
		t.Errorf("the all-to-all takes %g of the SMs, want 32/132", p.A2ASMShare)
	}
	// The phases' parts: each all-to-all of a pass is half into the
	// experts, half out (dispatch and combine move the same bytes), and
	// the experts' compute is part of each pass's.
	if !near(p.A2AIntoExpertsForwardSeconds, p.A2AForwardSeconds/2, 1e-9) || !near(p.A2AIntoExpertsBackwardSeconds, p.A2ABackwardSeconds/2, 1e-9) {
		t.Errorf("into the experts %.6g of %.6g s forward, %.6g of %.6g s backward, want half", p.A2AIntoExpertsForwardSeconds, p.A2AForwardSeconds, p.A2AIntoExpertsBackwardSeconds, p.A2ABackwardSeconds)
	}
	if p.ExpertForwardSeconds <= 0 || p.ExpertForwardSeconds >= p.ForwardSeconds || p.ExpertWeightGradSeconds <= 0 ||
		p.ExpertBackwardSeconds+p.ExpertWeightGradSeconds >= p.BackwardSeconds || p.ExpertWeightGradSeconds >= p.WeightGradSeconds {
		t.Errorf("experts %.6g of %.6g s forward, %.6g + %.6g of %.6g s backward (%.6g s weight gradients): not parts of the passes",
			p.ExpertForwardSeconds, p.ForwardSeconds, p.ExpertBackwardSeconds, p.ExpertWeightGradSeconds, p.BackwardSeconds, p.WeightGradSeconds)
	}
	of, sh := c.Efficiency.OverlapFraction, p.A2ASMShare
	phase := func(comm, compute float64) float64 { return min(of*compute, (1-sh)*comm) }
	if p.EndsForwardSeconds <= 0 || p.EndsBackwardSeconds <= 0 {
		t.Errorf("embedding and output layer %.6g s forward, %.6g s backward: want both", p.EndsForwardSeconds, p.EndsBackwardSeconds)
	}
	attnF := p.ForwardSeconds - p.ExpertForwardSeconds - p.EndsForwardSeconds
	attnB := p.BackwardSeconds - p.ExpertBackwardSeconds - p.ExpertWeightGradSeconds - p.EndsBackwardSeconds
	hidden := phase(p.A2AIntoExpertsBackwardSeconds, attnF) +
		phase(p.A2AIntoExpertsForwardSeconds, p.ExpertBackwardSeconds) +
		phase(p.A2ABackwardSeconds-p.A2AIntoExpertsBackwardSeconds, p.ExpertWeightGradSeconds+p.ExpertForwardSeconds) +
		phase(p.A2AForwardSeconds-p.A2AIntoExpertsForwardSeconds, attnB)
	if hidden <= 0 || !near(p.HiddenA2ASeconds, hidden, 1e-9) {
		t.Errorf("a pair hides %.6g s, want %.6g s", p.HiddenA2ASeconds, hidden)
	}
	// The pooled bound of the schedules that overlap whole passes
	// (DualPipe's) hides more.
	if pooled := min(p.A2AForwardSeconds, of*p.BackwardSeconds) + min(p.A2ABackwardSeconds, of*p.ForwardSeconds); hidden >= pooled {
		t.Errorf("the phases hide %.6g s, not less than the pooled %.6g s", hidden, pooled)
	}
	if got := off.ExposedA2ASeconds - on.ExposedA2ASeconds; !near(got, 7*hidden, 1e-9) {
		t.Errorf("the overlap hides %.6g s of all-to-all, want 7 x %.6g s", got, hidden)
	}
	if !near(off.ComputeSeconds, on.ComputeSeconds, 1e-12) || !near(off.StepSeconds-on.StepSeconds, 7*hidden, 1e-9) {
		t.Errorf("step %.6g s -> %.6g s, compute %.6g s -> %.6g s: only the exposed all-to-all should move", off.StepSeconds, on.StepSeconds, off.ComputeSeconds, on.ComputeSeconds)
	}
}

// TestA2AOverlapScaleOut: run eagerly, the EP overlap hides the MoE
// all-to-all only where ep spans the scale-out network (epOverlapHides).
// Mixtral 8x7B with 8 micro-batches a step: ep 8 within one node of
// H100s or within GB200's 72-GPU domain hides nothing, and the step, its
// exposed all-to-all and its traced collectives equal the twin's without
// the overlap; ep 16 over two H100 nodes (InfiniBand) hides part of it;
// a step run as one CUDA graph hides it within a node too.
func TestA2AOverlapScaleOut(t *testing.T) {
	m, _ := model.Preset("mixtral-8x7b")
	cm := NewModel(program(m, model.ProgramOptions{}))
	for _, tc := range []struct {
		cluster, strategy string
		graphed, hides    bool
	}{
		{"h100-8", "dp=8,zero=1,ep=8,mesh=dp:gpu*8;ep:gpu*8", false, false},
		{"gb200-16", "dp=16,zero=1,ep=16,mesh=dp:gpu*16;ep:gpu*16", false, false},
		{"h100-16", "dp=16,zero=1,ep=16,mesh=dp:gpu*8.node*2;ep:gpu*8.node*2", false, true},
		{"h100-8", "dp=8,zero=1,ep=8,mesh=dp:gpu*8;ep:gpu*8", true, true},
	} {
		c, err := profiles.Parse(tc.cluster)
		if err != nil {
			t.Fatal(err)
		}
		w := space.Workload{Batch: 8 * c.Chips(), SeqLen: 4096}
		o := Options{Trace: true, Comm: Comm{GraphedStep: tc.graphed}}
		run := func(spec string) Estimate {
			t.Helper()
			est, err := cm.Evaluate(c, w, parseStrategy(t, spec), o)
			if err != nil {
				t.Fatal(err)
			}
			return est
		}
		off, on := run(tc.strategy), run(tc.strategy+",a2a_overlap=true")
		hidden := off.ExposedA2ASeconds - on.ExposedA2ASeconds
		paired := false
		for _, op := range on.Ops {
			paired = paired || strings.Contains(op.Text, "paired chunks")
		}
		switch {
		case tc.hides && (hidden <= 0 || on.StepSeconds >= off.StepSeconds || !paired):
			t.Errorf("%s %s graphed=%v: the overlap hides %.6g s (step %.6g -> %.6g s, traced as paired %v); want some hidden",
				tc.cluster, tc.strategy, tc.graphed, hidden, off.StepSeconds, on.StepSeconds, paired)
		case !tc.hides && (on.StepSeconds != off.StepSeconds || on.ExposedA2ASeconds != off.ExposedA2ASeconds || on.Passes.OverlappedMicrobatches != 0 || paired):
			t.Errorf("%s %s: step %.6g -> %.6g s, exposed all-to-all %.6g -> %.6g s, %g pairs, traced as paired %v; want the twin's, no pairs",
				tc.cluster, tc.strategy, off.StepSeconds, on.StepSeconds, off.ExposedA2ASeconds, on.ExposedA2ASeconds, on.Passes.OverlappedMicrobatches, paired)
		}
	}
}

// TestPhaseHiddenSeconds: one phase of an overlapped pair, by hand. With
// 10 ms of all-to-all on 32 of 128 SMs (share 0.25) beside 20 ms of
// compute at overlap fraction 0.85 the phase takes compute + 0.25·10 ms
// and hides 7.5 ms; beside 4 ms of compute it takes the all-to-all's 10
// ms and hides 0.85·4 = 3.4 ms; without SMs taken (share 0) all 10 ms
// hide under the 20 ms; nothing hides under no compute.
func TestPhaseHiddenSeconds(t *testing.T) {
	for _, tt := range []struct {
		comm, compute, of, share, want float64
	}{
		{10e-3, 20e-3, 0.85, 0.25, 7.5e-3},
		{10e-3, 4e-3, 0.85, 0.25, 3.4e-3},
		{10e-3, 20e-3, 0.85, 0, 10e-3},
		{10e-3, 0, 0.85, 0.25, 0},
		{0, 20e-3, 0.85, 0.25, 0},
	} {
		if got := phaseHiddenSeconds(tt.comm, tt.compute, tt.of, tt.share); !near(got, tt.want, 1e-12) {
			t.Errorf("phaseHiddenSeconds(%g, %g, %g, %g) = %g, want %g", tt.comm, tt.compute, tt.of, tt.share, got, tt.want)
		}
	}
}

// TestA2ASMShare: the SMs each dispatcher's kernels take, over the chip's:
// DeepEP's 20 and HybridEP's 32 (as Megatron-Bridge's recipes set them)
// and NCCL's 32 channels, on an H100's 132 and a B200's 148 SMs; nothing
// on a chip of unknown SMs (a TPU).
func TestA2ASMShare(t *testing.T) {
	for _, tt := range []struct {
		dispatcher string
		sms        int
		want       float64
	}{
		{space.DispatcherDeepEP, 132, 20.0 / 132},
		{space.DispatcherHybridEP, 148, 32.0 / 148},
		{space.DispatcherAllToAll, 132, 32.0 / 132},
		{"", 148, 32.0 / 148},
		{space.DispatcherAllToAll, 0, 0},
	} {
		if got := a2aSMShare(tt.dispatcher, tt.sms); got != tt.want {
			t.Errorf("a2aSMShare(%q, %d) = %g, want %g", tt.dispatcher, tt.sms, got, tt.want)
		}
	}
}
