package calibrate

import (
	"fmt"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/meshplan/meshplan/profiles"
	"github.com/meshplan/meshplan/validate/runs"
)

// truth is the set of known coefficients the synthetic runs are made
// from: every one is well away from the A100 defaults (matmul_fraction
// 0.77, half point 6e9 FLOPs, HBM 0.76 and overlap 0.85, NVLink 0.78 and
// 3.4 us, InfiniBand 0.92 and 9.6 us), so recovering them is not a
// matter of staying put, and inside the physical bounds (InfiniBand's
// latency at most 4 × 9.6 us, and not within 5% of a bound).
var truth = map[string]float64{
	"matmul_fraction":       0.60,
	"matmul_half_flops":     2e10,
	"hbm_fraction":          0.65,
	"overlap_fraction":      0.60,
	"nvlink.efficiency":     0.65,
	"nvlink.latency_s":      1e-5,
	"infiniband.efficiency": 0.70,
	"infiniband.latency_s":  2e-5,
}

// syntheticLayouts are varied models, sizes and strategies on A100
// clusters: small matmuls (high tp, short sequences) for the half point,
// tp over NVLink, data parallelism and FSDP over InfiniBand with small
// batches for the links, latency and overlap, pipelines and recompute.
var syntheticLayouts = []struct {
	model, cluster string
	batch, seq     int
	strategy       string
}{
	{"gpt-1.7b", "a100-8", 64, 512, "tp=8,mb=1"},
	{"gpt-1.7b", "a100-8", 64, 2048, "dp=8,mb=4"},
	{"gpt-1.7b", "a100-16", 32, 1024, "dp=16,mb=1"},
	{"gpt-1.7b", "a100-32", 32, 1024, "fsdp=32,mb=1"},
	{"gpt-3.6b", "a100-16", 32, 2048, "fsdp=16,mb=1"},
	{"gpt-3.6b", "a100-8", 256, 2048, "dp=4,tp=2,mb=8"},
	{"gpt-7.5b", "a100-32", 256, 2048, "dp=8,tp=4,mb=2"},
	{"gpt-7.5b", "a100-16", 64, 2048, "dp=2,tp=8,mb=1"},
	{"llama2-7b", "a100-8", 32, 4096, "fsdp=8,mb=1,recompute=full"},
	{"llama2-7b", "a100-8", 8, 4096, "dp=8,zero=1,mb=1"},
	{"llama2-13b", "a100-32", 64, 4096, "tp=8,pp=4,mb=1"},
	{"llama3-8b", "a100-64", 64, 8192, "fsdp=64,mb=1,recompute=selective"},
	{"llama3-8b", "a100-16", 16, 8192, "dp=2,tp=8,mb=1,recompute=selective"},
	{"gpt-18b", "a100-64", 128, 2048, "dp=2,tp=8,pp=4,mb=1,schedule=interleaved,v=2"},
	{"gpt-22b", "a100-16", 32, 2048, "tp=8,pp=2,mb=1"},
	{"llama2-70b", "a100-64", 64, 4096, "fsdp=8,tp=8,mb=1,recompute=full"},
	{"gpt-1.7b", "a100-8", 64, 256, "dp=8,mb=1"},
	{"gpt-1.7b", "a100-8", 8, 256, "tp=8,mb=1"},
	{"kor22:gpt-1.7b", "a100-8", 64, 2048, "dp=8,mb=1"},
	{"kor22:gpt-3.6b", "a100-16", 64, 2048, "dp=2,tp=8,mb=1"},
}

// withValues returns c with the named coefficients set.
func withValues(t testing.TB, c profiles.Cluster, vals map[string]float64) profiles.Cluster {
	t.Helper()
	ps, _ := defaultsOf(c, map[profiles.Tier]bool{profiles.NVLink: true, profiles.InfiniBand: true})
	for i := range ps {
		v, ok := vals[ps[i].Name]
		if !ok {
			t.Fatalf("no value for %s", ps[i].Name)
		}
		ps[i].Value = v
	}
	return apply(c, ps)
}

