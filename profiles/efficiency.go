package profiles

import (
	"math"
	"strconv"
)

// Default cost-model coefficients. These are the values `plan calibrate`
// refits; each one names its source in docs/hardware.md (or says it is an
// assumption). Link defaults are per tier here and per chip in chips.go
// where a measurement exists for that chip.
//
// MatmulFraction is the best large-GEMM throughput over peak ("MAMF") from
// [MLE-ACC] §4.1 of docs/hardware.md, rounded to two digits.
//
// MatmulHalfFLOPs follows from Calculon's matmul efficiency points [CALCULON]
// (0.95 at >= 128 GFLOP, 0.9 at 16 GFLOP, 0.6 at 1 GFLOP per call). With
// eff(x) = MatmulFraction * x/(x + MatmulHalfFLOPs), a half point of 0.6
// GFLOP gives 0.60 at 1 GFLOP, 0.92 at 16 GFLOP and 0.95 at 128 GFLOP when
// MatmulFraction is 0.95. Those points come from A100/H100 system files, and
// a small matmul is slow mostly because of a fixed time per call, so the half
// point is scaled with peak: MatmulHalfFLOPs = peak bf16 x 0.6 us (H100:
// 989e12 x 0.6e-6 ≈ 0.6e9). This scaling is our assumption.
//
// HBMFraction and OverlapFraction are assumptions (0.85 each): docs/hardware.md has
// no measured HBM fraction, and docs/formulas.md §6 says overlappable collectives
// hide except for the first and last bucket and some contention.
const (
	matmulHalfSeconds = 0.6e-6 // see above: Calculon's points on H100 [CALCULON]

	defaultHBMFraction     = 0.85 // assumption (typical STREAM-like fraction 0.8-0.9)
	defaultOverlapFraction = 0.85 // assumption, docs/formulas.md §6
)

// Per-tier link defaults, used for chips without their own measurement and
// for YAML axes that leave the fields out.
const (
	// iciLatencySeconds is about 1 us per ICI hop [SB-SHARD].
	iciLatencySeconds = 1e-6
	// iciEfficiency: v5e 4x4 AllGather without wrap, predicted 560 us,
	// measured 680 us: 560/680 ≈ 0.82 [SB-SHARD].
	iciEfficiency = 0.82

	// nvlinkLatencySeconds is NCCL's ring Simple-protocol per-step NVLink
	// latency, 3.4 us, in the older tuning.cc [NCCL-TUNE] and in the 2024
	// one [NCCL-1334]. NCCL's base latency (8.4 us) is not included.
	nvlinkLatencySeconds = 3.4e-6
	// nvlinkEfficiency: 8xH100 ring AllReduce busbw ~370 of 450 GB/s [SB-GPU].
	nvlinkEfficiency = 0.82

	// networkLatencySeconds is NCCL's ring Simple-protocol per-step network
	// latency, 9.6 us [NCCL-TUNE] (Calculon uses 20 us [CALCULON]).
	networkLatencySeconds = 9.6e-6
	// infinibandEfficiency: nccl-tests reach 46 of 50 GB/s per NDR NIC
	// [NCCL-290] (4 nodes of 8xB200 on EFA reach only ~0.73 [MLE-NET]).
	infinibandEfficiency = 0.92
	// ethernetEfficiency is an assumption for plain Ethernet without RDMA tuning.
	ethernetEfficiency = 0.8

	// dcnLatencySeconds is an assumption: no TPU DCN latency is published, so
	// Calculon's 20 us network latency [CALCULON] stands in.
	dcnLatencySeconds = 2e-5
	// dcnEfficiency is an assumption.
	dcnEfficiency = 0.8
)

// gpuSustainedFactor converts a GPU's MAMF (the best single GEMM of a shape
// sweep, run alone at boost clock [MLE-ACC]) into the matmul fraction a
// training step sustains: clocks settle lower under a whole-node power load
// and real layer shapes are not the sweep's best. It is the one fitted GPU
// coefficient: the A100 MatmulFraction that minimises the absolute error over
// the A100 rows of published-runs.csv (Narayanan 2021, Korthikanti 2022,
// MosaicML, torchtitan; the DeepSpeed ZeRO-3 and MT-NLG rows, which no
// coefficient fits, excluded) is 0.68 = 0.78 × 0.87. Applied unchanged to the
// H100 it predicts Llama 3 405B at about 40% MFU against the published 38-43%
// (docs/formulas.md §1.3), a chip and run outside the fit.
const gpuSustainedFactor = 0.78

// sustained is the training matmul fraction of a GPU whose MAMF over peak is
// mamf, to two digits.
func sustained(mamf float64) float64 {
	return math.Round(mamf*gpuSustainedFactor*100) / 100
}

// familyEfficiency returns the documented defaults for one chip family.
func familyEfficiency(family string) (Efficiency, bool) {
	e := Efficiency{HBMFraction: defaultHBMFraction, OverlapFraction: defaultOverlapFraction}
	var peak float64
	switch family {
	case "tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e", "tpu-7x":
		// No MAMF is published for TPUs. The scaling book measures ~100% of
		// roofline for a large matmul on TPU v2 [SB-PROF], and MaxText's 71%
		// end-to-end MFU on v5p implies GEMMs well above 0.8 [MT-v5p]; 0.88
		// is our assumption between the two.
		e.MatmulFraction = 0.88
		peak = map[string]float64{
			"tpu-v4": 275e12, "tpu-v5e": 197e12, "tpu-v5p": 459e12,
			"tpu-v6e": 918e12, "tpu-7x": 2307e12,
		}[family]
	case "nvidia-ampere":
		e.MatmulFraction = sustained(0.87) // A100 SXM MAMF 271.2 of 312 TFLOP/s [MLE-ACC]
		peak = 312e12
	case "nvidia-hopper":
		e.MatmulFraction = sustained(0.80) // H100 SXM MAMF 794.5 of 989 TFLOP/s; H200 the same [MLE-ACC]
		peak = 989e12
	case "nvidia-blackwell":
		e.MatmulFraction = sustained(0.78) // B200 SXM MAMF 1745 of 2250 TFLOP/s [MLE-ACC]
		peak = 2250e12
	case "nvidia-grace-blackwell":
		e.MatmulFraction = sustained(0.73) // GB200 MAMF 1822 of 2500 TFLOP/s [MLE-ACC]
		peak = 2500e12
	case "amd-cdna3":
		e.MatmulFraction = sustained(0.51) // MI300X MAMF 668.4 of 1307 TFLOP/s, TunableOp on [MLE-ACC]
		peak = 1307e12
	default:
		return Efficiency{}, false
	}
	e.MatmulHalfFLOPs = roundSig(peak * matmulHalfSeconds)
	return e, true
}

// DefaultEfficiency returns the documented default coefficients for a chip
// family (Chip.Family), and false for a family the catalogue does not know.
func DefaultEfficiency(family string) (Efficiency, bool) {
	return familyEfficiency(family)
}

// GenericEfficiency is used for a custom chip whose family has no defaults:
// MatmulFraction 0.8 (the H100 MAMF fraction [MLE-ACC]), the H100 half point,
// and the shared HBM and overlap assumptions.
func GenericEfficiency() Efficiency {
	return Efficiency{
		MatmulFraction:  0.8,
		MatmulHalfFLOPs: 0.6e9,
		HBMFraction:     defaultHBMFraction,
		OverlapFraction: defaultOverlapFraction,
	}
}

// roundSig rounds x to two significant digits, so defaults print cleanly.
func roundSig(x float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 2, 64), 64)
	if err != nil {
		return x
	}
	return r
}
