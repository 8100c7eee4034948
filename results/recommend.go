package results

import (
	"fmt"

	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/search"
)

// Recommendation says how a plan's recommended row was chosen (issue 14,
// issue 41): the objective, its rule in words, the step-time band of the
// fastest row that the balanced objective chooses in and the
// out-of-memory risk above which no row is recommended.
type Recommendation struct {
	// Objective is balanced (the default), time, memory or cost
	// (search.Objectives).
	Objective string `json:"objective"`
	// Rule is the objective's rule in words, with the band.
	Rule string `json:"rule"`
	// Band is the relative error between two plans' step times that the
	// rule allows, a fraction of the fastest step time
	// (profiles.Bands.Between).
	Band float64 `json:"band"`
	// BandBasis says where Band comes from.
	BandBasis string `json:"band_basis"`
	// BandStepTimeS is the slowest step time within the band: the fastest
	// times 1 + band.
	BandStepTimeS float64 `json:"band_step_time_s"`
	// BandRows is the number of leading rows of the whole front (fastest
	// first) within the band: pareto[0:band_rows] when --top prints them.
	BandRows int `json:"band_rows"`
	// MaxOOMRisk is the out-of-memory risk above which a row is not
	// recommended (--max-oom-risk); RiskyRows counts the whole front's rows
	// above it.
	MaxOOMRisk float64 `json:"max_oom_risk"`
	RiskyRows  int     `json:"risky_rows"`
}

// InBand reports whether row i of the front (0 first) is within the band.
func (r *Recommendation) InBand(i int) bool { return r != nil && i < r.BandRows }

// betweenBasis says where the recommendation's band comes from.
const betweenBasis = "the measured single-chip steps' errors about their model's mean: how far two strategies of one model can be told apart"

// recommend chooses the recommended row of front under objective (empty:
// balanced) on cluster c under the framework profile, refusing rows whose out-of-memory risk
// (profiles.OOMRisk) is above maxRisk.
func recommend(front []search.Candidate, objective string, c profiles.Cluster, framework string, maxRisk float64) (search.Recommendation, Recommendation, error) {
	if objective == "" {
		objective = search.ObjectiveBalanced
	}
	bs := profiles.DefaultBands()
	band := bs.Between
	risks := make([]float64, len(front))
	for i, f := range front {
		risks[i] = bs.OOMRisk(f.MemoryBytes, f.UsableBytes, c.Chips(), framework)
	}
	rec, err := search.Recommend(front, objective, band, risks, maxRisk)
	if err != nil {
		return rec, Recommendation{}, err
	}
	r := Recommendation{Objective: objective, Band: band, BandBasis: betweenBasis, BandStepTimeS: rec.BandStepSeconds,
		BandRows: rec.BandRows, MaxOOMRisk: maxRisk, RiskyRows: rec.Risky}
	r.Rule = r.ruleText()
	return rec, r, nil
}

// ruleText is the objective's rule in words with the band and the risk limit.
func (r Recommendation) ruleText() string {
	band := fmt.Sprintf("±%s of the fastest step time (up to %s, %s)", Percent(r.Band), Seconds(r.BandStepTimeS), rowsText(r.BandRows))
	risk := fmt.Sprintf("an out-of-memory risk of at most %s", Percent(r.MaxOOMRisk))
	switch r.Objective {
	case search.ObjectiveTime:
		return "time: the fastest strategy with " + risk + "; the model's band is " + band
	case search.ObjectiveMemory:
		return "memory: the least memory per chip with " + risk + "; the model's band is " + band
	case search.ObjectiveCost:
		return "cost: the least cost to train (chip-hours at --price) with " + risk + ", then the fastest; the model's band is " + band
	}
	return "balanced: among the strategies within " + band + " with " + risk + ", the least risk (within a point counts as equal), then the fewest chips, then the fewest parallel dimensions above 1, then the fastest"
}

// objectiveRule is an objective's rule in words without one front's
// figures, for a table of several plans (clusters, frameworks).
func objectiveRule(objective string) string {
	switch objective {
	case search.ObjectiveTime:
		return "time: the fastest strategy within the out-of-memory risk limit"
	case search.ObjectiveMemory:
		return "memory: the least memory per chip within the out-of-memory risk limit"
	case search.ObjectiveCost:
		return "cost: the least cost to train (chip-hours at --price) within the out-of-memory risk limit, then the fastest"
	}
	return "balanced: among the strategies within the model's band of the fastest step time (the measured steps' errors about their model's mean) and the out-of-memory risk limit, the least risk (within a point counts as equal), then the fewest chips, then the fewest parallel dimensions above 1, then the fastest"
}

// rowsText names the first n rows of a front: "row 1", "rows 1-4".
func rowsText(n int) string {
	if n <= 1 {
		return "row 1"
	}
	return fmt.Sprintf("rows 1-%d", n)
}
