package calibrate

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/validate/runs"
)

// zeroThreeRuns returns the six DeepSpeed ZeRO-3 runs of Narayanan et al.
// 2021 from the built-in data set (174B on 384 to 1,536 A100, 529B on 640
// to 2,240), whose throughput collapses as the GPU count grows at a fixed
// batch: the case a fit of a few runs once drove to InfiniBand efficiency
// 0.29, NVLink 0.45 and a matmul fraction of 0.98.
func zeroThreeRuns(t *testing.T) ([]runs.Run, profiles.Cluster) {
	t.Helper()
	all, err := runs.Default()
	if err != nil {
		t.Fatal(err)
	}
	var rs []runs.Run
	for _, r := range all {
		if strings.HasPrefix(r.ID, "nar21_t2_zero3_") {
			rs = append(rs, r)
		}
	}
	if len(rs) != 6 {
		t.Fatalf("%d ZeRO-3 runs, want 6", len(rs))
	}
	base, err := profiles.Parse("a100-16")
	if err != nil {
		t.Fatal(err)
	}
	return rs, base
}

// checkWarnings wants a warning for every parameter that ended on a bound,
// naming it and at least one of the runs, and one naming every run the fit
// made more than WorsenedPoints worse.
func checkWarnings(t *testing.T, rep Report) {
	t.Helper()
	all := strings.Join(rep.Warnings, "\n")
	for _, p := range rep.Params {
		if p.AtBound == "" {
			continue
		}
		var w string
		for _, x := range rep.Warnings {
			if strings.HasPrefix(x, p.Name+" ended on its "+p.AtBound+" bound") {
				w = x
			}
		}
		if w == "" {
			t.Errorf("%s is on its %s bound and no warning says so:\n%s", p.Name, p.AtBound, all)
			continue
		}
		if !slices.ContainsFunc(rep.Rows, func(r Row) bool { return strings.Contains(w, r.ID) }) {
			t.Errorf("the warning about %s names no run: %s", p.Name, w)
		}
	}
	for _, r := range rep.Rows {
		if math.Abs(r.AfterError)-math.Abs(r.BeforeError) > WorsenedPoints && !strings.Contains(all, r.ID+" (") {
			t.Errorf("%s goes from %+.1f%% to %+.1f%% and no warning names it:\n%s", r.ID, 100*r.BeforeError, 100*r.AfterError, all)
		}
	}
}

