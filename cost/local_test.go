package cost

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// TestSlidingWindowGPTOSS plans gpt-oss-20b (its published config: 12
// sliding-window layers of 128 tokens and 12 full ones) at 8,192 tokens on
// 8 H100 and checks that the sliding layers' attention kernels are costed
// at their window and that the step is faster than the same model with
// every layer full attention. Per chip (one sequence, tp=2: 32 heads of
// 64, N = 2,048): a full causal forward scores einsum does 2·0.5·8192²·2048
// = 137,438,953,472 FLOPs; a sliding one 2·(128·8192 - 128²/2)·2048 =
// 4,261,412,864.
func TestSlidingWindowGPTOSS(t *testing.T) {
	data, err := os.ReadFile("../model/testdata/gpt-oss-20b.config.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.ParseHF(data)
	if err != nil {
		t.Fatal(err)
	}
	full := m
	full.Pattern, full.Window = nil, 0
	c, err := profiles.Parse("h100-8")
	if err != nil {
		t.Fatal(err)
	}
	w := space.Workload{Batch: 64, SeqLen: 8192}
	s, err := space.Parse("dp=4,zero=2,tp=2,ep=4,etp=2")
	if err != nil {
		t.Fatal(err)
	}
	if s, err = s.Place(c); err != nil {
		t.Fatal(err)
	}
	run := func(spec model.Spec) Estimate {
		t.Helper()
		e, err := NewModel(model.MustProgram(spec, model.ProgramOptions{})).Evaluate(c, w, s, Options{Trace: true})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	local, all := run(m), run(full)
	scores := func(e Estimate, block string) float64 {
		for _, o := range e.Ops {
			if strings.HasPrefix(o.Block, block) && o.Pass == "fwd" && strings.Contains(o.Text, "-> P[") {
				return o.FLOPs
			}
		}
		t.Fatalf("no forward scores op in block %q", block)
		return 0
	}
	if got, want := scores(local, "attention (sliding, 128 tokens): 12 of 24"), 4261412864.0; math.Abs(got/want-1) > 1e-9 {
		t.Errorf("sliding scores %.6g FLOPs, want %.6g", got, want)
	}
	if got, want := scores(local, "attention: 12 of 24"), 137438953472.0; math.Abs(got/want-1) > 1e-9 {
		t.Errorf("full scores %.6g FLOPs, want %.6g", got, want)
	}
	if local.StepSeconds >= all.StepSeconds {
		t.Errorf("step %.4g s with sliding windows, %.4g s all full: want faster", local.StepSeconds, all.StepSeconds)
	}
	// Half the layers at a 1/32 band, but a 128-key loop runs the flash
	// kernel far below its rate (profiles.Efficiency.AttentionSeconds).
	if local.AttentionSeconds >= 0.7*all.AttentionSeconds {
		t.Errorf("attention kernels %.4g s with sliding windows, %.4g s all full: want at least 30%% less", local.AttentionSeconds, all.AttentionSeconds)
	}
	t.Logf("gpt-oss-20b, h100-8, 64 x 8192: step %.3f s with sliding windows, %.3f s all full (attention kernels %.3f s, %.3f s)",
		local.StepSeconds, all.StepSeconds, local.AttentionSeconds, all.AttentionSeconds)
}

// TestSlidingWindowContextParallel checks the K/V exchange of context
// parallelism: with cp=2 over 8,192 tokens a window of 128 needs 128 of the
// other shard's 4,096 keys, so its layers' gather of k moves 1/32 of the
// full layers' bytes.
func TestSlidingWindowContextParallel(t *testing.T) {
	m := model.Spec{Name: "swa", Layers: 2, Hidden: 1024, Heads: 8, KVHeads: 8, Vocab: 1000, SeqLen: 8192, FFN: model.SwiGLU,
		Window: 128, Pattern: []string{"sliding", "full"}}
	m.Normalize()
	c, err := profiles.Parse("h100-8")
	if err != nil {
		t.Fatal(err)
	}
	s, err := space.Parse("dp=4,cp=2")
	if err != nil {
		t.Fatal(err)
	}
	if s, err = s.Place(c); err != nil {
		t.Fatal(err)
	}
	e, err := NewModel(model.MustProgram(m, model.ProgramOptions{})).Evaluate(c, space.Workload{Batch: 8, SeqLen: 8192}, s, Options{Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	gather := func(block string) float64 {
		for _, o := range e.Ops {
			if strings.HasPrefix(o.Block, block) && o.Pass == "fwd" && strings.Contains(o.Text, "-> P[") && o.Collective.Op == AllGather {
				return o.Collective.Bytes
			}
		}
		t.Fatalf("no gather of k in block %q", block)
		return 0
	}
	if r := gather("attention (sliding") / gather("attention:"); math.Abs(r-1.0/32) > 1e-12 {
		t.Errorf("sliding gather is %.6g of the full one's, want 1/32", r)
	}
}
