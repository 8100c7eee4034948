package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// calibrateRuns is a small runs file on A100s (measured whole-job tokens/s
// near what the defaults predict) with one TPU run that calibrate ignores.
const calibrateRuns = `id,model,cluster,batch,seq,strategy,measured_tokens_per_s
r1,gpt-1.7b,a100-8,64,2048,"dp=8,mb=4",100000
r2,gpt-3.6b,a100-16,32,2048,"fsdp=16,mb=1",60000
r3,llama2-7b,a100-8,32,4096,"fsdp=8,mb=1,recompute=full",21000
r4,gpt-7.5b,a100-16,64,2048,"dp=2,tp=8,mb=1",30000
r5,gpt-1.7b,a100-32,32,1024,"fsdp=32,mb=1",120000
r6,llama3-8b,v5e-256,256,8192,fsdp=256,300000
`

// TestCalibrateProfile runs plan calibrate with --out and checks the JSON
// report's contract keys, then that plan validate and plan accept the
// written profile and that validate reproduces the fitted predictions.
func TestCalibrateProfile(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	runsFile := filepath.Join(dir, "runs.csv")
	if err := os.WriteFile(runsFile, []byte(calibrateRuns), 0o644); err != nil {
		t.Fatal(err)
	}
	profile := filepath.Join(dir, "fitted.yaml")
	stdout, stderr, code := run(t, "calibrate", "--runs", runsFile, "--cluster", "a100-16", "--out", profile, "--format", "json")
	if code != 0 {
		t.Fatalf("calibrate: exit %d: %s", code, stderr)
	}
	var rep struct {
		BeforeMAPE *float64           `json:"before_mape"`
		AfterMAPE  *float64           `json:"after_mape"`
		CVMAPE     *float64           `json:"cv_mape"`
		Params     map[string]float64 `json:"params"`
		Rows       []struct {
			ID    string  `json:"id"`
			After float64 `json:"after_tokens_per_s_per_chip"`
		} `json:"rows"`
		Notes []string `json:"notes"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("calibrate --format json: %v\n%s", err, stdout)
	}
	if rep.BeforeMAPE == nil || rep.AfterMAPE == nil || rep.CVMAPE == nil || len(rep.Params) == 0 {
		t.Fatalf("missing contract keys in %s", stdout)
	}
	if _, ok := rep.Params["matmul_fraction"]; !ok {
		t.Errorf("params %v has no matmul_fraction", rep.Params)
	}
	if len(rep.Rows) != 5 || !strings.Contains(strings.Join(rep.Notes, ";"), "1 run on v5e") {
		t.Errorf("rows %d (want 5), notes %q (want the v5e run ignored)", len(rep.Rows), rep.Notes)
	}

	stdout, stderr, code = run(t, "validate", "--runs", runsFile, "--cluster", profile, "--format", "json")
	if code != 0 {
		t.Fatalf("validate --cluster %s: exit %d: %s", profile, code, stderr)
	}
	var val struct {
		Rows []struct {
			ID        string  `json:"id"`
			Predicted float64 `json:"predicted_tokens_per_s_per_chip"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(stdout), &val); err != nil {
		t.Fatal(err)
	}
	after := map[string]float64{}
	for _, r := range rep.Rows {
		after[r.ID] = r.After
	}
	if len(val.Rows) != 5 {
		t.Errorf("validate predicted %d runs, want the 5 on a100", len(val.Rows))
	}
	for _, r := range val.Rows {
		// The YAML holds every digit, so the predictions agree to rounding.
		if want := after[r.ID]; want == 0 || r.Predicted/want-1 > 1e-9 || r.Predicted/want-1 < -1e-9 {
			t.Errorf("%s: validate predicts %v with the profile, calibrate reported %v", r.ID, r.Predicted, want)
		}
	}

	_, stderr, code = run(t, "--model", "gpt-1.7b", "--cluster", profile, "--batch", "64", "--top", "1", "--quiet")
	if code != 0 {
		t.Errorf("plan --cluster %s: exit %d: %s", profile, code, stderr)
	}
}

