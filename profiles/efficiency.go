package profiles

import (
	"math"
	"strconv"
)

// Default cost-model coefficients. These are the values `plan calibrate`
// refits; each one names its source in docs/hardware.md, in
// docs/measured-h100.md (the H100 microbenchmarks and training steps this
// repository carries in testdata) or says it is an assumption. Link defaults
// are per tier here and per chip in chips.go where a measurement exists for
// that chip.
//
// Matmuls: t = FLOPs/(MatmulFraction·peak) + t₀ per call, written as the
// efficiency MatmulFraction·x/(x + MatmulHalfFLOPs) with MatmulHalfFLOPs =
// MatmulFraction·peak·t₀. A least-squares fit in log time over the 162 bf16
// GEMMs of docs/measured-h100.md (gemm.csv: forward, dgrad and wgrad of the
// projections of Llama 3.2 1B/3B, Llama 2 7B, tp8 shards of 70B and 405B,
// two vocabularies and two small shapes at 2,048 to 32,768 tokens) gives
// MatmulFraction 0.705 and t₀ = 25 µs on the H100 (mean absolute error 5.9%,
// worst 25%: K or N of 512-2048 at 2,048 tokens). The fixed part is not a
// launch latency (kernels queue back to back in a step) but the tail of small
// calls: too few output tiles for the SMs, short loops over K.
//
// FP8 matmuls (torch._scaled_mm, e4m3, per-tensor scales, bf16 output; the
// inputs already quantised) keep the fraction fitted on the 12 large GEMMs of
// gemm-fp8.csv (docs/measured-h100.md: four projection shapes, a small 1B qkv
// and a square, at 8,192 and 32,768 tokens): MatmulFP8Fraction 0.69 of the
// 1,979 TFLOP/s fp8 peak. Their t₀ comes from the H200 sweep of
// docs/measured-h100.md (testdata/measured-h200/gemm-sweep.csv: 9 dense and 8
// MoE-expert projection shapes, 256 to 32,768 tokens, forward, dgrad and
// wgrad in bf16 and fp8, the same PyTorch and CUDA as the H100 files): the
// H200 runs the 45 products it shares with gemm.csv 1.037 times slower
// (median; it holds 700 W at 1.4-1.7 GHz in the sweep), so its times over
// 1.037 stand for the H100's. With the fraction held at 0.69, the 231 fp8
// products of 2,048 tokens and more (the range of the bf16 fit) give t₀ =
// 37 µs (mean absolute error 7.7%; gemm-fp8.csv's 12 rows 5.4%, worst 21%:
// the small qkv at 32,768 tokens, 957-1,005 TFLOP/s on both chips). The
// first fit's 62 µs, on the 12 large rows alone, put the MoE expert shapes
// of 2,048-4,096 tokens 37-44% too slow; the same sweep's bf16 products
// give 24 µs against gemm.csv's 25 with the fraction held at 0.705. Large
// shapes run 1.7-2.0x faster than in bf16; small ones gain less, and
// Qwen3-30B-A3B's experts (2,048 by 768 wide) at 2,048 tokens run 0.7-0.9x
// (slower in fp8). The t₀ is one eager call's
// cost: a Python loop of 16 expert GEMMs of 256 tokens, too small to keep
// the GPU busy, takes 21 µs a call in bf16 and 32 µs in fp8
// (testdata/measured-h200/grouped.csv). Other chips with an fp8 peak take
// the fraction (GB200 the B200's scaled by their fp8 MAMF fractions' ratio:
// the same die held to its power reaches 72.3% of its 5,000 TFLOP/s fp8
// datasheet against B200's 76.3% of 4,500, [MLE-ACC] via docs/hardware.md
// §4.1, so it runs 1.05 times B200's fp8, not the datasheets' 1.11, as its
// bf16 MAMF already gives 1.04; issue 39: the GB200 rows of
// published-runs-2.csv under published-gap.py from +11.0% to +8.9% mean
// error) and the first fit's 62 µs (fp8MatmulOverheadSeconds), an
// assumption that stands in for more than the GPU's tail on Blackwell: the
// ungraphed micro-batch-1 MoE rows of docs/published-runs-2.md are paced by
// the host's per-expert launches, which the planner does not price, and
// with 37 µs they go from -6% and +5% to +34% and +35% (issue 39).
//
// Other GPUs have no measured shape sweep: their MatmulFraction is their
// MAMF (the best single GEMM of a shape sweep, [MLE-ACC] §4.1) times
// gpuShapeFactor, the ratio of the H100's real-shape fraction to its MAMF
// (0.705/0.80 = 0.88), and t₀ is the H100's 25 µs. Both transfers are our
// assumption. A tail that is a part-filled wave of output tiles would
// scale in FLOPs with SMs × tile size rather than as a time (148/132 of the
// H100's half point on Blackwell, whose 2-SM MMA keeps 128×256 per SM):
// measured on the published Blackwell runs, it moves the GPU-paced MoE rows
// toward them but breaks the host-paced micro-batch-1 ones and makes the
// dense fp8 rows faster still, so the time transfer stays
// (docs/published-runs-2.md, issue 39).
//
// Attention: a flash kernel runs its matmuls at a fraction of peak and
// spends a fixed time per score element on the softmax's exponential (and,
// backward, the score gradient) on the special-function units; each query
// block's loop over the keys has a fixed start and end. Fitted on the 16 rows
// of docs/measured-h100.md's attention.csv (causal SDPA, head_dim 64 and 128,
// 2,048 to 16,384 tokens, MHA and GQA): forward 1.00 of peak, 0.28 ps per
// score, half rate at 550 keys (mean absolute error 3.0%); backward 0.70,
// 0.47 ps, 1,400 keys (2.4%). The forward's 0.28 ps matches the H100's
// exponential throughput, 132 SMs × 16 per clock × 1.83 GHz ≈ 3.9e12/s
// [derived]. Chips without a measurement take attentionRelative of the matmul
// fraction and no per-score term: flash kernels reach 50-73% of peak on A100
// against an 87% MAMF ([FA2] §4, docs/hardware.md §4.1). Blackwell keeps
// that time at head_dim 128 but splits it the H100's way, matmuls plus its
// SFU's exponentials (withBlackwellExponentials).
//
// SustainedFraction: the H100 figures above are single-GPU microbenchmarks
// (and single-GPU training steps, which they reproduce); a GPU in a job of
// many sustains less: clocks fall under a full node's power and heat,
// and a synchronous step waits for its slowest GPU (the SMs NCCL's
// kernels take while collectives overlap compute are priced on their own,
// cost.collectiveSMShare; with them the Megatron A100 rows' mean error
// moves from -0.5% to -0.8%, so the fit stands). It is the one coefficient
// fitted to public multi-GPU runs: 0.90 minimises the error of the 24
// Megatron-LM A100 rows of published-runs.csv (Narayanan 2021, Korthikanti
// 2022: mean error -1.1%, MAPE 2.9%), and it predicts Llama 3 405B's
// published layout on 16,384 H100 at 42.6% MFU against the published
// 38-43%, a chip, model and framework outside the fit. TPUs keep 1: the
// v5e MaxText rows need no such factor.
//
// HBMFraction: the H100 copies 1 GiB at 2,534 GB/s and runs the fused AdamW
// step at 2,345-2,535 GB/s of 3,350 (docs/measured-h100.md): 0.76, assumed
// for other GPUs. TPUs keep 0.85, an assumption (typical STREAM-like fraction
// 0.8-0.9). OverlapFraction is an assumption (0.85): docs/formulas.md §6 says
// overlappable collectives hide except for the first and last bucket and some
// contention.
// HopperFlashAttention2Fraction is FlashAttention-2's forward-plus-backward
// speed on Hopper relative to the flash kernel the Hopper efficiency models
// (docs/measured-h100.md's attention.csv: a cuDNN-class kernel, causal
// head_dim-128 forward 611-627 and backward 485-514 TFLOP/s at 16K).
// Measured on an H200 (testdata/measured-h200/flash-backends.csv, PyTorch's
// flash backend against its cuDNN backend; TestFlashAttention2AgainstH200):
// FlashAttention-2 runs causal sequences of 4K to 128K tokens and ring
// attention's non-causal chunks at 0.568-0.615 of the model's rate over a
// forward and its 2.5-times backward, median 0.591, while cuDNN's kernel is
// within 2.1% of the model. The FA3 paper's FA2 figures (Shah et al. 2024,
// Figs. 5-6, H100 SXM5, 16K tokens: 335 forward, 322 backward) against the
// model's own 16K rates give (3.5/(1/335 + 2.5/322))/(3.5/(1/611 + 2.5/514))
// = 325.6/538.4 = 0.605; the 0.57 used before divided by FA3's backward of
// 561, which the model does not run.
const HopperFlashAttention2Fraction = 0.59

