package memory

import (
	"strings"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// TestActOffloadActivations: a Llama 70B (80 layers) under fsdp=64 on 64
// H100s, two sequences of 8,192 tokens a micro-batch: offloading the first
// 20 layers' activations leaves three quarters of them in HBM and puts
// the other quarter in host memory; 10 leaves seven eighths; nothing else
// moves; the
// Estimator agrees with the Model. More than the chip's share of its
// host's memory (profiles.Chip.HostDRAMBytes) is refused, naming the fix:
// behind a PCIe Gen4 link (a DGX A100's 1 TB over 8 GPUs, 125 GB) 40
// layers' 180 GB do not fit, 20 layers' 90 GB do.
func TestActOffloadActivations(t *testing.T) {
	c := h100(64)
	w := space.Workload{Batch: 256, SeqLen: 8192}
	mm := NewModel(model.MustProgram(llama70B(), model.ProgramOptions{}))
	e := mm.NewEstimator(c, w)
	run := func(n int) Breakdown {
		t.Helper()
		return estimateBoth(t, mm, e, c, w, space.Strategy{Degree: space.Degrees{space.FSDP: 64}, MB: 2, ActOffload: n})
	}
	none := run(0)
	if none.HostActivationsBytes != 0 {
		t.Errorf("act_offload=0: %g bytes in host memory, want none", none.HostActivationsBytes)
	}
	for _, tt := range []struct {
		n    int
		keep float64
	}{{20, 0.75}, {10, 0.875}} {
		b := run(tt.n)
		if !within(b.ActivationsBytes, tt.keep*none.ActivationsBytes, 1e-12) || !within(b.HostActivationsBytes, (1-tt.keep)*none.ActivationsBytes, 1e-12) {
			t.Errorf("act_offload=%d: %.4g bytes in HBM and %.4g in host memory, want %.4g and %.4g", tt.n,
				b.ActivationsBytes, b.HostActivationsBytes, tt.keep*none.ActivationsBytes, (1-tt.keep)*none.ActivationsBytes)
		}
		if b.ParamsBytes != none.ParamsBytes || b.GradsBytes != none.GradsBytes || b.OptimizerBytes != none.OptimizerBytes || b.BuffersBytes != none.BuffersBytes {
			t.Errorf("act_offload=%d moved more than activations: %+v against %+v", tt.n, b, none)
		}
	}

	gen4 := c
	gen4.Chip.HostBandwidthBytesPerS = 25.6e9
	for _, tt := range []struct {
		n  int
		ok bool
	}{{40, false}, {20, true}} {
		s := strat(space.Strategy{Degree: space.Degrees{space.FSDP: 64}, MB: 2, ActOffload: tt.n})
		placed, err := s.Place(gen4)
		if err != nil {
			t.Fatal(err)
		}
		_, err = mm.Estimate(gen4, w, placed)
		_, eerr := mm.NewEstimator(gen4, w).Estimate(placed)
		for _, err := range []error{err, eerr} {
			if tt.ok && err != nil || !tt.ok && (err == nil || !strings.Contains(err.Error(), "offload fewer layers")) {
				t.Errorf("act_offload=%d behind a Gen4 host: %v, want refused %t", tt.n, err, !tt.ok)
			}
		}
	}
}
