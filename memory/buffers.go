package memory

import "github.com/meshplan/meshplan/space"

// Megatron's gradient bucket is max(4e7, 1e6·dp) parameters [MEG-DDP].
const (
	bucketMinParams       = 4e7
	bucketParamsPerDPRank = 1e6
)

// buffers is everything outside the model states and the layers' saved
// activations: the terms that persist through the step, and the larger of
// two transient phases of the backward pass, the loss (the logits'
// gradient) and a layer's backward (its recomputed activations and
// collective buffers), which are never live at the same time. stageParams
// are the stage's parameters after storage sharding, unit the largest FSDP
// unit before it, work a layer's recomputed activations.
func (mm *Model) buffers(g *geometry, e *endTerms, st *stage, stageParams, unit, work float64, hasMoE bool) (persistent, transient float64) {
	pr := mm.p.Options.Precision
	// The collective communicators' buffers (docs/runtime-memory.md).
	persistent = g.comm
	// FSDP/ZeRO-3: two gathered units (current and prefetched) and one unit's
	// unsharded gradients (docs/formulas.md §2.4 [TORCH-FSDP], [derived]).
	if g.active&(space.RoleFSDP.Bit()|space.RoleEFSDP.Bit()) != 0 {
		persistent += (2*pr.Weight + pr.Grad) * unit
	}
	// Gradient reduction across dp: one bucket of unsharded gradients in
	// flight, max(4e7, 1e6·dp) parameters, at most the stage's (docs/formulas.md §2.4 [MEG-DDP]).
	if dp := g.deg[space.RoleDP]; dp > 1 {
		persistent += pr.Grad * min(stageParams, max(bucketMinParams, bucketParamsPerDPRank*dp))
	}
	// Pipeline send and receive buffers: one boundary activation each way,
	// the residual stream's shard (docs/formulas.md §3.3 [derived]).
	if st.pp > 1 {
		persistent += 2 * e.residual
	}
	if st.first {
		// Token ids (int64) and, in a GPT block, the embedding dropout mask,
		// per micro-batch in flight (docs/formulas.md §2.2 [MEG-MEM][KORT §4.3]).
		persistent += st.inFlight * e.embedSaved
	}
	var lossPhase float64
	if st.last {
		// Final-norm input and output-layer input, and the fp32 logits saved
		// for the cross-entropy backward, per micro-batch in flight on the
		// last stage (docs/formulas.md §2.2 [MEG-MEM]); the logits' gradient
		// while the loss is back-propagated (docs/formulas.md §2.4).
		persistent += st.lastInFlight * e.outputSaved
		lossPhase = e.logits
	}
	// A layer's backward: its recomputed activations and collective buffers.
	// TP+SP: the all-gathered full-sequence input of a column-parallel
	// matmul (docs/formulas.md §2.4 [MEG-TP]); CP: the layer's all-gathered
	// K and V, the all-gather variant, at least the ring's two chunks
	// (docs/formulas.md §2.4 [LLAMA3]).
	layerPhase := work + e.gathered + e.kv
	if hasMoE {
		// MoE dispatch and combine buffers: the routed copies each way
		// (docs/formulas.md §2.4).
		layerPhase += 2 * e.routed
	}
	return persistent, max(lossPhase, layerPhase)
}
