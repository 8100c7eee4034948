package results

import (
	"fmt"

	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/search"
)

// Recommendation says how a plan's recommended row was chosen (issue 14):
// the objective, its rule in words and the step-time band of the fastest
// row that the balanced objective chooses in.
type Recommendation struct {
	// Objective is balanced (the default), time, memory or cost
	// (search.Objectives).
	Objective string `json:"objective"`
	// Rule is the objective's rule in words, with the band.
	Rule string `json:"rule"`
	// Band is the relative error of step times the rule allows, a fraction
	// of the fastest step time: the chip family's measured uncertainty, or
	// the smallest measured on any family when it has none.
	Band float64 `json:"band"`
	// BandBasis says where Band comes from.
	BandBasis string `json:"band_basis"`
	// BandStepTimeS is the slowest step time within the band: the fastest
	// times 1 + band.
	BandStepTimeS float64 `json:"band_step_time_s"`
	// BandRows is the number of leading rows of the whole front (fastest
	// first) within the band: pareto[0:band_rows] when --top prints them.
	BandRows int `json:"band_rows"`
	// MemoryBand is the relative error of the memory per chip
	// (profiles.MemoryUncertainty): the balanced rule counts headrooms
	// that differ by less than it as equal.
	MemoryBand float64 `json:"memory_band"`
}

// InBand reports whether row i of the front (0 first) is within the band.
func (r *Recommendation) InBand(i int) bool { return r != nil && i < r.BandRows }

// recommendationBand returns the band the recommendation allows around the
// fastest step time on cluster c and its basis: the measured uncertainty
// of c's chip family at its size, else the smallest measured on any family
// (the model is no more accurate on a chip it was never checked on).
func recommendationBand(c profiles.Cluster) (float64, string) {
	if u, ok := profiles.StepTimeUncertainty(c.Chip.Family, c.Chips()); ok {
		return u.Fraction, u.Basis
	}
	u := profiles.SmallestStepTimeUncertainty()
	return u.Fraction, "no measurements for this chip family: the smallest band measured on any (" + u.Basis + ")"
}

// recommend chooses the recommended row of front under objective (empty:
// balanced) on cluster c.
func recommend(front []search.Candidate, objective string, c profiles.Cluster) (search.Recommendation, Recommendation, error) {
	if objective == "" {
		objective = search.ObjectiveBalanced
	}
	band, basis := recommendationBand(c)
	memBand := profiles.MemoryUncertainty().Fraction
	rec, err := search.Recommend(front, objective, band, memBand)
	if err != nil {
		return rec, Recommendation{}, err
	}
	r := Recommendation{Objective: objective, Band: band, BandBasis: basis, BandStepTimeS: rec.BandStepSeconds, BandRows: rec.BandRows, MemoryBand: memBand}
	r.Rule = r.ruleText()
	return rec, r, nil
}

// ruleText is the objective's rule in words with the band.
func (r Recommendation) ruleText() string {
	band := fmt.Sprintf("±%s of the fastest step time (up to %s, %s)", Percent(r.Band), Seconds(r.BandStepTimeS), rowsText(r.BandRows))
	switch r.Objective {
	case search.ObjectiveTime:
		return "time: the fastest strategy that fits; the model's band is " + band
	case search.ObjectiveMemory:
		return "memory: the least memory per chip; the model's band is " + band
	case search.ObjectiveCost:
		return "cost: the least cost to train (chip-hours at --price), then the fastest; the model's band is " + band
	}
	return "balanced: among the strategies within " + band + ", the most memory headroom (within ±" + Percent(r.MemoryBand) + " of memory counts as equal), then the fewest chips, then the fewest parallel dimensions above 1, then the fastest"
}

// objectiveRule is an objective's rule in words without one front's
// figures, for a table of several plans (clusters, frameworks).
func objectiveRule(objective string) string {
	switch objective {
	case search.ObjectiveTime:
		return "time: the fastest strategy that fits"
	case search.ObjectiveMemory:
		return "memory: the least memory per chip"
	case search.ObjectiveCost:
		return "cost: the least cost to train (chip-hours at --price), then the fastest"
	}
	return "balanced: among the strategies within the model's band of the fastest step time (the chip family's measured error, or the smallest measured on any family), the most memory headroom (headrooms within the memory model's measured error count as equal), then the fewest chips, then the fewest parallel dimensions above 1, then the fastest"
}

// rowsText names the first n rows of a front: "row 1", "rows 1-4".
func rowsText(n int) string {
	if n <= 1 {
		return "row 1"
	}
	return fmt.Sprintf("rows 1-%d", n)
}
