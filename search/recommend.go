package search

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/meshplan/meshplan/space"
)

// Objectives of the recommendation, as the --objective flag spells them.
const (
	// ObjectiveBalanced recommends, among the front rows whose step time is
	// within the model's error band of the fastest, the one with the most
	// memory headroom (headrooms within the memory model's error of the
	// most count as equal), then the fewest chips, then the fewest
	// parallel dimensions above 1, then the fastest (the default).
	ObjectiveBalanced = "balanced"
	// ObjectiveTime recommends the fastest row.
	ObjectiveTime = "time"
	// ObjectiveMemory recommends the row with the least memory per chip.
	ObjectiveMemory = "memory"
	// ObjectiveCost recommends the cheapest row: the least chip-seconds
	// per token, which at one price per chip-hour is the least cost.
	ObjectiveCost = "cost"
)

// Objectives returns the objective names, the default first.
func Objectives() []string {
	return []string{ObjectiveBalanced, ObjectiveTime, ObjectiveMemory, ObjectiveCost}
}

// CheckObjective reports an unknown objective name; the empty name is the
// default, ObjectiveBalanced.
func CheckObjective(name string) error {
	if name == "" || slices.Contains(Objectives(), name) {
		return nil
	}
	return fmt.Errorf("search: unknown objective %q (want %s)", name, strings.Join(Objectives(), ", "))
}

// Recommendation is the row of a front an objective recommends.
type Recommendation struct {
	// Index is the recommended row's index in the front, -1 when the
	// front is empty.
	Index int
	// BandRows is the number of leading rows of the front (fastest first)
	// whose step time is within the band of the fastest: the rows the
	// balanced objective chooses among.
	BandRows int
	// BandStepSeconds is the slowest step time within the band: the
	// fastest step time times 1 + band.
	BandStepSeconds float64
}

// Recommend returns the row of front (a Pareto front in Front order,
// fastest first) that objective recommends; band is the relative error of
// the step times, a fraction of the fastest (0.073 for ±7.3%), and memBand
// that of the memory per chip (profiles.MemoryUncertainty): the balanced
// objective counts headrooms within memBand of the memory of the row with
// the most headroom as equal. The empty objective is ObjectiveBalanced.
// Every objective breaks its ties by the front's order. The result depends
// only on the front's rows and order.
func Recommend(front []Candidate, objective string, band, memBand float64) (Recommendation, error) {
	if err := CheckObjective(objective); err != nil {
		return Recommendation{Index: -1}, err
	}
	for _, b := range [...]float64{band, memBand} {
		if !(b >= 0) || math.IsInf(b, 0) {
			return Recommendation{Index: -1}, fmt.Errorf("search: band %g is not a fraction of at least 0", b)
		}
	}
	if len(front) == 0 {
		return Recommendation{Index: -1}, nil
	}
	limit := front[0].StepSeconds * (1 + band)
	rec := Recommendation{BandStepSeconds: limit}
	for rec.BandRows < len(front) && front[rec.BandRows].StepSeconds <= limit {
		rec.BandRows++
	}
	rec.BandRows = max(rec.BandRows, 1)
	switch objective {
	case ObjectiveTime:
		rec.Index = 0
	case ObjectiveMemory:
		rec.Index = bestOf(front, len(front), func(a, b *Candidate) bool { return a.MemoryBytes < b.MemoryBytes })
	case ObjectiveCost:
		rec.Index = bestOf(front, len(front), func(a, b *Candidate) bool { return chipSeconds(a) < chipSeconds(b) })
	default:
		rec.Index = balanced(front[:rec.BandRows], memBand)
	}
	return rec, nil
}

// bestOf returns the index of the first of front[:n] that no other of them
// is better than.
func bestOf(front []Candidate, n int, better func(a, b *Candidate) bool) int {
	i := 0
	for j := 1; j < n; j++ {
		if better(&front[j], &front[i]) {
			i = j
		}
	}
	return i
}

// balanced returns the index of the balanced objective's row of rows:
// among those whose memory headroom is within memBand of the memory of the
// row with the most headroom (a difference the memory model cannot tell
// from its error), the first of the fewest chips, then of the fewest
// parallel dimensions above 1.
func balanced(rows []Candidate, memBand float64) int {
	most := bestOf(rows, len(rows), func(a, b *Candidate) bool { return headroom(a) > headroom(b) })
	floor := headroom(&rows[most]) - memBand*rows[most].MemoryBytes
	best := -1
	for i := range rows {
		if headroom(&rows[i]) >= floor && (best < 0 || simpler(&rows[i], &rows[best])) {
			best = i
		}
	}
	return best
}

// headroom is the memory per chip a candidate leaves free, in bytes.
func headroom(c *Candidate) float64 { return c.UsableBytes - c.MemoryBytes }

// simpler reports whether a runs on fewer chips than b, or on as many in
// fewer parallel dimensions above 1.
func simpler(a, b *Candidate) bool {
	if ca, cb := a.Strategy.Chips(), b.Strategy.Chips(); ca != cb {
		return ca < cb
	}
	return ParallelDims(&a.Strategy) < ParallelDims(&b.Strategy)
}

// chipSeconds is a candidate's chip-seconds per step: its cost at any
// price per chip-hour, for one workload.
func chipSeconds(c *Candidate) float64 { return c.StepSeconds * float64(c.Strategy.Chips()) }

// ParallelDims returns the number of parallel dimensions of s whose degree
// is above 1: how far from plain data parallelism it is.
func ParallelDims(s *space.Strategy) int {
	n := 0
	for _, d := range s.Degree {
		if d > 1 {
			n++
		}
	}
	return n
}
