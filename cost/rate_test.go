package cost

import (
	"testing"

	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// TestPowerLimitedRate checks profiles.Chip.PowerLimitedRate: a chip whose
// matmuls run at r of its family's measured chip spends 1/r of the compute
// side of every matmul (t = (FLOPs + half)/(fraction·peak·r)), in bf16 and
// fp8. Only the memory-bound side of a roofline and the memory-bound work a
// matmul brings (its casts and copies) stay, so the matmul seconds grow by
// just under 1/r; the flash attention, the memory-bound passes and the
// optimizer step do not move. Zero reads as 1.
func TestPowerLimitedRate(t *testing.T) {
	w := space.Workload{Batch: 16, SeqLen: 4096}
	for _, spec := range []string{"fsdp=8", "fsdp=8,precision=fp8"} {
		s, err := space.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		run := func(rate float64) Estimate {
			chip := chipH100
			chip.PeakFP8FLOPs, chip.HBMBytes, chip.PowerLimitedRate = 1979e12, 1e12, rate
			return placedEstimate(t, llama3("8b"), gpuCluster("h100-8", chip, 8, 450e9, 50e9), w, s)
		}
		base, unset, slow := run(1), run(0), run(1/1.037)
		if unset.MatmulSeconds != base.MatmulSeconds || unset.StepSeconds != base.StepSeconds {
			t.Errorf("%s: rate 0 gives %v s of matmuls, rate 1 %v s; want the same", spec, unset.MatmulSeconds, base.MatmulSeconds)
		}
		if got := slow.MatmulSeconds / base.MatmulSeconds; got > 1.037+1e-9 || got < 1.035 {
			t.Errorf("%s: matmul seconds x%.6f at rate 1/1.037, want x1.035 to x1.037", spec, got)
		}
		if slow.AttentionSeconds != base.AttentionSeconds {
			t.Errorf("%s: attention seconds %v against %v; the rate must not touch them", spec, slow.AttentionSeconds, base.AttentionSeconds)
		}
		if slow.MemoryBoundSeconds != base.MemoryBoundSeconds || slow.OptimizerSeconds != base.OptimizerSeconds {
			t.Errorf("%s: memory-bound seconds %v against %v; the rate must not touch them", spec, slow.MemoryBoundSeconds, base.MemoryBoundSeconds)
		}
	}
	if r := (profiles.Chip{}).KernelRate(); r != 1 {
		t.Errorf("KernelRate of an unset chip = %v, want 1", r)
	}
}
