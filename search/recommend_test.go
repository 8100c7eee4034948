package search

import (
	"math"
	"testing"

	"github.com/meshplan/meshplan/space"
)

// row is a feasible front row of step time t seconds and memory mem GB
// per chip on 100 GB, with the strategy's degrees.
func row(t, mem float64, degrees ...int) Candidate {
	s := space.Defaults()
	dims := []space.Dim{space.DP, space.TP, space.PP, space.FSDP}
	for i, d := range degrees {
		s.Degree[dims[i]] = d
	}
	return Candidate{Strategy: s, StepSeconds: t, MemoryBytes: mem * 1e9, UsableBytes: 100e9,
		Fits: true, Costed: true, Index: -1}
}

// risks are out-of-memory risks for rows of a front.
func risks(r ...float64) []float64 { return r }

func TestRecommend(t *testing.T) {
	front := []Candidate{
		// 64 chips each.
		row(10.0, 90, 8, 2, 2, 2),  // fastest
		row(10.001, 88, 16, 2, 2),  // within 0.01%, 2 GB lighter
		row(10.5, 70, 16, 2, 1, 2), // within 5%
		row(10.5, 70, 32, 1, 1, 2), // same time and memory, one dimension fewer
		row(12.0, 40, 4, 4, 4),     // outside 5%
		row(20.0, 10, 2, 4, 8),     // least memory
	}
	// Hand-set risks falling with memory: 90 GB of 100 is 30%, 88 GB 20%,
	// 70 GB 5.5% and 5%, 40 and 10 GB 5%.
	rs := risks(0.30, 0.20, 0.055, 0.05, 0.05, 0.05)
	for _, tt := range []struct {
		name      string
		objective string
		band      float64
		maxRisk   float64
		want      int
		bandRows  int
	}{
		{"balanced, no band, no limit: the fastest", ObjectiveBalanced, 0, 1, 0, 1},
		{"balanced, 0.1%: the less risky of two equal times", ObjectiveBalanced, 0.001, 1, 1, 2},
		{"balanced, 5%: least risk within a point, then fewest dimensions", ObjectiveBalanced, 0.05, 1, 3, 4},
		{"empty is balanced", "", 0.05, 1, 3, 4},
		{"balanced, 100%: risks tie, the fewest dimensions", ObjectiveBalanced, 1, 1, 3, 6},
		{"balanced, no band, 10% limit: the fastest safe row beyond the band", ObjectiveBalanced, 0, 0.10, 2, 1},
		{"time, no limit", ObjectiveTime, 0.05, 1, 0, 4},
		{"time, 10% limit: row 1 and 2 are too risky", ObjectiveTime, 0.05, 0.10, 2, 4},
		{"memory", ObjectiveMemory, 0.05, 0.10, 5, 4},
		{"cost: the least chip-seconds that is safe", ObjectiveCost, 0.05, 0.10, 2, 4},
		{"a 1% limit: nothing", ObjectiveBalanced, 0.05, 0.01, -1, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Recommend(front, tt.objective, tt.band, rs, tt.maxRisk)
			if err != nil {
				t.Fatal(err)
			}
			if got.Index != tt.want || got.BandRows != tt.bandRows {
				t.Errorf("Recommend(%s, %g) = row %d, %d rows in band; want row %d, %d rows", tt.objective, tt.band, got.Index, got.BandRows, tt.want, tt.bandRows)
			}
			if want := 10 * (1 + tt.band); got.BandStepSeconds != want {
				t.Errorf("BandStepSeconds = %g; want %g", got.BandStepSeconds, want)
			}
		})
	}
}

func TestRecommendChipsBreakTies(t *testing.T) {
	// Same time and memory: the rows on fewer chips (32, not 64) win, then
	// the one of fewer dimensions; a cost objective prefers fewer chips
	// and then the front's order.
	front := []Candidate{row(5, 50, 8, 2, 2, 2), row(5, 50, 8, 2, 2), row(5, 50, 16, 2)}
	for _, tt := range []struct {
		objective string
		want      int
	}{{ObjectiveBalanced, 2}, {ObjectiveCost, 1}, {ObjectiveTime, 0}} {
		got, err := Recommend(front, tt.objective, 0, risks(0, 0, 0), DefaultMaxOOMRisk)
		if err != nil || got.Index != tt.want {
			t.Errorf("Recommend(%s) = %d, %v; want %d", tt.objective, got.Index, err, tt.want)
		}
	}
}

// TestRecommendRiskTie: risks within RiskTie of the least count as equal,
// so the simpler row wins over a safer one by less than a point; a row
// 2 points safer wins; Risky counts the rows above the limit.
func TestRecommendRiskTie(t *testing.T) {
	front := []Candidate{
		row(10.0, 71.8, 32, 1, 1, 2), // fastest: 2 dimensions
		row(10.2, 71.3, 16, 1, 2, 2), // 3 dimensions
		row(10.4, 60.0, 8, 2, 2, 2),  // 4 dimensions
	}
	for _, tt := range []struct {
		name  string
		risks []float64
		want  int
		risky int
	}{
		{"half a point: the simplest", risks(0.060, 0.055, 0.2), 0, 1},
		{"two points: the safer", risks(0.080, 0.060, 0.2), 1, 1},
		{"the safest of all", risks(0.09, 0.07, 0.04), 2, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Recommend(front, ObjectiveBalanced, 1, tt.risks, 0.1)
			if err != nil || got.Index != tt.want || got.Risky != tt.risky {
				t.Errorf("Recommend(risks %v) = row %d, %d risky, %v; want row %d, %d risky", tt.risks, got.Index, got.Risky, err, tt.want, tt.risky)
			}
		})
	}
}

func TestRecommendErrors(t *testing.T) {
	if got, err := Recommend(nil, ObjectiveBalanced, 0.05, nil, 0.1); err != nil || got.Index != -1 {
		t.Errorf("Recommend(empty) = %+v, %v; want -1", got, err)
	}
	for _, tt := range []struct {
		objective     string
		band, maxRisk float64
		risks         []float64
	}{
		{"fastest", 0, 0.1, risks(0)}, {ObjectiveTime, -0.1, 0.1, risks(0)}, {ObjectiveBalanced, math.NaN(), 0.1, risks(0)},
		{ObjectiveBalanced, math.Inf(1), 0.1, risks(0)}, {ObjectiveBalanced, 0.05, 1.5, risks(0)},
		{ObjectiveBalanced, 0.05, math.NaN(), risks(0)}, {ObjectiveBalanced, 0.05, 0.1, nil},
	} {
		if _, err := Recommend([]Candidate{row(1, 1, 1)}, tt.objective, tt.band, tt.risks, tt.maxRisk); err == nil {
			t.Errorf("Recommend(%q, %g, %g, %v): no error", tt.objective, tt.band, tt.maxRisk, tt.risks)
		}
	}
	for _, name := range append(Objectives(), "") {
		if err := CheckObjective(name); err != nil {
			t.Errorf("CheckObjective(%q): %v", name, err)
		}
	}
}
