package memory

import "github.com/meshplan/meshplan/space"

// Megatron's gradient bucket is max(4e7, 1e6·dp) parameters [MEG-DDP].
const (
	bucketMinParams       = 4e7
	bucketParamsPerDPRank = 1e6
)

// The buffer terms, in the order Parts lists them.
const (
	bufComm      = iota // collective communicators
	bufFSDP             // FSDP gathered units and one unit's gradients
	bufBucket           // the data-parallel gradient bucket
	bufPipeline         // pipeline send and receive buffers
	bufEmbed            // what the embedding keeps (token ids, dropout mask)
	bufOutput           // what the output layer keeps (its inputs, the fp32 logits)
	bufFP8              // fp8 weight copies of one FSDP unit
	bufLoss             // transient: the logits' gradient
	bufHeadUnit         // transient, with bufLoss: the output layer's gathered weight and gradient beyond a layer's (XLA)
	bufWork             // transient: a layer's recomputed activations
	bufTPGather         // transient: the TP+SP all-gathered input
	bufCPKV             // transient: CP's all-gathered keys and values
	bufMoE              // transient: the MoE dispatch and combine buffers
	bufEmbedUnit        // transient, alone: the embedding's gathered weight and gradient beyond a layer's (XLA)
	numBufTerms
)

// bufNames are the terms' names in Parts.
func bufNames() [numBufTerms]string {
	return [numBufTerms]string{
		"collective communicators", "FSDP gathered weights and gradients", "gradient bucket",
		"pipeline send and receive", "embedding inputs", "output layer inputs and logits",
		"fp8 weight copies (FSDP unit)", "loss gradient (transient)",
		"output layer gathered weight and gradient (transient)", "recomputed activations (transient)",
		"tensor-parallel gathered input (transient)", "context-parallel keys and values (transient)",
		"MoE dispatch and combine (transient)", "embedding gathered weight and gradient (transient)",
	}
}

// bufTerms are the buffer terms of one pipeline rank, in bytes; the
// transient ones (bufLoss onwards) are phases never live together: the
// loss (bufLoss, bufHeadUnit), a layer's backward (bufWork to bufMoE) and,
// under XLA, the embedding (bufEmbedUnit).
type bufTerms [numBufTerms]float64

// The transient phases, as phase returns them.
const (
	phaseLoss = iota
	phaseLayer
	phaseEmbed
)

// phaseSums returns the bytes of the transient phases, indexed by phaseLoss,
// phaseLayer and phaseEmbed.
func (b *bufTerms) phaseSums() [3]float64 {
	return [3]float64{b[bufLoss] + b[bufHeadUnit], b[bufWork] + b[bufTPGather] + b[bufCPKV] + b[bufMoE], b[bufEmbedUnit]}
}

// totals returns what persists through the step and the largest transient
// phase.
func (b *bufTerms) totals() (persistent, transient float64) {
	for i := bufComm; i < bufLoss; i++ {
		persistent += b[i]
	}
	ph := b.phaseSums()
	return persistent, max(ph[phaseLoss], ph[phaseLayer], ph[phaseEmbed])
}

// xlaStepDead reports whether buffer term i is dead in the optimizer step
// under XLA: the gathered weights and their unsharded gradients (FSDP and
// fp8 units) and what the embedding and the output layer saved are last
// read in the backward pass, which the update follows in the same compiled
// step, so buffer assignment reuses their space [derived].
func xlaStepDead(i int) bool {
	return i == bufFSDP || i == bufFP8 || i == bufEmbed || i == bufOutput
}

// stepXLA returns the buffers live in the optimizer step under XLA: the
// persistent terms but those xlaStepDead names.
func (b *bufTerms) stepXLA() float64 {
	var sum float64
	for i := bufComm; i < bufLoss; i++ {
		if !xlaStepDead(i) {
			sum += b[i]
		}
	}
	return sum
}

// phase returns the largest transient phase; the loss wins a tie with a
// layer's backward only when strictly larger, as the layer's terms are listed first.
func (b *bufTerms) phase() int {
	ph := b.phaseSums()
	switch {
	case ph[phaseEmbed] > ph[phaseLoss] && ph[phaseEmbed] > ph[phaseLayer]:
		return phaseEmbed
	case ph[phaseLoss] > ph[phaseLayer]:
		return phaseLoss
	}
	return phaseLayer
}

