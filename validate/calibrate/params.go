package calibrate

import (
	"fmt"
	"math"

	"github.com/meshplan/meshplan/profiles"
)

// Transform names how a parameter maps the optimiser's unbounded variable z
// to its value inside its bounds (docs/go-style.md §2.2: gonum/optimize has
// no bounds, so bounded parameters are reparameterised).
type Transform string

const (
	// Logistic maps z to Lo + (Hi-Lo)·σ(z), σ(z) = 1/(1+e^-z): a value in
	// the open interval (Lo, Hi). Used for fractions; their prior is on the
	// value.
	Logistic Transform = "logistic"
	// LogLogistic maps z to exp(log Lo + (log Hi - log Lo)·σ(z)): a value in
	// (Lo, Hi) spread evenly in log. Used for scales (the matmul half point,
	// latencies); their prior is on the log of the value.
	LogLogistic Transform = "log-logistic"
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

// Param is one fitted coefficient of the cost model, with its physical
// bounds, its prior, its default and its fitted value.
type Param struct {
	// Name is the coefficient's YAML key (profiles.Efficiency), prefixed by
	// the tier for link figures: "matmul_fraction", "nvlink.efficiency",
	// "infiniband.latency_s".
	Name string `json:"name"`
	// Transform is Logistic or LogLogistic.
	Transform Transform `json:"transform"`
	// Lo and Hi are the physical bounds: the fitted value stays inside.
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	// Prior is the standard deviation of the Gaussian prior centred on
	// Default: in the value for Logistic, in its natural log for
	// LogLogistic.
	Prior float64 `json:"prior_sigma"`
	// Basis says where the bounds and the prior come from.
	Basis string `json:"basis"`
	// Default is the base cluster's value (moved inside the bounds when it
	// lies outside): where the fit starts and where the prior is centred.
	Default float64 `json:"default"`
	// Value is the fitted value.
	Value float64 `json:"value"`
	// AtBound is "lower" or "upper" when the fitted value ends within
	// BoundTolerance of that bound, else empty.
	AtBound string `json:"at_bound,omitempty"`
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

// Physical bounds and priors of the parameters; the package documentation
// gives their sources.
const (
	matmulFractionLo, matmulFractionHi = 0.3, 0.95
	hbmFractionLo, hbmFractionHi       = 0.5, 0.9
	overlapFractionLo                  = 0.5
	linkEfficiencyLo                   = 0.5
	// fractionPrior is the prior's standard deviation of a fraction, and
	// overlapPrior the overlap fraction's.
	fractionPrior, overlapPrior = 0.1, 0.15
	// halfFLOPsRange and latencyRange bound a scale to [default/r, default·r].
	halfFLOPsRange, latencyRange = 10, 4
	// halfFLOPsPrior (ln 3) and latencyPrior (ln 2) are the priors'
	// standard deviations in log.
	halfFLOPsPrior = 1.0986122886681098
	latencyPrior   = 0.6931471805599453
	// boundMargin keeps a default that sits on a bound (an axis efficiency
	// of exactly 1) a little inside it, so its logit is finite.
	boundMargin = 1e-3
)

// BoundTolerance is how close to a bound, as a fraction of the bounds'
// span (in log for LogLogistic), a fitted value must end to count as on
// it: the fit then pressed against a physical limit, and a warning names
// the runs that pushed it there.
const BoundTolerance = 0.05

// unit maps a value to the scale the bounds and the prior are linear in:
// the value for Logistic, its log for LogLogistic.
func (p Param) unit(x float64) float64 {
	if p.Transform == LogLogistic {
		return math.Log(x)
	}
	return x
}

// span returns the bounds in unit.
func (p Param) span() (lo, hi float64) { return p.unit(p.Lo), p.unit(p.Hi) }

// clamp keeps x inside the bounds by boundMargin of their span.
func (p Param) clamp(x float64) float64 {
	lo, hi := p.span()
	w := hi - lo
	u := min(max(p.unit(x), lo+boundMargin*w), hi-boundMargin*w)
	if p.Transform == LogLogistic {
		return math.Exp(u)
	}
	return u
}

// z returns the unbounded variable of value x: the inverse of value.
func (p Param) z(x float64) float64 {
	lo, hi := p.span()
	u := p.unit(p.clamp(x))
	return math.Log((u - lo) / (hi - u))
}

// value maps the unbounded z to the parameter's value.
func (p Param) value(z float64) float64 {
	lo, hi := p.span()
	u := lo + (hi-lo)/(1+math.Exp(-z))
	x := u
	if p.Transform == LogLogistic {
		x = math.Exp(u)
	}
	return min(max(x, p.Lo), p.Hi) // exp(log Hi) may round past Hi
}

// priorTerm is half the squared distance of x from the default in prior
// standard deviations: the negative log prior, up to a constant.
func (p Param) priorTerm(x float64) float64 {
	d := (p.unit(x) - p.unit(p.Default)) / p.Prior
	return d * d / 2
}

// bound returns "lower" or "upper" when x is within BoundTolerance of that
// bound, else "".
func (p Param) bound(x float64) string {
	lo, hi := p.span()
	u := p.unit(x)
	switch {
	case u <= lo+BoundTolerance*(hi-lo):
		return "lower"
	case u >= hi-BoundTolerance*(hi-lo):
		return "upper"
	}
	return ""
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
	half := or(eff.MatmulHalfFLOPs, def.MatmulHalfFLOPs)
	ps := []Param{
		{Name: "matmul_fraction", Transform: Logistic, Lo: matmulFractionLo, Hi: matmulFractionHi, Prior: fractionPrior,
			Basis:   "no matmul beats peak, and the best large bf16 GEMM measured on any chip reaches 0.92 of it (v5e, docs/tpu.md); under 0.3 a run is not the matmul-bound step the model describes",
			Default: or(eff.MatmulFraction, def.MatmulFraction), kind: matmulFraction},
		{Name: "matmul_half_flops", Transform: LogLogistic, Lo: half / halfFLOPsRange, Hi: half * halfFLOPsRange, Prior: halfFLOPsPrior,
			Basis:   "a factor of 10 either way of the default, fitted as t0 = 25 us per call on 162 H100 GEMMs (docs/measured-h100.md): from about a kernel launch to a quarter of a millisecond",
			Default: half, kind: matmulHalfFLOPs},
		{Name: "hbm_fraction", Transform: Logistic, Lo: hbmFractionLo, Hi: hbmFractionHi, Prior: fractionPrior,
			Basis:   "a copy cannot beat the memory's line rate: the H100 copies at 0.76 of it (docs/measured-h100.md) and STREAM-like kernels reach 0.8-0.9 (profiles/efficiency.go); under half, the passes are not the fused kernels the model prices",
			Default: or(eff.HBMFraction, def.HBMFraction), kind: hbmFraction},
		{Name: "overlap_fraction", Transform: Logistic, Lo: overlapFractionLo, Hi: 1, Prior: overlapPrior,
			Basis:   "a fraction of the overlappable communication; every modelled framework overlaps gradient reduction with the backward pass by buckets (docs/formulas.md §6), so hiding less than half of it is a misconfiguration",
			Default: or(eff.OverlapFraction, def.OverlapFraction), kind: overlapFraction},
	}
	var notes []string
	seen := map[profiles.Tier]bool{}
	for _, a := range c.Axes {
		if seen[a.Tier] || !used[a.Tier] {
			continue
		}
		seen[a.Tier] = true
		ps = append(ps, Param{Name: string(a.Tier) + ".efficiency", Transform: Logistic, Lo: linkEfficiencyLo, Hi: 1, Prior: fractionPrior,
			Basis:   "a link cannot exceed its line rate; nccl-tests reach 0.73-0.92 of it (profiles/efficiency.go), and under half the line rate the fabric is misconfigured, which a profile should not absorb",
			Default: a.Efficiency, kind: linkEfficiency, tier: a.Tier})
		if a.LatencySeconds > 0 {
			ps = append(ps, Param{Name: string(a.Tier) + ".latency_s", Transform: LogLogistic,
				Lo: a.LatencySeconds / latencyRange, Hi: a.LatencySeconds * latencyRange, Prior: latencyPrior,
				Basis:   "a factor of 4 either way of NCCL's tuning-model latency per ring step (3.4 us NVLink, 9.6 us network; Calculon's 20 us is inside)",
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
		p := &ps[i]
		if p.Default < p.Lo || p.Default > p.Hi {
			d := p.clamp(p.Default)
			notes = append(notes, fmt.Sprintf("%s of cluster %s is %s, outside its bounds %s to %s: the fit starts from and is pulled towards %s",
				p.Name, c.Name, FormatValue(p.Default), FormatValue(p.Lo), FormatValue(p.Hi), FormatValue(d)))
			p.Default = d
		}
		p.Value = p.Default
	}
	return ps, notes
}
