package score

import (
	"math"
	"testing"

	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/memory"
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// TestActOffloadTransfers: Llama 3 70B under fsdp=64 on 64 H100s (PCIe at
// 51.2 GB/s a GPU), two micro-batches of two 8,192-token sequences. An
// activation offload moves the bytes the memory model puts in host memory
// (memory.Breakdown.HostActivationsBytes) out in each micro-batch's
// forward pass and back in its backward pass: 2·M·H/bw in all. Each pass
// hides its copies under OverlapFraction of its compute, so the step
// grows by M·(max(0, H/bw - of·fc) + max(0, H/bw - of·bc)) and by nothing
// else: a quarter of the layers (20, 90 GB, 1.8 s a pass) hides under the
// forward pass's 4 s, 50 of them (225 GB, 4.4 s) do not. The two models
// size the offloaded bytes from one layer program; they differ by the flash kernel's fp32
// statistics (4 MB a layer here), which the cost model's sizes leave
// out, so the link time agrees within 0.5%.
func TestActOffloadTransfers(t *testing.T) {
	m, err := model.Preset("llama3-70b")
	if err != nil {
		t.Fatal(err)
	}
	c, err := profiles.Parse("h100-64")
	if err != nil {
		t.Fatal(err)
	}
	w := space.Workload{Batch: 256, SeqLen: 8192}
	p := model.MustProgram(m, model.ProgramOptions{})
	eff, _ := profiles.DefaultEfficiency(c.Chip.Family)
	bw := c.Chip.HostBandwidthBytesPerS
	run := func(n int) (cost.Estimate, float64) {
		t.Helper()
		s, err := space.Parse("fsdp=64,mb=2")
		if err != nil {
			t.Fatal(err)
		}
		s.ActOffload = n
		placed, err := s.Place(c)
		if err != nil {
			t.Fatal(err)
		}
		est, err := cost.Evaluate(p, c, w, placed, cost.Options{Trace: true})
		if err != nil {
			t.Fatal(err)
		}
		b, err := memory.Estimate(p, c, w, placed)
		if err != nil {
			t.Fatal(err)
		}
		return est, b.HostActivationsBytes
	}
	base, _ := run(0)
	if base.Passes.OffloadSeconds != 0 {
		t.Fatalf("act_offload=0 moves %g s over the host link", base.Passes.OffloadSeconds)
	}
	for _, tt := range []struct {
		n       int
		exposed bool
	}{{20, false}, {50, true}} {
		est, host := run(tt.n)
		ps := est.Passes
		M := ps.Microbatches
		x := host / bw
		if want := 2 * M * x; math.Abs(ps.OffloadSeconds-want) > 5e-3*want {
			t.Errorf("act_offload=%d: %.6g s over the host link, want 2·%g·%.4g GB / %.4g GB/s = %.6g s", tt.n, ps.OffloadSeconds, M, host/1e9, bw/1e9, want)
		}
		of := eff.OverlapFraction
		x = ps.OffloadSeconds / (2 * M) // one pass's copies, as the cost model sized them
		want := M * (max(0, x-of*ps.ForwardSeconds) + max(0, x-of*ps.BackwardSeconds))
		if math.Abs(ps.OffloadExposedSeconds-want) > 1e-9 || (want > 0) != tt.exposed {
			t.Errorf("act_offload=%d: %.6g s exposed, want %.6g (exposed: %t)", tt.n, ps.OffloadExposedSeconds, want, tt.exposed)
		}
		if est.ExposedOffloadSeconds != ps.OffloadExposedSeconds {
			t.Errorf("act_offload=%d: Estimate.ExposedOffloadSeconds %.6g, want the trace's %.6g", tt.n, est.ExposedOffloadSeconds, ps.OffloadExposedSeconds)
		}
		if d := est.StepSeconds - base.StepSeconds; math.Abs(d-ps.OffloadExposedSeconds) > 1e-9 {
			t.Errorf("act_offload=%d: step grows by %.6g s, want the exposed %.6g s alone", tt.n, d, ps.OffloadExposedSeconds)
		}
	}
}
