package model

import "testing"

// TestMoELoad: the busiest expert rank's load over the program's sizes is
// the imbalance under dropless routing, and 1 where a capacity factor
// above 1 pads every expert's buffer (or without MoE).
func TestMoELoad(t *testing.T) {
	for _, tc := range []struct {
		name string
		moe  *MoE
		want float64
	}{
		{"no MoE", nil, 1},
		{"balanced", &MoE{CapacityFactor: 1, Imbalance: 1}, 1},
		{"unset", &MoE{}, 1},
		{"dropless, busiest rank 1.3x", &MoE{CapacityFactor: 1, Imbalance: 1.3}, 1.3},
		{"padded to capacity 1.25", &MoE{CapacityFactor: 1.25, Imbalance: 1.3}, 1},
	} {
		if got := tc.moe.Load(); got != tc.want {
			t.Errorf("%s: Load() = %g, want %g", tc.name, got, tc.want)
		}
	}
}
