// Package timeline expands the step the cost model prices into events: for
// each pipeline rank drawn, each micro-batch's forward, backward (its input
// and weight gradients apart where the schedule splits them: ZB-H1, ZB-V,
// DualPipe, DualPipeV), recompute and the optimizer step on the compute
// stream, and on their own streams each collective, marked exposed or
// overlapped, with the pipeline bubble as gaps.
//
// Every duration comes from the estimate's own per-pass quantities
// (cost.Passes, filled under cost.Options.Trace), so the trace's totals
// equal the breakdown `plan explain` prints: the compute stream's work is
// cost.Estimate.ComputeSeconds, its bubble events BubbleSeconds, the exposed
// parts of the communication ExposedCommSeconds (the ep stream's
// ExposedA2ASeconds) and each rank's step StepSeconds.
//
// The cost model prices the busiest rank and takes every stage to run as
// long (its bubble formulas assume it), so every rank drawn runs the
// busiest rank's pass times; the ranks differ in the schedule's order and
// where their bubble falls: rank r of a pipeline of pp waits r/(pp-1) of the
// bubble at the ramp-up (before its first forward) and ramp-down (before the
// optimizer), split in the ratio of a micro-batch's forward to its backward,
// and the rest before its first backward, as GPipe and 1F1B do [NARA §2.2].
// The zero-bubble and DualPipe schedules' bubbles are placed the same way;
// their order (warm-up forwards, steady state, cool-down) follows [ZB] and
// [DSV3 §3.2.1] in outline, not op for op.
//
// Long steps are summarised: pipelines of more than maxRanks ranks draw the
// first, the last and a few between (sampled in all), and a phase of more than foldAbove
// identical steps (warm-up, steady state, cool-down) keeps its first and
// last few and folds the rest into one event marked "xN" whose duration is
// the N steps', so the totals hold. Timeline.Folding says what was folded.
package timeline

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/meshplan/meshplan/cost"
	"github.com/meshplan/meshplan/space"
)

// Stream is one lane of a rank: compute or one kind of communication.
type Stream int

// The streams of a rank, in the order a trace lists them.
const (
	// StreamCompute runs the passes, the optimizer step and the bubble.
	StreamCompute Stream = iota + 1
	// StreamTP runs the tensor, sequence and context parallel collectives.
	StreamTP
	// StreamDP runs the data-parallel, ZeRO and FSDP collectives.
	StreamDP
	// StreamEP runs the MoE dispatch and combine (expert parallelism).
	StreamEP
	// StreamPP runs the pipeline's sends and receives.
	StreamPP
	// StreamHost runs the offloaded activations' host copies.
	StreamHost
)

// Streams lists every stream in trace order.
func Streams() []Stream {
	return []Stream{StreamCompute, StreamTP, StreamDP, StreamEP, StreamPP, StreamHost}
}

// String names the stream as a trace shows it.
func (s Stream) String() string {
	switch s {
	case StreamCompute:
		return "compute"
	case StreamTP:
		return "tp/cp comm"
	case StreamDP:
		return "dp/fsdp comm"
	case StreamEP:
		return "ep all-to-all"
	case StreamPP:
		return "pp send/recv"
	case StreamHost:
		return "host offload"
	}
	return fmt.Sprintf("stream %d", int(s))
}

// The categories of an event (Event.Cat).
const (
	CatForward    = "forward"
	CatBackward   = "backward"    // the input gradients (and the weight gradients where not split)
	CatWeightGrad = "weight-grad" // the weight gradients, deferred (zero-bubble, DualPipe)
	CatRecompute  = "recompute"
	CatPair       = "forward+backward" // an overlapped pair of chunks (DualPipe)
	CatSteady     = "steady"           // folded steady-state steps: their forwards and backwards
	CatOptimizer  = "optimizer"
	CatBubble     = "bubble"
	CatComm       = "comm"
)

// Event is one slice of a rank's stream.
type Event struct {
	// Rank is the pipeline rank, Stream the lane.
	Rank   int
	Stream Stream
	// Name says what runs, e.g. "F 3", "B 3.1" (micro-batch 3, chunk 1),
	// "F x57" for 57 folded steps.
	Name string
	// Cat is the event's category (CatForward, ...).
	Cat string
	// StartSeconds and DurSeconds place the event in the step.
	StartSeconds, DurSeconds float64
	// ExposedSeconds is the part of a communication event that the
	// compute waits for (0 when it hides under compute entirely).
	ExposedSeconds float64
	// Repeat is the number of steps a folded event stands for (0 or 1:
	// not folded).
	Repeat int
	// Microbatches names the micro-batches (and chunks) it covers when
	// folded, e.g. "3-59".
	Microbatches string
	// Bytes is a communication event's array bytes (the collectives'
	// full array size summed over its calls), Link the mesh axes it
	// crosses, Calls its collectives' calls, What what they are.
	Bytes float64
	Link  string
	Calls float64
	What  string
}

