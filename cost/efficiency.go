package cost

import (
	"strings"

	"github.com/meshplan/meshplan/profiles"
)

// DefaultEfficiency returns the coefficients the cost model uses for a chip
// when the cluster profile leaves a field of Cluster.Efficiency zero. They are
// physically motivated per chip family, not fitted to any one run:
//
//   - MatmulFraction: one rule for GPUs, 0.9 × the single-GEMM MAMF over peak
//     (hardware.md §4.1: A100 0.87, H100 0.80, B200 0.78, MI300X 0.51): MAMF
//     is the best shape of a sweep at boost clocks, training runs sustained
//     clocks on fixed shapes. TPUs run large matmuls at ~100% of the roofline
//     [SB-PROF] and MaxText reaches 64-71% MFU with full remat on v5p
//     (hardware.md §4.2), so 0.93.
//   - MatmulHalfFLOPs: 0.6 GFLOP, Calculon's curve (0.95 at ≥128 GFLOP, 0.9 at
//     16 GFLOP, 0.6 at 1 GFLOP, hardware.md §3.3) with eff = f·x/(x+half).
//   - HBMFraction: 0.8 of the HBM bandwidth for memory-bound ops.
//   - OverlapFraction: 0.9 of overlappable communication hides (FSDP prefetch,
//     bucketed gradient reduction, formulas.md §6; contention costs the rest).
func DefaultEfficiency(chip profiles.Chip) profiles.Efficiency {
	e := profiles.Efficiency{MatmulFraction: 0.8, MatmulHalfFLOPs: 0.6e9, HBMFraction: 0.8, OverlapFraction: 0.9}
	name := strings.ToLower(chip.Family + " " + chip.Name)
	switch {
	case strings.Contains(name, "tpu") || strings.HasPrefix(strings.ToLower(chip.Name), "v"):
		e.MatmulFraction = 0.93
		e.HBMFraction = 0.85
	case strings.Contains(name, "a100") || strings.Contains(name, "ampere"):
		e.MatmulFraction = 0.78 // 0.9 × 0.869
	case strings.Contains(name, "h100") || strings.Contains(name, "h200") || strings.Contains(name, "h800") || strings.Contains(name, "hopper"):
		e.MatmulFraction = 0.72 // 0.9 × 0.803
	case strings.Contains(name, "b200") || strings.Contains(name, "gb200") || strings.Contains(name, "blackwell"):
		e.MatmulFraction = 0.70 // 0.9 × 0.776
	case strings.Contains(name, "mi3") || strings.Contains(name, "amd"):
		e.MatmulFraction = 0.46 // 0.9 × 0.514
	}
	return e
}
