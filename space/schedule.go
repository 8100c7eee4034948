package space

// Schedule is a pipeline schedule. Its rules (bubble, micro-batches in
// flight per stage, how many chunks a rank runs and where, what it
// overlaps) are the rows of one table (scheduleRow); the cost and memory
// models and the enumeration read them from here.
type Schedule string

// The pipeline schedules.
const (
	GPipe       Schedule = "gpipe"       // all forwards, then all backwards [GPIPE]
	OneFOneB    Schedule = "1f1b"        // one forward, one backward in the steady state [NARA §2.2]
	Interleaved Schedule = "interleaved" // 1F1B over v virtual chunks per rank [NARA §2.2.2]
	ZBH1        Schedule = "zb-h1"       // 1F1B with the weight gradients deferred into the bubble [ZB §2.1]
	ZBV         Schedule = "zb-v"        // zero bubble over two chunks per rank in a V [ZB §6]
	DualPipe    Schedule = "dualpipe"    // two pipelines in opposite directions, forward and backward chunks overlapped [DSV3 §3.2.1]
	DualPipeV   Schedule = "dualpipev"   // DualPipe cut in half: one direction, two chunks per rank in a V [DUALPIPE][PT-SCHED]
)

// Bubble is a schedule's idle time per rank and step as a weighted sum of
// one micro-batch's passes over a rank's layers: F·T_F + B·T_B + W·T_W +
// FB·T_FB, where T_F is the forward pass, T_B the backward pass for the
// inputs (with what the recompute policy re-runs), T_W the backward pass
// for the weights (the matmuls whose result is a weight's gradient) and
// T_FB a forward and a backward chunk of two micro-batches run as one
// overlapped pair (DualPipe's F&B: T_F + T_B + T_W with the communication
// the schedule overlaps hidden). Weights may be negative: deferred
// weight-gradient passes fill part of the ramp (docs/formulas.md §5).
type Bubble struct {
	F, B, W, FB float64
}

// uniform is a bubble of n micro-batch times: n·(T_F + T_B + T_W).
func uniform(n float64) Bubble { return Bubble{F: n, B: n, W: n} }

// Uniform reports whether b weighs the forward and both backward passes
// alike and has no overlapped pairs: it is then F micro-batch times.
func (b Bubble) Uniform() bool { return b.F == b.B && b.B == b.W && b.FB == 0 }

// Placement is where a schedule puts a rank's layers.
type Placement uint8

// The placements.
const (
	// PlaceLinear: rank r runs stage r of p for every micro-batch; the
	// embedding is on the first rank, the output layer on the last.
	PlaceLinear Placement = iota
	// PlaceV: the layers are 2p chunks and rank r runs chunks r and
	// 2p-1-r for every micro-batch, so rank 0 holds the embedding and the
	// output layer ([ZB §6]; about half of ranks r and p-1-r's linear
	// layers each).
	PlaceV
	// PlaceMirror: rank r holds stage r of a pipeline running forward and
	// stage p-1-r of one running backward, each for half the micro-batches:
	// two copies of the parameters, gradients and optimizer state
	// ([DSV3 §3.2.1], Table 2).
	PlaceMirror
)

// Overlap is a set of communication a schedule hides under compute.
type Overlap uint8

// The overlaps.
const (
	// OverlapExpertA2A: the MoE dispatch and combine of one micro-batch's
	// forward chunk run under the compute of another's backward chunk and
	// the reverse, up to the chip's overlap fraction ([DSV3 §3.2.1]). Every
	// schedule's steady-state pipeline sends already hide that way (cost).
	OverlapExpertA2A Overlap = 1 << iota
)

// Has reports whether o includes x.
func (o Overlap) Has(x Overlap) bool { return o&x != 0 }

