package memory

import (
	"fmt"

	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// hostRoom reports an error when what b keeps in host memory, the
// activations of s's act_offload and the model states of its offload,
// exceeds a chip's share of its host's memory on cluster c
// (profiles.Chip.HostDRAMBytesFor its chips, the figure the planner's
// offload fallback checks over the job): the pinned buffers they are
// copied to must fit there.
func hostRoom(b *Breakdown, c *profiles.Cluster, s *space.Strategy) error {
	h, used := c.Chip.HostDRAMBytesFor(c.Chips()), b.HostActivationsBytes+b.HostStatesBytes
	if used <= h {
		return nil
	}
	switch {
	case b.HostStatesBytes == 0:
		return fmt.Errorf("memory: act_offload=%d keeps %.0f GB of activations a chip in host memory, above the %.0f GB of its host's memory a chip has: offload fewer layers", s.ActOffload, b.HostActivationsBytes/1e9, h/1e9)
	case b.HostActivationsBytes == 0:
		return fmt.Errorf("memory: offload=%s keeps %.0f GB of model states a chip in host memory, above the %.0f GB of its host's memory a chip has: offload less of the optimizer state (offload_fraction) or use more chips", s.OffloadKind(), b.HostStatesBytes/1e9, h/1e9)
	}
	return fmt.Errorf("memory: offload=%s with act_offload=%d keeps %.0f GB a chip in host memory (%.0f GB of model states, %.0f GB of activations), above the %.0f GB of its host's memory a chip has: offload fewer layers or less of the optimizer state",
		s.OffloadKind(), s.ActOffload, used/1e9, b.HostStatesBytes/1e9, b.HostActivationsBytes/1e9, h/1e9)
}

// setOffload sets g's host offload from s (space.Strategy.Offload).
func (g *geometry) setOffload(s *space.Strategy) {
	g.hostOpt = s.HostOptimizerFraction()
	g.hostParams = s.OffloadKind() == space.OffloadParamsOptimizer
}

// setActOffload sets g's activation offload from s on a model of layers
// layers (space.Strategy.ActOffload).
func (g *geometry) setActOffload(s *space.Strategy, layers int) {
	g.actHost = 0
	if s.ActOffload > 0 && layers > 0 {
		g.actHost = float64(s.ActOffload) / float64(layers)
	}
}

// offloadStates moves out of rs, the model states of the rank whose sums
// are ss, what g's host offload keeps in host memory, in both phases:
//
//   - the optimizer state's host share f (the fp32 master weights and
//     moments the host's optimizer step updates): Megatron-Core's
//     HybridDeviceOptimizer moves the first f of the distributed
//     optimizer's parameters, with their state, to the host
//     (Megatron-LM@d98e8a64:megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py:251-300);
//   - under ZeRO-2, FSDP or parameter offload, the same share of the
//     gradient partition, which ZeRO-Offload streams to the host as it is
//     reduced (Ren et al. 2021, ZeRO-Offload, arXiv:2101.06840 §4.1); the
//     distributed optimizer's full gradient buffer (ZeRO-1) stays
//     (hybrid_optimizer.py:108-114 copies it to the host each step);
//   - with the parameters: the parameter shard; a chip whose parameters
//     are not sharded (one chip, ZeRO-3 of degree 1) gathers them from the
//     host a unit at a time, so it holds two units (the current and the
//     prefetched one) and one unit's gradients, as FSDP's buffers do
//     (Rajbhandari et al. 2021, ZeRO-Infinity, arXiv:2104.07857 §5).
func (mm *Model) offloadStates(g *geometry, ss *stageSums, rs *rankStates) {
	if g.hostOpt == 0 {
		return
	}
	pr := mm.p.Options.Precision
	ps, gs, os := g.offloadScales()
	// What leaves HBM lives in the host's memory: the step phase's
	// states less the shares that stay.
	rs.host = (1-ps)*rs.step[0] + (1-gs)*rs.step[1] + (1-os)*rs.step[2]
	for _, ph := range [2]*[3]float64{&rs.fwd, &rs.step} {
		ph[0], ph[1], ph[2] = ps*ph[0], gs*ph[1], os*ph[2]
		if g.hostParams && !g.fsdp() {
			// Not sharded: the gathered units FSDP's buffers would hold.
			ph[0], ph[1] = 2*pr.Weight*ss.unit, pr.Grad*ss.unit
		}
	}
	rs.fwdHead = rs.fwd[0] + rs.fwd[1] + rs.fwd[2]
	rs.stepHead = rs.step[0] + rs.step[1] + rs.step[2]
}

// fsdp reports whether g shards the parameters for storage and gathers
// them before use (FSDP or ZeRO-3; geometry.gather).
func (g *geometry) fsdp() bool { return g.active&g.gather != 0 }

// offloadScales returns the shares of the parameters, gradients and
// optimizer state that stay in HBM under g's host offload
// (offloadStates), before a chip without sharding gathers its units.
func (g *geometry) offloadScales() (params, grads, opt float64) {
	f := g.hostOpt
	params, grads, opt = 1, 1, 1-f
	if g.zero >= 2 || g.fsdp() || g.hostParams {
		grads = 1 - f
	}
	if g.hostParams {
		params = 0
	}
	return params, grads, opt
}
