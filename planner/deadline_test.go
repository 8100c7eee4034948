package planner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/meshplan/meshplan/model"
	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/results"
	"github.com/meshplan/meshplan/search"
)

// fakeSolve returns a SolveFunc whose plan on a cluster of n chips has one
// row of effective days days[n] and effective cost cost[n]; a size with
// no entry fits nothing.
func fakeSolve(days, cost map[int]float64) SolveFunc {
	return func(_ context.Context, r Request, _ bool) (results.Plan, error) {
		n := r.Cluster.Chips()
		d, ok := days[n]
		if !ok {
			return results.Plan{}, &search.NoFitError{}
		}
		c := cost[n]
		row := results.Result{StepTimeS: 1, TokensPerS: 1, Goodput: &results.Goodput{Fraction: 0.9, Days: d, ChipHours: c / 2, Cost: &c}}
		return results.Plan{Cluster: results.PlanCluster{Name: r.Cluster.Name, Chips: n}, Recommended: 0, Pareto: []results.Result{row}}, nil
	}
}

func TestDeadline(t *testing.T) {
	var clusters []profiles.Cluster
	for _, n := range []int{8, 16, 32, 64, 128, 256} {
		c, err := profiles.Parse(fmt.Sprintf("h100-%d", n))
		if err != nil {
			t.Fatal(err)
		}
		clusters = append(clusters, c)
	}
	// Llama 3 8B (8.03e9 active parameters) on 1e12 tokens: 4.82e22 FLOPs; at
	// the H100's fp8 peak of 1979e12 FLOP/s the bound is 4.82e22 / (n ·
	// 1979e12) / 86400 = 281.8 / n days: 35.2 d on 8 chips, 17.6 d on 16,
	// 8.81 d on 32, 4.40 d on 64.
	m, err := model.Preset("llama3-8b")
	if err != nil {
		t.Fatal(err)
	}
	tokens := 1e12
	days := map[int]float64{16: 60, 32: 30, 64: 16, 128: 9, 256: 8.5}
	cost := map[int]float64{16: 100, 32: 110, 64: 105, 128: 130, 256: 200}
	tests := []struct {
		name       string
		deadline   float64
		price      float64
		wantMet    bool
		wantChosen string
		wantSizes  []string
	}{
		// Smallest: 16 and 32 miss 20 d, 64 meets it; the walk stops there.
		// 8 chips need at least 6·8.03e9·1e12/(8·1979e12)/86400 = 35.2 d: not searched.
		{"smallest", 20, 0, true, "h100-64", []string{"h100-8", "h100-16", "h100-32", "h100-64"}},
		// Cheapest: 64 meets 20 d at 105, 128 at 130 costs more: stop, choose 64.
		{"cheapest", 20, 2.5, true, "h100-64", []string{"h100-8", "h100-16", "h100-32", "h100-64", "h100-128"}},
		// 10 d: 8 and 16 chips cannot (35.2 and 17.6 d at full peak), the
		// larger listed; 128 and 256 meet it, 256 costs more.
		{"cheapest of the large", 10, 2.5, true, "h100-128", []string{"h100-16", "h100-32", "h100-64", "h100-128", "h100-256"}},
		// 5 d: none meets it and the fastest, 256, is the plan; 8 to 32 chips
		// cannot (32 needs 8.81 d at full peak) and the largest of them is listed.
		{"none meets", 5, 0, false, "h100-256", []string{"h100-32", "h100-64", "h100-128", "h100-256"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := results.Training{Tokens: tokens, PricePerChipHour: tt.price, Budget: &results.Budget{DeadlineDays: tt.deadline}}
			plan, err := Deadline(context.Background(), Request{Model: m}, clusters, tr, fakeSolve(days, cost))
			if err != nil {
				t.Fatalf("Deadline: %v", err)
			}
			d := plan.Deadline
			if d.Met != tt.wantMet || d.Cluster != tt.wantChosen {
				t.Errorf("Deadline chose %s (met %v), want %s (met %v)", d.Cluster, d.Met, tt.wantChosen, tt.wantMet)
			}
			var names []string
			for _, s := range d.Sizes {
				names = append(names, s.Cluster.Name)
				if s.Chosen != (s.Cluster.Name == tt.wantChosen) {
					t.Errorf("size %s chosen = %v", s.Cluster.Name, s.Chosen)
				}
			}
			if fmt.Sprint(names) != fmt.Sprint(tt.wantSizes) {
				t.Errorf("sizes %v, want %v", names, tt.wantSizes)
			}
		})
	}

	t.Run("too short for any size", func(t *testing.T) {
		tr := results.Training{Tokens: tokens, Budget: &results.Budget{DeadlineDays: 0.01}}
		_, err := Deadline(context.Background(), Request{Model: m}, clusters, tr, fakeSolve(days, cost))
		var de *DeadlineError
		if !errors.As(err, &de) || de.Largest != "h100-256" {
			t.Errorf("Deadline = %v, want a DeadlineError naming h100-256", err)
		}
	})
}

func TestLowerBoundDays(t *testing.T) {
	m, err := model.Preset("llama3-405b")
	if err != nil {
		t.Fatal(err)
	}
	c, err := profiles.Parse("h100-16384")
	if err != nil {
		t.Fatal(err)
	}
	// 6 · N · 15e12 / (16384 · 1979e12) / 86400 for N active parameters.
	n := float64(m.Counts().Active)
	want := 6 * n * 15e12 / (16384 * 1979e12) / 86400
	if got := LowerBoundDays(m, c, 15e12); math.Abs(got-want) > 1e-9*want {
		t.Errorf("LowerBoundDays = %g, want %g", got, want)
	}
}