// scheduleSpec is one row of the table of schedules.
type scheduleSpec struct {
	name Schedule
	// alias is another spelling the strategy string takes ("" for none).
	alias Schedule
	// virtual says the schedule runs v >= 2 chunks per rank (the strategy's
	// V); the others take v = 1.
	virtual bool
	// chunks is the fixed number of chunks per rank of a schedule that does
	// not take v (2 for the V-shaped ones); 0 means 1. It multiplies the
	// pipeline sends as v does.
	chunks int
	// place is where the rank's layers are.
	place Placement
	// bubble is the idle time of a rank per step, in passes of one
	// micro-batch over the rank's layers, for p stages and v chunks
	// (docs/formulas.md §5).
	bubble func(p, v int) Bubble
	// inFlight is the number of micro-batches, in units of all of a rank's
	// layers for one micro-batch, whose activations rank r of p holds at
	// its peak with m micro-batches per step and v chunks
	// (docs/formulas.md §2.3).
	inFlight func(r, p, v, m int) float64
	// minMicrobatches is the fewest micro-batches the schedule runs with on
	// p stages; minText says it in words for messages ("pp", "2*pp").
	minMicrobatches func(p int) int
	minText         string
	// needsPipeline says pp must exceed 1; evenStages that pp must be even;
	// evenMicrobatches that the micro-batches must be even.
	needsPipeline, evenStages, evenMicrobatches bool
	// overlaps is the communication the schedule hides under compute, and
	// overlapped the micro-batches (in a rank's units) whose forward and
	// backward chunks run as overlapped pairs on the busiest rank.
	overlaps   Overlap
	overlapped func(p, m int) float64
	// searched says the search enumerates the schedule without being asked
	// (a --fix naming it, or a framework listing it, asks).
	searched bool
}

// numSchedules is the number of schedules (rows of the table).
const numSchedules = 7

// scheduleOrder lists the schedules in the order the enumeration lists
// them (an array, so that reading it allocates nothing): the first stands
// for "no pipeline"; the ones with virtual stages come last (Space.Skip
// relies on it).
func scheduleOrder() [numSchedules]Schedule {
	return [numSchedules]Schedule{OneFOneB, GPipe, ZBH1, ZBV, DualPipe, DualPipeV, Interleaved}
}

