package calibrate

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/search"
	"github.com/meshplan/meshplan/space"
	"github.com/meshplan/meshplan/validate/runs"
)

// Defaults of Options; a zero field selects them.
const (
	// DefaultScatter is the expected scatter of a run's log error, s: 5%.
	// The default coefficients predict the 24 Megatron-LM A100 rows with a
	// MAPE of 2.9% and all 42 A100 rows with 7.0% (README), so 5% is the
	// error a fit should not try to explain away. It sets the weight of the
	// data against the priors and, with HuberK, where Huber's loss turns
	// linear.
	DefaultScatter = 0.05
	// HuberK is the threshold of Huber's loss in units of the scatter:
	// 1.345, the classical constant that keeps 95% of least squares'
	// efficiency on Gaussian errors (Huber 1964; Holland and Welsch 1977).
	// A run missed by more than about 7% (k·s) pulls the fit with a
	// constant force instead of one that grows with its error.
	HuberK = 1.345
	// DefaultRestarts is the number of perturbed starts besides the defaults.
	DefaultRestarts = 3
	// DefaultMaxEvaluations caps the objective evaluations of one
	// Nelder-Mead search (docs/go-style.md §2.2 step 4).
	DefaultMaxEvaluations = 1500
	// DefaultMaxFolds is the most cross-validation folds: k = min(5, runs).
	DefaultMaxFolds = 5
	// SensitivityStep is the relative move of a parameter for the
	// identifiability check: ±20%.
	SensitivityStep = 0.2
	// IdentifyThreshold is the RMS change of log predicted throughput (about
	// a relative change) below which the runs are said not to identify a
	// parameter: 1%, well under the spread of published measurements.
	IdentifyThreshold = 0.01
)

// Options tunes Calibrate. The zero value selects the documented defaults.
type Options struct {
	// Scatter is the expected scatter of the runs' log errors; 0 means
	// DefaultScatter. A smaller scatter weighs the runs more against the
	// priors (noise-free synthetic runs need one).
	Scatter float64
	// HuberK is the threshold of Huber's loss in units of the scatter; 0
	// means HuberK, +Inf least squares.
	HuberK float64
	// Restarts is the number of perturbed starts; 0 means DefaultRestarts,
	// a negative value none.
	Restarts int
	// MaxEvaluations caps one Nelder-Mead search; 0 means DefaultMaxEvaluations.
	MaxEvaluations int
	// Folds is the number of cross-validation folds, at most the number of
	// runs; 0 means min(DefaultMaxFolds, runs), a negative value no
	// cross-validation.
	Folds int
	// Seed seeds the perturbed starts; 0 means 1.
	Seed uint64
	// Runs selects the framework profiles the runs are predicted with, as
	// for runs.Validate (the zero value: each run's own).
	Runs runs.Options
	// Progress, when not nil, is called with the work done and its total,
	// one call at a time, after each step: the runs read, each fit (the
	// full fit and one per fold, run concurrently, each weighing
	// fitWeight), the prediction with the fitted profile and each fold's
	// cross-validation. The last call of a calibration that succeeds has
	// done equal to total.
	Progress func(done, total int64)
}

// fitWeight is a fit's share of the progress, against 1 for reading the
// runs, for predicting them with the fitted profile and for each fold's
// cross-validation: the fits take nearly all the time.
const fitWeight = 10

// progressOf returns a goroutine-safe step counter reporting to o.Progress
// with the given total, and a function that adds to it.
func (o Options) progressOf(total int64) func(steps int64) {
	if o.Progress == nil {
		return func(int64) {}
	}
	var (
		mu   sync.Mutex
		done int64
	)
	return func(steps int64) {
		mu.Lock()
		defer mu.Unlock()
		done += steps
		o.Progress(done, total)
	}
}

func (o Options) huberK() float64 {
	if o.HuberK > 0 {
		return o.HuberK
	}
	return HuberK
}

func (o Options) scatter() float64 {
	if o.Scatter > 0 {
		return o.Scatter
	}
	return DefaultScatter
}

func (o Options) restarts() int {
	switch {
	case o.Restarts < 0:
		return 0
	case o.Restarts == 0:
		return DefaultRestarts
	}
	return o.Restarts
}

