package cost

import (
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

// The MoE all-to-all under Megatron-Core's EP overlap
// (overlap_moe_expert_parallel_comm, space.Strategy.A2AOverlap): one
// micro-batch's layer forward runs beside another's layer backward, each
// split at its all-to-alls into attention (with the router and the shared
// experts), dispatch, experts and combine, on a compute and a
// communication stream (Megatron-LM@d98e8a64
// megatron/core/models/common/model_chunk_schedule_plan.py,
// TransformerLayerSchedulePlan.run; megatron/core/models/gpt/
// fine_grained_callables.py, build_transformer_layer_callables).

// a2aKernelSMs is the SMs the dispatch and combine kernels of dispatcher d
// run on, which the compute beside them loses while they run.
func a2aKernelSMs(d string) int {
	switch d {
	case space.DispatcherDeepEP:
		// DeepEP's Buffer.num_sms, 20 unless set (Megatron-LM@d98e8a64
		// megatron/core/transformer/moe/token_dispatcher.py:1287-1290;
		// DeepEP@dd758caf deep_ep/buffers/legacy.py:31).
		return 20
	case space.DispatcherHybridEP:
		// moe_hybridep_num_sms of Megatron-Bridge's performance recipes
		// (Megatron-Bridge@067f987d scripts/performance/utils/overrides.py:87-89).
		return 32
	}
	// NCCL's all-to-all: one thread block per peer-to-peer channel,
	// min(nChannels, NCCL_MAX_P2P_NCHANNELS = MAXCHANNELS = 32) of them
	// (NVIDIA/nccl@7aa1c46f src/graph/paths.cc, ncclTopoComputeP2pChannels).
	return 32
}

// a2aSMShare is the share of a chip of sms SMs (profiles.Chip.SMs) the MoE
// all-to-all's kernels of dispatcher d take: 0 where the chip's SMs are
// unknown (TPUs).
func a2aSMShare(d string, sms int) float64 {
	return smShare(a2aKernelSMs(d), sms)
}

// smShare is the share of a chip of sms SMs that kernels on kernelSMs of
// them hold: 0 where the chip's SMs are unknown.
func smShare(kernelSMs, sms int) float64 {
	if sms <= 0 {
		return 0
	}
	return min(1, float64(kernelSMs)/float64(sms))
}

// phaseHiddenSeconds is what one phase of an overlapped pair hides of its
// all-to-all of comm seconds beside compute seconds of the other
// micro-batch's work: while the all-to-all runs, the compute runs on the
// SMs it leaves, 1 - share of them, so the phase takes
// max(comm, compute + share·comm) [derived] and hides
// min(compute, (1-share)·comm) of it, with compute taken at overlap
// fraction of (docs/formulas.md §6).
func phaseHiddenSeconds(comm, compute, of, share float64) float64 {
	return max(0, min(of*compute, (1-share)*comm))
}

// overlappedA2ASeconds is the all-to-all one forward-backward pair of
// Megatron-Core's EP overlap hides on a rank whose sums are rs, with fc and
// bc its forward and backward compute (casts included): per layer, the
// backward's combine beside the forward's attention; the forward's
// dispatch beside the backward's experts (input gradients); the backward's
// dispatch beside the experts' weight gradients (delay_wgrad_compute) and
// the forward's experts; the forward's combine beside the backward's
// attention and its weight gradients (Megatron-LM@d98e8a64
// megatron/core/models/common/model_chunk_schedule_plan.py:236-300). The
// rank's layers are summed phase by phase, as its layers are alike; the
// embedding and the output layer run outside the layers' pairs
// (TransformerModelChunkSchedulePlan.run: pre_process and post_process).
func (rs *rankSums) overlappedA2ASeconds(fc, bc, of, share float64) float64 {
	attnF := max(0, fc-rs.expF-rs.endsF)
	attnB := max(0, bc-rs.expB-rs.expW-rs.endsB)
	combB, dispF := rs.a2aBin, rs.a2aFin
	dispB, combF := max(0, rs.a2aB-rs.a2aBin), max(0, rs.a2aF-rs.a2aFin)
	return phaseHiddenSeconds(combB, attnF, of, share) +
		phaseHiddenSeconds(dispF, rs.expB, of, share) +
		phaseHiddenSeconds(dispB, rs.expW+rs.expF, of, share) +
		phaseHiddenSeconds(combF, attnB, of, share)
}

// epOverlapHides reports whether Megatron-Core's EP overlap hides the MoE
// all-to-all on the evaluator's mesh. Run eagerly, the overlap splits each
// layer into phases on two streams whose hand-offs the host launches and
// synchronises; within one NVLink domain the all-to-all is short and that
// host work costs what the overlap hides: NVIDIA's DeepSeek-V3 guide found
// its benefit negative on the 72-GPU GB200 domain, since its
// synchronisation between stages "aggravates the CPU overhead"
// (NVIDIA/Megatron-LM@eb0783b6, the DeepSeek-V3 GB200 optimization guide
// under docs/discussions, §3.2), and Megatron-Bridge's Qwen3-30B-A3B on 16 H100 (ep 8 within a
// node, the same layout) ran 0.50 and 0.56 of the throughput with it
// (25.11 against 25.09, 26.02 against 26.02.01; docs/published-runs-2.md).
// So the overlap is priced as hiding nothing there (its host cost is
// not priced: the planner has no host model). Where an EP group crosses
// the scale-out network the all-to-all is long enough for the overlap to
// gain, as DeepSeek-V3's ep 64 over 128 H100 nodes does; and a step run
// as one CUDA graph (Comm.GraphedStep) has no host hand-offs, as
// Megatron-Bridge's 26.06 GB200 MoE recipes run the overlap.
func (e *evaluator) epOverlapHides(graphed bool) bool {
	if graphed {
		return true
	}
	for _, g := range e.mr.Groups[space.RoleEP] {
		if g.Size > 1 && g.Axis.Tier.Fabric() == profiles.FabricNetwork {
			return true
		}
	}
	return false
}
