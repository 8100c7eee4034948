package calibrate

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// identify fills each parameter's Sensitivity, Conditional and Identified
// at the fitted values.
//
// Sensitivity moves one parameter by ±SensitivityStep (kept inside its
// bounds) and takes the largest change of any run's log predicted
// throughput. The same moves give, by a central difference, the column
// J_i = d log pred / d log x_i over the runs. The conditional sensitivity
// is the part of that column the other parameters cannot mimic: the
// residual of the least-squares fit of J_i on the other parameters'
// columns (the linearised re-fit of the others after parameter i moves;
// e.g. Seber & Wild, Nonlinear Regression, §3.2 on the design matrix),
// as the largest change of any run for a move of log(1+SensitivityStep).
func identify(ss []*sample, ps []Param) {
	xs := values(ps)
	base := make([]float64, len(ss))
	for j, s := range ss {
		base[j] = s.logPredicted(ps, xs)
	}
	jac := make([][]float64, len(ps)) // jac[i][j]
	for i, p := range ps {
		up, down := moved(p, 1+SensitivityStep), moved(p, 1-SensitivityStep)
		lu, ld := make([]float64, len(ss)), make([]float64, len(ss))
		xs[i] = up
		for j, s := range ss {
			lu[j] = s.logPredicted(ps, xs)
		}
		xs[i] = down
		for j, s := range ss {
			ld[j] = s.logPredicted(ps, xs)
		}
		xs[i] = p.Value
		sens := 0.0
		jac[i] = make([]float64, len(ss))
		for j := range ss {
			sens = max(sens, math.Abs(lu[j]-base[j]), math.Abs(ld[j]-base[j]))
			jac[i][j] = (lu[j] - ld[j]) / (math.Log(up) - math.Log(down))
		}
		if math.IsNaN(sens) || math.IsInf(sens, 0) {
			sens = 0
		}
		ps[i].Sensitivity = sens
		ps[i].Conditional, ps[i].Identified = 0, false
	}

	var seen []int
	for i, p := range ps {
		if p.Sensitivity >= IdentifyThreshold && finiteAll(jac[i]) {
			seen = append(seen, i)
		}
	}
	step := math.Log(1 + SensitivityStep)
	for _, i := range seen {
		var others [][]float64
		for _, k := range seen {
			if k != i {
				others = append(others, jac[k])
			}
		}
		r := residual(jac[i], others)
		c := 0.0
		for _, v := range r {
			c = max(c, math.Abs(v))
		}
		ps[i].Conditional = c * step
		ps[i].Identified = ps[i].Conditional >= IdentifyThreshold
	}
}

// residual returns y minus its least-squares projection on the columns
// cols, solving the normal equations with a tiny ridge (1e-12 of their
// trace) so that columns which are themselves collinear do not make the
// solve fail.
func residual(y []float64, cols [][]float64) []float64 {
	out := slices.Clone(y)
	k := len(cols)
	if k == 0 {
		return out
	}
	a := mat.NewSymDense(k, nil)
	b := mat.NewVecDense(k, nil)
	trace := 0.0
	for p := range k {
		for q := range p + 1 {
			a.SetSym(p, q, dot(cols[p], cols[q]))
		}
		b.SetVec(p, dot(cols[p], y))
		trace += a.At(p, p)
	}
	for p := range k {
		a.SetSym(p, p, a.At(p, p)+1e-12*trace+1e-300)
	}
	var ch mat.Cholesky
	if !ch.Factorize(a) {
		return out
	}
	var coef mat.VecDense
	if err := ch.SolveVecTo(&coef, b); err != nil {
		return out
	}
	for p := range k {
		c := coef.AtVec(p)
		for j := range out {
			out[j] -= c * cols[p][j]
		}
	}
	return out
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func finiteAll(xs []float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// moved returns p's value times factor, kept inside a logistic
// parameter's bounds.
func moved(p Param, factor float64) float64 {
	x := p.Value * factor
	if p.Transform == Logistic {
		w := p.Hi - p.Lo
		x = min(max(x, p.Lo+boundMargin*w), p.Hi-boundMargin*w)
	}
	return x
}

// warnings explains the parameters the runs cannot identify.
func warnings(ps []Param, runs int) []string {
	var out []string
	if runs < len(ps) {
		out = append(out, fmt.Sprintf("only %d %s for %d parameters: the pull towards the defaults decides the rest", runs, plural(runs, "run", "runs"), len(ps)))
	}
	for _, p := range ps {
		switch {
		case p.Held:
			out = append(out, fmt.Sprintf("the runs cannot identify %s: moving it ±%.0f%% changes no run's prediction by more than %.2f%%, so it stays at its default %s",
				p.Name, 100*SensitivityStep, 100*p.Sensitivity, FormatValue(p.Default)))
		case p.Sensitivity < IdentifyThreshold:
			out = append(out, fmt.Sprintf("the runs cannot identify %s at the fitted values: moving it ±%.0f%% changes no run's prediction by more than %.2f%%, so its value %s (default %s) is not supported by them",
				p.Name, 100*SensitivityStep, 100*p.Sensitivity, FormatValue(p.Value), FormatValue(p.Default)))
		case !p.Identified:
			out = append(out, fmt.Sprintf("the runs cannot separate %s from the other parameters: a ±%.0f%% move changes a prediction by up to %.2f%% alone but by %.2f%% once the others adjust, so its fitted value %s (default %s) is one of many that fit about as well",
				p.Name, 100*SensitivityStep, 100*p.Sensitivity, 100*p.Conditional, FormatValue(p.Value), FormatValue(p.Default)))
		}
	}
	return out
}

// FormatValue prints a coefficient with three significant digits.
func FormatValue(x float64) string {
	return fmt.Sprintf("%.3g", x)
}