func (o Options) maxEvaluations() int {
	if o.MaxEvaluations > 0 {
		return o.MaxEvaluations
	}
	return DefaultMaxEvaluations
}

func (o Options) seed() uint64 {
	if o.Seed == 0 {
		return 1
	}
	return o.Seed
}

// folds returns the number of folds for n runs: 0 when cross-validation
// is off or impossible (fewer than two runs).
func (o Options) folds(n int) int {
	if o.Folds < 0 || n < 2 {
		return 0
	}
	k := min(DefaultMaxFolds, n)
	if o.Folds > 0 {
		k = min(o.Folds, n)
	}
	if k < 2 {
		return 0
	}
	return k
}

// Row is one run's measured throughput with the predictions before and
// after the fit and out of sample.
type Row struct {
	// ID is the run's id.
	ID string `json:"id"`
	// Strategy is the strategy the fit held fixed (chosen with the defaults).
	Strategy string `json:"strategy"`
	// Measured is the measured tokens/s per chip (runs.Run.Measured).
	Measured float64 `json:"measured_tokens_per_s_per_chip"`
	// Before is the prediction with the base cluster's coefficients.
	Before float64 `json:"before_tokens_per_s_per_chip"`
	// After is the prediction with the fitted profile, as `plan validate
	// --cluster fitted.yaml` makes it.
	After float64 `json:"after_tokens_per_s_per_chip"`
	// CV is the prediction of the fit on the other folds (0 without
	// cross-validation).
	CV float64 `json:"cv_tokens_per_s_per_chip,omitempty"`
	// BeforeError, AfterError and CVError are prediction/measured - 1.
	BeforeError float64 `json:"before_error"`
	AfterError  float64 `json:"after_error"`
	CVError     float64 `json:"cv_error,omitempty"`
	// Fold is the cross-validation fold that held the run out (0-based).
	Fold int `json:"fold"`
}

// Report is the outcome of Calibrate.
type Report struct {
	// Base is the cluster whose coefficients were the defaults.
	Base profiles.Cluster `json:"-"`
	// Fitted is Base with the fitted coefficients: the profile to write.
	Fitted profiles.Cluster `json:"-"`
	// Rows are the runs the fit used, in input order.
	Rows []Row `json:"rows"`
	// BeforeMAPE, AfterMAPE and CVMAPE are the mean |error| over Rows of the
	// defaults, the fit and the out-of-fold fits (fractions).
	BeforeMAPE float64 `json:"before_mape"`
	AfterMAPE  float64 `json:"after_mape"`
	CVMAPE     float64 `json:"cv_mape"`
	// Folds is the number of cross-validation folds (0: none; CVMAPE is then NaN).
	Folds int `json:"folds"`
	// Params are the fitted parameters, chip-wide first, then per tier.
	Params []Param `json:"params"`
	// Objective is the fit's objective at the defaults and at the optimum.
	ObjectiveBefore float64 `json:"objective_before"`
	ObjectiveAfter  float64 `json:"objective_after"`
	// Evaluations counts objective evaluations of the full fit (not the folds).
	Evaluations int `json:"evaluations"`
	// Warnings say what the runs cannot identify.
	Warnings []string `json:"warnings"`
	// Notes say which runs were ignored and which coefficients are held.
	Notes []string `json:"notes"`
	// Skipped are runs on the chip that could not be predicted.
	Skipped []runs.Skip `json:"skipped"`
}

// ErrNoRuns is wrapped by Calibrate's error when no run can be used: none
// is on the base cluster's chip, or none of those can be predicted.
var ErrNoRuns = errors.New("calibrate: no usable runs")

