package cost

import (
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// hostOffload is what a strategy keeps in host memory, as the step time
// prices it (space.Strategy.Offload).
type hostOffload struct {
	// opt is the share of the optimizer state on the host, whose step
	// runs there; params says the parameters are there too.
	opt    float64
	params bool
}

// hostOffloadOf returns s's host offload.
func hostOffloadOf(s *space.Strategy) hostOffload {
	return hostOffload{opt: s.HostOptimizerFraction(), params: s.OffloadKind() == space.OffloadParamsOptimizer}
}

// offloadStep returns the optimizer step of a rank whose parameter shard
// is params under host offload h: the chip's fused step over the share
// it keeps (memory-bound at optimizerBytes a parameter, as without
// offload), then the host's part, serial after the backward pass: the
// host share's gradients to the host and its updated parameters back
// over the host link, and the host's optimizer step over them, memory
// bound on its DRAM at the same bytes a parameter (Megatron-LM@d98e8a64:
// megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py:108-125,
// D2H gradient copies, CPU step, H2D parameter copies; ZeRO-Offload,
// arXiv:2101.06840 §4: CPU Adam and the fp16 parameter copy back).
func (cm *Model) offloadStep(e *evaluator, c *profiles.Chip, h hostOffload, params float64) float64 {
	pr := &cm.p.Options.Precision
	chip := e.memSeconds((1 - h.opt) * params * cm.optimizerBytes)
	host := h.opt * params
	var link float64
	if bw := c.HostBandwidthBytesPerS; bw > 0 {
		link = host * (pr.Grad + pr.Weight) / bw
	}
	return chip + link + host*cm.optimizerBytes/c.HostDRAMBytesPerS()
}

// offloadMicroBytes returns the host-link bytes one micro-batch moves
// under host offload h for a rank whose parameter shard is params: with
// the parameters on the host, the shard comes to the chip for the forward
// and again for the backward pass, and its gradients go back (ZeRO-Infinity,
// arXiv:2104.07857 §5); none otherwise.
func (cm *Model) offloadMicroBytes(h hostOffload, params float64) float64 {
	if !h.params {
		return 0
	}
	pr := &cm.p.Options.Precision
	return (2*pr.Weight + pr.Grad) * params
}
