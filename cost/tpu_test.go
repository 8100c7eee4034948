package cost

import (
	"math"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// TestAttentionFill: the attention core's useful MXU fraction by hand.
// Llama's head_dim 128 fills v5p's 128-wide MXU and half of v6e's 256;
// DeepSeek-V3's MLA contracts q·k over 192 (padded to 256 on a 128 MXU,
// 0.75) and produces v's 128: (192+128)/(256+128) = 0.8333; GPUs pad nothing.
func TestAttentionFill(t *testing.T) {
	dsv3, err := model.Preset("deepseek-v3")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		m    model.Spec
		mxu  int
		want float64
	}{
		{"llama3-8b on v5p", llama3("8b"), 128, 1},
		{"llama3-8b on v6e", llama3("8b"), 256, 0.5},
		{"llama3-8b on a GPU", llama3("8b"), 0, 1},
		{"deepseek-v3 on v5p", dsv3, 128, 320.0 / 384},
		{"deepseek-v3 on v6e", dsv3, 256, 320.0 / 512},
	}
	for _, tt := range tests {
		got := attentionFill(program(tt.m, model.ProgramOptions{}), &profiles.Chip{MXUDim: tt.mxu})
		if math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: fill %.6f, want %.6f", tt.name, got, tt.want)
		}
	}
}

// TestCoreReductions: on a chip whose core adds the partial sums, every
// reduce-scatter and all-reduce of the step adds 3·(n-1)/n of its full
// bytes of HBM traffic to the compute, and nothing else moves.
func TestCoreReductions(t *testing.T) {
	w := space.Workload{Batch: 8, SeqLen: 4096}
	s, err := space.Parse("fsdp=4")
	if err != nil {
		t.Fatal(err)
	}
	base := profiles.Cluster{Name: "v5e-4", Axes: []profiles.Axis{tpuAxis("x", 2, false), tpuAxis("y", 2, false)}}
	run := func(core bool) Estimate {
		c := base
		c.Chip = chipV5e
		c.Chip.HBMBytes = 1e12 // room for any layout: only time is compared
		c.Chip.CoreReductions = core
		return placedEstimate(t, llama3("8b"), c, w, s)
	}
	off, on := run(false), run(true)
	eff, _ := profiles.DefaultEfficiency("tpu-v5e")
	var reduced float64
	for _, c := range on.Collectives {
		if c.Op == "ReduceScatter" || c.Op == "AllReduce" {
			reduced += float64(c.Count) * 3 * 3.0 / 4 * c.Bytes // n = 4 over x and y
		}
	}
	if reduced == 0 {
		t.Fatal("fsdp=4 lists no reduce-scatter")
	}
	want := reduced / (chipV5e.HBMBandwidthBytesPerS * eff.HBMFraction)
	if got := on.ComputeSeconds - off.ComputeSeconds; math.Abs(got/want-1) > 1e-9 {
		t.Errorf("core reductions add %.6g s of compute, want %.6g s", got, want)
	}
}