// Calibrate fits the cost-model coefficients of base's chip to the
// measured runs on that chip and reports the fit; runs on other chips are
// ignored with a note. Each run's strategy is fixed once with base's
// coefficients (as runs.Validate picks it), then only the coefficients
// vary: the chip-wide profiles.Efficiency and, per link tier of base that
// the runs use, the axis efficiency and latency. The package documentation
// gives the objective, transforms and method.
func Calibrate(rs []runs.Run, base profiles.Cluster, o Options) (Report, error) {
	rep := Report{Base: base, Warnings: []string{}, Notes: []string{}, Skipped: []runs.Skip{}}
	var (
		ss    []*sample
		used  []runs.Run
		other = map[string]int{}
	)
	// The steps, weighed by their time: reading the runs 1, the full fit
	// and each fold's fitWeight, the prediction with the fitted profile 1,
	// each fold's cross-validation 1. The folds are counted for every run
	// and the ones fewer runs leave out are added as done once the runs
	// are read.
	maxFolds := int64(o.folds(len(rs)))
	step := o.progressOf(1 + fitWeight*(1+maxFolds) + 1 + maxFolds)
	for _, r := range rs {
		own, err := r.ClusterOf(nil)
		if err == nil && own.Chip.Name != base.Chip.Name {
			other[own.Chip.Name]++
			continue
		}
		s, row, err := prepare(r, base, o.Runs)
		if err != nil {
			rep.Skipped = append(rep.Skipped, runs.Skip{ID: r.ID, Reason: strings.TrimPrefix(err.Error(), "calibrate: ")})
			continue
		}
		ss = append(ss, s)
		used = append(used, r)
		rep.Rows = append(rep.Rows, row)
	}
	if len(other) > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("ignored %s, not on %s", countChips(other), base.Chip.Name))
	}
	if len(ss) == 0 {
		if len(rep.Skipped) > 0 {
			return rep, fmt.Errorf("%w: none of the %d runs on %s can be predicted (%s: %s)", ErrNoRuns,
				len(rep.Skipped), base.Chip.Name, rep.Skipped[0].ID, rep.Skipped[0].Reason)
		}
		return rep, fmt.Errorf("%w: none of the %d runs is on chip %s of cluster %s", ErrNoRuns, len(rs), base.Chip.Name, base.Name)
	}

	tiers := map[profiles.Tier]bool{}
	for _, s := range ss {
		for _, a := range s.c.Axes {
			tiers[a.Tier] = true
		}
	}
	ps, notes := defaultsOf(base, tiers)
	rep.Notes = append(rep.Notes, notes...)

	// The full fit and the fold fits are independent: run them
	// concurrently, each on its own copy of the samples (predict writes
	// into a sample's cluster), and collect them by index.
	rep.Folds = o.folds(len(ss))
	step(1 + (fitWeight+1)*(maxFolds-int64(rep.Folds)))
	jobs := make([]fitJob, 1+rep.Folds)
	for f := range jobs {
		jobs[f].ps = slices.Clone(ps)
		for i, s := range ss {
			if f == 0 || i%rep.Folds != f-1 {
				jobs[f].train = append(jobs[f].train, s.clone())
			}
		}
	}
	runJobs(jobs, o, step)
	for f, j := range jobs {
		if j.err != nil {
			if f == 0 {
				return rep, j.err
			}
			return rep, fmt.Errorf("calibrate: cross-validation fold %d: %w", f, j.err)
		}
	}
	res := jobs[0].res
	ps = jobs[0].ps
	rep.Evaluations = res.evaluations
	rep.ObjectiveAfter = res.f
	all := make([]int, len(ps))
	for i := range all {
		all[i] = i
	}
	pr := newProblem(ss, ps, all, o)
	rep.ObjectiveBefore = pr.objective(pr.z0)
	rep.Fitted = apply(base, ps)
	rep.Fitted.Name = base.Name + "-calibrated"
	if err := rep.Fitted.Validate(); err != nil {
		return rep, fmt.Errorf("calibrate: the fitted profile is not a valid cluster: %v", err)
	}

	// After: what `plan validate --cluster fitted.yaml` predicts.
	after := runs.Validate(used, &rep.Fitted, o.Runs)
	step(1)
	afterOf := byID(after)
	sumB, sumA := 0.0, 0.0
	for i := range rep.Rows {
		row := &rep.Rows[i]
		if a, ok := afterOf[row.ID]; ok {
			row.After, row.AfterError = a.PredictedTokensPerSPerChip, a.Error
		} else {
			// Validate failed with the fitted profile; fall back on the fixed strategy.
			row.After = math.Exp(ss[i].logPredicted(ps, values(ps)))
			row.AfterError = row.After/row.Measured - 1
		}
		sumB += math.Abs(row.BeforeError)
		sumA += math.Abs(row.AfterError)
	}
	n := float64(len(rep.Rows))
	rep.BeforeMAPE, rep.AfterMAPE = sumB/n, sumA/n

	rep.Params = ps
	rep.Warnings = append(rep.Warnings, warnings(ps, len(ss))...)
	rep.Warnings = append(rep.Warnings, boundWarnings(ss, ps, o)...)
	rep.Warnings = append(rep.Warnings, worsenedWarnings(rep.Rows)...)

	rep.CVMAPE = math.NaN()
	if rep.Folds > 0 {
		crossValidate(&rep, ss, used, base, jobs[1:], o, step)
	}
	return rep, nil
}