// buffers is everything outside the model states and the layers' saved
// activations: the terms that persist through the step, and the two
// transient phases of the backward pass, the loss (the logits' gradient)
// and a layer's backward (its recomputed activations and collective
// buffers), which are never live at the same time. stageParams are the
// stage's parameters after storage sharding, unit the largest FSDP unit
// before it, work a layer's recomputed activations, fp8Unit the largest
// unit's parameters with fp8 copies.
func (mm *Model) buffers(g *geometry, e *endTerms, st *stage, ss *stageSums) bufTerms {
	stageParams, unit, work, fp8Unit, hasMoE := ss.dense+ss.expert, ss.unit, ss.work, ss.fp8Unit, ss.hasMoE
	pr := mm.p.Options.Precision
	var b bufTerms
	// The collective communicators' buffers (docs/runtime-memory.md).
	b[bufComm] = g.comm
	fsdp := g.fsdp()
	// FSDP/ZeRO-3: two gathered units (current and prefetched) and one unit's
	// unsharded gradients (docs/formulas.md §2.4 [TORCH-FSDP], [derived]).
	if fsdp {
		unitGrad := pr.Grad
		if pr.GradInWeight {
			// The gathered chunk takes its gradients in place
			// (model.Precision.GradInWeight: ColossalAI Gemini).
			unitGrad = 0
		}
		b[bufFSDP] = (2*pr.Weight + unitGrad) * unit
		if pr.ReduceCopy {
			// The unit's own gradients in Weight's dtype beside the
			// previous unit's reduce-scatter copy in Grad's
			// (model.Precision.ReduceCopy).
			b[bufFSDP] += pr.Weight * unit
		}
		if pr.PipelineUnsharded && st.pp > 1 {
			// The stage's units stay gathered from the first forward pass
			// to the last backward pass, and their gradients accumulate
			// unsharded in Grad's dtype, each micro-batch's fresh
			// Weight-sized gradient of a unit added to them
			// (model.Precision.PipelineUnsharded).
			b[bufFSDP] = (pr.Weight+unitGrad)*ss.gathered + pr.Weight*unit
		}
		if pr.TensorUnits {
			// XLA assigns buffers by liveness in one compiled step: the
			// embedding's and the output layer's gathered weights and
			// unsharded gradients live only while those blocks run (the
			// embedding at the step's ends, the output layer with the
			// loss), never with a layer's backward. Each is gathered once,
			// the tensor prefetched beside it being a layer's (in the
			// layer unit, which persists), so one gathered copy and one
			// unsharded gradient, less the layer unit, join those phases
			// [derived].
			layer := (2*pr.Weight + pr.Grad) * ss.layerUnit
			b[bufFSDP] = layer
			b[bufHeadUnit] = max((pr.Weight+pr.Grad)*ss.headUnit-layer, 0)
			b[bufEmbedUnit] = max((pr.Weight+pr.Grad)*ss.embedUnit-layer, 0)
		}
		// FP8 weight copies, the weight and its transpose at 1 byte each,
		// or the weight alone (geometry.fp8Copies), per gathered unit.
		b[bufFP8] = g.fp8Copies * fp8Unit
	}
	// Gradient reduction across dp: one bucket of unsharded gradients in
	// flight, max(4e7, 1e6·dp) parameters, at most the stage's (docs/formulas.md §2.4 [MEG-DDP]).
	if dp := g.deg[space.RoleDP]; dp > 1 {
		b[bufBucket] = pr.Grad * min(stageParams, max(bucketMinParams, bucketParamsPerDPRank*dp))
		// PyTorch DDP (gradient_as_bucket_view=False, its default) keeps
		// every gradient's copy in its buckets through the step
		// (model.Precision.BucketCopy, torch.nn.parallel.DistributedDataParallel docs).
		if pr.BucketCopy && g.zero == 0 {
			b[bufBucket] = pr.Grad * stageParams
		}
	}
	// Pipeline send and receive buffers: one boundary activation each way,
	// the residual stream's shard (docs/formulas.md §3.3 [derived]).
	if st.pp > 1 {
		b[bufPipeline] = 2 * e.residual
	}
	if st.first {
		// Token ids (int64) and, in a GPT block, the embedding dropout mask,
		// per micro-batch in flight (docs/formulas.md §2.2 [MEG-MEM][KORT §4.3]).
		b[bufEmbed] = st.inFlight * e.embedSaved
	}
	if st.last {
		// Final-norm input and output-layer input, and the fp32 logits saved
		// for the cross-entropy backward, per micro-batch in flight on the
		// last stage (docs/formulas.md §2.2 [MEG-MEM]); the logits' gradient
		// while the loss is back-propagated (docs/formulas.md §2.4).
		b[bufOutput] = st.lastInFlight * e.outputSaved
		b[bufLoss] = e.logits
	}
	// A layer's backward: its recomputed activations and collective buffers.
	// TP+SP: the all-gathered full-sequence input of a column-parallel
	// matmul (docs/formulas.md §2.4 [MEG-TP]); CP: the layer's all-gathered
	// K and V, the all-gather variant, at least the ring's two chunks
	// (docs/formulas.md §2.4 [LLAMA3]).
	b[bufWork], b[bufTPGather], b[bufCPKV] = work, e.gathered, e.kv
	if hasMoE {
		// MoE dispatch and combine buffers: the routed copies each way
		// (docs/formulas.md §2.4), the rank's own going out and, coming
		// in, load times as many on the busiest expert rank
		// (model.MoE.Load).
		b[bufMoE] = (1 + g.load) * e.routed
	}
	return b
}
