package memory

import (
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// tinyDeepSeek is a DeepSeek-V3-shaped model small enough for tests: MLA,
// one dense layer then MoE layers with a shared expert, mtp modules, a
// vocabulary large enough that the embedding dominates a stage.
func tinyDeepSeek(mtp int) model.Spec {
	m := model.Spec{Name: "tiny-deepseek", Layers: 4, Hidden: 512, Heads: 8, FFNHidden: 1024, FFN: model.SwiGLU,
		Vocab: 64000, SeqLen: 1024, Norm: model.RMSNorm,
		MoE:       &model.MoE{Experts: 8, TopK: 2, ExpertFFNHidden: 256, SharedExperts: 1, FirstDenseLayers: 1},
		MLA:       &model.MLA{QLoRARank: 96, KVLoRARank: 64, QKNopeHeadDim: 32, QKRopeHeadDim: 16, VHeadDim: 32},
		MTPLayers: mtp}
	m.Normalize()
	return m
}

// TestMTPMemory checks that the multi-token-prediction module's weights
// sit on the last pipeline stage with a copy of the embedding it looks the
// tokens up in, as Megatron-Core keeps one for a tied output layer.
func TestMTPMemory(t *testing.T) {
	with, without := tinyDeepSeek(1), tinyDeepSeek(0)
	mtp := float64(with.Counts().MTP)
	emb := float64(with.Vocab * with.Hidden)
	w := space.Workload{Batch: 1, SeqLen: 1024}
	// One chip: the module's parameters, bf16 (MixedPrecision's weights).
	one := space.Strategy{Recompute: space.RecomputeFull}
	if got, want := est(t, with, model.ProgramOptions{}, w, one).ParamsBytes-est(t, without, model.ProgramOptions{}, w, one).ParamsBytes, 2*mtp; got != want {
		t.Errorf("one chip: the MTP module adds %v parameter bytes, want 2·%v", got, mtp)
	}
	// Two stages, one micro-batch, full recompute: the last stage (output
	// layer, and the module with its embedding copy) is the peak; the
	// module adds its parameters and the copy there.
	two := space.Strategy{Degree: space.Degrees{space.PP: 2}, Recompute: space.RecomputeFull}
	if got, want := est(t, with, model.ProgramOptions{}, w, two).ParamsBytes-est(t, without, model.ProgramOptions{}, w, two).ParamsBytes, 2*(mtp+emb); got != want {
		t.Errorf("two stages: the MTP module adds %v parameter bytes to the peak stage, want 2·(%v + %v)", got, mtp, emb)
	}
}