// scheduleRow is the table of schedules, one case a row; it returns the
// row of s, and false for an unknown schedule (a switch, so that a lookup
// builds one row). Adding a schedule is a row here, its place in
// scheduleOrder, numSchedules, and its name in the contract.
func scheduleRow(s Schedule) (scheduleSpec, bool) {
	switch s {
	case OneFOneB:
		// (p-1) micro-batch times of ramp-up and ramp-down [NARA §2.2]; rank
		// r holds min(m, p-r) micro-batches [KORT §4.3][MEG-MEM].
		return scheduleSpec{name: OneFOneB, bubble: rampBubble, inFlight: oneFOneBInFlight, minMicrobatches: oneMicrobatch, searched: true}, true
	case GPipe:
		// Every rank holds all m micro-batches [NARA §2.2].
		return scheduleSpec{name: GPipe, bubble: rampBubble, inFlight: gpipeInFlight, minMicrobatches: oneMicrobatch, searched: true}, true
	case ZBH1:
		// (p-1)(T_F+T_B-T_W) [ZB §2.1], 1F1B's memory [ZB Table 2].
		return scheduleSpec{name: ZBH1, alias: "zbh1", bubble: zbh1Bubble, inFlight: oneFOneBInFlight,
			minMicrobatches: pMicrobatches, minText: "pp", needsPipeline: true}, true
	case ZBV:
		// ZB-H1's ramp over chunks of half a rank's layers; 1F1B's memory,
		// the same on every rank [ZB §6][ZB-HF].
		return scheduleSpec{name: ZBV, alias: "zbv", chunks: 2, place: PlaceV, bubble: zbvBubble, inFlight: zbvInFlight,
			minMicrobatches: zbvMicrobatches, minText: "2*pp-1", needsPipeline: true}, true
	case DualPipe:
		// (PP/2-1)(F&B+B-3W), PP+1 chunks of activations, two copies of the
		// parameters [DSV3 Table 2][DUALPIPE]; at least 2·PP micro-batches,
		// an even number, over an even PP [DUALPIPE dualpipe.py].
		return scheduleSpec{name: DualPipe, place: PlaceMirror, bubble: dualPipeBubble, inFlight: dualPipeInFlight,
			minMicrobatches: twoPMicrobatches, minText: "2*pp", needsPipeline: true, evenStages: true, evenMicrobatches: true,
			overlaps: OverlapExpertA2A, overlapped: dualPipeOverlapped}, true
	case DualPipeV:
		// DualPipe of 2p stages cut in half onto p ranks: (p-1) chunk-pairs
		// of (F&B+B-3W), 2p+1 chunks of activations, one copy of the
		// parameters; at least 2p micro-batches [DUALPIPE][PT-SCHED].
		return scheduleSpec{name: DualPipeV, alias: "dualpipe-v", chunks: 2, place: PlaceV, bubble: dualPipeVBubble, inFlight: dualPipeVInFlight,
			minMicrobatches: twoPMicrobatches, minText: "2*pp", needsPipeline: true,
			overlaps: OverlapExpertA2A, overlapped: dualPipeVOverlapped}, true
	case Interleaved:
		// Megatron needs at least p micro-batches to interleave [MEG-SCHED].
		return scheduleSpec{name: Interleaved, virtual: true, bubble: interleavedBubble, inFlight: interleavedInFlight,
			minMicrobatches: pMicrobatches, minText: "pp", needsPipeline: true, searched: true}, true
	}
	return scheduleSpec{}, false
}

// rampBubble is the p-1 micro-batch times of ramp-up and ramp-down of GPipe
// and 1F1B [NARA §2.2].
func rampBubble(p, _ int) Bubble { return uniform(float64(p - 1)) }

// interleavedBubble is (p-1)/v [NARA §2.2.2].
func interleavedBubble(p, v int) Bubble { return uniform(float64(p-1) / float64(v)) }

// zbh1Bubble is (p-1)(T_F + T_B - T_W): the deferred weight passes fill
// the ramp-down [ZB §2.1]; (p-1)/3 of 1F1B's at T_F = T_B = T_W.
func zbh1Bubble(p, _ int) Bubble {
	k := float64(p - 1)
	return Bubble{F: k, B: k, W: -k}
}

// zbvBubble is ZB-H1's over 2p chunks of half a rank's layers,
// (p-1)(T_F + T_B - T_W)/2: at T_F = T_B = T_W the pipeline's fill,
// (p-1)·T_F/2, which optimizer post-validation would hide across steps
// ([ZB-HF] lists 0 with it); the planner keeps the step's global sync
// (gradient clipping) [ZB §6][derived: the schedule's order simulated].
func zbvBubble(p, _ int) Bubble {
	k := float64(p-1) / 2
	return Bubble{F: k, B: k, W: -k}
}

// dualPipeBubble is (p/2-1)(F&B + B - 3W) with B the full backward
// T_B + T_W: (p/2-1)·(T_FB + T_B - 2T_W) [DSV3 Table 2][DUALPIPE].
func dualPipeBubble(p, _ int) Bubble {
	k := float64(p/2 - 1)
	return Bubble{B: k, W: -2 * k, FB: k}
}

// dualPipeVBubble is DualPipe's over 2p stages of half a rank's layers,
// (p-1)(F&B + B - 3W) in chunk times: (p-1)/2·(T_FB + T_B - 2T_W) in a
// rank's [DUALPIPE][derived: the schedule's order simulated].
func dualPipeVBubble(p, _ int) Bubble {
	k := float64(p-1) / 2
	return Bubble{B: k, W: -2 * k, FB: k}
}

