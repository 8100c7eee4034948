package cost

import (
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// realRow is one measured run: Korthikanti 2022 Table 5 (GPT-3 175B, 64
// A100, tp8 pp8 v3, batch 64: 13.75 s selective+SP, 18.13 s full; MFU 51.4%
// and 39.0%), Llama 3 405B (16384 H100, tp8 pp16 dp128, 16M tokens: ~400
// TFLOP/s, 38-43% MFU, [LLAMA3 Table 4]), torchtitan Llama 3 8B (64 A100,
// FSDP, selective: MFU 0.58, torchtitan's docs/performance.md) and MaxText 32B on v5e-256
// (fsdp 256, per-device batch 4, full remat: MFU 0.669, 2024 README).
type realRow struct {
	name  string
	m     model.Spec
	c     profiles.Cluster
	w     space.Workload
	s     space.Strategy
	stepS float64
	mfu   float64
}

func realRows() []realRow {
	a64 := gpuCluster("a100-64", chipA100, 64, 300e9, 25e9)
	h16k := gpuCluster("h100-16384", chipH100, 16384, 450e9, 50e9)
	v5e := profiles.Cluster{Name: "v5e-256", Chip: chipV5e, Axes: []profiles.Axis{tpuAxis("x", 16, true), tpuAxis("y", 16, true)}}
	kor := func(rec string) space.Strategy {
		s := strategy(space.Strategy{Degree: space.Degrees{space.TP: 8, space.PP: 8}, SP: rec == space.RecomputeSelective, Schedule: space.Interleaved, V: 3, Recompute: rec})
		s.Mesh[space.TP], s.Mesh[space.PP] = share("gpu", 8), share("node", 8)
		return s
	}
	l405 := strategy(space.Strategy{Degree: space.Degrees{space.TP: 8, space.PP: 16, space.DP: 128}, Zero: 1, SP: true, Schedule: space.Interleaved, V: 4})
	l405.Mesh[space.TP] = share("gpu", 8)
	l405.Mesh[space.PP] = share("node", 16)
	l405.Mesh[space.DP] = share("node", 128)
	l405.Mesh[space.PP][0].Size, l405.Mesh[space.DP][0].Size = 16, 128
	tt := strategy(space.Strategy{Degree: space.Degrees{space.FSDP: 64}, Recompute: space.RecomputeSelective})
	tt.Mesh[space.FSDP] = []space.Share{{Axis: "gpu", Size: 8}, {Axis: "node", Size: 8}}
	mt := strategy(space.Strategy{Degree: space.Degrees{space.FSDP: 256}, MB: 4, Recompute: space.RecomputeFull})
	mt.Mesh[space.FSDP] = []space.Share{{Axis: "x", Size: 16}, {Axis: "y", Size: 16}}
	m32 := model.Spec{Name: "maxtext-32b", Layers: 32, Hidden: 8192, Heads: 64, FFNHidden: 28672, FFN: model.SwiGLU, Vocab: 32000, SeqLen: 2048}
	m32.Normalize()
	return []realRow{
		{"kor22-175b-selective", gpt3(), a64, space.Workload{Batch: 64, SeqLen: 2048}, kor(space.RecomputeSelective), 13.75, 0.514},
		{"kor22-175b-full", gpt3(), a64, space.Workload{Batch: 64, SeqLen: 2048}, kor(space.RecomputeFull), 18.13, 0.390},
		{"llama3-405b-16k", llama3("405b"), h16k, space.Workload{Batch: 2048, SeqLen: 8192}, l405, 0, 0.40},
		{"torchtitan-8b-fsdp64", llama3("8b"), a64, space.Workload{Batch: 64, SeqLen: 8192}, tt, 0, 0.58},
		{"maxtext-32b-v5e256", m32, v5e, space.Workload{Batch: 1024, SeqLen: 2048}, mt, 0, 0.669},
	}
}

// TestRealism compares predictions with measured runs (docs/published-runs.md),
// with the default efficiencies of DefaultEfficiency and no per-row tuning.
// Tolerance ±30%: the model leaves out kernel details (Megatron 2022 had no
// flash attention and unfused elementwise ops), stragglers and throttling.
func TestRealism(t *testing.T) {
	for _, r := range realRows() {
		est, err := evaluate(r.m, r.c, r.w, r.s, Options{SkipCollectives: true})
		if err != nil {
			t.Fatal(r.name, err)
		}
		mfu := est.ModelFLOPs / est.StepSeconds / float64(r.c.Chips()) / r.c.Chip.PeakBF16FLOPs
		t.Logf("%-22s step %7.3f s (measured %6.2f) MFU %.3f (measured %.3f) compute %.3f exposed %.3f bubble %.3f",
			r.name, est.StepSeconds, r.stepS, mfu, r.mfu, est.ComputeSeconds, est.ExposedCommSeconds, est.BubbleSeconds)
		if err := mfu/r.mfu - 1; err < -0.3 || err > 0.3 {
			t.Errorf("%s: MFU %.3f vs measured %.3f (%+.0f%%)", r.name, mfu, r.mfu, 100*err)
		}
	}
}
