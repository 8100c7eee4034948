package memory

import (
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// TestSavesGathered checks the activations a DTensor plan keeps beyond
// Megatron's (model.ProgramOptions.SavesGathered) on Llama 3 8B (hidden
// 4,096, 32 layers) at tp 8 with sequence parallelism, one sequence of
// 8,192 tokens: the sequence-parallel inputs of the column-parallel
// matmuls are kept whole over tp instead of as 1/8 shards, 7/8 of 8,192 x
// 4,096 x 2 bytes (67,108,864) more each. Without recompute those are each
// layer's two normalised inputs (xn before q, k and v, xn2 before the gate
// and up projections), 2 x 32 x 58,720,256 = 3,758,096,384 bytes of
// activations, and the final norm's output before the output layer,
// 58,720,256 bytes among the buffers (the output layer's saved tensors). A
// full checkpoint keeps only each layer's input, so only the output
// layer's input is left.
func TestSavesGathered(t *testing.T) {
	m, err := model.Preset("llama3-8b")
	if err != nil {
		t.Fatal(err)
	}
	w := space.Workload{Batch: 1, SeqLen: 8192}
	for _, tc := range []struct {
		recompute     string
		acts, buffers float64
	}{
		{space.RecomputeNone, 3758096384, 58720256},
		{space.RecomputeFull, 0, 58720256},
	} {
		s := space.Strategy{SP: true, Recompute: tc.recompute}
		s.Degree[space.TP] = 8
		megatron := est(t, m, model.ProgramOptions{}, w, s)
		dtensor := est(t, m, model.ProgramOptions{SavesGathered: true}, w, s)
		acts, buffers := dtensor.ActivationsBytes-megatron.ActivationsBytes, dtensor.BuffersBytes-megatron.BuffersBytes
		if acts != tc.acts || buffers != tc.buffers {
			t.Errorf("recompute %s: the DTensor plan keeps %.0f bytes more activations and %.0f more buffers, want %.0f and %.0f",
				tc.recompute, acts, buffers, tc.acts, tc.buffers)
		}
		if dtensor.ParamsBytes != megatron.ParamsBytes || dtensor.OptimizerBytes != megatron.OptimizerBytes {
			t.Errorf("recompute %s: the model states changed: %+v, %+v", tc.recompute, dtensor, megatron)
		}
	}
}