// oneFOneBInFlight: rank r holds min(m, p-r) micro-batches [KORT §4.3][MEG-MEM].
func oneFOneBInFlight(r, p, _, m int) float64 { return float64(min(m, p-r)) }

// gpipeInFlight: every rank holds all m micro-batches [NARA §2.2].
func gpipeInFlight(_, _, _, m int) float64 { return float64(m) }

// interleavedInFlight: rank r warms up 2(p-r-1) + (v-1)p chunk steps plus
// one, so it holds min(m·v, 2(p-r-1)+(v-1)p+1)/v micro-batches: the first
// rank p·(1 + (p-1)/(p·v)) when m >= p [MEG-SCHED][KORT].
func interleavedInFlight(r, p, v, m int) float64 {
	return float64(min(m*v, 2*(p-r-1)+(v-1)*p+1)) / float64(v)
}

// zbvInFlight: rank r runs 2p-r-1 forwards of its first chunk and r+1 of
// its second before its first backward, 2p chunks of half its layers: p
// micro-batches on every rank when m >= 2p-1 [ZB §6][PT-SCHED].
func zbvInFlight(r, p, _, m int) float64 {
	return float64(min(m, 2*p-r-1)+min(m, r+1)) / 2
}

// dualPipeInFlight: every rank runs p forward chunks before its first
// backward and one more in the steady state, p+1 chunks of one of its two
// stages [DSV3 Table 2][DUALPIPE dualpipe.py]: (p+1)/2 in units of both.
func dualPipeInFlight(_, p, _, m int) float64 { return float64(min(m, p+1)) / 2 }

// dualPipeVInFlight: DualPipe's 2p+1 chunks for 2p stages, each chunk half
// of a rank's layers (of the 2m the rank runs): p + 1/2 [DUALPIPE][PT-SCHED].
func dualPipeVInFlight(_, p, _, m int) float64 { return float64(min(2*m, 2*p+1)) / 2 }

// dualPipeOverlapped: the busiest rank (the first, half-rank 0) runs
// m - 3p/2 + 1 overlapped forward-backward pairs of its m micro-batches
// (steps 4 and 5 of the schedule) [derived from DUALPIPE dualpipe.py].
func dualPipeOverlapped(p, m int) float64 { return clampMicrobatches(float64(m)-1.5*float64(p)+1, m) }

// dualPipeVOverlapped: the first rank runs 2m - 3p + 1 overlapped chunk
// pairs, half as many micro-batches of its layers [derived from PT-SCHED].
func dualPipeVOverlapped(p, m int) float64 {
	return clampMicrobatches(float64(m)-1.5*float64(p)+0.5, m)
}

// clampMicrobatches limits x to [0, m].
func clampMicrobatches(x float64, m int) float64 { return min(max(x, 0), float64(m)) }

func oneMicrobatch(int) int      { return 1 }
func pMicrobatches(p int) int    { return p }
func twoPMicrobatches(p int) int { return 2 * p }

// zbvMicrobatches: 2p-1 fill the V; fewer leave slots idle [PT-SCHED].
func zbvMicrobatches(p int) int { return 2*p - 1 }

// Schedules returns the schedule names, in the order the enumeration lists them.
func Schedules() []Schedule {
	order := scheduleOrder()
	return append([]Schedule(nil), order[:]...)
}

// LookupSchedule returns the schedule named name (its name or its other
// spelling, lower case) and whether there is one.
func LookupSchedule(name string) (Schedule, bool) {
	for _, s := range scheduleOrder() {
		if r, _ := scheduleRow(s); s == Schedule(name) || r.alias != "" && r.alias == Schedule(name) {
			return s, true
		}
	}
	return "", false
}

// spec returns the row of s, and false for an unknown schedule.
func (s Schedule) spec() (scheduleSpec, bool) { return scheduleRow(s) }