// TestCalibrateErrors checks the bad-input cases: exit 2, one sentence.
func TestCalibrateErrors(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	runsFile := filepath.Join(dir, "runs.csv")
	if err := os.WriteFile(runsFile, []byte(calibrateRuns), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no runs on the chip", []string{"calibrate", "--runs", runsFile, "--cluster", "h100-8"}, "none of the 6 runs is on chip h100"},
		{"no cluster", []string{"calibrate", "--runs", runsFile}, "--cluster is required"},
		{"unknown cluster", []string{"calibrate", "--runs", runsFile, "--cluster", "z100-8"}, "z100"},
		{"missing runs file", []string{"calibrate", "--runs", filepath.Join(dir, "nope.csv"), "--cluster", "a100-8"}, "nope.csv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := run(t, tc.args...)
			if code != ExitBadInput {
				t.Errorf("exit %d, want %d; stderr %q", code, ExitBadInput, stderr)
			}
			if stdout != "" || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("stdout %q, stderr %q; want no output and one line containing %q", stdout, stderr, tc.want)
			}
		})
	}
}

// TestValidateOneSourceCoverage: a runs file of one source leaves no
// other source to fit a band on, so plan validate draws its runs'
// intervals from the shipped bands and says how many. The held-out files
// of validate/runs/testdata (Megatron-Bridge's later releases, 73 runs;
// its GB300 and B300 rows, 80; LLM Foundry's H100 tables, 34; the
// Megatron-Core MoE team's Model Zoo, 11 posable; Megatron-Bridge's 26.08
// table, 9: none is fitted to or in the bands) are each of one source:
// every run is drawn from the shipped bands, and together the 80% interval
// holds 70-90% of the 207 runs, as
// written and with --searched (the issue-41 held-out range;
// docs/uncertainty.md gives the figures per file).
func TestValidateOneSourceCoverage(t *testing.T) {
	type coverage struct {
		Regime string `json:"regime"`
		All    struct {
			Runs int `json:"runs"`
			In80 int `json:"in_80"`
		} `json:"all"`
		ShippedRuns int `json:"shipped_runs"`
	}
	var fixed, searched coverage
	for _, tc := range []struct {
		file string
		runs int
	}{
		{"bridge-archive-2602-2606.csv", 73},
		{"bridge-archive-gb300-b300.csv", 80},
		{"llm-foundry-h100.csv", 34},
		{"megatron-moe-modelzoo.csv", 11},
		{"bridge-2608.csv", 9},
	} {
		stdout, stderr, code := run(t, "validate", "--runs", "../validate/runs/testdata/"+tc.file, "--quiet", "--searched", "--format", "json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.file, code, stderr)
		}
		var rep struct {
			Coverage         coverage  `json:"coverage"`
			CoverageSearched *coverage `json:"coverage_searched"`
		}
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatal(err)
		}
		c, s := rep.Coverage, rep.CoverageSearched
		if c.All.Runs != tc.runs || c.ShippedRuns != tc.runs {
			t.Errorf("%s: %d runs, %d from the shipped bands; want %d, all", tc.file, c.All.Runs, c.ShippedRuns, tc.runs)
		}
		if s == nil || s.Regime != "searched" || s.All.Runs != tc.runs || s.ShippedRuns != tc.runs {
			t.Fatalf("%s: coverage_searched = %+v; want the searched regime over %d runs from the shipped bands", tc.file, s, tc.runs)
		}
		fixed.All.Runs += c.All.Runs
		fixed.All.In80 += c.All.In80
		searched.All.Runs += s.All.Runs
		searched.All.In80 += s.All.In80
	}
	for _, c := range []struct {
		name string
		cov  coverage
	}{{"fixed", fixed}, {"searched", searched}} {
		if got := float64(c.cov.All.In80) / float64(c.cov.All.Runs); got < 0.70 || got > 0.90 {
			t.Errorf("%s: the 80%% interval holds %d of %d held-out runs (%.0f%%); want 70-90%%", c.name, c.cov.All.In80, c.cov.All.Runs, 100*got)
		}
	}
}

// TestValidateSearchedOff: without --searched the report has no
// coverage_searched.
func TestValidateSearchedOff(t *testing.T) {
	stdout, _, code := run(t, "validate", "--runs", "../validate/runs/testdata/torchtitan-trainy-202506.csv", "--quiet", "--format", "json")
	if code != 0 || strings.Contains(stdout, "coverage_searched") || !strings.Contains(stdout, `"coverage"`) {
		t.Errorf("exit %d; want coverage and no coverage_searched:\n%s", code, stdout)
	}
}