// TestZeroThreeRows calibrates on the six ZeRO-3 runs alone. Six runs of
// one odd framework carry too little to move a coefficient further than its
// prior allows: every fitted value stays within two prior standard
// deviations of its default (InfiniBand efficiency at least 0.72, NVLink
// at least 0.58, the matmul fraction at most 0.97), the fit does not do
// worse in sample than the defaults, and the warnings say what they must.
func TestZeroThreeRows(t *testing.T) {
	rs, base := zeroThreeRuns(t)
	rep, err := Calibrate(rs, base, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("MAPE defaults %.1f%%, fitted %.1f%%, cross-validated %.1f%%", 100*rep.BeforeMAPE, 100*rep.AfterMAPE, 100*rep.CVMAPE)
	for _, p := range rep.Params {
		t.Logf("%-22s %-9.3g -> %-9.3g bounds %g to %g %s", p.Name, p.Default, p.Value, p.Lo, p.Hi, p.AtBound)
		if !(p.Value >= p.Lo && p.Value <= p.Hi) {
			t.Errorf("%s = %g, outside its bounds %g to %g", p.Name, p.Value, p.Lo, p.Hi)
		}
		if d := math.Abs(p.unit(p.Value)-p.unit(p.Default)) / p.Prior; d > 2 {
			t.Errorf("%s moved %.1f prior standard deviations, from %g to %g", p.Name, d, p.Default, p.Value)
		}
	}
	if rep.AfterMAPE > rep.BeforeMAPE {
		t.Errorf("fitted MAPE %.1f%% above the defaults' %.1f%%", 100*rep.AfterMAPE, 100*rep.BeforeMAPE)
	}
	checkWarnings(t, rep)
}

// TestBoundWarning makes the ZeRO-3 runs measure half their published
// throughput, which no physical coefficient explains: the fit must press
// parameters against their bounds, stay inside them, and warn, naming the
// runs that pushed.
func TestBoundWarning(t *testing.T) {
	rs, base := zeroThreeRuns(t)
	for i := range rs {
		rs[i].MeasuredTokensPerS /= 2
		rs[i].MeasuredTFLOPsPerChip /= 2
		rs[i].MeasuredMFU /= 2
		rs[i].MeasuredStepS *= 2
	}
	rep, err := Calibrate(rs, base, Options{Folds: -1})
	if err != nil {
		t.Fatal(err)
	}
	var onBound int
	for _, p := range rep.Params {
		t.Logf("%-22s %-9.3g -> %-9.3g %s", p.Name, p.Default, p.Value, p.AtBound)
		if p.AtBound != "" {
			onBound++
		}
		if !(p.Value >= p.Lo && p.Value <= p.Hi) {
			t.Errorf("%s = %g, outside its bounds %g to %g", p.Name, p.Value, p.Lo, p.Hi)
		}
	}
	for _, w := range rep.Warnings {
		t.Logf("warning: %s", w)
	}
	if onBound == 0 {
		t.Error("no parameter ended on a bound")
	}
	checkWarnings(t, rep)
}

// TestWorsenedWarnings pins the rule: a run whose absolute error grows by
// more than 10 points is named, one that grows by less is not.
func TestWorsenedWarnings(t *testing.T) {
	rows := []Row{
		{ID: "good", BeforeError: -0.005, AfterError: -0.202}, // 19.7 points worse
		{ID: "fine", BeforeError: 0.03, AfterError: -0.12},    // 9 points worse
		{ID: "better", BeforeError: 0.25, AfterError: 0.05},
		{ID: "flipped", BeforeError: 0.02, AfterError: -0.13}, // 11 points worse
	}
	got := worsenedWarnings(rows)
	want := "the fit makes 2 runs worse by more than 10 points: good (-0.5% with the defaults, -20.2% fitted), flipped (+2.0% with the defaults, -13.0% fitted). " +
		"The other runs pull the coefficients away from what these need: check them, or fit them apart"
	if len(got) != 1 || got[0] != want {
		t.Errorf("worsenedWarnings = %q\nwant %q", got, want)
	}
	if w := worsenedWarnings(rows[1:3]); w != nil {
		t.Errorf("worsenedWarnings of runs within 10 points = %q", w)
	}
}

// TestHuberOutlier corrupts one of the noise-free synthetic runs (it
// measures 40% slow) and wants the fit with Huber's loss to still recover
// every coefficient the runs identify within outlierTolerance, while least
// squares (HuberK = +Inf) on the same runs lets the one outlier drag some
// coefficient further: a few outlier rows cannot drag a robust fit.
func TestHuberOutlier(t *testing.T) {
	base, err := profiles.Parse("a100-16")
	if err != nil {
		t.Fatal(err)
	}
	rs := syntheticRuns(t, withValues(t, base, truth))
	const outlier = 10 // llama2-13b, tp=8, pp=4 on a100-32: other runs see the same coefficients
	rs[outlier].MeasuredTokensPerS *= 0.6
	worst := func(t *testing.T, o Options) (float64, Report) {
		t.Helper()
		rep, err := Calibrate(rs, base, o)
		if err != nil {
			t.Fatal(err)
		}
		w := 0.0
		for _, p := range rep.Params {
			rel := p.Value/truth[p.Name] - 1
			t.Logf("%-22s fitted %-9.4g true %-9.3g (%+.1f%%)", p.Name, p.Value, truth[p.Name], 100*rel)
			if p.Identified {
				w = max(w, math.Abs(rel))
			}
		}
		return w, rep
	}
	robust, rep := worst(t, Options{Folds: -1, Scatter: 0.01})
	if robust > outlierTolerance {
		t.Errorf("with Huber's loss an identified coefficient is %.1f%% from the truth, want at most %.0f%%", 100*robust, 100*outlierTolerance)
	}
	if e := rep.Rows[outlier].AfterError; e < 0.5 {
		t.Errorf("the outlier is predicted %+.1f%% off; the fit bent towards it", 100*e)
	}
	squares, _ := worst(t, Options{Folds: -1, Scatter: 0.01, HuberK: math.Inf(1)})
	t.Logf("worst identified coefficient: %.1f%% off with Huber's loss, %.1f%% with least squares", 100*robust, 100*squares)
	if !(squares > robust) {
		t.Errorf("least squares is no worse than Huber's loss (%.1f%% against %.1f%%): the test shows nothing", 100*squares, 100*robust)
	}
}

// outlierTolerance is the relative error TestHuberOutlier allows: the
// outlier's bounded pull, HuberK·s per unit of its sensitivity, shifts the
// identified coefficients by a few percent at most.
const outlierTolerance = 0.05