// Rules are a schedule's rules, looked up in the table once: the form for
// hot paths that ask several of them.
type Rules struct {
	spec scheduleSpec
	ok   bool
}

// Rules looks s up in the table.
func (s Schedule) Rules() Rules {
	sp, ok := s.spec()
	return Rules{spec: sp, ok: ok}
}

// Known reports whether s is a schedule of the table.
func (s Schedule) Known() bool {
	_, ok := s.spec()
	return ok
}

// Virtual reports whether s runs several virtual chunks per rank (takes v).
func (s Schedule) Virtual() bool { return s.Rules().Virtual() }

// Virtual reports whether the schedule runs several virtual chunks per rank.
func (r Rules) Virtual() bool { return r.spec.virtual }

// Placement is where the schedule puts a rank's layers.
func (r Rules) Placement() Placement { return r.spec.place }

// Overlaps is the communication the schedule hides under compute.
func (r Rules) Overlaps() Overlap { return r.spec.overlaps }

// OverlappedMicrobatches is how many of m micro-batches (in units of a
// rank's layers) the busiest of p ranks runs as overlapped forward-backward
// pairs: 0 for a schedule that overlaps nothing or without a pipeline.
func (r Rules) OverlappedMicrobatches(p, m int) float64 {
	if !r.ok || p <= 1 || r.spec.overlapped == nil {
		return 0
	}
	return r.spec.overlapped(p, max(m, 1))
}

// Searched reports whether the search enumerates the schedule without a
// --fix or a framework naming it.
func (r Rules) Searched() bool { return r.spec.searched }

// NeedsPipeline reports whether the schedule needs pp > 1.
func (r Rules) NeedsPipeline() bool { return r.spec.needsPipeline }

// Bubble is the pipeline bubble of s with p stages and v chunks per rank,
// in passes of one micro-batch over a rank's layers (docs/formulas.md §5):
// p-1 of each for GPipe and 1F1B, (p-1)/v interleaved, (p-1)(T_F+T_B-T_W)
// ZB-H1, half that ZB-V, (p/2-1)(T_FB+T_B-2T_W) DualPipe and (p-1)/2 of
// it DualPipeV. It is zero for p <= 1 or an unknown schedule.
func (r Rules) Bubble(p, v int) Bubble {
	if !r.ok || p <= 1 {
		return Bubble{}
	}
	if !r.spec.virtual {
		v = 1
	}
	return r.spec.bubble(p, max(v, 1))
}

// BubbleStages is the pipeline bubble of s with p stages and v chunks per
// rank, in units of one micro-batch's time on a rank's layers when its
// forward, input-gradient and weight-gradient passes take equal times (and
// an overlapped pair two of them): p-1 for GPipe and 1F1B, (p-1)/v
// interleaved, (p-1)/3 ZB-H1 (docs/formulas.md §5). It is 0 for p <= 1 or
// an unknown schedule.
func (s Schedule) BubbleStages(p, v int) float64 { return s.Rules().BubbleStages(p, v) }

// BubbleStages is Schedule.BubbleStages.
func (r Rules) BubbleStages(p, v int) float64 {
	b := r.Bubble(p, v)
	if b.Uniform() {
		return b.F
	}
	return (b.F + b.B + b.W + 3*b.FB) / 3
}

// InFlight is the number of micro-batches whose activations pipeline rank
// r (0 is the first) of p holds at its peak, in units of all of the rank's
// layers for one micro-batch, with m micro-batches per step and v chunks
// per rank (docs/formulas.md §2.3): 1 without a pipeline; m for GPipe;
// min(m, p-r) for 1F1B and ZB-H1; min(m·v, 2(p-r-1)+(v-1)p+1)/v
// interleaved; p for ZB-V; (p+1)/2 for DualPipe (whose rank holds two
// stages); p+1/2 for DualPipeV.
func (s Schedule) InFlight(r, p, v, m int) float64 { return s.Rules().InFlight(r, p, v, m) }

