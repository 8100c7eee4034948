package profiles

// Chip is one accelerator: peak rates and memory.
type Chip struct {
	// Name is the catalogue key, e.g. "v5p", "h100".
	Name string `json:"name" yaml:"name"`
	// Family groups chips that share fitted coefficients, e.g. "tpu-v5p", "nvidia-hopper".
	Family string `json:"family" yaml:"family"`
	// PeakBF16FLOPs is the dense bf16 peak in FLOP/s per chip.
	PeakBF16FLOPs float64 `json:"peak_bf16_flops" yaml:"peak_bf16_flops"`
	// PeakFP8FLOPs is the dense fp8 peak in FLOP/s per chip; zero where fp8 has no speed-up or does not exist.
	PeakFP8FLOPs float64 `json:"peak_fp8_flops,omitempty" yaml:"peak_fp8_flops"`
	// PeakFP4FLOPs is the dense fp4 peak in FLOP/s per chip (the rate of an
	// NVFP4 recipe, model.FP8Recipe.FP4); zero where the chip has none.
	PeakFP4FLOPs float64 `json:"peak_fp4_flops,omitempty" yaml:"peak_fp4_flops"`
	// PeakInt8OPs is the dense int8 matmul peak in OP/s per chip (the rate of
	// precision=int8, MaxText's AQT); zero where int8 has no speed-up over
	// bf16 or does not exist.
	PeakInt8OPs float64 `json:"peak_int8_ops,omitempty" yaml:"peak_int8_ops"`
	// HBMBytes is the memory per chip in bytes.
	HBMBytes float64 `json:"hbm_bytes" yaml:"hbm_bytes"`
	// HBMBandwidthBytesPerS is the memory bandwidth per chip in bytes/s.
	HBMBandwidthBytesPerS float64 `json:"hbm_bandwidth_bytes_per_s" yaml:"hbm_bandwidth_bytes_per_s"`
	// TensorCoresPerChip is 2 for TPU v4/v5p (the slice suffix counts cores), 1 otherwise.
	TensorCoresPerChip int `json:"tensor_cores_per_chip,omitempty" yaml:"tensor_cores_per_chip"`
	// SMs is a GPU's streaming multiprocessors (compute units on AMD): the
	// share a communication kernel's thread blocks take from the compute
	// beside it is theirs over SMs. Zero on TPUs and where unknown.
	SMs int `json:"sms,omitempty" yaml:"sms"`
	// RuntimeReserveBytes is HBM the runtime holds before any tensor: the CUDA context
	// on GPUs; zero on TPUs, whose HBMBytes is XLA's bytes_limit, already net of it.
	RuntimeReserveBytes float64 `json:"runtime_reserve_bytes" yaml:"runtime_reserve_bytes"`
	// AllocatorSlackFraction of HBM is lost to the allocator's fragmentation (PyTorch's
	// caching allocator on GPUs); zero under XLA's static buffer assignment.
	AllocatorSlackFraction float64 `json:"allocator_slack_fraction" yaml:"allocator_slack_fraction"`
	// HostBandwidthBytesPerS is the chip's link to its host's memory, one way, as offloaded
	// activations cross it (PCIe on most chips, NVLink-C2C on GB200).
	HostBandwidthBytesPerS float64 `json:"host_bandwidth_bytes_per_s" yaml:"host_bandwidth_bytes_per_s"`
	// CommunicatorBytes is the HBM each collective communicator (one per parallel
	// group of a strategy) keeps for its buffers; zero on TPUs, where XLA places
	// collective buffers in the program's own memory.
	CommunicatorBytes float64 `json:"communicator_bytes" yaml:"communicator_bytes"`
	// MXUDim is the side of a TPU matrix unit's systolic array: a matmul
	// operand dimension smaller than it, or not a multiple of it, is padded
	// up to one ("smaller axes are padded", [SB-TPU]): 128 on v4, v5e and
	// v5p, 256 on v6e [SB-TPU]. Zero on GPUs, whose tensor-core tiles are
	// small against every model dimension.
	MXUDim int `json:"mxu_dim,omitempty" yaml:"mxu_dim"`
	// CoreReductions says the chip's own compute core adds the partial sums
	// of a reduce-scatter or all-reduce, so the additions take core time that
	// no overlap hides: a TPU TensorCore, where XLA runs collectives
	// (--xla_tpu_overlap_compute_collective_tc) unless told to offload them
	// to the SparseCores (MaxText@e591f30c benchmarks/xla_flags_library.py).
	// False on GPUs, whose NCCL kernels run beside the compute on their own SMs.
	CoreReductions bool `json:"core_reductions,omitempty" yaml:"core_reductions"`
	// FP8AnyLayout says the chip's FP8 matmuls take their operands in any
	// layout, not only the TN one Hopper's take, so a per-tensor-scaled
	// fp8 copy serves the transposed use too and no transposed copy is
	// made (Blackwell: Transformer Engine's is_non_tn_fp8_gemm_supported,
	// compute capability 10.x and 13.x and up,
	// NVIDIA/TransformerEngine@d0067d0d transformer_engine/pytorch/utils.py:658-664;
	// Float8TensorStorage.update_usage drops the transpose there,
	// transformer_engine/pytorch/tensor/storage/float8_tensor_storage.py:280-310).
	FP8AnyLayout bool `json:"fp8_any_layout,omitempty" yaml:"fp8_any_layout"`
	// PowerLimitedRate is the chip's matmul rate under sustained load over
	// that of the chip its family's efficiency was measured on (the H100
	// for Hopper), at the same datasheet peaks: a chip that holds its power
	// limit at lower clocks runs every matmul that much slower. The flash
	// attention kernel keeps the family's rate (on the H200 it ran as fast
	// as on the H100). Zero means 1. The peaks, and the MFU against them,
	// stay the datasheet's.
	PowerLimitedRate float64 `json:"power_limited_rate,omitempty" yaml:"power_limited_rate"`
	// ScoreRate is the chip's exponential throughput (its special-function
	// units, the flash attention kernel's softmax) over that of the chip its
	// family's efficiency was measured on: Efficiency.AttentionFwdScoreSeconds
	// and AttentionBwdScoreSeconds are divided by it. Zero means 1.
	ScoreRate float64 `json:"score_rate,omitempty" yaml:"score_rate"`
}

