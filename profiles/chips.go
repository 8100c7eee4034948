package profiles

import (
	"fmt"
	"math"
	"strings"
)

// link holds the defaults of one mesh tier for one chip.
type link struct {
	tier               Tier
	bandwidthBytesPerS float64
	latencySeconds     float64
	efficiency         float64
}

// torusSpec describes how a TPU generation's slices are shaped.
type torusSpec struct {
	// dims is 3 for the OCS-cabled cubes of v4, v5p and tpu7x, 2 for v5e and v6e.
	dims int
	// maxShape is the largest single slice, sorted ascending.
	maxShape []int
}

// chipSpec is one catalogue entry: the chip, the names it answers to, and
// the links its clusters are built from.
type chipSpec struct {
	chip    Chip
	aliases []string
	// torus is set for TPUs and nil for GPUs.
	torus *torusSpec
	// scaleUp is ICI per link (TPU) or the NVLink domain (GPU).
	scaleUp link
	// scaleOut is DCN per chip (TPU) or the GPU's NIC (GPU).
	scaleOut link
	// domain is the number of GPUs per NVLink domain (GPU only).
	domain int
	// node is the number of GPUs per node, the unit a scheduler hands a job
	// (GPU only): a GB200 NVL72 compute tray holds 4; zero means a node is
	// the whole domain (DGX/HGX: 8).
	node int
	// peerBytesPerS, when set, is the one-way bandwidth between one pair of
	// GPUs of a point-to-point mesh (MI300X): a group of g GPUs inside the
	// domain gets (g-1) times it, not the whole egress.
	peerBytesPerS float64
	// variantOf names the catalogue chip this one is a memory variant of
	// (a100-40gb of a100): a cluster file that names the base chip and
	// changes only its capacity to this one's means this chip (variantFor).
	variantOf string
}

// variantHBMTolerance is how far a cluster file's hbm_bytes may be from a
// variant's capacity and still name it: a label is written in GB or GiB
// (96 GB as 96e9 or as 96 GiB, 7.4% apart) and CUDA reports less than
// either (42.3e9 bytes for a "40 GB" A100).
const variantHBMTolerance = 0.08

// variantFor returns the catalogue variant of base whose capacity is
// within variantHBMTolerance of hbmBytes, if there is one. A chip's HBM
// capacity is tied to its memory type and stack count, and so to its
// bandwidth and, for the power-capped parts, its clock: an A100 with 40 GB
// is the HBM2 part at 1555 GB/s, not an 80 GB A100 with less memory.
func variantFor(base chipSpec, hbmBytes float64) (chipSpec, bool) {
	for _, s := range catalogue() {
		if s.variantOf == base.chip.Name && math.Abs(hbmBytes/s.chip.HBMBytes-1) <= variantHBMTolerance {
			return s, true
		}
	}
	return chipSpec{}, false
}

const gb = 1e9 // bytes in a GB

// What a GPU runtime keeps out of HBMBytes, the total CUDA reports [HBM-RT]:
// the CUDA context, about 0.3-0.6 GiB per process with lazy module loading
// (CUDA >= 11.7; pytorch issues 107667 and 109888), taken as 0.5 GiB; the
// caching allocator's fragmentation, 5% (Megatron's memory estimator pads by
// 1.05, docs/formulas.md §2.4 [MEG-MEM]; the measured H100 steps reserve 0.1
// to 19% above their peak allocation, docs/measured-h100.md); and NCCL's
// buffers, about 0.6 GB per communicator (NCCL_BUFFSIZE 4 MiB × three
// protocols × channels × ring peers; 0.54-0.69 GB measured per communicator
// on 4×A100, NVIDIA/nccl issue 964).
const (
	gpuContextBytes      = 0.5 * (1 << 30)
	gpuAllocatorSlack    = 0.05
	gpuCommunicatorBytes = 0.6e9
)