// Totals are a rank's sums over its events: what explain's TIME PER STEP
// shows.
type Totals struct {
	// ComputeSeconds is the compute stream's work (passes and optimizer).
	ComputeSeconds float64
	// ExposedCommSeconds is the exposed part of every communication event,
	// ExposedA2ASeconds that of the ep stream's.
	ExposedCommSeconds, ExposedA2ASeconds float64
	// BubbleSeconds is the compute stream's bubble events.
	BubbleSeconds float64
	// StepSeconds is the end of the rank's last event.
	StepSeconds float64
}

// Timeline is one training step laid out per rank and stream.
type Timeline struct {
	// Schedule is the pipeline schedule, Stages the pipeline ranks (pp),
	// Microbatches the micro-batches per step, Chunks a rank's chunks per
	// micro-batch.
	Schedule            space.Schedule
	Stages              int
	Microbatches, Chunk int
	// Ranks are the pipeline ranks drawn, in order.
	Ranks []int
	// StepSeconds is the step time of the estimate.
	StepSeconds float64
	// Events are the events, rank by rank, each rank's in order of start
	// per stream.
	Events []Event
	// Folding says what was summarised (ranks sampled, steps folded); ""
	// when nothing was.
	Folding string
	// Note says how the ranks are drawn (the busiest rank's pass times).
	Note string
}

// maxRanks is the most pipeline ranks a timeline draws all of, sampled
// the ranks it draws of a longer pipeline; foldAbove the most steps of one
// phase it draws one by one, foldKeep the steps it keeps at each end of a
// folded phase. A phase of 160 steps of ten events on 8 ranks is about 2
// MB of trace.
const (
	maxRanks  = 8
	sampled   = 5
	foldAbove = 160
	foldKeep  = 4
)

// Build lays out the step of strategy s on workload w that est prices. est
// must carry its passes (cost.Options.Trace).
func Build(est cost.Estimate, s space.Strategy, w space.Workload) (*Timeline, error) {
	p := est.Passes
	if p == nil {
		return nil, errors.New("timeline: the estimate has no passes (evaluate with cost.Options.Trace)")
	}
	if p.Microbatches < 1 || p.Microbatches != math.Trunc(p.Microbatches) {
		return nil, fmt.Errorf("timeline: %g micro-batches per step is not a whole number of at least one", p.Microbatches)
	}
	pp := max(s.Degree[space.PP], 1)
	sched := s.Schedule
	if pp == 1 {
		sched = space.OneFOneB
	}
	c := max(int(p.Chunks), 1)
	m := int(p.Microbatches)
	t := &Timeline{Schedule: sched, Stages: pp, Microbatches: m, Chunk: c, StepSeconds: est.StepSeconds,
		Note: "Every rank runs the busiest rank's pass times, as the cost model prices the step"}
	if n := s.NumMicrobatches(w); n > 0 && n != m {
		return nil, fmt.Errorf("timeline: the estimate has %d micro-batches, the strategy %d", m, n)
	}
	t.Ranks = sampleRanks(pp)
	var folded []string
	if len(t.Ranks) < pp {
		folded = append(folded, fmt.Sprintf("%d of %d pipeline ranks drawn (%s)", len(t.Ranks), pp, joinInts(t.Ranks)))
	}
	u := newUnits(est, c)
	u.setSplit(splits(sched), p, c)
	foldedSteps := false
	for _, r := range t.Ranks {
		l := &rankLayout{u: u, rank: r, pp: pp, sched: sched}
		l.run(order(sched, pp, r, m, c, u.pairs))
		l.settle(est.StepSeconds)
		t.Events = append(t.Events, l.events...)
		foldedSteps = foldedSteps || l.folded
	}
	if foldedSteps {
		folded = append(folded, fmt.Sprintf("runs of more than %d identical steps folded into one event marked xN (the first and last %d kept)", foldAbove, foldKeep))
	}
	t.Folding = strings.Join(folded, "; ")
	return t, nil
}

// sampleRanks returns every rank of pp, or for more than maxRanks the
// first, the last and evenly spaced ones between, sampled in all.
func sampleRanks(pp int) []int {
	if pp <= maxRanks {
		out := make([]int, pp)
		for i := range out {
			out[i] = i
		}
		return out
	}
	var out []int
	for i := range sampled {
		r := i * (pp - 1) / (sampled - 1)
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ", ")
}

// TotalsOf sums the events of rank r.
func (t *Timeline) TotalsOf(r int) Totals {
	var tot Totals
	for _, e := range t.Events {
		if e.Rank != r {
			continue
		}
		tot.StepSeconds = max(tot.StepSeconds, e.StartSeconds+e.DurSeconds)
		switch {
		case e.Cat == CatBubble:
			tot.BubbleSeconds += e.DurSeconds
		case e.Stream == StreamCompute:
			tot.ComputeSeconds += e.DurSeconds
		default:
			tot.ExposedCommSeconds += e.ExposedSeconds
			if e.Stream == StreamEP {
				tot.ExposedA2ASeconds += e.ExposedSeconds
			}
		}
	}
	return tot
}
