package bands

import (
	"math"
	"testing"

	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/space"
)

func TestFixOf(t *testing.T) {
	parse := func(s string) space.Strategy {
		st, err := space.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	for _, tt := range []struct {
		strategy, framework, want string
	}{
		{"dp=8,tp=4,pp=2,mb=2", "megatron", "tp=4,pp=2,mb=2"},
		{"dp=2,zero=1,tp=4,cp=2,pp=8,schedule=interleaved,v=8,recompute=full,precision=fp8", "megatron",
			"tp=4,pp=8,cp=2,schedule=interleaved,v=8,mb=1,precision=fp8,recompute=full"},
		{"dp=8,pp=4,ep=8,mb=4,recompute=selective", "megatron", "tp=1,pp=4,ep=8,mb=4"},
		{"fsdp=8,tp=8,mb=12", "torchtitan", "tp=8,pp=1"},
		{"fsdp=256,mb=3,recompute=full,precision=int8", "maxtext", "tp=1,pp=1,precision=int8,recompute=full"},
	} {
		if got := FixOf(parse(tt.strategy), tt.framework); got != tt.want {
			t.Errorf("FixOf(%s, %s) = %q, want %q", tt.strategy, tt.framework, got, tt.want)
		}
	}
}

// samplesOf makes samples of one family and source with the given log errors.
func samplesOf(family, source string, errs ...float64) []Sample {
	var out []Sample
	for _, e := range errs {
		out = append(out, Sample{Source: source, Family: family, Framework: "generic", Precision: "bf16", Chips: 8, LogError: e})
	}
	return out
}

// TestCoverage: two sources of one family, ten runs each. Leaving a out,
// a's runs are drawn against b's ten (family quantiles of b only): a's
// errors 0.05..0.5 against b's interval; and the other way round.
func TestCoverage(t *testing.T) {
	var a, b []float64
	for i := range 10 {
		a = append(a, 0.05*float64(i+1))  // 0.05 .. 0.50
		b = append(b, -0.05*float64(i+1)) // -0.05 .. -0.50
	}
	s := append(samplesOf("nvidia-hopper", "a", a...), samplesOf("nvidia-hopper", "b", b...)...)
	cov := Coverage(profiles.RegimeFixed, s)
	// b's 80% interval: h = 11p: p=0.1 → 1.1 → -0.50+0.1·0.05 = -0.495;
	// p=0.9 → 9.9 → -0.05-0.1·0.05 ... x sorted ascending: [-0.5..-0.05],
	// x[8] + 0.9·(x[9]-x[8]) = -0.10+0.9·0.05 = -0.055. None of a's
	// positive errors is inside, and by symmetry none of b's: 0 of 20.
	if cov.All.Runs != 20 || cov.All.In80 != 0 {
		t.Errorf("disjoint sources: %d of %d covered, want 0 of 20", cov.All.In80, cov.All.Runs)
	}
	// The same errors shared by both sources: each run is inside the
	// other's interval unless it is beyond its 10% or 90% point:
	// [0.055, 0.495] holds 0.10..0.45, 8 of 10.
	s = append(samplesOf("nvidia-hopper", "a", a...), samplesOf("nvidia-hopper", "b", a...)...)
	cov = Coverage(profiles.RegimeFixed, s)
	if cov.All.In80 != 16 || math.Abs(cov.All.Coverage80-0.8) > 1e-9 {
		t.Errorf("exchangeable sources: %d of %d covered (%.2f), want 16 of 20", cov.All.In80, cov.All.Runs, cov.All.Coverage80)
	}
	tbl := Fit(profiles.RegimeFixed, s, "test")
	if tbl.Pooled.Runs != 20 || tbl.Pooled.Sources != 2 || len(tbl.Families) != 1 || len(tbl.Kinds) != 1 ||
		math.Abs(tbl.Families[0].Coverage80-0.8) > 1e-9 || math.Abs(tbl.Kinds[0].Coverage80-0.8) > 1e-9 {
		t.Errorf("Fit = %+v; want 20 runs of 2 sources, one family and one kind covered 80%%", tbl)
	}
}

// TestCoverageWithShipped: a file of one source leaves no other source to
// fit on, so CoverageWith draws its runs from the shipped bands. Shipped:
// two other sources with the errors 0.05..0.50 each, a pooled 80% interval
// of [0.055, 0.495] (h = 21p over the 20 sorted errors: x(2) + 0.1·0.05,
// x(18) + 0.9·0.05), which holds 0.10..0.45 of the file's own 0.05..0.50:
// 8 of 10, all 10 counted as drawn from the shipped bands. Coverage, with
// nothing to draw from, counts none as shipped.
func TestCoverageWithShipped(t *testing.T) {
	var a []float64
	for i := range 10 {
		a = append(a, 0.05*float64(i+1))
	}
	shipped := profiles.Bands{Tables: []profiles.BandTable{
		Fit(profiles.RegimeFixed, append(samplesOf("nvidia-hopper", "b", a...), samplesOf("nvidia-hopper", "c", a...)...), "test")}}
	own := samplesOf("nvidia-hopper", "own", a...)
	cov := CoverageWith(profiles.RegimeFixed, own, &shipped)
	if cov.All.Runs != 10 || cov.All.In80 != 8 || cov.ShippedRuns != 10 {
		t.Errorf("one source with shipped bands: %d of %d covered, %d from the shipped bands; want 8 of 10, 10", cov.All.In80, cov.All.Runs, cov.ShippedRuns)
	}
	if cov := Coverage(profiles.RegimeFixed, own); cov.ShippedRuns != 0 {
		t.Errorf("Coverage counts %d runs as shipped, want 0", cov.ShippedRuns)
	}
	// With a second source in the file each is drawn from the other, not
	// from the shipped bands.
	two := append(samplesOf("nvidia-hopper", "own", a...), samplesOf("nvidia-hopper", "b", a...)...)
	if cov := CoverageWith(profiles.RegimeFixed, two, &shipped); cov.ShippedRuns != 0 || cov.All.In80 != 16 {
		t.Errorf("two sources: %d of %d covered, %d shipped; want 16 of 20, 0", cov.All.In80, cov.All.Runs, cov.ShippedRuns)
	}
}

func TestResidual80(t *testing.T) {
	// Each source's errors about its own mean: a: -0.1, 0, 0.1; b the
	// same shifted by 1, which the residual removes; c has one run and is
	// left out. Six residuals -0.1,-0.1,0,0,0.1,0.1: type 6 at h = 0.7 and
	// 6.3 clamp to ±0.1; half of e^0.1 - e^-0.1 = 0.100167.
	s := append(samplesOf("x", "a", -0.1, 0, 0.1), samplesOf("x", "b", 0.9, 1, 1.1)...)
	s = append(s, samplesOf("x", "c", 5)...)
	if got := Residual80(s); math.Abs(got-0.100167) > 1e-6 {
		t.Errorf("Residual80 = %.6f, want 0.100167", got)
	}
}

// TestFitDenseApart: a family's dense and MoE runs are fitted apart. Ten
// dense runs of three sources at ±0.01 to ±0.09 and ten MoE runs at five
// times those: the family's and the dense fit hold the dense runs alone
// (80% ends at h = 1.1 and 9.9: -0.09+0.1·0.02 = -0.088 and 0.088), its
// largest job is the MoE runs' 64 chips, the MoE fit the MoE runs'
// (±0.44), and a dense model's band is the family's.
func TestFitDenseApart(t *testing.T) {
	errs := []float64{-0.09, -0.07, -0.05, -0.03, -0.01, 0.01, 0.03, 0.05, 0.07, 0.09}
	var s []Sample
	for i, e := range errs {
		src := []string{"a", "b", "c"}[i%3]
		s = append(s, Sample{Source: src, Family: "nvidia-hopper", Framework: "megatron", Precision: "bf16", Chips: 8, LogError: e})
		s = append(s, Sample{Source: src, Family: "nvidia-hopper", Framework: "megatron", Precision: "bf16", Chips: 64, MoE: true, LogError: 5 * e})
	}
	tbl := Fit(profiles.RegimeFixed, s, "test")
	f := tbl.Families[0]
	if f.Runs != 10 || f.Sources != 3 || f.MaxChips != 64 || math.Abs(f.Q[1]+0.088) > 1e-9 || math.Abs(f.Q[3]-0.088) > 1e-9 {
		t.Errorf("family fit %+v; want 10 dense runs of 3 sources, 64 chips, 80%% ends ±0.088", f)
	}
	if tbl.Dense.Runs != 10 || math.Abs(tbl.Dense.Q[3]-0.088) > 1e-9 || tbl.Pooled.Runs != 20 {
		t.Errorf("dense fit %+v, pool of %d runs; want the 10 dense runs and a pool of 20", tbl.Dense, tbl.Pooled.Runs)
	}
	if tbl.MoE.Runs != 10 || math.Abs(tbl.MoE.Q[3]-0.44) > 1e-9 {
		t.Errorf("MoE fit %+v; want 10 runs, 90%% at 0.44", tbl.MoE)
	}
	b := profiles.Bands{Tables: []profiles.BandTable{tbl}}.StepTimeBand(profiles.BandQuery{Family: "nvidia-hopper", Chips: 8, Framework: "megatron"})
	if b.Family != "nvidia-hopper" || math.Abs(math.Log(b.Hi80)-0.088) > 1e-9 {
		t.Errorf("dense band %+v; want the family's, 80%% to e^0.088", b)
	}
}
