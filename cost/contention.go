package cost

// collectiveKernelSMs is the SMs NCCL's collectives take on a GPU of chip
// family: one thread block per channel, and NCCL logs its channel count
// at initialisation. On Hopper, 16 (an 8-GPU H800 node: "16 coll channels,
// 0 nvls channels, 16 p2p channels", NVIDIA/nccl#892; three 8-GPU H100
// nodes: "16 coll channels, 16 collnet channels, 16 nvls channels",
// NVIDIA/nccl#1453); on an HGX A100 node, 24 ring channels ("Channel
// 23/24", NVIDIA/nccl-tests#100); on a DGX B200, 32 ("32 coll channels,
// 32 collnet channels, 32 nvls channels", NVIDIA/nccl#1646), which GB200
// takes too (an assumption: no NVL72 log read). Other GPUs take Hopper's
// 16, an assumption (no RCCL log read). The MoE all-to-all has its own
// count (a2aKernelSMs).
func collectiveKernelSMs(family string) int {
	switch family {
	case "nvidia-ampere":
		return 24
	case "nvidia-blackwell", "nvidia-grace-blackwell":
		return 32
	}
	return 16
}

// collectiveSMShare is the share of a chip of sms SMs (profiles.Chip.SMs)
// NCCL's collectives of a chip of family take from the compute they run
// beside: 0 where the chip has no SMs in its profile (TPUs, whose
// TensorCore work in a collective, the reductions' partial sums, is priced
// on its own: profiles.Chip.CoreReductions). The compute beside them runs
// on the SMs they leave, share/(1-share) slower: measured on an H200 with
// a copy kernel holding 8-64 SMs, a scale of 0.98 on that form
// (profiles/testdata/measured-h200/sm-contention.csv).
func collectiveSMShare(family string, sms int) float64 {
	return smShare(collectiveKernelSMs(family), sms)
}
