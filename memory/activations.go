package memory

import (
	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/space"
)

// LayerActivationBytes is the memory one transformer layer saves for the
// backward pass for one micro-batch of s.MB sequences of seqLen tokens on one
// chip, under s.Recompute and sharded by s.TP, s.SP and s.CP; moe selects an
// MoE layer (routed experts) instead of a dense one. It excludes the embedding,
// the logits and transient working sets (see the package documentation).
//
// For Korthikanti's GPT block with sequence parallelism it is 34·s·b·h/t
// under selective recompute and 2·s·b·h/t under full recompute.
func LayerActivationBytes(m model.Spec, seqLen int, s space.Strategy, moe bool, o Options) float64 {
	m = normalized(m)
	g := newGeometry(m, space.Workload{Batch: 1, SeqLen: seqLen}, s)
	return layerActivationBytes(m, g, o, moe && m.MoE != nil, g.recompute)
}

// StageActivationBytes is the layer activations the first pipeline stage (the
// busiest under every schedule) holds at its peak: LayerActivationBytes times
// its layers times the micro-batches in flight ([MicrobatchesInFlight]). It
// excludes the embedding and logits terms, like Korthikanti's Fig. 1.
func StageActivationBytes(m model.Spec, w space.Workload, s space.Strategy, o Options) float64 {
	m = normalized(m)
	g := newGeometry(m, w, s)
	first, _ := MicrobatchesInFlight(s, g.numMicrobatches)
	n, dense := m.Layers, m.DenseLayers()
	if g.pp > 1 {
		n, dense = g.layersPerStage, min(dense, g.layersPerStage)
	}
	a := float64(dense) * layerActivationBytes(m, g, o, false, g.recompute)
	if n > dense {
		a += float64(n-dense) * layerActivationBytes(m, g, o, true, g.recompute)
	}
	return first * a
}

// InterleaveFactor is the interleaved schedule's activation multiplier on the
// first stage, 1 + (p-1)/(p·v) for p stages of v virtual chunks, and 1 when
// v ≤ 1 or p ≤ 1 (formulas.md §2.3 [KORT][MEG-MEM]).
func InterleaveFactor(p, v int) float64 {
	if p <= 1 || v <= 1 {
		return 1
	}
	return 1 + float64(p-1)/float64(p*v)
}

// MicrobatchesInFlight is the number of micro-batches whose activations the
// first and the last pipeline stage hold at their peak, in units of "all of
// the stage's layers for one micro-batch", for numMicrobatches micro-batches
// per step (formulas.md §2.3):
//
//   - pp = 1: 1 (gradient accumulation runs one micro-batch at a time);
//   - GPipe: m on every stage [NARA §2.2];
//   - 1F1B: min(m, p) on the first stage, 1 on the last [KORT §4.3][MEG-MEM];
//   - interleaved with v > 1 chunks: rank r warms up 2(p-r-1)+(v-1)p chunk
//     steps plus one, so the first stage holds min(m·v, (v+1)p-1)/v
//     (= p·InterleaveFactor(p, v) when m ≥ p) and the last
//     min(m·v, (v-1)p+1)/v [MEG-SCHED]; with v ≤ 1 it is 1F1B.
func MicrobatchesInFlight(s space.Strategy, numMicrobatches int) (first, last float64) {
	p, m := deg(s.PP), deg(numMicrobatches)
	if p == 1 {
		return 1, 1
	}
	switch s.Schedule {
	case space.GPipe:
		return float64(m), float64(m)
	case space.Interleaved:
		if v := deg(s.V); v > 1 {
			f := min(m*v, (v+1)*p-1)
			l := min(m*v, (v-1)*p+1)
			return float64(f) / float64(v), float64(l) / float64(v)
		}
	}
	return float64(min(m, p)), 1
}

// mlpActivationPerToken is the bytes an MLP of width f saves per token:
// GELU: activation input and down-projection input, 2·(f+f); SwiGLU: gate,
// up and act(gate)·up, 2·3f (formulas.md §2.2 [KORT §4.1], [derived]).
func mlpActivationPerToken(m model.Spec, f int) float64 {
	if m.FFN == model.SwiGLU {
		return 3 * ActivationBytesPerElement * float64(f)
	}
	return 2 * ActivationBytesPerElement * float64(f)
}

// layerActivationBytes is LayerActivationBytes for a resolved geometry and
// recompute policy. All terms are per micro-batch, per chip, in bytes, with
// s replaced by s/cp (formulas.md §2.2 [MEG-CP]).
func layerActivationBytes(m model.Spec, g geometry, o Options, moe bool, recompute string) float64 {
	const beta = ActivationBytesPerElement
	h := float64(m.Hidden)
	tokens := g.seq / g.cp * g.mb // s·b/c tokens of the micro-batch on this chip
	if recompute == space.RecomputeFull {
		// Full recompute keeps only the layer input, 2·s·b·h (/t with SP) [KORT §5][derived].
		return beta * tokens * h / g.tSP
	}
	drop := 0.0
	if o.gptBlock(m) {
		drop = 1 // 1-byte dropout masks [KORT §4.1]
	}
	// Norm inputs and outputs (= QKV and MLP inputs), 4 tensors of s·b·h, plus the
	// two post-block dropout masks: Korthikanti's "10 s·b·h" that only SP shards.
	a := tokens * h * (4*beta + 2*drop) / g.tSP
	// Q (s·b·q), K and V (s·b·kv each), attention output (s·b·q): 2·(2q + 2kv) [KORT §4.1][derived].
	q, kv := float64(m.QDim()), float64(m.KVDim())
	a += tokens * beta * (2*q/g.t + 2*kv/g.tKV)
	if recompute != space.RecomputeSelective {
		heads := float64(m.Heads)
		if o.NoFlashAttention {
			// Softmax output 2·a·s²·b, plus dropout mask a·s²·b and dropout output
			// 2·a·s²·b in a GPT block: 5·a·s²·b; sharded by heads over t, queries over c [KORT §4.1].
			a += heads * (g.seq / g.cp) * g.seq * g.mb * (beta + 3*drop) / g.t
		} else {
			// A fused kernel keeps only the fp32 log-sum-exp per query and head [derived].
			a += 4 * tokens * heads / g.t
		}
	}
	if !moe {
		// Dense MLP: activation and down-projection inputs, sharded over t [KORT §4.1].
		return a + tokens*mlpActivationPerToken(m, m.FFNHidden)/g.t
	}
	e := m.MoE
	local := tokens / g.tSP // tokens this chip routes
	// Router logits in fp32, 4·s·b·E [derived, formulas.md §2.2].
	a += 4 * local * float64(e.Experts)
	// Each of k routed copies (× capacity factor) keeps its expert input and
	// output (2h each) and the expert MLP's activations; balanced routing gives
	// every chip of the EP group as many copies as it sends [derived, formulas.md §2.2].
	a += e.CapacityFactor * float64(e.TopK) * local * (2*beta*h + mlpActivationPerToken(m, e.ExpertFFNHidden))
	// Shared experts: MLPs sharded over t.
	a += tokens * float64(e.SharedExperts) * mlpActivationPerToken(m, e.SharedFFNHidden) / g.t
	return a
}