// fitAll fits every parameter, then holds at its default each one the
// runs do not see (Sensitivity below IdentifyThreshold both at the
// defaults and at the fit: left free, it would drift along a flat
// direction for no reason) and re-fits the others from where the first
// fit ended. It sets the parameters'
// values, sensitivities and Held, and returns the last fit.
func fitAll(ss []*sample, ps []Param, o Options) (fitResult, error) {
	all := make([]int, len(ps))
	for i := range all {
		all[i] = i
	}
	// What the runs see at the defaults, then at the first fit: a
	// parameter is held only when it is invisible at both.
	identify(ss, ps)
	seen := make([]float64, len(ps))
	for i, p := range ps {
		seen[i] = p.Sensitivity
	}
	res, err := fit(newProblem(ss, ps, all, o), nil, o.restarts(), o)
	if err != nil {
		return res, err
	}
	setValues(ps, res.z)
	identify(ss, ps)
	var free []int
	for i, p := range ps {
		seen[i] = max(seen[i], p.Sensitivity)
		if seen[i] >= IdentifyThreshold {
			free = append(free, i)
		} else {
			ps[i].Held = true
		}
	}
	if len(free) == len(ps) {
		return res, nil
	}
	evals := res.evaluations
	if len(free) == 0 {
		res = fitResult{z: zOf(ps)}
	} else {
		start := slices.Clone(res.z)
		if res, err = fit(newProblem(ss, ps, free, o), start, 0, o); err != nil {
			return res, err
		}
	}
	res.evaluations += evals
	setValues(ps, res.z)
	identify(ss, ps)
	for i := range ps {
		if ps[i].Held {
			// Report what the decision saw.
			ps[i].Sensitivity, ps[i].Conditional, ps[i].Identified = seen[i], 0, false
		}
	}
	return res, nil
}

// setValues sets the parameters' values from their z.
func setValues(ps []Param, z []float64) {
	for i := range ps {
		ps[i].Value = ps[i].value(z[i])
	}
}

// prepare fixes run r's strategy with the base profile, builds its cost
// model and returns the sample and its row with the measured and "before"
// figures.
func prepare(r runs.Run, base profiles.Cluster, ro runs.Options) (*sample, Row, error) {
	v := runs.Validate([]runs.Run{r}, &base, ro)
	if len(v.Rows) != 1 {
		if len(v.Skipped) == 1 {
			return nil, Row{}, errors.New(v.Skipped[0].Reason)
		}
		return nil, Row{}, errors.New("calibrate: the run cannot be predicted")
	}
	vr := v.Rows[0]
	m, c, w, _, err := r.Plan(&base)
	if err != nil {
		return nil, Row{}, err
	}
	c.Axes = slices.Clone(c.Axes) // predict writes into them
	st, err := space.Parse(vr.Strategy)
	if err != nil {
		return nil, Row{}, fmt.Errorf("calibrate: strategy %s: %v", vr.Strategy, err)
	}
	so, _, err := r.SearchOptions(ro)
	if err != nil {
		return nil, Row{}, err
	}
	// Placed as the run's framework lays out its ranks.
	placed, err := so.Limits.Place(st, c)
	if err != nil {
		return nil, Row{}, fmt.Errorf("calibrate: strategy %s: %v", vr.Strategy, err)
	}
	p, err := search.NewProblem(m, c, w, space.Fix{}, so)
	if err != nil {
		return nil, Row{}, fmt.Errorf("calibrate: %v", err)
	}
	s := &sample{
		id: r.ID, p: p, c: c, w: w, s: placed,
		tokensPerChip: float64(w.Tokens()) / float64(c.Chips()),
		logMeasured:   math.Log(vr.MeasuredTokensPerSPerChip),
	}
	return s, Row{
		ID: r.ID, Strategy: vr.Strategy, Measured: vr.MeasuredTokensPerSPerChip,
		Before: vr.PredictedTokensPerSPerChip, BeforeError: vr.Error,
	}, nil
}

