package memory

import (
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// TestReduceCopy checks model.Precision.ReduceCopy, FSDP2's backward
// buffers, on Llama 3 8B under autocast (bf16 gathered weights, fp32
// gradients): a unit's backward holds its gathered weights, the next
// unit's prefetched gather and its own bf16 gradients beside the previous
// unit's fp32 reduce-scatter copy, one Weight-sized unit more than two
// gathered units and one Grad-sized gradient. The largest unit is the
// output layer's, 128,256 x 4,096 = 525,336,576 parameters and the final
// norm's 4,096, so the buffers grow by 2 x 525,340,672 = 1,050,681,344
// bytes. A pipeline whose FSDP
// keeps each stage gathered (PipelineUnsharded) reduces once a step, and
// data parallelism gathers nothing: neither moves.
func TestReduceCopy(t *testing.T) {
	m, err := model.Preset("llama3-8b")
	if err != nil {
		t.Fatal(err)
	}
	w := space.Workload{Batch: 16, SeqLen: 4096}
	for _, tc := range []struct {
		name string
		deg  map[space.Dim]int
		want float64
	}{
		{"fsdp 8", map[space.Dim]int{space.FSDP: 8}, 1050681344},
		{"fsdp 2, pp 4", map[space.Dim]int{space.FSDP: 2, space.PP: 4}, 0},
		{"dp 8", map[space.Dim]int{space.DP: 8}, 0},
	} {
		var s space.Strategy
		for d, n := range tc.deg {
			s.Degree[d] = n
		}
		off := model.ProgramOptions{Precision: model.AutocastPrecision()}
		off.Precision.PipelineUnsharded = true
		on := off
		on.Precision.ReduceCopy = true
		a, b := est(t, m, off, w, s), est(t, m, on, w, s)
		if got := b.BuffersBytes - a.BuffersBytes; got != tc.want {
			t.Errorf("%s: ReduceCopy adds %.0f bytes of buffers, want %.0f", tc.name, got, tc.want)
		}
		if a.ParamsBytes != b.ParamsBytes || a.GradsBytes != b.GradsBytes || a.ActivationsBytes != b.ActivationsBytes {
			t.Errorf("%s: only the buffers may move: %+v, %+v", tc.name, a, b)
		}
	}
}
