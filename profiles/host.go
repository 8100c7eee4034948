package profiles

// The host DRAM behind each GPU, by its server: a PCIe Gen4 host is a DGX
// A100 (two AMD EPYC 7742 of 8 DDR4-3200 channels, 2 x 204.8 GB/s; 1 TB
// of memory; NVIDIA DGX A100 datasheet, AMD EPYC 7742 specifications), a
// PCIe Gen5 host a DGX H100 (two Xeon Platinum 8480C of 8 DDR5-4800
// channels, 2 x 307.2 GB/s; 2 TB; NVIDIA DGX H100 datasheet, Intel ARK),
// each for 8 GPUs; a Grace host (NVLink-C2C) one Grace with up to 512 GB/s
// of LPDDR5X and 480 GB for two GPUs (NVIDIA GB200 NVL72 datasheet). TPU
// hosts are taken as the first (an assumption).
const (
	hostDRAMGen4BytesPerS  = 2 * 204.8e9 / 8
	hostDRAMGen5BytesPerS  = 2 * 307.2e9 / 8
	hostDRAMGraceBytesPerS = 512e9 / 2
	hostDRAMGen4Bytes      = 1e12 / 8
	hostDRAMGen5Bytes      = 2e12 / 8
	hostDRAMGraceBytes     = 480e9 / 2
)

// hostTier classifies c's host by its link: 2 for Grace behind NVLink-C2C
// (over 100 GB/s one way), 1 for a PCIe Gen5 host (over 32 GB/s), else 0.
func (c *Chip) hostTier() int {
	switch h := c.HostBandwidthBytesPerS; {
	case h > 100e9:
		return 2
	case h > 32e9:
		return 1
	}
	return 0
}

// HostDRAMBytesPerS is the host memory bandwidth of c's share of its
// server, at which a host optimizer step reads and writes its state.
func (c *Chip) HostDRAMBytesPerS() float64 {
	return [...]float64{hostDRAMGen4BytesPerS, hostDRAMGen5BytesPerS, hostDRAMGraceBytesPerS}[c.hostTier()]
}

// HostDRAMBytes is the host memory of c's share of its server, which
// holds what a strategy offloads (space.Strategy.Offload).
func (c *Chip) HostDRAMBytes() float64 {
	return [...]float64{hostDRAMGen4Bytes, hostDRAMGen5Bytes, hostDRAMGraceBytes}[c.hostTier()]
}

// hostGPUs is how many GPUs share one host's memory: a DGX's 8, a Grace's
// 2 (the server figures above).
func (c *Chip) hostGPUs() int { return [...]int{8, 8, 2}[c.hostTier()] }

// HostDRAMBytesFor is the host memory each chip of a job of chips chips
// has: HostDRAMBytes, or for a job of fewer chips than a host carries its
// whole host's memory shared among them (one A100 of a DGX A100 has the
// server's 1 TB: the ColossalAI benchmark's 18B and 24B GPT-2 runs offload
// 330-344 GB from one GPU).
func (c *Chip) HostDRAMBytesFor(chips int) float64 {
	if n := c.hostGPUs(); chips > 0 && chips < n {
		return c.HostDRAMBytes() * float64(n) / float64(chips)
	}
	return c.HostDRAMBytes()
}
