package calibrate

import (
	"fmt"
	"math"

	"github.com/meshplan/meshplan/profiles"
)

// Transform names how a parameter maps the optimiser's unbounded variable z
// to its value (docs/go-style.md §2.2: gonum/optimize has no bounds, so bounded
// parameters are reparameterised).
type Transform string

const (
	// Logistic maps z to Lo + (Hi-Lo)·σ(z), σ(z) = 1/(1+e^-z): a value in
	// the open interval (Lo, Hi). Used for fractions.
	Logistic Transform = "logistic"
	// Exp maps z to e^z: a positive value without an upper bound. Used for
	// scales (matmul half point, latencies).
	Exp Transform = "exp"
)

// kind is which cost-model coefficient a parameter sets.
type kind uint8

const (
	matmulFraction kind = iota
	matmulHalfFLOPs
	hbmFraction
	overlapFraction
	linkEfficiency
	linkLatency
)

// Param is one fitted coefficient of the cost model, with its transform,
// bounds, default and fitted value.
type Param struct {
	// Name is the coefficient's YAML key (profiles.Efficiency), prefixed by
	// the tier for link figures: "matmul_fraction", "nvlink.efficiency",
	// "infiniband.latency_s".
	Name string `json:"name"`
	// Transform is Logistic or Exp.
	Transform Transform `json:"transform"`
	// Lo and Hi bound a Logistic parameter (open interval); both are zero
	// for Exp.
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	// Default is the base cluster's value: where the fit starts and what
	// the ridge term pulls towards.
	Default float64 `json:"default"`
	// Value is the fitted value.
	Value float64 `json:"value"`
	// Sensitivity is how much the runs see the parameter: the largest
	// |log predicted(moved) - log predicted(fitted)| over runs when the
	// parameter alone moves by ±SensitivityStep from Value.
	Sensitivity float64 `json:"sensitivity"`
	// Conditional is the same change once the other parameters re-fit to
	// absorb the move (linearised); it is small when the runs only see a
	// combination of this parameter with others.
	Conditional float64 `json:"conditional_sensitivity"`
	// Identified says both Sensitivity and Conditional reach
	// IdentifyThreshold: the runs pin the parameter down.
	Identified bool `json:"identified"`
	// Held says the runs do not see the parameter at all (Sensitivity below
	// IdentifyThreshold at the defaults and at the first fit), so it is
	// kept at Default; Sensitivity is then the larger of those two.
	Held bool `json:"held"`

	kind kind
	tier profiles.Tier
}

// Logistic bounds (see the package documentation for why).
const (
	// matmulFractionLo: a sustained matmul fraction below 0.2 of peak is not
	// a training run worth calibrating against; the bound keeps the fit from
	// trading matmul speed against everything else.
	matmulFractionLo = 0.2
	// linkEfficiencyLo: nccl-tests and the scaling book's ICI figures are
	// 0.73-0.92 of the link (profiles/efficiency.go); below 0.2 something else is wrong.
	linkEfficiencyLo = 0.2
	// boundMargin keeps a default that sits on a bound (an axis efficiency
	// of exactly 1) a little inside it, so its logit is finite.
	boundMargin = 1e-3
)

// z returns the unbounded variable of value x: the inverse of value.
func (p Param) z(x float64) float64 {
	if p.Transform == Exp {
		return math.Log(x)
	}
	// logit((x-lo)/(hi-lo)), the inverse of Lo + (Hi-Lo)·σ(z).
	w := p.Hi - p.Lo
	x = min(max(x, p.Lo+boundMargin*w), p.Hi-boundMargin*w)
	return math.Log((x - p.Lo) / (p.Hi - x))
}

// value maps the unbounded z to the parameter's value.
func (p Param) value(z float64) float64 {
	if p.Transform == Exp {
		return math.Exp(z)
	}
	return p.Lo + (p.Hi-p.Lo)/(1+math.Exp(-z))
}

// set writes value x of the parameter into cluster c: the chip-wide
// coefficient, or the link figure of every axis of the parameter's tier.
func (p Param) set(c *profiles.Cluster, x float64) {
	switch p.kind {
	case matmulFraction:
		c.Efficiency.MatmulFraction = x
	case matmulHalfFLOPs:
		c.Efficiency.MatmulHalfFLOPs = x
	case hbmFraction:
		c.Efficiency.HBMFraction = x
	case overlapFraction:
		c.Efficiency.OverlapFraction = x
	case linkEfficiency, linkLatency:
		for i := range c.Axes {
			if c.Axes[i].Tier != p.tier {
				continue
			}
			if p.kind == linkEfficiency {
				c.Axes[i].Efficiency = x
			} else {
				c.Axes[i].LatencySeconds = x
			}
		}
	}
}

// defaultsOf returns the fitted parameters for base cluster c whose runs
// use the tiers in used, with their defaults taken from c (a zero
// chip-wide coefficient means the family default, as in cost), and notes on
// the coefficients that are held fixed.
func defaultsOf(c profiles.Cluster, used map[profiles.Tier]bool) ([]Param, []string) {
	eff := c.Efficiency
	def, ok := profiles.DefaultEfficiency(c.Chip.Family)
	if !ok {
		def = profiles.GenericEfficiency()
	}
	or := func(x, d float64) float64 {
		if x > 0 {
			return x
		}
		return d
	}
	ps := []Param{
		{Name: "matmul_fraction", Transform: Logistic, Lo: matmulFractionLo, Hi: 1, Default: or(eff.MatmulFraction, def.MatmulFraction), kind: matmulFraction},
		{Name: "matmul_half_flops", Transform: Exp, Default: or(eff.MatmulHalfFLOPs, def.MatmulHalfFLOPs), kind: matmulHalfFLOPs},
		{Name: "hbm_fraction", Transform: Logistic, Lo: 0, Hi: 1, Default: or(eff.HBMFraction, def.HBMFraction), kind: hbmFraction},
		{Name: "overlap_fraction", Transform: Logistic, Lo: 0, Hi: 1, Default: or(eff.OverlapFraction, def.OverlapFraction), kind: overlapFraction},
	}
	var notes []string
	seen := map[profiles.Tier]bool{}
	for _, a := range c.Axes {
		if seen[a.Tier] || !used[a.Tier] {
			continue
		}
		seen[a.Tier] = true
		ps = append(ps, Param{Name: string(a.Tier) + ".efficiency", Transform: Logistic, Lo: linkEfficiencyLo, Hi: 1,
			Default: a.Efficiency, kind: linkEfficiency, tier: a.Tier})
		if a.LatencySeconds > 0 {
			ps = append(ps, Param{Name: string(a.Tier) + ".latency_s", Transform: Exp,
				Default: a.LatencySeconds, kind: linkLatency, tier: a.Tier})
		} else {
			notes = append(notes, fmt.Sprintf("%s.latency_s is 0 in cluster %s, so it is not fitted", a.Tier, c.Name))
		}
	}
	for _, t := range profiles.Tiers() {
		if used[t] && !seen[t] {
			notes = append(notes, fmt.Sprintf("the runs use %s links, which cluster %s does not have: their efficiency and latency stay at each run's catalogue figures (give a --cluster with a %s axis to fit them)", t, c.Name, t))
		}
	}
	for i := range ps {
		ps[i].Value = ps[i].Default
	}
	return ps, notes
}
