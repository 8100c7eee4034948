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
	// within the model's error band of the fastest and whose out-of-memory
	// risk is within the limit, the one with the least risk (risks within
	// RiskTie of the least count as equal), then the fewest chips, then the
	// fewest parallel dimensions above 1, then the fastest (the default).
	ObjectiveBalanced = "balanced"
	// ObjectiveTime recommends the fastest row within the risk limit.
	ObjectiveTime = "time"
	// ObjectiveMemory recommends the row with the least memory per chip
	// within the risk limit.
	ObjectiveMemory = "memory"
	// ObjectiveCost recommends the cheapest row within the risk limit: the
	// least chip-seconds per token, which at one price per chip-hour is the
	// least cost.
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

// DefaultMaxOOMRisk is the out-of-memory risk above which a row is not
// recommended unless the user says otherwise (--max-oom-risk): the limit
// that best tells the published runs that ran from those that ran out of
// memory (Youden's J over published-runs-2 and published-memory:
// docs/uncertainty.md).
const DefaultMaxOOMRisk = 0.20

// RiskTie is the difference of out-of-memory risks the balanced objective
// counts as none: a point of probability.
const RiskTie = 0.01

// Recommendation is the row of a front an objective recommends.
type Recommendation struct {
	// Index is the recommended row's index in the front, -1 when the
	// front is empty or every row's risk is above the limit.
	Index int
	// Risky counts the front's rows whose out-of-memory risk is above the
	// limit: never recommended.
	Risky int
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
// the step times, a fraction of the fastest (0.073 for ±7.3%); risks are
// the rows' out-of-memory risks (profiles.OOMRisk, in front's order) and a
// row whose risk is above maxRisk is never recommended (Index is -1 when no
// row is within it). The empty objective is ObjectiveBalanced. Every
// objective breaks its ties by the front's order. The result depends only
// on the front's rows, their risks and order.
func Recommend(front []Candidate, objective string, band float64, risks []float64, maxRisk float64) (Recommendation, error) {
	if err := CheckObjective(objective); err != nil {
		return Recommendation{Index: -1}, err
	}
	if !(band >= 0) || math.IsInf(band, 0) {
		return Recommendation{Index: -1}, fmt.Errorf("search: band %g is not a fraction of at least 0", band)
	}
	if !(maxRisk >= 0 && maxRisk <= 1) {
		return Recommendation{Index: -1}, fmt.Errorf("search: out-of-memory risk limit %g is not a probability between 0 and 1", maxRisk)
	}
	if len(risks) != len(front) {
		return Recommendation{Index: -1}, fmt.Errorf("search: %d risks for %d rows", len(risks), len(front))
	}
	if len(front) == 0 {
		return Recommendation{Index: -1}, nil
	}
	limit := front[0].StepSeconds * (1 + band)
	rec := Recommendation{BandStepSeconds: limit, Index: -1}
	for rec.BandRows < len(front) && front[rec.BandRows].StepSeconds <= limit {
		rec.BandRows++
	}
	rec.BandRows = max(rec.BandRows, 1)
	safe := func(i int) bool { return risks[i] <= maxRisk }
	for i := range front {
		if !safe(i) {
			rec.Risky++
		}
	}
	pick := func(n int, better func(a, b int) bool) int {
		best := -1
		for i := range n {
			if safe(i) && (best < 0 || better(i, best)) {
				best = i
			}
		}
		return best
	}
	switch objective {
	case ObjectiveTime:
		rec.Index = pick(len(front), func(a, b int) bool { return false })
	case ObjectiveMemory:
		rec.Index = pick(len(front), func(a, b int) bool { return front[a].MemoryBytes < front[b].MemoryBytes })
	case ObjectiveCost:
		rec.Index = pick(len(front), func(a, b int) bool { return chipSeconds(&front[a]) < chipSeconds(&front[b]) })
	default:
		rec.Index = balanced(front[:rec.BandRows], risks, maxRisk)
		if rec.Index < 0 {
			// No row within the band is within the risk limit: the
			// fastest row that is.
			rec.Index = pick(len(front), func(a, b int) bool { return false })
		}
	}
	return rec, nil
}

// balanced returns the index of the balanced objective's row of rows
// (risks in their order): among those whose out-of-memory risk is within
// maxRisk and within RiskTie of the least risk, the first of the fewest
// chips, then of the fewest parallel dimensions above 1; -1 when every
// risk is above maxRisk.
func balanced(rows []Candidate, risks []float64, maxRisk float64) int {
	least := math.Inf(1)
	for i := range rows {
		if risks[i] <= maxRisk {
			least = min(least, risks[i])
		}
	}
	best := -1
	for i := range rows {
		if risks[i] <= maxRisk && risks[i] <= least+RiskTie && (best < 0 || simpler(&rows[i], &rows[best])) {
			best = i
		}
	}
	return best
}

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