// Host links, one way, at the 80% that large DMA transfers reach (an
// assumption): PCIe Gen4 x16 is 32 GB/s (A100), Gen5 x16 64 GB/s (H100,
// H200, H800, B200, MI300X, TPU 7x, assumed), NVLink-C2C 450 GB/s (GB200's
// Grace) [MLE-NET]. TPUs v4 to v6e take the scaling book's host-to-chip
// figures per chip, not measured here: ~1.6e10 B/s for v4 (PCIe Gen3
// x16), v5e and v5p, ~3.2e10 for v6e (Gen5) [SB-TPU][GC-v6e md]
// (docs/hardware.md §1.1).
const (
	pcie4Bytes   = 0.8 * 32 * gb
	pcie5Bytes   = 0.8 * 64 * gb
	pcie6Bytes   = 0.8 * 128 * gb // B300's PCIe Gen6 x16 [KL-B300]
	nvlinkC2CBps = 0.8 * 450 * gb
	tpuHostBytes = 1.6e10 // v4, v5e, v5p host-to-chip [SB-TPU]
	v6eHostBytes = 3.2e10 // v6e host-to-chip, PCIe Gen5 [GC-v6e md][SB-TPU]
)

// h100PowerCap500W is the sustained matmul rate of an H100 capped at 500 W
// over one at its 700 W TDP: (500/700)^(1/3), from SM power ∝ f·V² with
// V ∝ f [derived] (uncertain; no published clock at the cap).
const h100PowerCap500W = 0.894

// h200PowerLimited is the H200's sustained matmul rate over the H100's,
// measured: the same 45 bf16 GEMM products with the same PyTorch and CUDA ran
// a median 1.037 times slower on an H200 (0.93-1.21), which holds 700 W at
// 1.4-1.7 GHz under them while its HBM3e draws more of the budget
// (testdata/measured-h200/gemm-sweep.csv against docs/measured-h100.md's
// gemm.csv): 1/1.037.
const h200PowerLimited = 1 / 1.037

// b300PowerRate and gb300PowerRate are Blackwell Ultra's sustained matmul
// rates over its twin's at the same datasheet peaks: the twin die (all 160
// SMs enabled) given more power, (1100/1000)^(1/3) over B200 and
// (1400/1200)^(1/3) over GB200, from SM power ∝ f·V² with V ∝ f as for the
// power-capped H100 [derived]. The same rule puts GB200 (1,200 W) at 1.063
// times B200 (1,000 W), where their measured fp8 and bf16 MAMFs are 1.053
// and 1.044 apart [MLE-ACC] (docs/hardware.md §4.1).
const (
	b300PowerRate  = 1.0323 // (1100/1000)^(1/3)
	gb300PowerRate = 1.0527 // (1400/1200)^(1/3)
	// ultraScoreRate is Blackwell Ultra's exponential throughput over
	// Blackwell's: 10.7 against 5 tera-exponentials/s [VD-GB300], NVIDIA's
	// "doubling SFU throughput" [NV-SFT].
	ultraScoreRate = 10.7 / 5
)

// gpuChip sets a GPU's runtime reserves and its host link (PCIe Gen5 unless
// set).
func gpuChip(c Chip) Chip {
	c.RuntimeReserveBytes, c.AllocatorSlackFraction, c.CommunicatorBytes = gpuContextBytes, gpuAllocatorSlack, gpuCommunicatorBytes
	if c.SMs == 0 {
		c.SMs = familySMs(c.Family)
	}
	if c.HostBandwidthBytesPerS == 0 {
		c.HostBandwidthBytesPerS = pcie5Bytes
	}
	return c
}

// familySMs is the streaming multiprocessors of a GPU family's SXM parts:
// A100 108, H100/H200/H800 132, B200 and GB200 148 (NVIDIA's A100, H100
// and Blackwell architecture whitepapers), MI300X 304 compute units (AMD
// CDNA 3 whitepaper); 0 for others.
func familySMs(family string) int {
	switch family {
	case "nvidia-ampere":
		return 108
	case "nvidia-hopper":
		return 132
	case "nvidia-blackwell", "nvidia-grace-blackwell":
		return 148
	case "amd-cdna3":
		return 304
	}
	return 0
}

