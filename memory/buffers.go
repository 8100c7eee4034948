package memory

import "github.com/meshplan/meshplan/model"

// Megatron's gradient bucket is max(4e7, 1e6·dp) parameters [MEG-DDP].
const (
	bucketMinParams       = 4e7
	bucketParamsPerDPRank = 1e6
)

// buffersBytes is everything outside the model states and the layers' saved
// activations: terms that persist through the step plus the larger of two
// transient phases, the loss (logit gradient) and a layer's backward (working
// set and collective buffers), which are never live at the same time.
func buffersBytes(m model.Spec, g geometry, o Options, lt layerTerms, st states, moe int, first, last bool, inFlight, lastInFlight float64) float64 {
	const beta = ActivationBytesPerElement
	h := float64(m.Hidden)
	tokens := g.seq / g.cp * g.mb // s·b/c
	var persistent float64

	// FSDP/ZeRO-3: two gathered units (current and prefetched) and one unit's
	// unsharded gradients (formulas.md §2.4 [TORCH-FSDP], [derived]).
	if g.fsdp > 1 || g.expertFSDP > 1 {
		persistent += (2*o.weightBytes() + o.gradBytes()) * st.unitParams
	}
	// Gradient reduction across dp: one bucket of unsharded gradients in
	// flight, max(4e7, 1e6·dp) parameters, at most the stage's (formulas.md §2.4 [MEG-DDP]).
	if g.dp > 1 {
		stage := st.denseParams/g.fsdp + st.expertParams/g.expertFSDP
		persistent += o.gradBytes() * min(stage, max(bucketMinParams, bucketParamsPerDPRank*g.dp))
	}
	// Pipeline send and receive buffers: one boundary activation each way,
	// 2·s·b·h (/t with SP) [derived, formulas.md §3.3].
	if g.pp > 1 {
		persistent += 2 * beta * tokens * h / g.tSP
	}
	if first {
		// Token ids (int64) and, in a GPT block, the embedding dropout mask,
		// per micro-batch in flight (formulas.md §2.2 [MEG-MEM][KORT §4.3]).
		perMB := 8 * tokens
		if o.gptBlock(m) {
			perMB += tokens * h / g.tSP
		}
		persistent += inFlight * perMB
	}
	var lossPhase float64
	if last {
		// Final-norm input and output-layer input, 4·s·b·h (/t with SP), and the
		// fp32 logits saved for the cross-entropy backward, 4·s·b·V/t, per
		// micro-batch in flight on the last stage (formulas.md §2.2 [MEG-MEM]).
		logits := 4 * tokens * float64(m.Vocab) / g.t
		persistent += lastInFlight * (2*beta*tokens*h/g.tSP + logits)
		// The logits' gradient, 4·s·b·V/t, while the loss is back-propagated (formulas.md §2.4).
		lossPhase = logits
	}

	// A layer's backward: the recomputation working set (layerTerms.working)
	// and collective buffers.
	layerPhase := lt.working
	if g.t > 1 && g.tSP > 1 {
		// TP+SP: the all-gathered full-sequence input of a column-parallel
		// matmul, s·b·h (formulas.md §2.4 [MEG-TP]).
		layerPhase += beta * tokens * h
	}
	if g.cp > 1 {
		// CP: the layer's all-gathered K and V, 2·s·b·kv (/t), the all-gather
		// variant, at least the ring's two chunks (formulas.md §2.4 [LLAMA3]).
		layerPhase += 2 * beta * g.seq * g.mb * float64(m.KVDim()) / g.tKV
	}
	if moe > 0 {
		// MoE dispatch and combine buffers, CF·T·k·h each way (formulas.md §2.4).
		e := m.MoE
		layerPhase += 2 * beta * e.CapacityFactor * float64(e.TopK) * tokens / g.tSP * h
	}
	return persistent + max(lossPhase, layerPhase)
}