// fitJob is one fit of Calibrate: the full fit or one fold's.
type fitJob struct {
	train []*sample // the job's own copies
	ps    []Param
	res   fitResult
	err   error
}

// runJobs runs fitAll for every job, at most GOMAXPROCS at a time. Each
// job is deterministic and writes only its own fields, so the outcome does
// not depend on the scheduling; step counts each job done.
func runJobs(jobs []fitJob, o Options, step func(int64)) {
	sem := make(chan struct{}, max(runtime.GOMAXPROCS(0), 1))
	var wg sync.WaitGroup
	for f := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func(j *fitJob) {
			defer func() { <-sem; wg.Done() }()
			j.res, j.err = fitAll(j.train, j.ps, o)
			step(fitWeight)
		}(&jobs[f])
	}
	wg.Wait()
}

// crossValidate predicts each held-out fold with runs.Validate and the
// profile fitted on the other folds (folds[f], fitted without the runs i
// with i mod k = f), and sets the rows' CV figures and rep.CVMAPE; step
// counts each fold done.
func crossValidate(rep *Report, ss []*sample, used []runs.Run, base profiles.Cluster, folds []fitJob, o Options, step func(int64)) {
	k := len(folds)
	sum := 0.0
	for f, job := range folds {
		var test []runs.Run
		for i := range ss {
			if i%k == f {
				test = append(test, used[i])
			}
		}
		fitted := apply(base, job.ps)
		got := byID(runs.Validate(test, &fitted, o.Runs))
		for i := range ss {
			if i%k != f {
				continue
			}
			row := &rep.Rows[i]
			row.Fold = f
			if a, ok := got[row.ID]; ok {
				row.CV = a.PredictedTokensPerSPerChip
			} else {
				row.CV = math.Exp(ss[i].logPredicted(job.ps, values(job.ps)))
			}
			row.CVError = row.CV/row.Measured - 1
			sum += math.Abs(row.CVError)
		}
		step(1)
	}
	rep.CVMAPE = sum / float64(len(ss))
}

// apply returns a copy of base with the parameters' values.
func apply(base profiles.Cluster, ps []Param) profiles.Cluster {
	c := base
	c.Axes = slices.Clone(base.Axes)
	for _, p := range ps {
		p.set(&c, p.Value)
	}
	return c
}

// zOf returns the transformed defaults of ps.
func zOf(ps []Param) []float64 {
	z := make([]float64, len(ps))
	for i, p := range ps {
		z[i] = p.z(p.Default)
	}
	return z
}

// values returns the values of ps.
func values(ps []Param) []float64 {
	xs := make([]float64, len(ps))
	for i, p := range ps {
		xs[i] = p.Value
	}
	return xs
}

// byID indexes a validation report's rows by run id.
func byID(v runs.Report) map[string]runs.Row {
	m := make(map[string]runs.Row, len(v.Rows))
	for _, r := range v.Rows {
		m[r.ID] = r
	}
	return m
}

// countChips says "1 run on h100, 12 on v5e", chips sorted by name.
func countChips(n map[string]int) string {
	names := make([]string, 0, len(n))
	for k := range n {
		names = append(names, k)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, k := range names {
		if i == 0 {
			parts[i] = fmt.Sprintf("%d %s on %s", n[k], plural(n[k], "run", "runs"), k)
		} else {
			parts[i] = fmt.Sprintf("%d on %s", n[k], k)
		}
	}
	return strings.Join(parts, ", ")
}

// plural picks the singular or plural word for count n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
