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
	for _, tt := range []struct {
		name      string
		objective string
		band      float64
		want      int
		bandRows  int
	}{
		{"balanced, no band: the fastest", ObjectiveBalanced, 0, 0, 1},
		{"balanced, 0.1%: the lighter of two equal times", ObjectiveBalanced, 0.001, 1, 2},
		{"balanced, 5%: most headroom, then fewest dimensions", ObjectiveBalanced, 0.05, 3, 4},
		{"empty is balanced", "", 0.05, 3, 4},
		{"balanced, 100%: the whole front", ObjectiveBalanced, 1, 5, 6},
		{"time", ObjectiveTime, 0.05, 0, 4},
		{"memory", ObjectiveMemory, 0.05, 5, 4},
		{"cost: the least chip-seconds", ObjectiveCost, 0.05, 0, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Recommend(front, tt.objective, tt.band, 0)
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
		got, err := Recommend(front, tt.objective, 0, 0)
		if err != nil || got.Index != tt.want {
			t.Errorf("Recommend(%s) = %d, %v; want %d", tt.objective, got.Index, err, tt.want)
		}
	}
}

// TestRecommendMemoryBand: headrooms within the memory band of the memory
// of the row with the most count as equal, so the simpler row wins over a
// lighter one the memory model cannot tell apart; the band is relative to
// that row's memory.
func TestRecommendMemoryBand(t *testing.T) {
	front := []Candidate{
		row(10.0, 71.8, 32, 1, 1, 2), // fastest: 2 dimensions
		row(10.2, 71.3, 16, 1, 2, 2), // 0.5 GB lighter: 3 dimensions
		row(10.3, 71.3, 16, 2, 1, 2), // as light, also 3 dimensions
		row(10.4, 60.0, 8, 2, 2, 2),  // 11.8 GB lighter: 4 dimensions
	}
	for _, tt := range []struct {
		name    string
		rows    int
		memBand float64
		want    int
	}{
		{"no memory band: the lightest of the near-equal", 3, 0, 1},
		{"2.3%: 0.5 of 71.3 GB is noise, the simplest wins", 3, 0.023, 0},
		{"0.5%: 0.36 GB, the lighter ones win, first of them", 3, 0.005, 1},
		{"2.3% with a row 11.8 GB lighter: it wins", 4, 0.023, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Recommend(front[:tt.rows], ObjectiveBalanced, 1, tt.memBand)
			if err != nil || got.Index != tt.want {
				t.Errorf("Recommend(memBand %g) = row %d, %v; want row %d", tt.memBand, got.Index, err, tt.want)
			}
		})
	}
}

func TestRecommendErrors(t *testing.T) {
	if got, err := Recommend(nil, ObjectiveBalanced, 0.05, 0.023); err != nil || got.Index != -1 {
		t.Errorf("Recommend(empty) = %+v, %v; want -1", got, err)
	}
	for _, tt := range []struct {
		objective     string
		band, memBand float64
	}{{"fastest", 0, 0}, {ObjectiveTime, -0.1, 0}, {ObjectiveBalanced, 0.05, math.NaN()}, {ObjectiveBalanced, 0.05, math.Inf(1)}} {
		if _, err := Recommend([]Candidate{row(1, 1, 1)}, tt.objective, tt.band, tt.memBand); err == nil {
			t.Errorf("Recommend(%q, %g, %g): no error", tt.objective, tt.band, tt.memBand)
		}
	}
	for _, name := range append(Objectives(), "") {
		if err := CheckObjective(name); err != nil {
			t.Errorf("CheckObjective(%q): %v", name, err)
		}
	}
}
