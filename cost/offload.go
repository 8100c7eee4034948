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

// offloadPassSeconds returns the host-link time of one micro-batch's
// forward and backward passes for a rank whose parameter shard is params
// and whose offloaded activations are act bytes, over a link of bw bytes/s
// each way: the link is full duplex (PCIe), so each pass takes its busier
// direction. The forward pass writes the activations to the host and, with
// the parameters there, brings the shard to the chip; the backward pass
// brings both back and sends the gradients out (ZeRO-Infinity,
// arXiv:2104.07857 §5; MaxText's offloaded remat policies move a saved
// tensor out in the forward pass and back in the backward pass, XLA host
// offloading's copy-start/copy-done pairs).
func (cm *Model) offloadPassSeconds(h hostOffload, params, act, bw float64) (fwd, bwd float64) {
	var w, g float64
	if h.params {
		pr := &cm.p.Options.Precision
		w, g = pr.Weight*params, pr.Grad*params
	}
	return max(act, w) / bw, max(act+w, g) / bw
}