// tpuChip is a TPU: HBMBytes is JAX's bytes_limit, already net of what XLA
// and libtpu keep (0.25-1.25 GiB below the physical HBM [HBM-RT]); buffers are
// assigned statically and collective scratch lives in the program's memory;
// the TensorCore adds the partial sums of its reductions (CoreReductions).
func tpuChip(c Chip) Chip {
	c.CoreReductions = true
	if c.HostBandwidthBytesPerS == 0 {
		c.HostBandwidthBytesPerS = tpuHostBytes
	}
	return c
}

// catalogue returns every known chip, TPUs first. It is built on each call
// so that no caller can change the defaults of another.
func catalogue() []chipSpec {
	ici := func(bw float64) link { return tierLink(ICI, bw) }
	dcn := func(bw float64) link { return tierLink(DCN, bw) }
	nvlink := func(bw, eff float64) link {
		l := tierLink(NVLink, bw)
		l.efficiency = eff // each GPU generation its own
		return l
	}
	nic := func(bw float64) link { return tierLink(InfiniBand, bw) }
	cube := func(maxShape ...int) *torusSpec { return &torusSpec{dims: 3, maxShape: maxShape} }
	plane := &torusSpec{dims: 2, maxShape: []int{16, 16}} // v5e/v6e: at most 16x16 [SB-TPU]

	return []chipSpec{
		{
			// TPU v4 [GC-v4]: 275 TFLOP/s bf16, no fp8, int8 at the bf16 rate (so 0), 32 GiB HBM2 at 1200 GB/s, 2 TensorCores;
			// JAX's bytes_limit is 34,088,157,184 (31.75 GiB) [HBM-RT].
			chip: tpuChip(Chip{Name: "v4", Family: "tpu-v4", PeakBF16FLOPs: 275e12,
				HBMBytes: 34088157184, HBMBandwidthBytesPerS: 1200 * gb, TensorCoresPerChip: 2, MXUDim: 128}),
			torus: cube(16, 16, 16), // full pod 16x16x16 = 4096 chips [GC-v4][SB-TPU]
			// 4.5e10 B/s per link one way [SB-TPU]; the vendor's "400G each direction"
			// would give 5e10 [KL-v4].
			scaleUp: ici(4.5e10),
			// No current figure: the book's first edition gave ~2.5e10 B/s per
			// 4-chip host [SB-TPU], i.e. 6.25e9 per chip (uncertain).
			scaleOut: dcn(6.25e9),
		},
		{
			// TPU v5e [GC-v5e]: 197 TFLOP/s bf16 (int8 393 TOP/s, no fp8), 16 GiB HBM2 at 819 GB/s,
			// 1 TensorCore; bytes_limit 16,909,332,480 (15.75 GiB) [HBM-RT].
			chip: tpuChip(Chip{Name: "v5e", Family: "tpu-v5e", PeakBF16FLOPs: 197e12, PeakInt8OPs: 393e12,
				HBMBytes: 16909332480, HBMBandwidthBytesPerS: 819 * gb, TensorCoresPerChip: 1, MXUDim: 128}),
			aliases: []string{"v5litepod"},
			torus:   plane,
			// 4.5e10 B/s per link one way [SB-TPU]; the doc's 400 GB/s bidi over 4
			// ports gives 5e10 [GC-v5e]. The book's figure is the one its 560 us
			// prediction (and so iciEfficiency) used.
			scaleUp:  ici(4.5e10),
			scaleOut: dcn(3.125e9), // 2x100 Gb/s per 8-chip host = 25 Gb/s per chip [GC-v5e][SB-TPU]
		},
		{
			// TPU v5p [GC-v5p]: 459 TFLOP/s bf16 (fp8 at the same rate, so 0; int8 918 TOP/s
			// [SB-TPU][MLE-ACC]), 95 GiB HBM2e (96 GB in [SB-TPU]) at 2765 GB/s (2.8e12 in
			// [SB-TPU]), 2 TensorCores; bytes_limit 102,803,439,616 (95.74 GiB) [HBM-RT].
			chip: tpuChip(Chip{Name: "v5p", Family: "tpu-v5p", PeakBF16FLOPs: 459e12, PeakInt8OPs: 918e12,
				HBMBytes: 102803439616, HBMBandwidthBytesPerS: 2765 * gb, TensorCoresPerChip: 2, MXUDim: 128}),
			torus: cube(16, 20, 28), // full pod 8960 chips [SB-TPU]; the doc's largest slice is 6144 [GC-v5p]
			// 9e10 B/s per link one way [SB-TPU]; the doc's 1200 GB/s bidi over 6 links gives 1e11 [GC-v5p].
			scaleUp:  ici(9e10),
			scaleOut: dcn(6.25e9), // 50 Gb/s per chip [GC-v5p][SB-TPU]
		},
		{
			// TPU v6e Trillium [GC-v6e]: 918 TFLOP/s bf16 (fp8 same rate, so 0; int8 1836 TOP/s),
			// 32 GiB HBM at 1640 GB/s, 1 TensorCore; bytes_limit 33,550,237,696 (31.25 GiB) [HBM-RT].
			chip: tpuChip(Chip{Name: "v6e", Family: "tpu-v6e", PeakBF16FLOPs: 918e12, PeakInt8OPs: 1836e12,
				HBMBytes: 33550237696, HBMBandwidthBytesPerS: 1640 * gb, TensorCoresPerChip: 1, HostBandwidthBytesPerS: v6eHostBytes, MXUDim: 256}),
			aliases: []string{"trillium"},
			torus:   plane,
			// 9e10 B/s per link one way [SB-TPU]; the doc's 800 GB/s bidi over 4 ports gives 1e11 [GC-v6e].
			scaleUp:  ici(9e10),
			scaleOut: dcn(12.5e9), // 4x200 Gb/s per 8-chip host = 100 Gb/s per chip [GC-v6e][SB-TPU]
		},
		{
			// TPU7x Ironwood [GC-7x]: 2307 TFLOP/s bf16, 4614 fp8, 192 GiB HBM3e,
			// ~7.37 TB/s HBM (uncertain [JC-HP]; 7.3 in [HC-IW]), 2 TensorCores; JAX shows
			// each TensorCore as a device of ~94.75 GiB, so about 2 x 101,737,037,824 bytes
			// per chip (uncertain) [HBM-RT]. Its MXU side is not in our sources: Trillium's
			// 256 is assumed.
			chip: tpuChip(Chip{Name: "tpu7x", Family: "tpu-7x", PeakBF16FLOPs: 2307e12, PeakFP8FLOPs: 4614e12,
				HBMBytes: 2 * 101737037824, HBMBandwidthBytesPerS: 7370 * gb, TensorCoresPerChip: 2, HostBandwidthBytesPerS: pcie5Bytes, MXUDim: 256}),
			aliases: []string{"ironwood", "v7x"},
			// 16x24x24 = 9216 chips, from xpk only [XPK] (uncertain); wrap rules
			// assumed to match v5p [NBF-IW].
			torus:    cube(16, 24, 24),
			scaleUp:  ici(1e11),   // derived 1200 GB/s bidi / 6 / 2 [MLE-NET] (uncertain)
			scaleOut: dcn(12.5e9), // unknown; assumed equal to v6e (uncertain)
		},
		{
			// A100 SXM 40GB: 312 TFLOP/s bf16, no fp8 (int8 624 TOP/s), 40 GiB HBM2 at 1555 GB/s
			// [KL-A100][MLE-ACC]; CUDA reports 42,298,834,944 bytes [HBM-RT].
			chip: gpuChip(Chip{Name: "a100-40gb", Family: "nvidia-ampere", PeakBF16FLOPs: 312e12, PeakInt8OPs: 624e12,
				HBMBytes: 42298834944, HBMBandwidthBytesPerS: 1555 * gb, TensorCoresPerChip: 1, HostBandwidthBytesPerS: pcie4Bytes}),
			variantOf: "a100",
			domain:    8, // 8 GPUs, 6 NVSwitches [SB-GPU][MLE-NET]
			// NVLink 3: 300 GB/s one way [MLE-NET]; 8xA100 AllReduce busbw 234.9 GB/s = 0.78 [MLE-NET].
			scaleUp: nvlink(300*gb, 0.78),
			// One 200 Gb/s HDR NIC per GPU in DGX A100 (docs/hardware.md marks it uncertain).
			scaleOut: nic(25 * gb),
		},
		{
			// A100 SXM 80GB: 312 TFLOP/s bf16 (int8 624 TOP/s), 80 GiB HBM2e at 2039 GB/s [KL-A100][MLE-ACC];
			// CUDA reports 84,987,740,160 to 85,197,848,576 bytes by driver, the lowest here [HBM-RT].
			chip: gpuChip(Chip{Name: "a100", Family: "nvidia-ampere", PeakBF16FLOPs: 312e12, PeakInt8OPs: 624e12,
				HBMBytes: 84987740160, HBMBandwidthBytesPerS: 2039 * gb, TensorCoresPerChip: 1, HostBandwidthBytesPerS: pcie4Bytes}),
			aliases:  []string{"a100-80gb"},
			domain:   8,
			scaleUp:  nvlink(300*gb, 0.78), // as a100-40gb [MLE-NET]
			scaleOut: nic(25 * gb),         // HDR 200 Gb/s per GPU (uncertain)
		},
		{
			// H100 SXM: 989 TFLOP/s bf16, 1979 fp8, 80 GiB HBM3 at 3350 GB/s [KL-H100][MLE-ACC];
			// CUDA reports 85,017,493,504 bytes (docs/measured-h100.md, environment.json).
			chip: gpuChip(Chip{Name: "h100", Family: "nvidia-hopper", PeakBF16FLOPs: 989e12, PeakFP8FLOPs: 1979e12,
				HBMBytes: 85017493504, HBMBandwidthBytesPerS: 3350 * gb, TensorCoresPerChip: 1}),
			domain: 8, // 8 GPUs, 4 NVSwitches [SB-GPU]
			// NVLink 4: 18 x 25 GB/s = 450 GB/s one way [SB-GPU][MLE-NET]; ring busbw ~370 [SB-GPU].
			scaleUp:  nvlink(450*gb, nvlinkEfficiency),
			scaleOut: nic(50 * gb), // 400 Gb/s NDR ConnectX-7 per GPU (DGX H100) [MLE-NET][SB-GPU]
		},
		{
			// H100 SXM with 96 GB of HBM2e, power-capped at 500 W (Meta's Grand
			// Teton, torchtitan's async-TP Llama 3 benchmark file;
			// docs/published-runs-2.md). Matmul rate assumed proportional to the
			// sustained SM clock, and SM power to f·V² with V ∝ f over the DVFS
			// range, so f(500 W)/f(700 W) = (500/700)^(1/3) ≈ 0.894 of H100's 989
			// and 1979 TFLOP/s [derived] (uncertain: no published clock at the cap).
			// HBM2e at 2.41 TB/s, as measured for a 94 GiB H100 HBM2e
			// (Ujeniya et al. 2026, arXiv 2604.11391) (uncertain); 96e9 bytes as
			// labelled (no CUDA figure found).
			chip: gpuChip(Chip{Name: "h100-96gb-500w", Family: "nvidia-hopper", PeakBF16FLOPs: 989e12 * h100PowerCap500W,
				PeakFP8FLOPs: 1979e12 * h100PowerCap500W, HBMBytes: 96e9, HBMBandwidthBytesPerS: 2410 * gb, TensorCoresPerChip: 1}),
			// The one 96 GB H100 SXM in public runs: torchtitan's benchmark files
			// describe it as HBM2e at 2.4 TB/s with a "default 500W power limit"
			// (torchtitan's December 2024 Llama 3 benchmark file, @b5bcd76c).
			variantOf: "h100",
			domain:    8,
			scaleUp:   nvlink(450*gb, nvlinkEfficiency), // as h100
			scaleOut:  nic(50 * gb),                     // 400 Gb/s RDMA per GPU (torchtitan's benchmark file)
		},
		{
			// H200 SXM: H100 compute, 141 GB HBM3e at 4800 GB/s [MLE-ACC]; PyTorch reports
			// 143,156 MiB = 150,109,945,856 bytes [HBM-RT]. Its matmuls run at
			// h200PowerLimited of the H100's, its attention at the H100's.
			chip: gpuChip(Chip{Name: "h200", Family: "nvidia-hopper", PeakBF16FLOPs: 989e12, PeakFP8FLOPs: 1979e12,
				HBMBytes: 150109945856, HBMBandwidthBytesPerS: 4800 * gb, TensorCoresPerChip: 1, PowerLimitedRate: h200PowerLimited}),
			domain: 8,
			// 450 GB/s one way; 8xH200 ring AllReduce busbw 367.2 GB/s = 0.82 [MLE-NET].
			scaleUp:  nvlink(450*gb, 0.82),
			scaleOut: nic(50 * gb), // 400 Gb/s [MLE-NET]
		},
		{
			// H800 SXM: H100 compute and memory with NVLink cut to 400 GB/s
			// (docs/published-runs.md). We read 400 GB/s as bidirectional, like H100's
			// 900, so 200 GB/s one way; efficiency assumed as H100. CUDA reports
			// 84,943,110,144 bytes (79.11 GiB), 74 MB less than the H100: the
			// totalGlobalMem of the "NVIDIA H800" in the PyTorch profile of
			// DeepSeek-V3's training (deepseek-ai/profile-data@4496024 train.json,
			// deviceProperties) [HBM-RT].
			chip: gpuChip(Chip{Name: "h800", Family: "nvidia-hopper", PeakBF16FLOPs: 989e12, PeakFP8FLOPs: 1979e12,
				HBMBytes: 84943110144, HBMBandwidthBytesPerS: 3350 * gb, TensorCoresPerChip: 1}),
			domain:   8,
			scaleUp:  nvlink(200*gb, nvlinkEfficiency),
			scaleOut: nic(50 * gb), // assumed 400 Gb/s per GPU like DGX H100
		},
		{
			// B200: 2250 TFLOP/s bf16, 4500 fp8, 180 GB HBM (192 GB in [SB-GPU]) at 8000 GB/s [MLE-ACC];
			// PyTorch reports 182,631 MiB = 191,502,483,456 bytes [HBM-RT]. Dense fp4 9000 TFLOP/s
			// (docs/hardware.md §2.1) [MLE-ACC].
			chip: gpuChip(Chip{Name: "b200", Family: "nvidia-blackwell", PeakBF16FLOPs: 2250e12, PeakFP8FLOPs: 4500e12, PeakFP4FLOPs: 9000e12,
				HBMBytes: 191502483456, HBMBandwidthBytesPerS: 8000 * gb, TensorCoresPerChip: 1, FP8AnyLayout: true}),
			domain: 8, // 8 GPUs, 2 NVSwitch chips [SB-GPU]
			// NVLink 5: 900 GB/s one way [MLE-NET]; 8xB200 ring AllReduce busbw 682 GB/s = 0.76 [MLE-NET].
			scaleUp:  nvlink(900*gb, 0.76),
			scaleOut: nic(50 * gb), // 400 Gb/s ConnectX-7 per GPU (DGX B200) [SB-GPU]
		},
		{
			// GB200 (per GPU, NVL72): 2500 TFLOP/s bf16 (uncertain, docs/published-runs.md),
			// 5000 fp8, 186 GB HBM at 8000 GB/s [MLE-ACC]; PyTorch reports a total capacity of
			// 184.31 GiB, about 197.9e9 bytes (medium certainty) [HBM-RT]. Dense fp4 10000 TFLOP/s
			// (docs/hardware.md §2.1) [MLE-ACC].
			chip: gpuChip(Chip{Name: "gb200", Family: "nvidia-grace-blackwell", PeakBF16FLOPs: 2500e12, PeakFP8FLOPs: 5000e12, PeakFP4FLOPs: 10000e12,
				HBMBytes: 197.9e9, HBMBandwidthBytesPerS: 8000 * gb, TensorCoresPerChip: 1, HostBandwidthBytesPerS: nvlinkC2CBps, FP8AnyLayout: true}),
			domain: 72, // NVL72: 72 GPUs, 18 NVSwitch chips [SB-GPU][MLE-NET]
			node:   4,  // 18 compute trays of 4 GPUs, one ConnectX-7 each [MLE-NET][SB-GPU]
			// 900 GB/s one way [MLE-NET]; efficiency assumed equal to B200's 0.76.
			scaleUp:  nvlink(900*gb, 0.76),
			scaleOut: nic(50 * gb), // 400 Gb/s ConnectX-7 per GPU [MLE-NET][SB-GPU]
		},
		{
			// B300 (Blackwell Ultra, HGX/DGX B300): B200's 2250 TFLOP/s bf16 and 4500 fp8, dense
			// fp4 13,125 TFLOP/s, 288 GB HBM3e at 8 TB/s, all 160 SMs of the die enabled, an
			// exponential unit twice B200's (10.7 against 5 tera-exponentials/s), PCIe Gen6
			// [NV-BU][KL-B300][VD-GB300][NV-SFT]. The capacity CUDA reports is not published: B200's
			// share of its nominal 192 GB (191.5/192) is taken (an assumption). Unmeasured:
			// its efficiencies are B200's (family nvidia-blackwell), its matmuls at 1,100 W
			// b300PowerRate of them.
			chip: gpuChip(Chip{Name: "b300", Family: "nvidia-blackwell", PeakBF16FLOPs: 2250e12, PeakFP8FLOPs: 4500e12, PeakFP4FLOPs: 13125e12,
				HBMBytes: 287.3e9, HBMBandwidthBytesPerS: 8000 * gb, TensorCoresPerChip: 1, SMs: 160, HostBandwidthBytesPerS: pcie6Bytes, FP8AnyLayout: true,
				PowerLimitedRate: b300PowerRate, ScoreRate: ultraScoreRate}),
			domain: 8, // 8 GPUs on NVLink 5 like DGX B200
			// NVLink 5: 900 GB/s one way [MLE-NET]; efficiency B200's, assumed.
			scaleUp:  nvlink(900*gb, 0.76),
			scaleOut: nic(100 * gb), // 800 Gb/s ConnectX-8 per GPU (DGX B300: 8 x 800G, docs/hardware.md §2.1)
		},
		{
			// GB300 (per GPU, NVL72): GB200's 2500 TFLOP/s bf16 and 5000 fp8, dense fp4 15,000
			// TFLOP/s (1,080 PFLOP/s over 72), 288 GB HBM3e at 8 TB/s, 160 SMs, B300's exponential
			// unit [NV-BU][KL-B300][VD-GB300][NV-SFT]; capacity as B300 (an assumption). Unmeasured: its
			// efficiencies are GB200's (family nvidia-grace-blackwell), its matmuls at 1,400 W
			// gb300PowerRate of them.
			chip: gpuChip(Chip{Name: "gb300", Family: "nvidia-grace-blackwell", PeakBF16FLOPs: 2500e12, PeakFP8FLOPs: 5000e12, PeakFP4FLOPs: 15000e12,
				HBMBytes: 287.3e9, HBMBandwidthBytesPerS: 8000 * gb, TensorCoresPerChip: 1, SMs: 160, HostBandwidthBytesPerS: nvlinkC2CBps, FP8AnyLayout: true,
				PowerLimitedRate: gb300PowerRate, ScoreRate: ultraScoreRate}),
			domain:   72, // NVL72, as GB200 [KL-B300]
			node:     4,  // 18 compute trays of 4 GPUs
			scaleUp:  nvlink(900*gb, 0.76),
			scaleOut: nic(100 * gb), // 800 Gb/s ConnectX-8 per GPU [KL-B300]
		},
		{
			// MI300X: 1307 TFLOP/s bf16, 2615 fp8, 192 GB HBM3 at 5300 GB/s [MLE-ACC]; ROCm
			// reports 206,141,652,992 bytes (192 GiB less 16 MiB) [HBM-RT].
			chip: gpuChip(Chip{Name: "mi300x", Family: "amd-cdna3", PeakBF16FLOPs: 1307e12, PeakFP8FLOPs: 2615e12,
				HBMBytes: 206141652992, HBMBandwidthBytesPerS: 5300 * gb, TensorCoresPerChip: 1}),
			domain: 8,
			// Infinity Fabric: 7 peer links x 64 GB/s one way = 448 GB/s, only
			// with all 8 GPUs (uncertain: AMD's 128 GB/s may be one way) [MLE-NET].
			// 8-GPU AllReduce busbw 312.9 GB/s = 0.70 [MLE-NET].
			scaleUp:       nvlink(448*gb, 0.70),
			peerBytesPerS: 64 * gb,
			scaleOut:      nic(50 * gb), // not documented; 400 Gb/s assumed (docs/hardware.md: "commonly 400G")
		},
		{
			// MI325X: MI300X compute, 256 GB HBM3e at 6000 GB/s [MLE-ACC]; links as MI300X.
			chip: Chip{Name: "mi325x", Family: "amd-cdna3", PeakBF16FLOPs: 1307e12, PeakFP8FLOPs: 2615e12,
				HBMBytes: 256 * gb, HBMBandwidthBytesPerS: 6000 * gb, TensorCoresPerChip: 1},
			domain:        8,
			scaleUp:       nvlink(448*gb, 0.70),
			peerBytesPerS: 64 * gb,
			scaleOut:      nic(50 * gb),
		},
	}
}