const (
	gpuMatmulOverheadSeconds = 25e-6         // t₀ fitted on the H100's gemm.csv (see above)
	hopperMatmulFraction     = 0.705         // fitted on the H100's gemm.csv (see above)
	b200FP8MAMF              = 3432.5 / 4500 // B200 fp8 MAMF over its peak [MLE-ACC]
	gb200FP8MAMF             = 3615.6 / 5000 // GB200 fp8 MAMF over its peak [MLE-ACC]
	fp8MatmulFraction        = 0.69          // fitted on the H100's gemm-fp8.csv (see above)
	fp8MatmulOverheadSeconds = 62e-6         // t₀ of the first fit, on the H100's gemm-fp8.csv alone (see above)
	b200FP4Best              = 5239.0 / 9000 // B200 block-scaled fp4 GEMM at 8192³ in cuBLAS over its fp4 peak [FP4-GEMM]
	hopperFP8OverheadSeconds = 37e-6         // t₀ fitted on the H200 sweep at H100 speed, fraction held (see above)
	tpuMatmulOverheadSeconds = 3e-6          // t₀ of Ironwood's matmul curve (docs/tpu.md): 1024³ at 37%, 2048³ at 71% of its plateau
	gpuShapeFactor           = 0.88          // H100 real-shape fraction 0.705 over its MAMF 0.80 (see above)
	attentionRelative        = 0.7           // flash kernel vs best GEMM on A100 ([FA2] §4)

	gpuSustainedFraction   = 0.90 // multi-GPU jobs, fitted on the Megatron A100 rows (see above)
	tpuSustainedFraction   = 0.92 // SUSTAINEDTPU
	gpuHBMFraction         = 0.76 // H100 copy and fused AdamW, docs/measured-h100.md
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

// familyEfficiency returns the documented defaults for one chip family, FP8
// matmuls included (withFP8).
func familyEfficiency(family string) (Efficiency, bool) {
	e, ok := familyBF16Efficiency(family)
	if !ok {
		return e, false
	}
	t0, fraction := fp8MatmulOverheadSeconds, fp8MatmulFraction
	switch family {
	case "nvidia-hopper":
		t0 = hopperFP8OverheadSeconds
	case "nvidia-grace-blackwell":
		// B200's fraction times the two chips' fp8 MAMF fractions' ratio
		// (see above): the same die, held to its power (GB200 is not
		// 5,000/4,500 times B200 in fp8, but 3,615.6/3,432.5).
		fraction = roundSig(fp8MatmulFraction * gb200FP8MAMF / b200FP8MAMF)
	}
	e = withFP8(e, familyFP8Peak(family), fraction, t0)
	return withFP4(e, familyFP4Peak(family), t0), true
}

// withFP4 sets e's FP4 (NVFP4) matmul defaults for a chip of fp4 peak
// FLOP/s (none without one). No real-shape fp4 sweep exists, so the fp8
// fraction is carried over by the ratio of the best fp4 GEMM's fraction to
// the fp8 MAMF's on B200: 0.69 x 0.582/0.763 = 0.53 (cuBLAS's block-scaled
// fp4 GEMM at 8192³, 5,239 of 9,000 TFLOP/s [FP4-GEMM]; fp8 MAMF 3,432.5 of
// 4,500 [MLE-ACC]), so an fp4 matmul runs about 1.5 times an fp8 one, not
// the datasheets' 2. GB200's fp8 fraction (0.65, above) takes the same
// ratio: 0.50, an assumption. The per-call tail is fp8's t₀ (an
// assumption: both are the same tensor-core pipeline's tail).
func withFP4(e Efficiency, peak, t0Seconds float64) Efficiency {
	if peak <= 0 || e.MatmulFP8Fraction <= 0 {
		return e
	}
	e.MatmulFP4Fraction = roundSig(e.MatmulFP8Fraction * b200FP4Best / b200FP8MAMF)
	e.MatmulFP4HalfFLOPs = roundSig(e.MatmulFP4Fraction * peak * t0Seconds)
	return e
}

// withFP8 sets e's FP8 matmul defaults for a chip of fp8 peak FLOP/s (none
// without one): the fraction of that peak and a per-call tail of t0Seconds.
func withFP8(e Efficiency, peak, fraction, t0Seconds float64) Efficiency {
	if peak <= 0 {
		return e
	}
	e.MatmulFP8Fraction = fraction
	e.MatmulFP8HalfFLOPs = roundSig(fraction * peak * t0Seconds)
	return e
}

// familyFP8Peak is the fp8 peak of a family's catalogue chips (chips.go),
// zero where fp8 has no speed-up.
func familyFP8Peak(family string) float64 {
	return map[string]float64{
		"nvidia-hopper": 1979e12, "nvidia-blackwell": 4500e12, "nvidia-grace-blackwell": 5000e12,
		"amd-cdna3": 2615e12, "tpu-7x": 4614e12,
	}[family]
}

// familyFP4Peak is the fp4 peak of a family's catalogue chips (chips.go),
// zero where the chip has none.
func familyFP4Peak(family string) float64 {
	return map[string]float64{"nvidia-blackwell": 9000e12, "nvidia-grace-blackwell": 10000e12}[family]
}

// familyBF16Efficiency returns the documented bf16 defaults for one chip family.
func familyBF16Efficiency(family string) (Efficiency, bool) {
	e := Efficiency{HBMFraction: gpuHBMFraction, OverlapFraction: defaultOverlapFraction}
	var peak, mamf float64
	switch family {
	case "tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e", "tpu-7x":
		// Large bf16 matmuls (docs/tpu.md): v5e 92.3% of peak at 8192³ in
		// JAX's Pallas matmul guide; v5p has the same v5 TensorCore
		// (assumed equal); v6e 75-79% of 918 TFLOP/s in a third-party
		// benchmark (0.77); Ironwood's plateau 83% of peak in Google's
		// microbenchmark. No v4 figure: 0.88 stays our assumption.
		e.HBMFraction, e.SustainedFraction = defaultHBMFraction, tpuSustainedFraction
		e.MatmulFraction = map[string]float64{
			"tpu-v4": 0.88, "tpu-v5e": 0.92, "tpu-v5p": 0.92, "tpu-v6e": 0.77, "tpu-7x": 0.83,
		}[family]
		peak = map[string]float64{
			"tpu-v4": 275e12, "tpu-v5e": 197e12, "tpu-v5p": 459e12,
			"tpu-v6e": 918e12, "tpu-7x": 2307e12,
		}[family]
		e.MatmulHalfFLOPs = roundSig(e.MatmulFraction * peak * tpuMatmulOverheadSeconds)
		e.AttentionFwdFraction = roundSig(attentionRelative * e.MatmulFraction)
		e.AttentionBwdFraction = e.AttentionFwdFraction
		return e, true
	case "nvidia-hopper":
		// Measured on one H100 SXM (docs/measured-h100.md); the H200 and
		// H800 share its SMs and clocks. MAMF 794.5 of 989 TFLOP/s [MLE-ACC].
		e.MatmulFraction = hopperMatmulFraction
		e.MatmulHalfFLOPs = roundSig(e.MatmulFraction * 989e12 * gpuMatmulOverheadSeconds)
		e.AttentionFwdFraction, e.AttentionFwdScoreSeconds, e.AttentionFwdHalfSeq = 1, 0.28e-12, 550
		e.AttentionBwdFraction, e.AttentionBwdScoreSeconds, e.AttentionBwdHalfSeq = 0.70, 0.47e-12, 1400
		e.SustainedFraction = gpuSustainedFraction
		e.FlashAttention2Fraction = HopperFlashAttention2Fraction
		return e, true
	case "nvidia-ampere":
		peak, mamf = 312e12, 0.87 // A100 SXM MAMF 271.2 of 312 TFLOP/s [MLE-ACC]
	case "nvidia-blackwell":
		peak, mamf = 2250e12, 0.78 // B200 SXM MAMF 1745 of 2250 TFLOP/s [MLE-ACC]
	case "nvidia-grace-blackwell":
		peak, mamf = 2500e12, 0.73 // GB200 MAMF 1822 of 2500 TFLOP/s [MLE-ACC]
	case "amd-cdna3":
		peak, mamf = 1307e12, 0.51 // MI300X MAMF 668.4 of 1307 TFLOP/s, TunableOp on [MLE-ACC]
	default:
		return Efficiency{}, false
	}
	e.SustainedFraction = gpuSustainedFraction
	e.MatmulFraction = math.Round(mamf*gpuShapeFactor*100) / 100
	e.MatmulHalfFLOPs = roundSig(e.MatmulFraction * peak * gpuMatmulOverheadSeconds)
	e.AttentionFwdFraction = roundSig(attentionRelative * e.MatmulFraction)
	e.AttentionBwdFraction = e.AttentionFwdFraction
	if family == "nvidia-blackwell" || family == "nvidia-grace-blackwell" {
		// FlashAttention-2 has no Blackwell (tcgen05) path; its Hopper
		// fraction is taken as an upper bound (assumption, unmeasured).
		e.FlashAttention2Fraction = HopperFlashAttention2Fraction
		e = withBlackwellExponentials(e, peak)
	}
	return e, true
}

// blackwellExpSeconds is one exponential of a Blackwell (B200, GB200)
// SFU: 5 tera-exponentials/s [VD-GB300] (148 SMs x 16 a clock at about
// 2.1 GHz [derived]). The H100's fitted forward score time, 0.28 ps, is its
// own SFU's 132 x 16 x 1.83 GHz = 3.9e12/s (see the attention paragraph
// above); its backward's 0.47 ps is 1.68 times the forward's, taken for
// Blackwell too.
const (
	blackwellExpSeconds  = 1 / 5e12
	hopperBwdScoreFactor = 0.47 / 0.28
)

// withBlackwellExponentials splits a Blackwell family's flash attention
// time, as the H100's measured curve is split, into its matmuls and its
// exponentials on the special-function units, t = FLOPs/(f·peak) +
// scores·t_exp (AttentionSeconds), keeping its head_dim-128 time
// (attentionRelative of the matmul fraction, which the NeMo B200
// long-sequence runs of docs/published-runs-2.md hold within +2% to +4%
// at 256K to 1M tokens): the forward's 4·128 FLOPs a score at f and the
// backward's 10·128 at f' take what is left of that time besides
// t_exp = 0.2 ps forward and 0.34 ps backward. A head_dim-64 kernel (GPT-OSS)
// is then exp-bound and slower, a wider one faster; and a chip whose SFU
// is faster (Blackwell Ultra doubles it, Chip.ScoreRate) runs the
// exponentials that much faster [NV-SFT].
func withBlackwellExponentials(e Efficiency, peak float64) Efficiency {
	split := func(frac, flopsPerScore, exp float64) float64 {
		matmul := flopsPerScore/(frac*peak) - exp
		return roundSig(flopsPerScore / (matmul * peak))
	}
	fwd, bwd := blackwellExpSeconds, blackwellExpSeconds*hopperBwdScoreFactor
	e.AttentionFwdFraction, e.AttentionBwdFraction = split(e.AttentionFwdFraction, 4*128, fwd), split(e.AttentionBwdFraction, 10*128, bwd)
	e.AttentionFwdScoreSeconds, e.AttentionBwdScoreSeconds = roundSig(fwd), roundSig(bwd)
	return e
}

// ALiBiRate is the speed of an attention's kernel relative to the flash
// kernel the efficiency models: FlashAttention2Fraction for an ALiBi model
// (alibi) whose framework does not pass the bias to a fused kernel
// (fused), where the chip has a faster kernel than FlashAttention-2; 1
// otherwise.
func (e Efficiency) ALiBiRate(alibi, fused bool) float64 {
	if alibi && !fused && e.FlashAttention2Fraction > 0 {
		return e.FlashAttention2Fraction
	}
	return 1
}

// DefaultEfficiency returns the documented default coefficients for a chip
// family (Chip.Family), and false for a family the catalogue does not know.
func DefaultEfficiency(family string) (Efficiency, bool) {
	return familyEfficiency(family)
}

// GenericEfficiency is used for a custom chip whose family has no defaults:
// the H100's measured matmul fraction and half point, attentionRelative of
// it for attention, and the shared HBM and overlap assumptions.
func GenericEfficiency() Efficiency {
	e, _ := familyEfficiency("nvidia-hopper")
	e.AttentionFwdFraction = roundSig(attentionRelative * e.MatmulFraction)
	e.AttentionBwdFraction = e.AttentionFwdFraction
	e.AttentionFwdScoreSeconds, e.AttentionBwdScoreSeconds = 0, 0
	e.AttentionFwdHalfSeq, e.AttentionBwdHalfSeq = 0, 0
	e.HBMFraction = defaultHBMFraction
	return e
}

// roundSig rounds x to two significant digits, so defaults print cleanly.
func roundSig(x float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 2, 64), 64)
	if err != nil {
		return x
	}
	return r
}