// KernelRate is PowerLimitedRate, 1 where it is unset: the factor on the
// chip's peaks that its matmuls run at.
func (c Chip) KernelRate() float64 {
	if c.PowerLimitedRate > 0 {
		return c.PowerLimitedRate
	}
	return 1
}

// MXUFill is the fraction of a matrix unit's work that is useful on an
// operand dimension of dims elements: dims over dims padded up to a
// multiple of MXUDim ([SB-TPU], docs/tpu.md §1's padding model); 1 where
// MXUDim is zero or dims is not positive.
func (c Chip) MXUFill(dims int) float64 {
	t := c.MXUDim
	if t <= 0 || dims <= 0 {
		return 1
	}
	return float64(dims) / float64((dims+t-1)/t*t)
}

// Axis is one dimension of a cluster's device mesh.
type Axis struct {
	// Name is unique within the cluster: x, y, z for a TPU torus; gpu and node for GPUs; slice for DCN.
	Name string `json:"name" yaml:"name"`
	// Size is the number of chips along the axis.
	Size int `json:"size" yaml:"size"`
	// Tier is the kind of link.
	Tier Tier `json:"tier" yaml:"tier"`
	// Wraparound says the axis closes into a ring (torus), so collectives use both directions.
	Wraparound bool `json:"wraparound" yaml:"wraparound"`
	// BandwidthBytesPerS is the one-way bandwidth a chip has towards one neighbour along this axis
	// (TPU: one ICI link one way; GPU NVLink: the GPU's whole NVLink egress one way; GPU network:
	// the GPU's own NIC one way; DCN: the chip's share of the host NIC one way).
	BandwidthBytesPerS float64 `json:"bandwidth_bytes_per_s" yaml:"bandwidth_bytes_per_s"`
	// LatencySeconds is the per-hop (per ring step) latency.
	LatencySeconds float64 `json:"latency_s" yaml:"latency_s"`
	// Efficiency is the achieved fraction of BandwidthBytesPerS for large collectives (0..1].
	Efficiency float64 `json:"efficiency" yaml:"efficiency"`
}

