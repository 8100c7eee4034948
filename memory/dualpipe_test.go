package memory

import (
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// TestDualPipeInFlight pins the activations a DualPipe rank keeps at its
// peak: rank r holds linear stages r and p-1-r and keeps p-r chunks of the
// first and r+1 of the second, p+1 in all ([DSV3 Table 2]; the order of
// deepseek-ai/DualPipe's dualpipe.py, steps 1-4). On tinyDeepSeek with
// p = 4 (one layer a stage: dense, MoE, MoE, MoE with the MTP module) rank
// 0 keeps 4 chunks of its dense layer and 1 of the last MoE layer and the
// module; rank 1 keeps 3 and 2 chunks of two MoE layers.
func TestDualPipeInFlight(t *testing.T) {
	m := tinyDeepSeek(1)
	p := model.MustProgram(m, model.ProgramOptions{})
	mm := NewModel(p)
	w := space.Workload{Batch: 16, SeqLen: 1024}
	s := strat(space.Strategy{Degree: space.Degrees{space.PP: 4}, Schedule: space.DualPipe, Recompute: model.RecomputeFull})
	c := h100(s.Chips())
	pol, _ := mm.policy(s.Recompute)
	deg, err := s.RoleDegrees(c)
	if err != nil {
		t.Fatal(err)
	}
	var g geometry
	terms := make([]kindTerms, len(p.Kinds))
	var ends endTerms
	mm.geometryOf(c, w, &s, pol, deg, &g, terms, &ends)
	// Full recompute keeps each layer's input, 2·s·h bytes: one layer's
	// chunk is 2·1024·512 bytes whatever its kind; the MTP module keeps its
	// input and the int64 token ids it looks up, 8·1024 bytes.
	layer := 2.0 * 1024 * 512
	mtp := layer + 8*1024
	if a, b := terms[0].act, terms[p.MTP.Kind].act; a != layer || b != mtp {
		t.Fatalf("a layer keeps %v bytes, the MTP module %v; want %v and %v", a, b, layer, mtp)
	}
	tests := []struct {
		rank int
		want float64
	}{
		{0, 4*layer + 1*(layer+mtp)}, // stage 0 (dense) x4, stage 3 (MoE and the MTP module) x1
		{1, 3*layer + 2*layer},       // stage 1 x3, stage 2 x2
		{2, 2*layer + 3*layer},       // the mirror of rank 1: stage 2 x2, stage 1 x3
		{3, 1*(layer+mtp) + 4*layer}, // the mirror of rank 0
	}
	rules := s.Schedule.Rules()
	for _, tt := range tests {
		cnt, other := make([]int, len(p.Kinds)), make([]int, len(p.Kinds))
		st := mm.rankStage(tt.rank, 4, s.LoopChunks(), s.Split, rules.Placement(), cnt, other)
		st.inFlight, st.lastInFlight = rules.InFlight(tt.rank, 4, 1, 16), rules.HeadInFlight(4, 1, 16)
		var ss stageSums
		mm.stageSums(terms, &ends, &st, &ss)
		var fl flightTerms
		var bufs bufTerms
		mm.flightTerms(&g, &ends, &st, &ss, &fl, &bufs)
		if d := fl.act - tt.want; d > 1e-6*tt.want || d < -1e-6*tt.want {
			t.Errorf("rank %d keeps %v activation bytes, want %v", tt.rank, fl.act, tt.want)
		}
	}
}

// TestDeepSeekV3PublishedActivations pins the activations of DeepSeek-V3's
// published layout (arXiv:2412.19437 §3.2: pp=16 DualPipe, ep=64, ZeRO-1,
// fp8, its recompute) at one 4096-token sequence a micro-batch, which the
// report does not give: a middle rank holds two stages of 4 MoE layers and
// keeps 17 chunks of them, 68 layer-micro-batches of 153,088 bytes a token
// (model.TestDeepSeekPolicy).
func TestDeepSeekV3PublishedActivations(t *testing.T) {
	m, err := model.Load("deepseek-v3")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := model.LookupFP8Recipe(model.FP8Delayed)
	s, err := space.Parse("dp=128,zero=1,pp=16,ep=64,schedule=dualpipe,recompute=deepseek,precision=fp8")
	if err != nil {
		t.Fatal(err)
	}
	b := est(t, m, model.ProgramOptions{FP8: &r}, space.Workload{Batch: 15360, SeqLen: 4096}, s)
	if want := 68 * 4096 * 153088.0; b.ActivationsBytes != want {
		t.Errorf("activations %v bytes, want %v", b.ActivationsBytes, want)
	}
}

// TestDeepSeekV3PublishedBF16Moments checks the report's bf16 Adam moments
// (arXiv:2412.19437 §3.3.2) on its published layout: the optimizer state
// a rank keeps is fp32 master weights and two moments, 4 + 8 bytes per
// parameter of its ZeRO-1 shard, and 4 + 4 with bf16 moments, so it
// shrinks to 8/12 of itself while the parameters, gradients and
// activations stay as they are.
func TestDeepSeekV3PublishedBF16Moments(t *testing.T) {
	m, err := model.Load("deepseek-v3")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := model.LookupFP8Recipe(model.FP8Delayed)
	s, err := space.Parse("dp=128,zero=1,pp=16,ep=64,first=3,last=2,schedule=dualpipe,recompute=deepseek,precision=fp8")
	if err != nil {
		t.Fatal(err)
	}
	w := space.Workload{Batch: 15360, SeqLen: 4096}
	fp32 := est(t, m, model.ProgramOptions{FP8: &r, Precision: model.MixedPrecision()}, w, s)
	bf16 := est(t, m, model.ProgramOptions{FP8: &r, Precision: model.MixedPrecision().BF16Moments()}, w, s)
	if got, want := bf16.OptimizerBytes/fp32.OptimizerBytes, 8.0/12; got < want-1e-9 || got > want+1e-9 {
		t.Errorf("optimizer state with bf16 moments / with fp32 = %v, want %v", got, want)
	}
	if bf16.ParamsBytes != fp32.ParamsBytes || bf16.GradsBytes != fp32.GradsBytes || bf16.ActivationsBytes != fp32.ActivationsBytes {
		t.Errorf("bf16 moments changed the parameters, gradients or activations: %+v, %+v", bf16, fp32)
	}
}
