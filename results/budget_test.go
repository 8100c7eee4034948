package results

import (
	"math"
	"testing"

	"github.com/meshplan/meshplan/profiles"
)

// TestApplyBudget computes a row's goodput and energy by hand.
func TestApplyBudget(t *testing.T) {
	c, err := profiles.Parse("h100-16")
	if err != nil {
		t.Fatal(err)
	}
	// 16 chips at 0.54 interruptions per chip-day: M = 86400 / 8.64 = 10,000 s.
	// Checkpoint per chip: 4 GB of weights over dp=2 replicas + 6 GB of
	// ZeRO-1 optimizer state = 8 GB, written at 1 GB/s in 8 s. τ = sqrt(2 · 8 ·
	// 10,000) − 8 = 392 s = 196 steps of 2 s. Lost per interruption: 600 + 8 +
	// 400/2 = 808 s. Goodput (1 − 8/400) · (1 − 808/10,000) = 0.98 · 0.9192.
	// 8.64e11 tokens at 1e6 tokens/s: 10 d failure-free.
	goodput := 0.98 * 0.9192
	days := 10 / goodput
	// Power: 210 W idle + 490 W · 0.75 busy = 577.5 W; + 575 W host, x 1.1 PUE
	// = 1267.75 W per chip, 16 chips for the effective days.
	mwh := 1267.75 * 16 * days * 86400 / 3.6e9
	tests := []struct {
		name       string
		budget     Budget
		framework  string
		wantFrac   float64
		wantDays   float64
		wantSteps  int
		wantMWh    float64
		wantEnergy float64 // energy cost, 0 for none
	}{
		{"synchronous", Budget{InterruptionsPerChipDay: 0.54, CheckpointGBPerSPerChip: 1, RestartMinutes: 10, EnergyPricePerKWh: 0.1},
			"generic", goodput, days, 196, mwh, mwh * 1000 * 0.1},
		// PUE 1.5 instead of 1.1: the energy scales by 1.5/1.1, nothing else.
		{"pue", Budget{InterruptionsPerChipDay: 0.54, CheckpointGBPerSPerChip: 1, RestartMinutes: 10, PUE: 1.5},
			"generic", goodput, days, 196, mwh * 1.5 / 1.1, 0},
		// A 500 W cap: idle 150 W + 350 · 0.75 = 412.5 W; (412.5 + 575) · 1.1 = 1086.25 W.
		{"power cap", Budget{InterruptionsPerChipDay: 0.54, CheckpointGBPerSPerChip: 1, RestartMinutes: 10, ChipWatts: 500},
			"generic", goodput, days, 196, mwh * 1086.25 / 1267.75, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Result{
				StepTimeS: 2, TokensPerS: 1e6,
				Strategy: Strategy{DP: 2, Zero: 1, TP: 8, CP: 1, PP: 1},
				Memory:   Memory{ParamsGB: 4, OptimizerGB: 6},
				Time:     Time{ComputeS: 1.5},
			}
			b := tt.budget
			tr := Training{Tokens: 8.64e11, PricePerChipHour: 2, Budget: &b}
			tr.apply(&r, c.Chips())
			if err := tr.applyBudget(&r, c, tt.framework); err != nil {
				t.Fatal(err)
			}
			g, e := r.Goodput, r.Energy
			if g == nil || e == nil {
				t.Fatalf("applyBudget left goodput %v, energy %v", g, e)
			}
			near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Abs(want) }
			if !near(g.Fraction, tt.wantFrac) || !near(g.Days, tt.wantDays) || g.CheckpointIntervalSteps != tt.wantSteps {
				t.Errorf("goodput %.9g, %.9g d, every %d steps; want %.9g, %.9g d, %d", g.Fraction, g.Days, g.CheckpointIntervalSteps, tt.wantFrac, tt.wantDays, tt.wantSteps)
			}
			if !near(g.ChipHours, tt.wantDays*24*16) || g.Cost == nil || !near(*g.Cost, tt.wantDays*24*16*2) {
				t.Errorf("chip-hours %g, cost %v; want %g and %g", g.ChipHours, g.Cost, tt.wantDays*24*16, tt.wantDays*24*16*2)
			}
			if !near(e.MWh, tt.wantMWh) {
				t.Errorf("MWh = %.9g, want %.9g", e.MWh, tt.wantMWh)
			}
			if (e.Cost != nil) != (tt.wantEnergy > 0) || e.Cost != nil && !near(*e.Cost, tt.wantEnergy) {
				t.Errorf("energy cost = %v, want %g", e.Cost, tt.wantEnergy)
			}
		})
	}
}

// TestApplyBudgetAsync: MaxText snapshots to host memory over PCIe Gen5
// (0.8 · 64 GB/s = 51.2 GB/s on H100): 8 GB block for 0.15625 s.
func TestApplyBudgetAsync(t *testing.T) {
	c, err := profiles.Parse("h100-16")
	if err != nil {
		t.Fatal(err)
	}
	r := Result{StepTimeS: 2, TokensPerS: 1e6, Strategy: Strategy{DP: 2, Zero: 1, TP: 8, CP: 1, PP: 1},
		Memory: Memory{ParamsGB: 4, OptimizerGB: 6}, Time: Time{ComputeS: 1.5}}
	tr := Training{Tokens: 8.64e11, Budget: &Budget{InterruptionsPerChipDay: 0.54, CheckpointGBPerSPerChip: 1}}
	tr.apply(&r, c.Chips())
	if err := tr.applyBudget(&r, c, "maxtext"); err != nil {
		t.Fatal(err)
	}
	if g := r.Goodput; !g.Async || math.Abs(g.CheckpointBlockingS-8e9/51.2e9) > 1e-12 || g.CheckpointWriteS != 8 {
		t.Errorf("async %v, blocking %g s, write %g s; want true, 0.15625 s, 8 s", g.Async, g.CheckpointBlockingS, g.CheckpointWriteS)
	}
}

// TestPlanWithoutBudget: rows carry no goodput unless a budget asks.
func TestPlanWithoutBudget(t *testing.T) {
	r := Result{StepTimeS: 2, TokensPerS: 1e6}
	tr := Training{Tokens: 1e12}
	tr.apply(&r, 16)
	if err := tr.applyBudget(&r, profiles.Cluster{}, ""); err != nil || r.Goodput != nil || r.Energy != nil {
		t.Errorf("applyBudget without a budget: %v, %v, %v", err, r.Goodput, r.Energy)
	}
}