// Efficiency holds the few fitted coefficients of the cost model for one chip family.
// Defaults per family are documented in efficiency.go; `plan calibrate` refits them.
type Efficiency struct {
	// MatmulFraction is the achievable fraction of peak FLOP/s for large matmuls (MAMF/peak).
	MatmulFraction float64 `json:"matmul_fraction" yaml:"matmul_fraction"`
	// MatmulHalfFLOPs is the per-chip matmul size (FLOPs of one call) at which efficiency
	// falls to half of MatmulFraction; smaller matmuls run less efficiently.
	MatmulHalfFLOPs float64 `json:"matmul_half_flops" yaml:"matmul_half_flops"`
	// MatmulFP8Fraction and MatmulFP8HalfFLOPs are the same for FP8 matmuls,
	// as a fraction of Chip.PeakFP8FLOPs; zero takes the family's default.
	MatmulFP8Fraction  float64 `json:"matmul_fp8_fraction,omitempty" yaml:"matmul_fp8_fraction"`
	MatmulFP8HalfFLOPs float64 `json:"matmul_fp8_half_flops,omitempty" yaml:"matmul_fp8_half_flops"`
	// MatmulFP4Fraction and MatmulFP4HalfFLOPs are the same for FP4 matmuls
	// (NVFP4), as a fraction of Chip.PeakFP4FLOPs; zero takes the family's
	// default.
	MatmulFP4Fraction  float64 `json:"matmul_fp4_fraction,omitempty" yaml:"matmul_fp4_fraction"`
	MatmulFP4HalfFLOPs float64 `json:"matmul_fp4_half_flops,omitempty" yaml:"matmul_fp4_half_flops"`
	// HBMFraction is the achievable fraction of HBM bandwidth for memory-bound ops.
	HBMFraction float64 `json:"hbm_fraction" yaml:"hbm_fraction"`
	// OverlapFraction is the fraction of overlappable communication (FSDP prefetch, gradient
	// reduction, pipeline sends) that actually hides under compute.
	OverlapFraction float64 `json:"overlap_fraction" yaml:"overlap_fraction"`
	// AttentionFwdFraction and AttentionBwdFraction are the flash attention kernel's
	// matmul rate as a fraction of peak in the forward and the backward pass.
	AttentionFwdFraction float64 `json:"attention_fwd_fraction" yaml:"attention_fwd_fraction"`
	AttentionBwdFraction float64 `json:"attention_bwd_fraction" yaml:"attention_bwd_fraction"`
	// AttentionFwdScoreSeconds and AttentionBwdScoreSeconds are the kernel's time per
	// element of the (causal) score square beyond its matmuls: the softmax's exponential
	// and, backward, the score gradient, which run on the special-function units.
	AttentionFwdScoreSeconds float64 `json:"attention_fwd_score_s" yaml:"attention_fwd_score_s"`
	AttentionBwdScoreSeconds float64 `json:"attention_bwd_score_s" yaml:"attention_bwd_score_s"`
	// AttentionFwdHalfSeq and AttentionBwdHalfSeq are the key/value lengths (tokens per
	// kernel call) at which the kernel runs at half its rate: each query block's loop
	// over the keys has a fixed start and end, so the rate is T/(T+half) of the long-
	// sequence rate.
	AttentionFwdHalfSeq float64 `json:"attention_fwd_half_seq" yaml:"attention_fwd_half_seq"`
	AttentionBwdHalfSeq float64 `json:"attention_bwd_half_seq" yaml:"attention_bwd_half_seq"`
	// FlashAttention2Fraction is FlashAttention-2's attention rate as a fraction of the
	// flash kernel's above, for an attention that kernel cannot run: ALiBi's bias
	// (model.Spec.ALiBi), which FlashAttention-3 and PyTorch's flash and cuDNN SDPA
	// backends do not take, so it falls back to FlashAttention-2 (which has it from
	// v2.4) unless the framework passes it to cuDNN (model.Kernels.ALiBiFused). Zero
	// means 1: FlashAttention-2 is the chip's flash kernel.
	FlashAttention2Fraction float64 `json:"flash_attention2_fraction,omitempty" yaml:"flash_attention2_fraction"`
	// SustainedFraction is the fraction of the single-chip kernel rates above that a chip
	// sustains in a job of more than one chip: clocks under a full node's power and
	// heat, communication kernels sharing the SMs, stragglers of a synchronous step.
	// Zero means 1.
	SustainedFraction float64 `json:"sustained_fraction" yaml:"sustained_fraction"`
}

// Cluster is a set of identical chips arranged as a mesh of axes.
type Cluster struct {
	// Name is the preset or parsed name (e.g. "v5p-256", "2xv5p-256", "h100-1024") or the file's name.
	Name string `json:"name" yaml:"name"`
	// Chip is the accelerator.
	Chip Chip `json:"chip" yaml:"chip"`
	// Axes are the mesh axes, innermost (fastest) first; their sizes multiply to the chip count.
	Axes []Axis `json:"axes" yaml:"axes"`
	// Efficiency holds the cost-model coefficients for this chip family.
	Efficiency Efficiency `json:"efficiency" yaml:"efficiency"`
}

// Chips returns the number of chips: the product of the axis sizes.
func (c Cluster) Chips() int {
	n := 1
	for _, a := range c.Axes {
		n *= a.Size
	}
	return n
}