// lookupSpec finds a catalogue entry by canonical name or alias (lower case).
func lookupSpec(name string) (chipSpec, bool) {
	for _, s := range catalogue() {
		if s.chip.Name == name {
			return s, true
		}
		for _, a := range s.aliases {
			if a == name {
				return s, true
			}
		}
	}
	return chipSpec{}, false
}

// LookupChip returns the catalogue chip with the given name or alias
// (case-insensitive): v4, v5e (v5litepod), v5p, v6e, tpu7x, a100-40gb, a100
// (a100-80gb), h100, h200, h800, b200, gb200, b300, gb300, mi300x, mi325x.
func LookupChip(name string) (Chip, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	if s, ok := lookupSpec(key); ok {
		return s.chip, nil
	}
	return Chip{}, fmt.Errorf("profiles: unknown chip %q; %s", name, chipHint(key))
}

// ChipNames returns the canonical names of the catalogue chips, TPUs first.
func ChipNames() []string {
	cat := catalogue()
	names := make([]string, len(cat))
	for i, s := range cat {
		names[i] = s.chip.Name
	}
	return names
}

// allChipNames returns canonical names and aliases, for suggestions.
func allChipNames() []string {
	var names []string
	for _, s := range catalogue() {
		names = append(names, s.chip.Name)
		names = append(names, s.aliases...)
	}
	return names
}

// chipHint suggests the chip names closest to name, or lists them all.
func chipHint(name string) string {
	if near := nearest(name, allChipNames()); len(near) > 0 {
		return "did you mean " + orList(near) + "?"
	}
	return "known chips are " + strings.Join(ChipNames(), ", ")
}