// syntheticRuns returns runs whose measured throughput is the model's
// prediction with the coefficients of truthCluster.
func syntheticRuns(t testing.TB, truthCluster profiles.Cluster) []runs.Run {
	t.Helper()
	var rs []runs.Run
	for i, l := range syntheticLayouts {
		prefix, model, unfused := strings.Cut(l.model, ":")
		if !unfused {
			prefix, model = "syn", l.model
		}
		rs = append(rs, runs.Run{
			ID: fmt.Sprintf("%s_%02d_%s_%s", prefix, i, model, l.cluster), Model: model, Cluster: l.cluster,
			GlobalBatchSeqs: l.batch, SeqLen: l.seq, Strategy: l.strategy, MeasuredTokensPerS: 1,
		})
	}
	rep := runs.Validate(rs, &truthCluster, runs.Options{})
	if len(rep.Skipped) > 0 {
		t.Fatalf("synthetic run %s cannot be predicted: %s", rep.Skipped[0].ID, rep.Skipped[0].Reason)
	}
	for i, row := range rep.Rows {
		rs[i].MeasuredTokensPerS = row.PredictedTokensPerSPerChip * float64(row.Chips)
	}
	return rs
}

// syntheticScatter is the scatter the noise-free synthetic runs are fitted
// with: 0.2%, so that the data outweigh the priors by (5%/0.2%)² = 625
// times the default's weight.
const syntheticScatter = 0.002

// recoveryTolerance is the relative error allowed on every parameter the
// fit reports as identified. The synthetic measurements are exact, so the
// fit's only errors are the pull of the priors and Nelder-Mead's stopping
// tolerance. The prior shifts a parameter by about τ⁻²·Δu/(c²/s² + τ⁻²),
// with Δu its distance from the default, τ the prior's width, c the
// conditional change of log throughput per unit u summed over the runs and
// s the scatter; for the weakest identified parameter here
// (overlap_fraction: c ≈ 0.035/0.18 per unit log x, about 0.3 per unit of
// the fraction, on a few runs, τ = 0.15) and s = 0.2% that is under 0.1%.
// Nelder-Mead stops on a relative change of 1e-8 in an objective that is
// flat along the weakest direction, which leaves errors of up to about 2%
// in value. 3% covers both with a margin, and is still far below the
// 10-40% by which the truth differs from the defaults.
const recoveryTolerance = 0.03

// TestSyntheticRecovery makes measurements from known coefficients and
// checks that Calibrate, starting from the A100 defaults, recovers every
// parameter it reports as identified, and that the parameters these runs
// are designed to exercise are among them.
func TestSyntheticRecovery(t *testing.T) {
	base, err := profiles.Parse("a100-16")
	if err != nil {
		t.Fatal(err)
	}
	rs := syntheticRuns(t, withValues(t, base, truth))
	rep, err := Calibrate(rs, base, Options{Folds: -1, Scatter: syntheticScatter})
	if err != nil {
		t.Fatalf("Calibrate: %v", err)
	}
	if len(rep.Rows) != len(syntheticLayouts) {
		t.Fatalf("fitted %d runs, want %d (skipped: %v)", len(rep.Rows), len(syntheticLayouts), rep.Skipped)
	}
	identified := map[string]bool{}
	for _, p := range rep.Params {
		want := truth[p.Name]
		t.Logf("%-22s default %-9.3g fitted %-9.4g true %-9.3g (%+.2f%%) sensitivity %.3f conditional %.3f identified %v held %v",
			p.Name, p.Default, p.Value, want, 100*(p.Value/want-1), p.Sensitivity, p.Conditional, p.Identified, p.Held)
		if !p.Identified {
			continue
		}
		identified[p.Name] = true
		if !scalar.EqualWithinRel(p.Value, want, recoveryTolerance) {
			t.Errorf("%s = %.4g, want %.4g within %.0f%%", p.Name, p.Value, want, 100*recoveryTolerance)
		}
	}
	for _, name := range []string{"matmul_fraction", "hbm_fraction", "overlap_fraction", "nvlink.efficiency",
		"nvlink.latency_s", "infiniband.efficiency"} {
		if !identified[name] {
			t.Errorf("%s is not identified; the synthetic runs are designed to exercise it", name)
		}
	}
	if rep.AfterMAPE > 0.01 {
		t.Errorf("after-fit MAPE %.2f%% on noise-free runs, want under 1%%", 100*rep.AfterMAPE)
	}
	if !(rep.AfterMAPE < rep.BeforeMAPE) {
		t.Errorf("after-fit MAPE %.2f%% is not below the defaults' %.2f%%", 100*rep.AfterMAPE, 100*rep.BeforeMAPE)
	}
}
