package space

// Schedule is a pipeline schedule. Its rules (bubble, micro-batches in
// flight per stage, how many chunks a rank runs) are the rows of one table
// (scheduleTable); the cost and memory models and the enumeration read
// them from here.
type Schedule string

// The pipeline schedules.
const (
	GPipe       Schedule = "gpipe"       // all forwards, then all backwards [GPIPE]
	OneFOneB    Schedule = "1f1b"        // one forward, one backward in the steady state [NARA §2.2]
	Interleaved Schedule = "interleaved" // 1F1B over v virtual chunks per rank [NARA §2.2.2]
)

// scheduleSpec is one row of the table of schedules.
type scheduleSpec struct {
	name Schedule
	// virtual says the schedule runs v >= 2 chunks per rank (the strategy's
	// V); the others take v = 1.
	virtual bool
	// bubble is the idle time of a rank per step, in units of one
	// micro-batch's time on the rank's layers, for p stages and v chunks
	// (docs/formulas.md §5).
	bubble func(p, v int) float64
	// inFlight is the number of micro-batches, in units of all of a rank's
	// layers for one micro-batch, whose activations rank r of p holds at
	// its peak with m micro-batches per step and v chunks
	// (docs/formulas.md §2.3).
	inFlight func(r, p, v, m int) float64
	// minMicrobatches is the fewest micro-batches the schedule runs with on
	// p stages.
	minMicrobatches func(p int) int
}

// numSchedules is the number of rows of scheduleTable.
const numSchedules = 3

// scheduleTable returns the schedules, in the order the enumeration lists
// them (an array, so that reading it allocates nothing). Adding a schedule
// is a row here, numSchedules, and its name in the contract.
func scheduleTable() [numSchedules]scheduleSpec {
	return [numSchedules]scheduleSpec{
		// (p-1) micro-batch times of ramp-up and ramp-down [NARA §2.2]; rank
		// r holds min(m, p-r) micro-batches [KORT §4.3][MEG-MEM].
		{name: OneFOneB, bubble: rampBubble, inFlight: oneFOneBInFlight, minMicrobatches: oneMicrobatch},
		// Every rank holds all m micro-batches [NARA §2.2].
		{name: GPipe, bubble: rampBubble, inFlight: gpipeInFlight, minMicrobatches: oneMicrobatch},
		// Megatron needs at least p micro-batches to interleave [MEG-SCHED].
		{name: Interleaved, virtual: true, bubble: interleavedBubble, inFlight: interleavedInFlight, minMicrobatches: pMicrobatches},
	}
}

// rampBubble is the p-1 micro-batch times of ramp-up and ramp-down of GPipe
// and 1F1B [NARA §2.2].
func rampBubble(p, _ int) float64 { return float64(p - 1) }

// interleavedBubble is (p-1)/v [NARA §2.2.2].
func interleavedBubble(p, v int) float64 { return float64(p-1) / float64(v) }

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

func oneMicrobatch(int) int   { return 1 }
func pMicrobatches(p int) int { return p }

// Schedules returns the schedule names, in the order the enumeration lists them.
func Schedules() []Schedule {
	var out []Schedule
	for _, s := range scheduleTable() {
		out = append(out, s.name)
	}
	return out
}

// spec returns the row of s, and false for an unknown schedule.
func (s Schedule) spec() (scheduleSpec, bool) {
	for _, r := range scheduleTable() {
		if r.name == s {
			return r, true
		}
	}
	return scheduleSpec{}, false
}

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

// BubbleStages is the pipeline bubble of s with p stages and v chunks per
// rank, in units of one micro-batch's time on a rank's layers: p-1 for
// GPipe and 1F1B, (p-1)/v interleaved (docs/formulas.md §5). It is 0 for
// p <= 1 or an unknown schedule.
func (s Schedule) BubbleStages(p, v int) float64 { return s.Rules().BubbleStages(p, v) }

// BubbleStages is Schedule.BubbleStages.
func (r Rules) BubbleStages(p, v int) float64 {
	if !r.ok || p <= 1 {
		return 0
	}
	if !r.spec.virtual {
		v = 1
	}
	return r.spec.bubble(p, max(v, 1))
}

// InFlight is the number of micro-batches whose activations pipeline rank
// r (0 is the first) of p holds at its peak, in units of all of the rank's
// layers for one micro-batch, with m micro-batches per step and v chunks
// per rank (docs/formulas.md §2.3): 1 without a pipeline; m for GPipe;
// min(m, p-r) for 1F1B; min(m·v, 2(p-r-1)+(v-1)p+1)/v interleaved.
func (s Schedule) InFlight(r, p, v, m int) float64 { return s.Rules().InFlight(r, p, v, m) }

// InFlight is Schedule.InFlight.
func (rs Rules) InFlight(r, p, v, m int) float64 { return rs.spec.rankInFlight(rs.ok, r, p, v, m) }

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
// stages (p for interleaved, 1 otherwise).
func (s Schedule) MinMicrobatches(p int) int {
	r, ok := s.spec()
	if !ok || p <= 1 {
		return 1
	}
	return r.minMicrobatches(p)
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