// InFlight is Schedule.InFlight.
func (r Rules) InFlight(rank, p, v, m int) float64 {
	return r.spec.rankInFlight(r.ok, rank, p, v, m)
}

// HeadInFlight is the number of micro-batches whose output-layer
// activations (the logits) the rank holding the output layer keeps at its
// peak: InFlight of the last rank for a linear placement, one for the
// V-shaped and mirrored ones, which run the output layer's chunk forward
// once before its backward ([ZB §6][DUALPIPE]), and one for the
// interleaved schedule, whose last rank warms up (v-1)·p forward chunks of
// its other chunks and then runs each micro-batch's last chunk, the output
// layer's, forward and backward back to back; when every chunk is in the
// warm-up (m·v <= (v-1)·p) all m are held (Megatron-LM@d98e8a64
// megatron/core/pipeline_parallel/schedules.py, get_pp_rank_microbatches'
// num_warmup_microbatches and get_model_chunk_id's groups of p
// micro-batches per chunk).
func (r Rules) HeadInFlight(p, v, m int) float64 {
	if r.spec.place != PlaceLinear && p > 1 {
		return 1
	}
	if r.spec.virtual && v > 1 && p > 1 {
		if m = max(m, 1); m*v > (v-1)*p {
			return 1
		}
		return float64(m)
	}
	return r.InFlight(p-1, p, v, m)
}

// rankInFlight is InFlight for the row sp (ok false: unknown schedule).
func (sp *scheduleSpec) rankInFlight(ok bool, r, p, v, m int) float64 {
	m = max(m, 1)
	switch {
	case p <= 1 || !ok:
		return 1
	case sp.virtual && v > 1:
		return sp.inFlight(r, p, v, m)
	case sp.virtual:
		return float64(min(m, p-r)) // interleaving with one chunk is 1F1B
	}
	return sp.inFlight(r, p, 1, m)
}

// InFlightRanks writes into out (of length p) InFlight of every rank.
func (s Schedule) InFlightRanks(p, v, m int, out []float64) {
	rs := s.Rules()
	for r := range out {
		out[r] = rs.InFlight(r, p, v, m)
	}
}

// MinMicrobatches is the fewest micro-batches per step s runs with on p
// stages (p for interleaved and ZB-H1, 2p-1 for ZB-V, 2p for DualPipe and
// DualPipeV, 1 otherwise).
func (s Schedule) MinMicrobatches(p int) int { return s.Rules().MinMicrobatches(p) }

// MinMicrobatches is Schedule.MinMicrobatches from the looked-up rules.
func (r Rules) MinMicrobatches(p int) int {
	if !r.ok || p <= 1 {
		return 1
	}
	return r.spec.minMicrobatches(p)
}

// Fits reports whether the schedule runs p stages of layers layers with m
// micro-batches per step: the fewest micro-batches, an even pp and an even
// number of micro-batches where it needs them, and its fixed chunks within
// the layers. Validate says why not.
func (r Rules) Fits(p, m, layers int) bool {
	sp := &r.spec
	if !r.ok || p <= 1 {
		return !sp.needsPipeline
	}
	return m >= sp.minMicrobatches(p) && !(sp.evenStages && p%2 != 0) &&
		!(sp.evenMicrobatches && m%2 != 0) && !(sp.chunks > 1 && mulSat(p, sp.chunks) > layers)
}

// InterleaveFactor is the interleaved schedule's activation multiplier on the
// first stage, 1 + (p-1)/(p·v) for p stages of v virtual chunks, and 1 when
// v ≤ 1 or p ≤ 1 (docs/formulas.md §2.3 [KORT][MEG-MEM]).
func InterleaveFactor(p, v int) float64 {
	if p <= 1 || v <= 1 {
		return 1
	}
	return 1 + float64(p-1)/float64(p*v)
}