// MatmulSeconds is the time of one matmul call of flops FLOPs on a chip of
// peak FLOP/s at the efficiency MatmulFraction·x/(x + MatmulHalfFLOPs):
// (flops + MatmulHalfFLOPs)/(MatmulFraction·peak), the fitted t = FLOPs/
// (MatmulFraction·peak) + t₀ (see the constants above).
func (e Efficiency) MatmulSeconds(flops, peak float64) float64 {
	if flops <= 0 {
		return 0
	}
	return (flops + e.MatmulHalfFLOPs) / (e.MatmulFraction * peak)
}

// MatmulFP8Seconds is MatmulSeconds for an FP8 matmul on a chip of fp8
// peak FLOP/s: (flops + MatmulFP8HalfFLOPs)/(MatmulFP8Fraction·peak).
func (e Efficiency) MatmulFP8Seconds(flops, peak float64) float64 {
	if flops <= 0 {
		return 0
	}
	return (flops + e.MatmulFP8HalfFLOPs) / (e.MatmulFP8Fraction * peak)
}

// MatmulFP4Seconds is MatmulFP8Seconds for an FP4 (NVFP4) matmul on a chip
// of fp4 peak FLOP/s.
func (e Efficiency) MatmulFP4Seconds(flops, peak float64) float64 {
	if flops <= 0 {
		return 0
	}
	return (flops + e.MatmulFP4HalfFLOPs) / (e.MatmulFP4Fraction * peak)
}

// AttentionSeconds is the time of a flash attention kernel, forward or
// backward, whose matmuls do flops FLOPs over scores elements of the score
// square with kvTokens keys per call, on a chip of peak FLOP/s:
// (flops/(fraction·peak) + scores·score seconds)·(1 + half/kvTokens) (see
// the constants above).
func (e Efficiency) AttentionSeconds(backward bool, flops, scores, kvTokens, peak float64) float64 {
	if flops <= 0 {
		return 0
	}
	frac, score, half := e.AttentionFwdFraction, e.AttentionFwdScoreSeconds, e.AttentionFwdHalfSeq
	if backward {
		frac, score, half = e.AttentionBwdFraction, e.AttentionBwdScoreSeconds, e.AttentionBwdHalfSeq
	}
	t := flops/(frac*peak) + scores*score
	if kvTokens > 0 {
		t *= 1 + half/kvTokens
	}
	return t
}
