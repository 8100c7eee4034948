package memory

import (
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// tinyZamba2 is a Zamba2-shaped model small enough for tests: six Mamba-2
// layers, layers 1, 3 and 5 invoking the shared blocks round-robin.
func tinyZamba2(blocks int) model.Spec {
	m := model.Spec{Name: "tiny-zamba2", Layers: 6, Hidden: 256, Heads: 4, HeadDim: 128, FFNHidden: 1024, FFN: model.SwiGLU,
		Vocab: 1000, SeqLen: 1024, Norm: model.RMSNorm, TiedEmbeddings: true,
		Pattern: []string{"mamba2/nomlp", "shared+mamba2/nomlp"},
		SSM:     &model.SSM{ValueHeads: 8, ValueHeadDim: 64, KeyHeads: 1, KeyDim: 64, ConvKernel: 4, ConvBias: true},
		Shared:  &model.SharedBlocks{Blocks: blocks, AdapterRank: 16}}
	m.Normalize()
	return m
}

// TestSharedBlocksOncePerStage checks that a shared block's weights are
// held once by a pipeline stage however many of its layers invoke it,
// while the per-invocation linear and adapters count per layer.
func TestSharedBlocksOncePerStage(t *testing.T) {
	one, two := tinyZamba2(1), tinyZamba2(2)
	block := float64(one.SharedBlockParams())
	w := space.Workload{Batch: 1, SeqLen: 1024}
	chip := space.Strategy{Recompute: space.RecomputeFull}
	// One chip, bf16 weights: the model's parameters, each block once.
	for _, m := range []model.Spec{one, two} {
		if got, want := est(t, m, model.ProgramOptions{}, w, chip).ParamsBytes, 2*float64(m.Counts().Total); got != want {
			t.Errorf("%d blocks, one chip: %v parameter bytes, want 2·%v (Counts)", m.Shared.Blocks, got, m.Counts().Total)
		}
	}
	// Three invocations of one block hold it once; of two blocks, both.
	if got, want := est(t, two, model.ProgramOptions{}, w, chip).ParamsBytes-est(t, one, model.ProgramOptions{}, w, chip).ParamsBytes, 2*block; got != want {
		t.Errorf("a second shared block adds %v parameter bytes, want 2·%v", got, block)
	}
	// Two stages of three layers: with one block, the second stage
	// (layers 3 and 5 invoke it; the final norm and the copy of the tied
	// embedding) holds it once, as the first (layer 1; the embedding).
	pp := space.Strategy{Degree: space.Degrees{space.PP: 2}, Recompute: space.RecomputeFull}
	stage := 3*float64(one.MixerParams(model.MixMamba2)+int64(one.Hidden)) + 2*float64(one.SharedInvocationParams()) + block + float64(one.Hidden) + float64(one.Vocab*one.Hidden)
	first := 3*float64(one.MixerParams(model.MixMamba2)+int64(one.Hidden)) + float64(one.SharedInvocationParams()) + block + float64(one.Vocab*one.Hidden)
	if got, want := est(t, one, model.ProgramOptions{}, w, pp).ParamsBytes, 2*max(stage, first); got != want {
		t.Errorf("two stages: %v parameter bytes on the peak stage, want 2·%v", got, max(stage, first))
	}
}
