package cost

// Passes is the busiest pipeline rank's step split into the quantities its
// step time is summed from (rankStep): one micro-batch's passes over the
// rank's layers, the once-per-step work, and each exposed part of the
// communication with the whole it is exposed from. Package timeline lays
// the schedule out from it; the estimate carries it only under
// Options.Trace, so the search never computes it.
//
// ComputeSeconds = Microbatches·(ForwardSeconds + BackwardSeconds) +
// OptimizerSeconds + FP8CastSeconds, and ExposedCommSeconds =
// Microbatches·CriticalSeconds − OverlappedMicrobatches·HiddenA2ASeconds +
// WeightTrafficExposedSeconds + GradReduceExposedSeconds +
// ParamGatherExposedSeconds + PipelineRampSeconds +
// PipelineSendExposedSeconds + OffloadExposedSeconds (docs/formulas.md §6).
type Passes struct {
	// Microbatches is the micro-batches per step, M.
	Microbatches float64
	// Chunks is the chunks a rank runs per micro-batch: v interleaved, 2
	// for the V-shaped schedules, else 1.
	Chunks float64
	// ForwardSeconds is one micro-batch's forward compute (the weights'
	// autocast copies included).
	ForwardSeconds float64
	// BackwardSeconds is one micro-batch's backward compute: the
	// recompute, the input gradients and the weight gradients (and the
	// gradients' cast).
	BackwardSeconds float64
	// RecomputeSeconds is the part of BackwardSeconds that re-runs forward
	// ops under the recompute policy.
	RecomputeSeconds float64
	// WeightGradSeconds is the part of BackwardSeconds whose matmuls
	// produce a weight's gradient (T_W).
	WeightGradSeconds float64
	// CriticalSeconds is one micro-batch's exposed critical communication
	// (tp, sp, cp and the MoE dispatch and combine); CriticalForwardSeconds
	// and CriticalWeightGradSeconds are the forward pass's and the
	// weight-gradient passes' parts of it.
	CriticalSeconds, CriticalForwardSeconds, CriticalWeightGradSeconds float64
	// A2AForwardSeconds and A2ABackwardSeconds are the MoE dispatch and
	// combine of the forward pass and of the recompute and backward passes
	// (parts of CriticalSeconds).
	A2AForwardSeconds, A2ABackwardSeconds float64
	// A2AIntoExpertsForwardSeconds and A2AIntoExpertsBackwardSeconds are
	// their parts into the experts (the forward's dispatch, the backward's
	// combine gradient); ExpertForwardSeconds, ExpertBackwardSeconds and
	// ExpertWeightGradSeconds the experts' compute between the two
	// all-to-alls: forward, recompute and input gradients, weight
	// gradients; A2ASMShare the share of the SMs the all-to-all's kernels
	// take from the compute beside them. Megatron-Core's EP overlap hides
	// the all-to-all phase by phase from them (rankSums.overlappedA2ASeconds).
	A2AIntoExpertsForwardSeconds, A2AIntoExpertsBackwardSeconds          float64
	ExpertForwardSeconds, ExpertBackwardSeconds, ExpertWeightGradSeconds float64
	A2ASMShare                                                           float64
	// EndsForwardSeconds and EndsBackwardSeconds are the forward and
	// backward compute of the embedding and the output layer, outside the
	// overlap's layer pairs.
	EndsForwardSeconds, EndsBackwardSeconds float64
	// HiddenA2ASeconds is the all-to-all one overlapped forward-backward
	// pair hides under compute, and OverlappedMicrobatches how many
	// micro-batches run as such pairs (space.Rules.OverlappedMicrobatches).
	HiddenA2ASeconds, OverlappedMicrobatches float64
	// OptimizerSeconds is the optimizer step; FP8CastSeconds the
	// once-per-step fp8 copies of the weights.
	OptimizerSeconds, FP8CastSeconds float64
	// WeightTrafficSeconds is the step's per micro-batch weight gathers
	// and gradient reductions (FSDP, ZeRO-2/3), WeightTrafficExposedSeconds
	// the part not hidden by prefetch.
	WeightTrafficSeconds, WeightTrafficExposedSeconds float64
	// GradReduceSeconds is the once-per-step gradient reduction,
	// GradReduceExposedSeconds the part not hidden under the last backward.
	GradReduceSeconds, GradReduceExposedSeconds float64
	// ParamGatherSeconds is the once-per-step ZeRO parameter gather,
	// ParamGatherExposedSeconds the part not hidden under the first forward.
	ParamGatherSeconds, ParamGatherExposedSeconds float64
	// PipelineRampSeconds is the exposed ramp-up and ramp-down walks of
	// the pipeline sends over the stage boundaries (half each).
	PipelineRampSeconds float64
	// PipelineSends is the sends per step, 2·M·Chunks, of
	// PipelineSendSeconds each; PipelineSendExposedSeconds is the part of
	// all of them that does not overlap.
	PipelineSends, PipelineSendSeconds, PipelineSendExposedSeconds float64
	// OffloadSeconds is the offloaded activations' host copies,
	// OffloadExposedSeconds the part not hidden under compute.
	OffloadSeconds, OffloadExposedSeconds float64
}

// recomputeSeconds is the recompute pass of one micro-batch over the
// blocks a rank runs mult times each.
func (st *evalState) recomputeSeconds(mult []float64) float64 {
	var s float64
	for b, n := range mult {
		if n != 0 {
			s += n * st.blocks[b].runs[1].seconds
		}
	}
	return s
}
