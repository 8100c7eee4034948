package profiles

import (
	"maps"
	"slices"
)

// Uncertainty is how far a chip family's predicted step times are from
// measured ones: the mean absolute error of `plan validate` on the
// family's measured runs with the default coefficients, or the k-fold
// cross-validated error of `plan calibrate` refitting them, whichever is
// larger (docs/uncertainty.md). The planner shows it as a band around
// every step time and throughput it prints.
type Uncertainty struct {
	// Fraction is the relative error: a step time t is shown as
	// [t·(1-Fraction), t·(1+Fraction)].
	Fraction float64
	// Basis says which measurements it comes from.
	Basis string
}

// uncertainties are the measured errors per chip family, separately for
// single-chip plans and for jobs of many chips. TestUncertaintyCurrent
// (validate/runs and validate/steps) recomputes them from the measurements and
// fails when they are stale.
func uncertainties() map[string][2]Uncertainty {
	a100 := Uncertainty{0.073, "plan validate on 42 published A100 runs: MAPE 7.0% with the defaults, 7.3% cross-validated"}
	return map[string][2]Uncertainty{
		"nvidia-ampere": {a100, a100},
		"nvidia-hopper": {
			{0.042, "plan validate --steps on 45 measured single-H100 training steps: MAPE 4.2%"},
			{0.073, "no multi-GPU H100 runs: the 42 published multi-GPU A100 runs' error, 7.3% (4.2% on 45 single-H100 steps)"},
		},
		"tpu-v5e": {
			{0.072, "plan validate on 24 published v5e MaxText runs: MAPE 7.2% with the defaults, 5.3% cross-validated"},
			{0.072, "plan validate on 24 published v5e MaxText runs: MAPE 7.2% with the defaults, 5.3% cross-validated"},
		},
	}
}

// StepTimeUncertainty returns the measured error of step times predicted
// for a job of chips chips of the given family, and false when the family
// has no measurements.
func StepTimeUncertainty(family string, chips int) (Uncertainty, bool) {
	u, ok := uncertainties()[family]
	if !ok {
		return Uncertainty{}, false
	}
	if chips > 1 {
		return u[1], true
	}
	return u[0], true
}

// SmallestStepTimeUncertainty returns the smallest error measured on any
// chip family: the least the model can be trusted to on a family without
// measurements of its own.
func SmallestStepTimeUncertainty() Uncertainty {
	var least Uncertainty
	all := uncertainties()
	for _, name := range slices.Sorted(maps.Keys(all)) {
		for _, u := range all[name] {
			if least.Fraction == 0 || u.Fraction < least.Fraction {
				least = u
			}
		}
	}
	return least
}

// MemoryUncertainty returns the measured error of predicted peak memory per
// chip: the mean absolute error of `plan validate --steps` on the measured
// H100 training steps (docs/measured-h100.md), the only measurements of
// peak memory there are. Recommendations treat memory figures closer than
// it as equal (search.Recommend).
func MemoryUncertainty() Uncertainty {
	return Uncertainty{0.023, "plan validate --steps on 45 measured single-H100 training steps: peak-memory MAPE 2.3%"}
}
