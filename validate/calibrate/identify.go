package calibrate

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

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
	jac, sens := jacobian(ss, ps)
	for i := range ps {
		ps[i].Sensitivity = sens[i]
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

// jacobian moves each parameter by ±SensitivityStep from its value (kept
// inside its bounds) and returns, per parameter i and run j, the central
// difference jac[i][j] = d log predicted_j / d log x_i, and per parameter
// the largest change of any run's log prediction (0 when not finite).
func jacobian(ss []*sample, ps []Param) (jac [][]float64, sens []float64) {
	xs := values(ps)
	base := make([]float64, len(ss))
	for j, s := range ss {
		base[j] = s.logPredicted(ps, xs)
	}
	jac, sens = make([][]float64, len(ps)), make([]float64, len(ps))
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
		jac[i] = make([]float64, len(ss))
		for j := range ss {
			sens[i] = max(sens[i], math.Abs(lu[j]-base[j]), math.Abs(ld[j]-base[j]))
			jac[i][j] = (lu[j] - ld[j]) / (math.Log(up) - math.Log(down))
		}
		if math.IsNaN(sens[i]) || math.IsInf(sens[i], 0) {
			sens[i] = 0
		}
	}
	return jac, sens
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

// moved returns p's value times factor, kept inside its bounds.
func moved(p Param, factor float64) float64 { return p.clamp(p.Value * factor) }

// warnings explains the parameters the runs cannot identify.
func warnings(ps []Param, runs int) []string {
	var out []string
	if runs < len(ps) {
		out = append(out, fmt.Sprintf("only %d %s for %d parameters: the priors decide the rest", runs, plural(runs, "run", "runs"), len(ps)))
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

// maxNamed is the most runs a warning names.
const maxNamed = 3

// boundWarnings warns about each fitted (not held) parameter that ended on
// a physical bound, naming the runs that pushed it there: those whose
// pull on the parameter, the derivative of their Huber loss times how
// their log prediction moves with it, points past the bound, strongest
// first, with their error at the fit. It sets the parameters' AtBound.
func boundWarnings(ss []*sample, ps []Param, o Options) []string {
	jac, _ := jacobian(ss, ps)
	xs := values(ps)
	psi := make([]float64, len(ss))
	for j, s := range ss {
		psi[j] = huberGrad((s.logPredicted(ps, xs)-s.logMeasured)/o.scatter(), o.huberK())
	}
	var out []string
	for i := range ps {
		p := &ps[i]
		p.AtBound = ""
		if p.Held {
			continue
		}
		if p.AtBound = p.bound(p.Value); p.AtBound == "" {
			continue
		}
		// Raising x_i changes run j's loss by psi_j·jac_ij (per unit of
		// log x_i): a run pushes towards the upper bound when that is
		// negative, towards the lower bound when it is positive.
		sign := -1.0
		limit := p.Hi
		if p.AtBound == "lower" {
			sign, limit = 1, p.Lo
		}
		type push struct {
			j     int
			force float64
		}
		var pushes []push
		for j := range ss {
			if f := sign * psi[j] * jac[i][j]; f > 0 && !math.IsNaN(f) {
				pushes = append(pushes, push{j, f})
			}
		}
		slices.SortStableFunc(pushes, func(a, b push) int { return cmp.Compare(b.force, a.force) })
		var named []string
		for _, q := range pushes[:min(maxNamed, len(pushes))] {
			s := ss[q.j]
			err := math.Exp(s.logPredicted(ps, xs)-s.logMeasured) - 1
			named = append(named, fmt.Sprintf("%s (%+.1f%% at the fit)", s.id, 100*err))
		}
		who := "no run pushes it there; the priors of the other parameters do"
		if len(named) > 0 {
			who = "the runs that push it there most: " + strings.Join(named, ", ")
		}
		out = append(out, fmt.Sprintf("%s ended on its %s bound: %s, against %s (bounds %s to %s: %s); %s. Check those runs' layouts, frameworks and measurements before trusting the profile",
			p.Name, p.AtBound, FormatValue(p.Value), FormatValue(limit), FormatValue(p.Lo), FormatValue(p.Hi), p.Basis, who))
	}
	return out
}

// WorsenedPoints is how much worse, in points of absolute error, the fit
// may make a run before Calibrate warns: 10 (the issue that introduced it:
// a fit that moved a run from -0.5% to -20.2% while the mean improved).
const WorsenedPoints = 0.10

// worsenedWarnings names every run whose absolute error the fit makes
// worse by more than WorsenedPoints.
func worsenedWarnings(rows []Row) []string {
	var named []string
	for _, r := range rows {
		if math.Abs(r.AfterError)-math.Abs(r.BeforeError) > WorsenedPoints {
			named = append(named, fmt.Sprintf("%s (%+.1f%% with the defaults, %+.1f%% fitted)", r.ID, 100*r.BeforeError, 100*r.AfterError))
		}
	}
	if len(named) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("the fit makes %d %s worse by more than %.0f points: %s. The other runs pull the coefficients away from what these need: check them, or fit them apart",
		len(named), plural(len(named), "run", "runs"), 100*WorsenedPoints, strings.Join(named, ", "))}
}
